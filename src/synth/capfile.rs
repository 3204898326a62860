//! Capture-file writers for generated frames: classic pcap with nanosecond timestamps (magic
//! 0xa1b23c4d) and pcapng (one interface, `if_tsresol` = 9, i.e. nanoseconds), both through the
//! `pcap-file` crate. Output is a pure function of the records, so reruns give identical bytes.

use std::borrow::Cow;
use std::io::Write;
use std::time::Duration;

use crate::decode::LinkType;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::{DataLink, Endianness, TsResolution};

/// libpcap link type 1 (Ethernet), the value of the decoder's [`LinkType::ETHERNET`].
pub const LINKTYPE_ETHERNET: u32 = LinkType::ETHERNET.0;

/// libpcap link type 197 (ERF, Endace's Extensible Record Format): [`LinkType::ERF`].
pub const LINKTYPE_ERF: u32 = LinkType::ERF.0;

/// One captured frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Capture time in ns since the Unix epoch.
    pub ts_ns: u64,
    /// The captured bytes (at most the snap length).
    pub data: Vec<u8>,
    /// Length of the frame on the wire in bytes (≥ `data.len()`).
    pub orig_len: u32,
}

impl Record {
    /// A frame captured whole.
    pub fn new(ts_ns: u64, data: Vec<u8>) -> Record {
        let orig_len = data.len() as u32;
        Record {
            ts_ns,
            data,
            orig_len,
        }
    }

    /// The same Ethernet frame as an ERF record (link type [`LINKTYPE_ERF`]) as a DAG card or
    /// ibdump writes it: the 16-byte ERF header — the time as 32.32 fixed-point seconds, little
    /// endian, its fraction rounded to the nearest 2⁻³² s; type 2 (Ethernet); flags 0x04
    /// (varying length); `rlen` the record's bytes; `wlen` the frame's wire length in bytes, at
    /// most 65535 — then 2 bytes of pad and the captured bytes, with no FCS. The pcap record
    /// keeps this record's time and holds the ERF record whole. Source: the ERF Types Reference
    /// (Endace), as read by Wireshark's `erf` dissector.
    pub fn erf_ethernet(&self) -> Record {
        let secs = self.ts_ns / 1_000_000_000;
        let ns = u128::from(self.ts_ns % 1_000_000_000);
        // Never rounds up to a whole second: (10⁹ − 1) ns is 2³² − 4.29 units.
        let frac = ((ns << 32) + 500_000_000) / 1_000_000_000;
        let mut r = ((secs << 32) | frac as u64).to_le_bytes().to_vec();
        r.extend([2, 0x04]);
        r.extend(((16 + 2 + self.data.len()).min(0xffff) as u16).to_be_bytes());
        r.extend([0, 0]);
        r.extend((self.orig_len.min(0xffff) as u16).to_be_bytes());
        r.extend([0, 0]);
        r.extend_from_slice(&self.data);
        Record::new(self.ts_ns, r)
    }

    /// The same frame cut to `snaplen` bytes (the wire length is kept).
    pub fn cut(&self, snaplen: usize) -> Record {
        Record {
            ts_ns: self.ts_ns,
            data: self.data[..self.data.len().min(snaplen)].to_vec(),
            orig_len: self.orig_len,
        }
    }
}

/// Errors of the writers: the underlying I/O or encoding error, as text.
#[derive(Debug, thiserror::Error)]
#[error("writing capture: {0}")]
pub struct WriteError(String);

fn err(e: impl std::fmt::Display) -> WriteError {
    WriteError(e.to_string())
}

/// Timestamp resolution of a classic pcap file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// Microseconds (magic 0xa1b2c3d4, what tcpdump writes by default); ns digits are dropped.
    Micro,
    /// Nanoseconds (magic 0xa1b23c4d).
    Nano,
}

