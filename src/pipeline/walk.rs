//! The shape every one-pass read of a capture file shares (`read`'s sequential loop, `export`,
//! `plot`): open the file under the name errors give it, apply the BPF filter, hand each record
//! (decoded or not) to the caller until the end, the caller stops, or a read error that the
//! caller reports after the frames before it.

use std::ops::ControlFlow;

use anyhow::{Context, Result};

use crate::decode::{DecodeConfig, Frame, decode_frame};
use crate::source::file::FileError;
use crate::source::{FileSource, Record};

/// The name a file is given in messages: `<stdin>` for `-`, else the path as given.
pub fn shown(path: &str) -> &str {
    if path == "-" { "<stdin>" } else { path }
}

/// Open the capture file `path` (`-`: standard input) and apply the BPF filter `filter`.
///
/// # Errors
/// The file cannot be opened or is not a capture of a supported link type (the error names it
/// as [`shown`] does); the filter does not compile ([`FileError::Filter`], a usage error).
pub fn open(path: &str, filter: Option<&str>) -> Result<FileSource> {
    let mut src = FileSource::open(path).with_context(|| shown(path).to_string())?;
    if let Some(f) = filter {
        src.set_filter(f)?;
    }
    Ok(src)
}

/// How a walk over a file's records ended.
pub enum Walked<B> {
    /// The end of the file.
    End,
    /// The caller stopped it, with this value.
    Stopped(B),
    /// A read error after the records handed over ([`FileSource::frames_read`] of them).
    Failed(FileError),
}

/// Hand each record of `src` that passes its filter to `each`, in order, until the end of the
/// file, `each` breaks, or a read error.
pub fn walk<B>(
    src: &mut FileSource,
    mut each: impl FnMut(&Record<'_>) -> ControlFlow<B>,
) -> Walked<B> {
    loop {
        match src.next_record() {
            Ok(Some(rec)) => {
                if let ControlFlow::Break(b) = each(&rec) {
                    return Walked::Stopped(b);
                }
            }
            Ok(None) => return Walked::End,
            Err(e) => return Walked::Failed(e),
        }
    }
}

/// [`walk`] with each record decoded under `cfg` (the file's link type).
pub fn decoded<B>(
    src: &mut FileSource,
    cfg: &DecodeConfig,
    mut each: impl FnMut(&Record<'_>, &Frame<'_>) -> ControlFlow<B>,
) -> Walked<B> {
    let linktype = src.linktype();
    walk(src, |rec| {
        let frame = decode_frame(linktype, rec.data, rec.len, cfg);
        each(rec, &frame)
    })
}

/// Where a read error of the file shown as `shown` happened: after frame `n` (its number in
/// the file), or the file alone when no frame was read.
pub fn after_frame(shown: &str, n: u64) -> String {
    match n {
        0 => shown.to_string(),
        n => format!("{shown}: after frame {n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_messages() {
        assert_eq!(shown("-"), "<stdin>");
        assert_eq!(shown("a/b.pcap"), "a/b.pcap");
        assert_eq!(after_frame("x.pcap", 0), "x.pcap");
        assert_eq!(after_frame("x.pcap", 7), "x.pcap: after frame 7");
    }
}
