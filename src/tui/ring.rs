//! The latest frames, kept for `top`'s `w`: one byte buffer of at most `cap` bytes used
//! circularly (no allocation per frame once it has grown), and each frame's place and
//! `pcap_pkthdr` fields beside it. The oldest frames make room for new ones.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::Write;
use std::time::Duration;

use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::{DataLink, Endianness};

use crate::source::Record;

/// Where a kept frame is, and its record fields.
#[derive(Clone, Copy, Debug)]
struct Kept {
    start: usize,
    caplen: usize,
    ts_ns: u64,
    len: u32,
    number: u64,
}

/// The latest frames, at most `cap` bytes of them.
#[derive(Debug)]
pub struct Ring {
    buf: Vec<u8>,
    kept: VecDeque<Kept>,
    /// Where the next frame goes.
    head: usize,
    cap: usize,
    /// Frames no longer kept (made room for later ones, or larger than `cap`).
    dropped: u64,
}

impl Ring {
    /// A ring of at most `cap` bytes of frames (0 keeps none); memory grows to `cap` as frames
    /// come.
    pub fn new(cap: usize) -> Ring {
        Ring {
            buf: Vec::new(),
            kept: VecDeque::new(),
            head: 0,
            cap,
            dropped: 0,
        }
    }

    /// Keep `rec`'s captured bytes, dropping the oldest frames it overlaps.
    pub fn push(&mut self, rec: &Record<'_>) {
        let n = rec.data.len();
        if n > self.cap {
            self.dropped += 1;
            return;
        }
        if self.head + n > self.cap {
            // Frames are never split: back to the start, and what lies after `head` is gone.
            self.evict_from(self.head, self.buf.len());
            self.head = 0;
        }
        let (from, to) = (self.head, self.head + n);
        self.evict_from(from, to);
        if self.buf.len() < to {
            self.buf.resize(to, 0);
        }
        self.buf[from..to].copy_from_slice(rec.data);
        self.kept.push_back(Kept {
            start: from,
            caplen: n,
            ts_ns: rec.ts_ns,
            len: rec.len,
            number: rec.number,
        });
        self.head = to;
    }

    /// Drop the oldest frames while they lie in `from..to` (they are the oldest: frames after
    /// `head` in the buffer are older than those before it).
    fn evict_from(&mut self, from: usize, to: usize) {
        while let Some(k) = self.kept.front() {
            // An empty frame counts as one byte, so that it leaves in its turn too.
            if !(k.start < to && k.start + k.caplen.max(1) > from) {
                break;
            }
            self.kept.pop_front();
            self.dropped += 1;
        }
    }

