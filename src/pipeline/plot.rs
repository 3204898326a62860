//! The `plot` run: a capture read through the analyzer with a plot [`Recorder`] tapped in, for
//! the pictures of `crate::output::plot` (issue 14).

use std::convert::Infallible;
use std::ops::ControlFlow;

use anyhow::Result;

use super::walk::{self, Walked};
use crate::analyze::{AnalyzeConfig, Analyzer, Report};
use crate::decode::DecodeConfig;
use crate::output::plot::{Recorder, Trace};

/// Read the capture file `path` (`-`: standard input) through an analyzer set up as `cfg`, with
/// a recorder tapped in: the analysis' report and the recorded trace. `filter` is a libpcap BPF
/// filter expression; `roce_ports` the UDP destination ports decoded as RoCEv2 besides 4791.
///
/// # Errors
/// As [`walk::open`]; a read error in the middle of the file (naming the frame after which it
/// happened).
pub fn analyze_file(
    path: &str,
    filter: Option<&str>,
    cfg: AnalyzeConfig,
    roce_ports: &[u16],
) -> Result<(Report, Trace)> {
    let mut src = walk::open(path, filter)?;
    let dcfg = DecodeConfig::with_ports(roce_ports);
    let mut a = Analyzer::new(cfg);
    a.set_tap(Box::new(Recorder::default()));
    let walked = walk::decoded(&mut src, &dcfg, |rec, frame| {
        a.push(rec.number, rec.ts_ns, frame);
        ControlFlow::<Infallible>::Continue(())
    });
    if let Walked::Failed(e) = walked {
        // The file alone when its first record cannot be read, as `read` and `export` say.
        let at = walk::after_frame(walk::shown(path), src.frames_read());
        return Err(anyhow::Error::new(e).context(at));
    }
    let tap = a.take_tap();
    let report = a.finish();
    Ok((report, Recorder::from_tap(tap)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// samples/rxe_write.pcap cut inside its first record, then inside its second: the first
    /// error names the file alone (not "after frame 0"), the second the frame read before it.
    #[test]
    fn a_read_error_names_the_frame_after_which_it_came() {
        let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/rxe_write.pcap");
        let bytes = std::fs::read(sample).unwrap();
        // A 24-byte file header, then 16-byte record headers with `incl_len` at offset 8.
        let first_len = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
        let dir = tempfile::tempdir().unwrap();
        let error = |cut: usize| {
            let path = dir.path().join(format!("cut{cut}.pcap"));
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let p = path.to_str().unwrap().to_string();
            let e = analyze_file(&p, None, AnalyzeConfig::default(), &[]).unwrap_err();
            (p, format!("{e:#}"))
        };
        let (p, text) = error(24 + 16 + 10);
        assert!(text.starts_with(&format!("{p}: ")), "{text}");
        assert!(!text.contains("after frame"), "{text}");
        let (p, text) = error(24 + 16 + first_len + 16 + 10);
        assert!(text.starts_with(&format!("{p}: after frame 1: ")), "{text}");
    }
}
