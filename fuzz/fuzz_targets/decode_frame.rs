//! Frame decoder: the first byte picks the link type (every supported one plus an unsupported
//! one) and how the on-the-wire length relates to the captured length; the rest is the frame.
//! Every printer (text, `-V`, colour, JSON) then runs on the result into a `Vec`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roce_inspect::decode::{DecodeConfig, LinkType, decode_frame};
use roce_inspect::output::json::JsonPrinter;
use roce_inspect::output::text::TextPrinter;
use roce_inspect::output::{FrameCtx, Printer};

/// Supported link types, then one that is not.
const LINKTYPES: [u32; 11] = [0, 1, 101, 108, 113, 197, 228, 229, 247, 276, 147];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, frame)) = data.split_first() else {
        return;
    };
    let lt = LinkType(LINKTYPES[(sel & 0x0f) as usize % LINKTYPES.len()]);
    let caplen = frame.len() as u32;
    // Bits 4–5: wire length equal to, larger than (snap length cut), or smaller than (a hostile
    // record header) the captured length.
    let orig_len = match (sel >> 4) & 3 {
        0 | 3 => caplen,
        1 => caplen.saturating_add(1 + u32::from(sel >> 6) * 1000),
        _ => caplen / 2,
    };
    let cfg = if sel & 0x80 != 0 {
        DecodeConfig::with_ports(&[4792, 0])
    } else {
        DecodeConfig::default()
    };
    let f = decode_frame(lt, frame, orig_len, &cfg);
    let ctx = FrameCtx {
        number: 1,
        ts_ns: u64::MAX - u64::from(sel),
        rel_ns: u64::from(sel) << 40,
        caplen,
        len: orig_len,
    };
    let mut out = Vec::with_capacity(4096);
    {
        let mut p = TextPrinter::new(&mut out, sel & 1 != 0, false);
        p.frame(&ctx, &f).unwrap();
        p.flush().unwrap();
    }
    {
        let mut p = TextPrinter::new(&mut out, sel & 2 != 0, true);
        p.frame(&ctx, &f).unwrap();
        p.flush().unwrap();
    }
    let start = out.len();
    {
        let mut p = JsonPrinter::new(&mut out);
        p.frame(&ctx, &f).unwrap();
        p.flush().unwrap();
    }
    // The JSON line must be one valid JSON object.
    let line = &out[start..];
    assert_eq!(line.last(), Some(&b'\n'));
    let v: serde_json::Value = serde_json::from_slice(line).expect("printer wrote invalid JSON");
    assert!(v.is_object());
    assert!(
        std::str::from_utf8(&out).is_ok(),
        "printer wrote invalid UTF-8"
    );
});
