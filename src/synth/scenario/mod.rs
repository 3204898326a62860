//! Scenario writers: each plays one RDMA exchange on a simple model of hosts, links and NICs
//! and returns the captured frames together with the ground truth of what happened, so that
//! tests can compare roce-inspect's analysis with the model rather than with its own output.
//!
//! Everything is deterministic: randomness comes from [`rng`] with a fixed seed per scenario.

pub mod allreduce;
pub mod congestion;
pub mod faults;
pub mod mirrored;
pub mod nccl;
pub mod rate_cut;
pub mod read_timeout;
pub mod rxe_write;
pub mod two_tap;
pub mod versions;
pub mod write_bw;

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use super::capfile::{self, LINKTYPE_ETHERNET, Record};
use super::frame::{Bth, Eth, Ext, Net, Packet};
use crate::decode::{Aeth, Opcode};

/// Capture start time of every sample: 2026-12-01 02:00:00 UTC, in ns since the Unix epoch.
pub const BASE_NS: u64 = 1_796_090_400_000_000_000;

/// Snap length written into the sample files' headers (bytes).
pub const SNAPLEN: u32 = 65_535;

/// RC opcodes used by the scenarios (IBTA Vol. 1 Table 38).
pub mod op {
    /// SEND Only.
    pub const SEND_ONLY: u8 = 0x04;
    /// RDMA WRITE First.
    pub const WRITE_FIRST: u8 = 0x06;
    /// RDMA WRITE Middle.
    pub const WRITE_MIDDLE: u8 = 0x07;
    /// RDMA WRITE Last.
    pub const WRITE_LAST: u8 = 0x08;
    /// RDMA WRITE Last with Immediate.
    pub const WRITE_LAST_IMM: u8 = 0x09;
    /// RDMA WRITE Only.
    pub const WRITE_ONLY: u8 = 0x0a;
    /// RDMA WRITE Only with Immediate.
    pub const WRITE_ONLY_IMM: u8 = 0x0b;
    /// RDMA READ Request.
    pub const READ_REQUEST: u8 = 0x0c;
    /// RDMA READ Response First.
    pub const READ_RESPONSE_FIRST: u8 = 0x0d;
    /// RDMA READ Response Middle.
    pub const READ_RESPONSE_MIDDLE: u8 = 0x0e;
    /// RDMA READ Response Last.
    pub const READ_RESPONSE_LAST: u8 = 0x0f;
    /// RDMA READ Response Only.
    pub const READ_RESPONSE_ONLY: u8 = 0x10;
    /// Acknowledge.
    pub const ACK: u8 = 0x11;
    /// UD SEND Only (transport bits 011).
    pub const UD_SEND_ONLY: u8 = 0x64;
    /// RoCEv2 Congestion Notification Packet (IBTA Annex A17 §A17.9.2).
    pub const CNP: u8 = 0x81;
}

/// AETH syndromes (IBTA Vol. 1 §9.7.5.2.2 Table 45).
pub mod syndrome {
    /// ACK with unlimited credits (credit code 31).
    pub const ACK_UNLIMITED: u8 = 0x1f;
    /// NAK: PSN sequence error.
    pub const NAK_PSN_SEQUENCE: u8 = 0x60;
}

/// A host of a scenario: MAC 02:00:00:00:00:n and IPv4 address 10.0.0.n.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    /// MAC address.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: [u8; 4],
}

/// Host number `n` (see [`Host`]).
pub const fn host(n: u8) -> Host {
    Host {
        mac: [0x02, 0, 0, 0, 0, n],
        ip: [10, 0, 0, n],
    }
}

/// One direction of a QP connection: who sends to whom, to which QP, with which IP TOS.
#[derive(Clone, Copy, Debug)]
pub struct Path {
    /// Sending host.
    pub from: Host,
    /// Receiving host.
    pub to: Host,
    /// Destination QP number (the receiver's QPN), 24 bits.
    pub dest_qp: u32,
    /// UDP source port (per-QP entropy).
    pub udp_src: u16,
    /// IP TOS byte: DSCP ‖ ECN.
    pub tos: u8,
}

impl Path {
    /// A packet of this path with `opcode` and `psn` (other BTH fields default, P_Key 0xffff).
    pub fn packet(&self, opcode: u8, psn: u32) -> Packet {
        Packet {
            eth: Eth {
                dst: self.to.mac,
                src: self.from.mac,
                tags: Vec::new(),
            },
            net: Net::Ipv4 {
                src: self.from.ip,
                dst: self.to.ip,
                tos: self.tos,
                ttl: 64,
                id: 0,
            },
            udp_src: self.udp_src,
            udp_dst: 4791,
            bth: Bth {
                opcode: Opcode(opcode),
                dest_qp: self.dest_qp,
                psn: psn & 0xff_ffff,
                ..Bth::default()
            },
            ext: Ext::default(),
            payload_len: 0,
            payload_seed: (psn as u8) ^ (self.dest_qp as u8),
        }
    }

    /// An RC ACK (or NAK) on this path: opcode Acknowledge with AETH (`syndrome`, `msn`).
    pub fn ack(&self, psn: u32, syndrome: u8, msn: u32) -> Packet {
        let mut p = self.packet(op::ACK, psn);
        p.ext.aeth = Aeth {
            syndrome,
            msn: msn & 0xff_ffff,
        };
        p
    }
}