/// Write a classic little-endian pcap file with nanosecond timestamps and snap length
/// `snaplen` (bytes) to `w`.
pub fn write_pcap<W: Write>(
    w: W,
    linktype: u32,
    snaplen: u32,
    records: &[Record],
) -> Result<(), WriteError> {
    write_pcap_with(w, linktype, snaplen, Resolution::Nano, records)
}

/// [`write_pcap`] with the timestamp resolution chosen.
pub fn write_pcap_with<W: Write>(
    w: W,
    linktype: u32,
    snaplen: u32,
    resolution: Resolution,
    records: &[Record],
) -> Result<(), WriteError> {
    let header = PcapHeader {
        version_major: 2,
        version_minor: 4,
        ts_correction: 0,
        ts_accuracy: 0,
        snaplen,
        datalink: DataLink::from(linktype),
        ts_resolution: match resolution {
            Resolution::Micro => TsResolution::MicroSecond,
            Resolution::Nano => TsResolution::NanoSecond,
        },
        endianness: Endianness::Little,
    };
    let mut out = PcapWriter::with_header(w, header).map_err(err)?;
    for r in records {
        let ts = match resolution {
            Resolution::Micro => r.ts_ns / 1_000 * 1_000,
            Resolution::Nano => r.ts_ns,
        };
        let p = PcapPacket::new(Duration::from_nanos(ts), r.orig_len, &r.data);
        out.write_packet(&p).map_err(err)?;
    }
    Ok(())
}

/// Write a little-endian pcapng file (section header, one interface description with
/// nanosecond resolution, one enhanced packet block per record) to `w`.
pub fn write_pcapng<W: Write>(
    w: W,
    linktype: u32,
    snaplen: u32,
    records: &[Record],
) -> Result<(), WriteError> {
    let mut out = PcapNgWriter::with_endianness(w, Endianness::Little).map_err(err)?;
    let idb = InterfaceDescriptionBlock {
        linktype: DataLink::from(linktype),
        snaplen,
        options: vec![InterfaceDescriptionOption::IfTsResol(9)],
    };
    out.write_pcapng_block(idb).map_err(err)?;
    for r in records {
        let epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(r.ts_ns),
            original_len: r.orig_len,
            data: Cow::Borrowed(&r.data),
            options: vec![],
        };
        out.write_pcapng_block(epb).map_err(err)?;
    }
    Ok(())
}

/// [`write_pcap`] into memory.
pub fn pcap_bytes(linktype: u32, snaplen: u32, records: &[Record]) -> Vec<u8> {
    let mut v = Vec::new();
    write_pcap(&mut v, linktype, snaplen, records).expect("writing to memory cannot fail");
    v
}

/// [`write_pcapng`] into memory.
pub fn pcapng_bytes(linktype: u32, snaplen: u32, records: &[Record]) -> Vec<u8> {
    let mut v = Vec::new();
    write_pcapng(&mut v, linktype, snaplen, records).expect("writing to memory cannot fail");
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_ethernet_record_bytes() {
        // 7.25 s is 7 s and 2³⁰ units of 2⁻³² s.
        let r = Record {
            ts_ns: 7_250_000_000,
            data: vec![0xaa, 0xbb, 0xcc],
            orig_len: 60,
        };
        let e = r.erf_ethernet();
        assert_eq!((e.ts_ns, e.orig_len), (7_250_000_000, 21));
        assert_eq!(
            e.data,
            [
                0, 0, 0, 0x40, 7, 0, 0, 0, // 32.32 time, little endian
                2, 0x04, 0, 21, 0, 0, 0, 60, // type, flags, rlen, lctr, wlen
                0, 0, 0xaa, 0xbb, 0xcc, // pad, frame
            ]
        );
        // 1 ns is 4.29 units: rounds to 4; the last ns of a second stays in it.
        let frac = |ns| {
            let d = Record::new(ns, vec![]).erf_ethernet().data;
            u64::from_le_bytes(d[..8].try_into().unwrap())
        };
        assert_eq!(frac(1), 4);
        assert_eq!(frac(999_999_999), 0xffff_fffc);
    }
}