    /// Frames kept.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Whether no frame is kept.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Frames no longer kept.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The kept frames, oldest first (`base_ts_ns` 0).
    pub fn records(&self) -> impl DoubleEndedIterator<Item = Record<'_>> {
        self.kept.iter().map(|k| Record {
            number: k.number,
            ts_ns: k.ts_ns,
            base_ts_ns: 0,
            caplen: k.caplen as u32,
            len: k.len,
            data: &self.buf[k.start..k.start + k.caplen],
        })
    }

    /// Write the kept frames to `w` as a little-endian pcapng file: a section header, one
    /// interface (LINKTYPE `linktype`, snap length `snaplen` bytes, `if_tsresol` 9: ns), one
    /// enhanced packet block per frame (pcapng, draft-ietf-opsawg-pcapng §4.2, §4.3).
    ///
    /// # Errors
    /// The writer's error, as text.
    pub fn write_pcapng(&self, w: impl Write, linktype: u32, snaplen: u32) -> Result<(), String> {
        let err = |e: pcap_file::PcapError| e.to_string();
        let mut out = PcapNgWriter::with_endianness(w, Endianness::Little).map_err(err)?;
        out.write_pcapng_block(InterfaceDescriptionBlock {
            linktype: DataLink::from(linktype),
            snaplen,
            options: vec![InterfaceDescriptionOption::IfTsResol(9)],
        })
        .map_err(err)?;
        for r in self.records() {
            out.write_pcapng_block(EnhancedPacketBlock {
                interface_id: 0,
                timestamp: Duration::from_nanos(r.ts_ns),
                original_len: r.len,
                data: Cow::Borrowed(r.data),
                options: vec![],
            })
            .map_err(err)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(number: u64, data: &[u8]) -> Record<'_> {
        Record {
            number,
            ts_ns: number * 1000,
            base_ts_ns: 0,
            caplen: data.len() as u32,
            len: data.len() as u32 + 4,
            data,
        }
    }

    fn numbers(r: &Ring) -> Vec<u64> {
        r.records().map(|r| r.number).collect()
    }

    #[test]
    fn keeps_the_latest_frames_that_fit() {
        let mut r = Ring::new(100);
        // Frames of 30 bytes, the byte pattern their number.
        let frames: Vec<Vec<u8>> = (1..=10u8).map(|i| vec![i; 30]).collect();
        for (i, f) in frames.iter().enumerate().take(3) {
            r.push(&rec(i as u64 + 1, f));
        }
        assert_eq!(numbers(&r), [1, 2, 3]);
        // The 4th does not fit after the 3rd (90 + 30 > 100): the buffer comes round and the
        // 1st makes room.
        r.push(&rec(4, &frames[3]));
        assert_eq!(numbers(&r), [2, 3, 4]);
        for (i, f) in frames.iter().enumerate().skip(4) {
            r.push(&rec(i as u64 + 1, f));
        }
        assert_eq!(numbers(&r), [8, 9, 10]);
        assert_eq!(r.dropped(), 7);
        for x in r.records() {
            assert_eq!(x.data, &frames[x.number as usize - 1][..]);
            assert_eq!((x.ts_ns, x.len), (x.number * 1000, 34));
        }
        // Never more than the cap.
        assert!(r.buf.len() <= 100);
        // A frame larger than the ring is not kept.
        r.push(&rec(11, &[0; 101]));
        assert_eq!(numbers(&r), [8, 9, 10]);
        // Mixed sizes: a 90-byte frame takes the place of all three.
        r.push(&rec(12, &[7; 90]));
        assert_eq!(numbers(&r), [12]);
    }

    #[test]
    fn zero_keeps_none() {
        let mut r = Ring::new(0);
        r.push(&rec(1, &[1, 2, 3]));
        assert!(r.is_empty());
        assert_eq!(r.dropped(), 1);
    }

    #[test]
    fn pcapng_bytes() {
        let mut r = Ring::new(64);
        r.push(&rec(1, &[0xaa, 0xbb]));
        let mut out = Vec::new();
        r.write_pcapng(&mut out, 1, 262_144).unwrap();
        // Section header block (28 bytes), interface description block with if_tsresol
        // (20 + 8 option + 4 end of options = 32), enhanced packet block (32 + 4 data = 36).
        assert_eq!(&out[..4], &0x0a0d_0d0au32.to_le_bytes());
        assert_eq!(&out[8..12], &0x1a2b_3c4du32.to_le_bytes());
        let idb = &out[28..];
        assert_eq!(&idb[..4], &1u32.to_le_bytes(), "IDB type");
        assert_eq!(&idb[8..10], &1u16.to_le_bytes(), "LINKTYPE_ETHERNET");
        assert_eq!(&idb[12..16], &262_144u32.to_le_bytes(), "snap length");
        assert_eq!(
            &idb[16..20],
            &[9, 0, 1, 0],
            "option 9 (if_tsresol), length 1"
        );
        assert_eq!(idb[20], 9, "10^-9 s");
        let idb_len = u32::from_le_bytes(idb[4..8].try_into().unwrap()) as usize;
        let epb = &idb[idb_len..];
        assert_eq!(&epb[..4], &6u32.to_le_bytes(), "EPB type");
        // Time 1000 ns as two 32-bit halves, high first.
        assert_eq!(&epb[12..16], &0u32.to_le_bytes());
        assert_eq!(&epb[16..20], &1000u32.to_le_bytes());
        assert_eq!(&epb[20..24], &2u32.to_le_bytes(), "captured length");
        assert_eq!(&epb[24..28], &6u32.to_le_bytes(), "original length");
        assert_eq!(&epb[28..30], &[0xaa, 0xbb]);
    }
}
