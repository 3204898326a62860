//! From a completed receive to a [`Record`]: the sniffer's user-space filter (the default
//! RoCE-only filter or `-f`, with the tagged-frame counter), the savefile, frame numbers and
//! the base time. Pure except for the savefile write, so the path from a completion to a record
//! is tested without an RDMA device.

use pcap::{BpfProgram, Capture, Dead, Linktype, Packet, PacketHeader, Precision, Savefile};

use super::ring::Received;
use crate::decode::LinkType;
use crate::source::Record;
use crate::source::tag_miss::{IsRoce, TagMiss};

/// Filter, savefile and numbering of delivered frames.
#[derive(Default)]
pub struct Delivery {
    filter: Option<(BpfProgram, Option<TagMiss>)>,
    savefile: Option<(Savefile, Capture<Dead>)>,
    number: u64,
    base_ts_ns: Option<u64>,
    /// Frames the filter rejected.
    pub filtered: u64,
}

impl Delivery {
    /// Keep only frames `prog` matches; with `is_roce`, count the tagged RoCE frames it misses.
    pub fn set_filter(&mut self, prog: BpfProgram, is_roce: Option<IsRoce>) {
        self.filter = Some((prog, is_roce.map(TagMiss::new)));
    }

    /// The tagged-frame counter, when set.
    pub fn tag_miss(&self) -> Option<&TagMiss> {
        self.filter.as_ref().and_then(|(_, m)| m.as_ref())
    }

    /// Save delivered frames to a nanosecond pcap file at `path` with link type `lt`.
    ///
    /// # Errors
    /// libpcap's message.
    pub fn save_to(&mut self, path: &str, lt: LinkType) -> Result<(), String> {
        let dead = Capture::dead_with_precision(Linktype(lt.to_dlt()), Precision::Nano)
            .map_err(|e| e.to_string())?;
        let sf = dead.savefile(path).map_err(|e| e.to_string())?;
        self.savefile = Some((sf, dead));
        Ok(())
    }

    /// Flush the savefile.
    ///
    /// # Errors
    /// The OS error.
    pub fn flush(&mut self) -> Result<(), String> {
        match &mut self.savefile {
            Some((sf, _)) => sf.flush().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    /// The record for received frame `r` whose bytes are `data` (its `caplen` bytes), received
    /// at `ts_ns`; `None` when the filter rejects it (counted).
    pub fn accept<'a>(&mut self, data: &'a [u8], r: Received, ts_ns: u64) -> Option<Record<'a>> {
        if let Some((prog, miss)) = &mut self.filter
            && !prog.filter(data)
        {
            self.filtered += 1;
            if let Some(m) = miss {
                m.rejected(prog, data, r.len);
            }
            return None;
        }
        if let Some((sf, _)) = &mut self.savefile {
            let header = PacketHeader {
                ts: libc::timeval {
                    tv_sec: (ts_ns / 1_000_000_000) as libc::time_t,
                    tv_usec: (ts_ns % 1_000_000_000) as libc::suseconds_t,
                },
                caplen: r.caplen,
                len: r.len,
            };
            sf.write(&Packet::new(&header, data));
        }
        self.number += 1;
        Some(Record {
            number: self.number,
            ts_ns,
            base_ts_ns: *self.base_ts_ns.get_or_insert(ts_ns),
            caplen: r.caplen,
            len: r.len,
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileSource;

    fn frame(tag: bool, dport: u16) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        if tag {
            f.extend_from_slice(&[0x81, 0x00, 0x60, 0x00]);
        }
        f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0]);
        f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0xc0, 0, 0, 0, 0, 8, 0, 0]);
        let n = f.len();
        f[n - 6..n - 4].copy_from_slice(&dport.to_be_bytes());
        f
    }

    fn received(f: &[u8]) -> Received {
        Received {
            slot: 0,
            caplen: f.len() as u32,
            len: f.len() as u32 + 4,
        }
    }

    #[test]
    fn completions_become_numbered_filtered_saved_records() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("s.pcap");
        let prog = Capture::dead(Linktype::ETHERNET)
            .unwrap()
            .compile("udp port 4791", true)
            .unwrap();
        let mut del = Delivery::default();
        del.set_filter(prog, Some(Box::new(|_, _| true)));
        del.save_to(path.to_str().unwrap(), LinkType::ETHERNET)
            .unwrap();
        let frames = [
            frame(false, 4791),
            frame(true, 4791),
            frame(false, 53),
            frame(false, 4791),
        ];
        let mut got = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            let ts = 1_000_000_000_123 + i as u64 * 1000;
            if let Some(r) = del.accept(f, received(f), ts) {
                got.push((r.number, r.ts_ns, r.base_ts_ns, r.caplen, r.len));
            }
        }
        assert_eq!(
            got,
            [
                (1, 1_000_000_000_123, 1_000_000_000_123, 42, 46),
                (2, 1_000_000_003_123, 1_000_000_000_123, 42, 46)
            ]
        );
        assert_eq!(del.filtered, 2);
        assert_eq!(del.tag_miss().unwrap().count, 1);
        del.flush().unwrap();
        drop(del);
        // The savefile holds the two delivered frames, ns timestamps and wire lengths intact.
        let mut src = FileSource::open(path.to_str().unwrap()).unwrap();
        assert_eq!(src.linktype(), LinkType::ETHERNET);
        let mut saved = Vec::new();
        while let Some(r) = src.next_record().unwrap() {
            saved.push((r.ts_ns, r.caplen, r.len, r.data.to_vec()));
        }
        assert_eq!(
            saved,
            [
                (1_000_000_000_123, 42, 46, frames[0].clone()),
                (1_000_000_003_123, 42, 46, frames[3].clone())
            ]
        );
    }
}
