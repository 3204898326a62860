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

    /// A pcap whose first record header claims 2^31 - 1 captured bytes (over its snap length of
    /// 65535): the error names the file, not "after frame 0"; after one good record it names
    /// the frame.
    #[test]
    fn a_read_error_names_the_frame_after_which_it_came() {
        let dir = tempfile::tempdir().unwrap();
        // Classic pcap, microseconds, little-endian, snap length 65535, Ethernet.
        let mut file: Vec<u8> = [0xa1b2_c3d4u32.to_le_bytes().as_slice(), &[2, 0, 4, 0]].concat();
        file.extend_from_slice(&[0; 8]);
        file.extend_from_slice(&65535u32.to_le_bytes());
        file.extend_from_slice(&1u32.to_le_bytes());
        let bad = [1u32, 0, 0x7fff_ffff, 16].map(u32::to_le_bytes).concat();
        let good = [1u32, 0, 14, 14].map(u32::to_le_bytes).concat();
        let first = dir.path().join("first.pcap");
        std::fs::write(&first, [file.clone(), bad.clone()].concat()).unwrap();
        let second = dir.path().join("second.pcap");
        std::fs::write(&second, [file, good, vec![0; 14], bad].concat()).unwrap();
        let error = |path: &std::path::Path| {
            let p = path.to_str().unwrap().to_string();
            let e = analyze_file(&p, None, AnalyzeConfig::default(), &[]).unwrap_err();
            (p, format!("{e:#}"))
        };
        let (p, text) = error(&first);
        assert!(text.starts_with(&format!("{p}: ")), "{text}");
        assert!(!text.contains("after frame"), "{text}");
        let (p, text) = error(&second);
        assert!(text.starts_with(&format!("{p}: after frame 1: ")), "{text}");
    }
}