/// 24-bit PSN arithmetic: `psn + n` modulo 2^24.
pub fn psn_add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) & 0xff_ffff
}

/// Payload sizes of the packets of a `len`-byte message over path MTU `pmtu` (bytes): all but
/// the last are `pmtu` (IBTA §9.7.2); a zero-length message is one packet of zero bytes.
pub fn segments(len: u32, pmtu: u32) -> Vec<u32> {
    if len == 0 {
        return vec![0];
    }
    let full = (len - 1) / pmtu;
    let mut v = vec![pmtu; full as usize];
    v.push(len - full * pmtu);
    v
}

/// WRITE opcode of packet `i` of `n` (FIRST / MIDDLE / LAST / ONLY), with immediate on the
/// last when `imm`.
pub fn write_opcode(i: usize, n: usize, imm: bool) -> u8 {
    match (n, i) {
        (1, _) if imm => op::WRITE_ONLY_IMM,
        (1, _) => op::WRITE_ONLY,
        (_, 0) => op::WRITE_FIRST,
        (_, i) if i + 1 == n && imm => op::WRITE_LAST_IMM,
        (_, i) if i + 1 == n => op::WRITE_LAST,
        _ => op::WRITE_MIDDLE,
    }
}

/// READ RESPONSE opcode of packet `i` of `n`.
pub fn read_response_opcode(i: usize, n: usize) -> u8 {
    match (n, i) {
        (1, _) => op::READ_RESPONSE_ONLY,
        (_, 0) => op::READ_RESPONSE_FIRST,
        (_, i) if i + 1 == n => op::READ_RESPONSE_LAST,
        _ => op::READ_RESPONSE_MIDDLE,
    }
}

/// Seconds on the wire of a frame of `bytes` at `gbps` Gb/s, in ns, counting the preamble, SFD
/// and inter-frame gap (20 bytes) that a capture does not show.
pub fn wire_ns(bytes: usize, gbps: f64) -> u64 {
    (((bytes + 20) * 8) as f64 / gbps).round() as u64
}

/// A copy of an untagged Ethernet / IPv4 RoCEv2 frame moved to other hosts: both addresses
/// become 10.(net >> 8).(net & 255).n (n kept), with the IPv4 header checksum and the ICRC
/// (which covers the addresses) computed again. Frames of another shape are returned as they
/// are. Used to tile scenarios into large traces whose copies do not share flows.
pub fn relocate_ipv4(frame: &[u8], net: u16) -> Vec<u8> {
    let mut f = frame.to_vec();
    let ip = 14;
    if f.len() < ip + 28 + 16 || f[12..14] != [0x08, 0x00] || f[ip] >> 4 != 4 {
        return f;
    }
    let ihl = usize::from(f[ip] & 0x0f) * 4;
    let (udp, end) = (ip + ihl, f.len() - 4);
    let t = udp + 8;
    if ihl < 20 || t + 12 > end {
        return f;
    }
    for a in [ip + 12, ip + 16] {
        f[a + 1..a + 3].copy_from_slice(&net.to_be_bytes());
    }
    f[ip + 10..ip + 12].fill(0);
    let c = super::frame::ipv4_checksum(&f[ip..udp]);
    f[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
    let crc = crate::decode::icrc::rocev2_ipv4(&f[ip..udp], &f[udp..t], &f[t..end]);
    f[end..].copy_from_slice(&crc.to_le_bytes());
    f
}

/// The seeded PRNG of the scenarios (Xoshiro256++, portable across platforms).
pub fn rng(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// The frames one capture point saw, kept in time order when written.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Captured frames (sorted by [`Trace::records`]).
    records: Vec<Record>,
}

impl Trace {
    /// Record `p` as captured at `ts_ns` (ns since the scenario start, [`BASE_NS`] is added).
    pub fn push(&mut self, ts_ns: u64, p: &Packet) {
        self.records.push(Record::new(BASE_NS + ts_ns, p.build()));
    }

    /// The frames in capture order (stable sort by time).
    pub fn records(mut self) -> Vec<Record> {
        self.records.sort_by_key(|r| r.ts_ns);
        self.records
    }
}

/// File format of a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Classic pcap, nanosecond timestamps.
    Pcap,
    /// pcapng, nanosecond timestamps.
    Pcapng,
}

/// One bundled sample file.
#[derive(Clone, Debug)]
pub struct Sample {
    /// File name under `samples/`.
    pub file: &'static str,
    /// File format.
    pub format: Format,
    /// The captured frames.
    pub records: Vec<Record>,
}

impl Sample {
    /// The file's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        match self.format {
            Format::Pcap => capfile::pcap_bytes(LINKTYPE_ETHERNET, SNAPLEN, &self.records),
            Format::Pcapng => capfile::pcapng_bytes(LINKTYPE_ETHERNET, SNAPLEN, &self.records),
        }
    }
}

/// Every bundled sample, in the order `make_samples` writes them.
pub fn samples() -> Vec<Sample> {
    vec![
        write_bw::scenario().sample,
        read_timeout::scenario().sample,
        congestion::scenario().sample,
        versions::sample(),
        mirrored::erspan2(),
        mirrored::erspan3(),
        mirrored::vxlan(),
        rxe_write::sample(),
    ]
    .into_iter()
    .chain(allreduce::scenario().samples)
    .chain(nccl::samples())
    .collect()
}
