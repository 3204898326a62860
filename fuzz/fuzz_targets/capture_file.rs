//! Capture-file reader: arbitrary bytes written to a temporary file and read by `FileSource`
//! (libpcap) to the end or the first error, every record decoded and analysed. Seeds are whole
//! pcap and pcapng files.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use roce_inspect::analyze::{AnalyzeConfig, Analyzer};
use roce_inspect::decode::{DecodeConfig, decode_frame};
use roce_inspect::source::FileSource;

fuzz_target!(|data: &[u8]| {
    let mut tmp = tempfile::NamedTempFile::new().unwrap();
    tmp.write_all(data).unwrap();
    tmp.flush().unwrap();
    let path = tmp.path().to_str().unwrap().to_owned();
    let Ok(mut src) = FileSource::open(&path) else {
        return;
    };
    let lt = src.linktype();
    let cfg = DecodeConfig::default();
    let mut a = Analyzer::new(AnalyzeConfig::default());
    let mut n = 0u64;
    let mut last = 0u64;
    // Every record holds at least 12 bytes (a pcapng block header), so no file yields more than this many.
    let bound = data.len() as u64 / 12 + 1;
    loop {
        match src.next_record() {
            Ok(Some(rec)) => {
                n += 1;
                assert!(n <= bound, "more records than the file can hold");
                assert!(rec.number > last);
                last = rec.number;
                assert!(rec.data.len() as u64 <= u64::from(rec.caplen));
                let f = decode_frame(lt, rec.data, rec.len, &cfg);
                a.push(rec.number, rec.ts_ns, &f);
            }
            Ok(None) => break,
            Err(e) => {
                assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
                break;
            }
        }
    }
    assert!(matches!(src.next_record(), Ok(None)));
    let r = a.finish();
    assert_eq!(r.frames.total, n);
});
