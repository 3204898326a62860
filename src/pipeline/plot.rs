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
        // "after frame 0" too when the first record cannot be read.
        let at = format!("{}: after frame {}", walk::shown(path), src.frames_read());
        return Err(anyhow::Error::new(e).context(at));
    }
    let tap = a.take_tap();
    let report = a.finish();
    Ok((report, Recorder::from_tap(tap)))
}
