//! What the two live captures share, libpcap's (`cli::capture`) and the verbs sniffer's
//! (`cli::sniff`): the stop signals, and giving up root once the device is open.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context, Result};

use super::CaptureArgs;
use crate::source::live::LiveSource;
use crate::source::privdrop::Plan;

/// Install the Ctrl-C / SIGTERM / SIGHUP handler: the first signal asks the capture loop to stop
/// (and wakes a blocked read through `pcap_breakloop`); a second one exits at once with status
/// 130 (C `exit()` still flushes the savefile's stdio buffer).
pub(super) fn install_stop_handler(src: Option<&mut LiveSource>) -> Result<Arc<AtomicU32>> {
    let signals = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&signals);
    let breaker = src.map(|s| s.break_handle());
    ctrlc::set_handler(move || {
        if seen.fetch_add(1, Ordering::SeqCst) == 0 {
            if let Some(b) = &breaker {
                b.breakloop();
            }
        } else {
            eprintln!("roce-inspect: interrupted again, exiting without the report");
            crate::output::parquet::file::remove_temporaries();
            std::process::exit(130);
        }
    })
    .context("installing the Ctrl-C/SIGTERM handler")?;
    Ok(signals)
}

/// The device and the `-w` file are open: hand the `-w` file, the `--html` file and the
/// `--parquet` folder (created now if new) to the user of `plan`, then become that user
/// (tcpdump's `-Z`), and check at once that the `--html` file, written when the capture
/// stops, can still be opened, rather than losing the report at the end.
///
/// # Errors
/// A failed chown, mkdir or set*id call, a privilege left after the drop, or an `--html` file
/// the user cannot write.
pub(super) fn give_up_root(plan: &Plan, a: &CaptureArgs) -> Result<()> {
    use std::fs::OpenOptions;
    use std::path::Path;
    // `-w -` is standard output (pcap_dump_open), already open: nothing to give.
    if let Some(path) = a.write.as_deref().filter(|p| *p != "-") {
        plan.hand_over(Path::new(path))?;
    }
    let html = a.display.report.html.as_deref();
    if let (Some(h), Some(_)) = (html, plan.account()) {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(h)
            .with_context(|| format!("cannot write --html {h}"))?;
        plan.hand_over(Path::new(h))?;
    }
    if let Some(dir) = &a.parquet {
        plan.hand_over_dir(dir)?;
    }
    plan.drop_now()?;
    if let (Some(h), Some(user)) = (html, plan.account()) {
        OpenOptions::new().write(true).open(h).with_context(|| {
            format!(
                "--html {h} cannot be written as {}, the user root was dropped to (-Z): give a \
                 path that user can reach, or -Z root",
                user.name
            )
        })?;
    }
    Ok(())
}
