//! The shape every one-pass read of a capture file shares (`read`'s sequential loop, `export`,
//! `plot`): open the file under the name errors give it, apply the BPF filter, hand each record
//! (decoded or not) to the caller until the end, the caller stops, or a read error that the
//! caller reports after the frames before it.

use std::ops::ControlFlow;

use anyhow::{Context, Result};

use crate::decode::{DecodeConfig, Frame, decode_frame};
use crate::source::file::FileError;
use crate::source::{FileSource, Record};

pub use crate::source::file::{after_frame, shown};

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

#[cfg(test)]
mod tests {
    use super::*;

    /// samples/rxe_write.pcap: 12 WRITEs of 8192 bytes over PMTU 1024 (8 packets each) and one
    /// ACK per WRITE (samples/README.md), 108 frames, all RoCEv2.
    const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/rxe_write.pcap");
    const SAMPLE_FRAMES: u64 = 12 * 8 + 12;

    /// The records wholly inside the first `len` bytes of a little-endian pcap file, read
    /// from its headers here (24-byte file header; 16-byte record headers, `incl_len` at
    /// offset 8).
    fn whole_records(bytes: &[u8], len: usize) -> u64 {
        let (mut at, mut n) = (24, 0);
        while at + 16 <= len {
            let incl = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
            if at + 16 + incl > len {
                break;
            }
            at += 16 + incl;
            n += 1;
        }
        n
    }

    #[test]
    fn walks_every_record_in_order() {
        let mut src = open(SAMPLE, None).unwrap();
        let mut numbers = Vec::new();
        let walked = walk(&mut src, |rec| {
            numbers.push(rec.number);
            ControlFlow::<()>::Continue(())
        });
        assert!(matches!(walked, Walked::End));
        assert_eq!(numbers, (1..=SAMPLE_FRAMES).collect::<Vec<_>>());
        let bytes = std::fs::read(SAMPLE).unwrap();
        assert_eq!(whole_records(&bytes, bytes.len()), SAMPLE_FRAMES);
    }

    #[test]
    fn stops_where_the_caller_breaks() {
        let mut src = open(SAMPLE, None).unwrap();
        let walked = walk(&mut src, |rec| match rec.number {
            5 => ControlFlow::Break(rec.number * 10),
            _ => ControlFlow::Continue(()),
        });
        assert!(matches!(walked, Walked::Stopped(50)));
        assert_eq!(src.frames_read(), 5);
    }

    #[test]
    fn decodes_each_record() {
        let mut src = open(SAMPLE, None).unwrap();
        let mut roce = 0;
        let walked = decoded(&mut src, &DecodeConfig::default(), |_, frame| {
            roce += u64::from(frame.roce().is_some());
            ControlFlow::<()>::Continue(())
        });
        assert!(matches!(walked, Walked::End));
        assert_eq!(roce, SAMPLE_FRAMES);
    }

    #[test]
    fn the_filter_skips_records_and_keeps_their_numbers() {
        // No frame of the sample is TCP.
        let mut src = open(SAMPLE, Some("tcp")).unwrap();
        let walked = walk(&mut src, |_| ControlFlow::Break(()));
        assert!(matches!(walked, Walked::End));
        let Err(e) = open(SAMPLE, Some("port (")) else {
            panic!("a bad filter compiled");
        };
        assert!(matches!(
            e.downcast_ref::<FileError>(),
            Some(FileError::Filter(..))
        ));
    }

    #[test]
    fn a_cut_record_fails_after_the_whole_ones() {
        let bytes = std::fs::read(SAMPLE).unwrap();
        let cut = 3000;
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, &bytes[..cut]).unwrap();
        let mut src = open(f.path().to_str().unwrap(), None).unwrap();
        let mut handed = 0;
        let walked = walk(&mut src, |_| {
            handed += 1;
            ControlFlow::<()>::Continue(())
        });
        assert!(matches!(walked, Walked::Failed(FileError::Read(_))));
        let whole = whole_records(&bytes, cut);
        assert!(whole > 0);
        assert_eq!((handed, src.frames_read()), (whole, whole));
    }
}
