//! The time and lengths of an ERF record (link type 197, as ibdump and Endace DAG cards write
//! them) from its own header ([`ErfHeader`]) rather than from the pcap or pcapng record around
//! it, as Wireshark reads them (tshark 4.0: the wire and captured lengths from the ERF header in
//! pcap and pcapng files, the time too in classic pcap files); the pcap record's, which libpcap
//! and tcpdump show, count the ERF header's bytes and, in a classic pcap file, often have only
//! microseconds.

use super::Record;
use crate::decode::LinkType;
use crate::decode::erf::ErfHeader;

/// Which of an ERF header's values a source's records take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// None: a link type other than ERF.
    Off,
    /// The lengths (a pcapng file: a block's timestamp, of any resolution, stays).
    Lengths,
    /// The lengths and the time (a classic pcap file, whose records have µs or ns; a live
    /// DAG card).
    LengthsAndTime,
}

/// A record's time, lengths and bytes as the frame's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Framed {
    /// Capture time, ns since the Unix epoch.
    pub ts_ns: u64,
    /// Bytes on the wire (of an ERF record, `wlen`).
    pub len: u32,
    /// Bytes of the frame captured (of an ERF record, those after the header, its extension
    /// headers and an Ethernet record's pad, at most `wlen`: the record's padding is not the
    /// frame's).
    pub caplen: u32,
    /// Bytes of the record that are the frame's or a header's (of an ERF record, the bytes
    /// past `wlen` are neither: padding, or bytes the header says were not on the wire).
    pub data_len: usize,
}

impl Rule {
    /// The rule for a source of `linktype`, read from a pcapng file or not.
    pub fn new(linktype: LinkType, pcapng: bool) -> Rule {
        match (linktype == LinkType::ERF, pcapng) {
            (false, _) => Rule::Off,
            (true, true) => Rule::Lengths,
            (true, false) => Rule::LengthsAndTime,
        }
    }

    /// The frame's time, lengths and bytes of a record that has `ts_ns`, `len`, `caplen` and
    /// the bytes `data`: the record's own unless this rule takes the ERF header's. A record too
    /// short for its ERF header keeps its own (the decoder reports it truncated).
    #[inline]
    pub fn frame(self, ts_ns: u64, len: u32, caplen: u32, data: &[u8]) -> Framed {
        let own = Framed {
            ts_ns,
            len,
            caplen,
            data_len: data.len(),
        };
        if self == Rule::Off {
            return own;
        }
        let Ok(h) = ErfHeader::parse(data) else {
            return own;
        };
        let caplen = (data.len() - h.frame_at).min(usize::from(h.wlen));
        Framed {
            ts_ns: if self == Rule::LengthsAndTime {
                h.ts_ns()
            } else {
                ts_ns
            },
            len: u32::from(h.wlen),
            caplen: caplen as u32,
            data_len: h.frame_at + caplen,
        }
    }

    /// The frame's time of a record that has `ts_ns` and the bytes `data` ([`Rule::frame`]).
    pub fn time(self, ts_ns: u64, data: &[u8]) -> u64 {
        self.frame(ts_ns, 0, 0, data).ts_ns
    }

    /// Give `rec` the frame's time, lengths and bytes ([`Rule::frame`]): an ERF record keeps
    /// its header and loses what lies past `wlen` (tshark then finds the frame malformed, and
    /// so does the decoder).
    #[inline]
    pub fn apply(self, rec: &mut Record<'_>) {
        if self == Rule::Off {
            return;
        }
        let f = self.frame(rec.ts_ns, rec.len, rec.caplen, rec.data);
        rec.ts_ns = f.ts_ns;
        rec.len = f.len;
        rec.caplen = f.caplen;
        rec.data = &rec.data[..f.data_len];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::erf::tests::header;
    use crate::decode::erf::{TYPE_ETHERNET, TYPE_INFINIBAND};

    /// `Rule::LengthsAndTime`'s view of `r` (pcap time 5, lengths 99).
    fn framed(r: &[u8]) -> Framed {
        Rule::LengthsAndTime.frame(5, 99, 99, r)
    }

    /// An InfiniBand record (type 21) of 34 bytes, all captured; then one whose wire length
    /// (100) is more than was captured; then one padded past its wire length.
    #[test]
    fn lengths_are_the_frame_s_not_the_record_s() {
        let mut r = header((7 << 32) | (1 << 31), TYPE_INFINIBAND, 50, 34);
        r.extend([0u8; 34]);
        assert_eq!(
            framed(&r),
            Framed {
                ts_ns: 7_500_000_000,
                len: 34,
                caplen: 34,
                data_len: 50,
            }
        );
        let mut r = header(0, TYPE_INFINIBAND, 50, 100);
        r.extend([0u8; 34]);
        assert_eq!((framed(&r).len, framed(&r).caplen), (100, 34));
        let mut r = header(0, TYPE_INFINIBAND, 56, 34);
        r.extend([0u8; 40]);
        assert_eq!((framed(&r).len, framed(&r).caplen), (34, 34));
    }

    /// A record keeps its ERF header and loses the bytes past `wlen`; pcapng's rule keeps the
    /// record's time, another link type's everything.
    #[test]
    fn apply_cuts_the_record_at_the_wire_length() {
        let mut r = header(0, TYPE_INFINIBAND, 56, 10);
        r.extend(1..=40u8);
        let rec = Record {
            number: 1,
            ts_ns: 5,
            base_ts_ns: 0,
            caplen: 56,
            len: 56,
            data: &r,
        };
        let mut ng = rec;
        Rule::new(LinkType::ERF, true).apply(&mut ng);
        assert_eq!((ng.ts_ns, ng.len, ng.caplen), (5, 10, 10));
        assert_eq!(ng.data, &r[..26]);
        let mut pcap = rec;
        Rule::new(LinkType::ERF, false).apply(&mut pcap);
        assert_eq!((pcap.ts_ns, pcap.data.len()), (0, 26));
        let mut eth = rec;
        Rule::new(LinkType::ETHERNET, false).apply(&mut eth);
        assert_eq!(
            (eth.ts_ns, eth.len, eth.caplen, eth.data),
            (5, 56, 56, &r[..])
        );
    }

    /// Extension headers and an Ethernet record's 2 bytes of pad are not frame bytes (tshark
    /// 4.0 on such records: `frame.cap_len` 42 of 44 bytes after the header, 20 of 22, and 30
    /// when wlen is 30); a record cut inside them, or inside the fixed header, keeps its own
    /// time and lengths.
    #[test]
    fn extension_headers_and_pad_are_skipped_and_short_records_keep_theirs() {
        let mut r = header(0, 0x80 | TYPE_ETHERNET, 76, 46);
        r.extend([0x80, 0, 0, 0, 0, 0, 0, 0]);
        r.extend([0x05, 0, 0, 0, 0, 0, 0, 0]);
        r.extend([0u8; 2 + 42]);
        assert_eq!((framed(&r).len, framed(&r).caplen), (46, 42));
        assert_eq!(framed(&r[..32 + 2 + 20]).caplen, 20);
        assert_eq!(framed(&r[..32 + 2]).caplen, 0);
        for cut in [32 + 1, 16 + 12, 15] {
            assert_eq!(
                framed(&r[..cut]),
                Framed {
                    ts_ns: 5,
                    len: 99,
                    caplen: 99,
                    data_len: cut,
                }
            );
        }
        let mut r = header(0, TYPE_ETHERNET, 60, 30);
        r.extend([0u8; 2 + 42]);
        assert_eq!((framed(&r).len, framed(&r).caplen), (30, 30));
    }
}
