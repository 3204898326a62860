//! `read -w FILE`: the shown frames, unmodified, as a pcapng file (one section, one interface
//! of the input's link type with nanosecond timestamps, one Enhanced Packet Block per frame),
//! each frame with analysis marks carrying them as its `opt_comment` (pcapng §4.3, option 1),
//! which Wireshark shows as `frame.comment`. Written with the pcap-file crate.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::Duration;

use pcap_file::DataLink;
use pcap_file::Endianness;
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};

use crate::analyze::marks::Marks;

/// Snap length written in the interface description, bytes (the most libpcap reads).
const SNAPLEN: u32 = 262_144;

/// The pcapng file being written.
pub struct MarkedWriter {
    out: PcapNgWriter<BufWriter<File>>,
    path: String,
}

fn named(path: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{path}: {e}"))
}

impl MarkedWriter {
    /// Create `path` for frames of link type `linktype` (the LINKTYPE_ number).
    ///
    /// # Errors
    /// The file cannot be created or its first blocks written (an error naming it).
    pub fn create(path: &str, linktype: u32) -> io::Result<MarkedWriter> {
        let file = File::create(path).map_err(|e| named(path, super::io_text(&e)))?;
        let mut out = PcapNgWriter::with_endianness(BufWriter::new(file), Endianness::Little)
            .map_err(|e| named(path, e))?;
        let idb = InterfaceDescriptionBlock {
            linktype: DataLink::from(linktype),
            snaplen: SNAPLEN,
            options: vec![InterfaceDescriptionOption::IfTsResol(9)],
        };
        out.write_pcapng_block(idb).map_err(|e| named(path, e))?;
        Ok(MarkedWriter {
            out,
            path: path.to_string(),
        })
    }

    /// Write one frame: time (ns since the epoch), length on the wire, the captured bytes,
    /// and its marks as the packet comment when any is set.
    ///
    /// # Errors
    /// The write failed (an error naming the file).
    pub fn frame(
        &mut self,
        ts_ns: u64,
        len: u32,
        data: &[u8],
        marks: Option<&Marks>,
    ) -> io::Result<()> {
        let options = match marks.filter(|m| m.has_verdict()) {
            Some(m) => vec![EnhancedPacketOption::Comment(Cow::Owned(
                super::marks::tags(m),
            ))],
            None => Vec::new(),
        };
        let epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(ts_ns),
            original_len: len.max(data.len() as u32),
            data: Cow::Borrowed(data),
            options,
        };
        self.out
            .write_pcapng_block(epb)
            .map(|_| ())
            .map_err(|e| named(&self.path, e))
    }

    /// Write out what is buffered.
    ///
    /// # Errors
    /// The write failed (an error naming the file).
    pub fn finish(&mut self) -> io::Result<()> {
        self.out
            .get_mut()
            .flush()
            .map_err(|e| named(&self.path, super::io_text(&e)))
    }
}
