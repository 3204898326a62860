//! `allreduce_node{0,1,2}.pcap`: one ring all-reduce seen from each of its three hosts' own
//! captures, each on its own clock — the input of `roce-inspect correlate`.
//!
//! Hosts 10.0.0.1 (node0), 10.0.0.2 (node1) and 10.0.0.3 (node2) form the ring 1 → 2 → 3 → 1.
//! On every ring link the sender has two RC QPs to its neighbour; in each of [`STEPS`] steps
//! (two all-reduces of 2 × (3 − 1) steps each: reduce-scatter then all-gather, as NCCL's
//! ring does) QP 0 writes a
//! 3072-byte chunk over path MTU 1024 (RDMA WRITE FIRST, MIDDLE, LAST with Immediate) and QP 1
//! a 768-byte one (RDMA WRITE ONLY with Immediate), the immediate carrying the step. The
//! receiver acknowledges every message (AETH ACK, MSN), 400 ns after its last packet.
//!
//! - **Clocks**: node0's capture clock is the reference; node1's runs [`OFFSETS_NS`]`[1]` ahead
//!   (+1.234567 ms) and node2's `[2]` behind (−0.75 ms).
//! - **Delays**: each link has a base one-way delay, the same both ways ([`BASE_DELAY_NS`]), plus
//!   queueing: 0–1200 ns for data, 0–400 ns for ACKs, and 2–3 µs more on 10.0.0.1 → 10.0.0.2
//!   during steps 4 and 5 (a congested switch port). The first packet each way crosses an empty
//!   queue, so the smallest delays of the two directions are equal and the NTP-style offset
//!   estimate is exact.
//! - **Loss**: on 10.0.0.2 → 10.0.0.3 the first transmission of the RDMA WRITE MIDDLE of QP 0
//!   is dropped in steps 1 and 5. The receiver sees the LAST out of sequence, answers with a NAK
//!   *PSN sequence error*, and the sender goes back to the lost PSN (go-back-N): the MIDDLE and
//!   LAST are sent again.
//! - **Sniffer drops**: node2's capture misses two of its own outgoing packets on
//!   10.0.0.3 → 10.0.0.1 (QP 0's WRITE FIRST of step 1, QP 1's WRITE ONLY of step 6), which
//!   reach node0 normally.
//!
//! [`Truth`] keeps what the model did: the offsets, each link direction's per-packet delays
//! (packets seen by both captures), the lost and the missed packets with their frame numbers.

use rand::RngExt;

use super::super::capfile::Record;
use super::super::frame::Packet;
use super::{
    BASE_NS, Format, Host, Path, Sample, host, psn_add, segments, syndrome, wire_ns, write_opcode,
};
use crate::decode::Reth;

/// Ring steps: two all-reduces of reduce-scatter and all-gather on three hosts.
pub const STEPS: usize = 8;
/// Path MTU in bytes.
pub const PMTU: u32 = 1024;
/// Bytes written per step by QP 0 and QP 1 of each link.
pub const CHUNK_BYTES: [u32; 2] = [3072, 768];
/// Each capture's clock minus node0's, ns.
pub const OFFSETS_NS: [i64; 3] = [0, 1_234_567, -750_000];
/// Base one-way delay of the link from node n to node n+1 (both ways), ns.
pub const BASE_DELAY_NS: [u64; 3] = [2_000, 3_500, 5_000];
/// Link (by sender node) where packets are lost, and the steps whose QP 0 MIDDLE is lost.
pub const LOSSY_LINK: usize = 1;
/// See [`LOSSY_LINK`].
pub const LOST_STEPS: [usize; 2] = [1, 5];
/// Node whose capture misses some of its outgoing packets: (step, QP, packet index).
pub const SNIFFER_NODE: usize = 2;
/// See [`SNIFFER_NODE`].
pub const SNIFFER_MISSES: [(usize, usize, usize); 2] = [(1, 0, 0), (6, 1, 0)];
/// Time between ring steps, ns.
const STEP_NS: u64 = 30_000;

/// One packet of the truth lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TruthPacket {
    /// Source IPv4 address.
    pub src: [u8; 4],
    /// Destination IPv4 address.
    pub dst: [u8; 4],
    /// BTH DestQP.
    pub dest_qp: u32,
    /// BTH PSN.
    pub psn: u32,
    /// BTH OpCode.
    pub opcode: u8,
    /// Node whose capture holds it.
    pub seen_in: usize,
    /// Node whose capture does not.
    pub missing_in: usize,
    /// Frame number in `seen_in`'s capture (from 1).
    pub frame: u64,
}

/// The delays of one link direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkDelays {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Sending node (the upstream capture).
    pub upstream: usize,
    /// One-way delay of every packet seen by both captures, ns, in sending order.
    pub delays_ns: Vec<u64>,
}

/// What the model did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truth {
    /// Each capture's clock minus node0's, ns.
    pub offsets_ns: [i64; 3],
    /// Per link direction.
    pub links: Vec<LinkDelays>,
    /// Lost on a link: first transmissions seen only upstream.
    pub lost: Vec<TruthPacket>,
    /// Missed by the upstream capture.
    pub missed: Vec<TruthPacket>,
}

/// The three samples and the truth.
pub struct Allreduce {
    /// `allreduce_node0.pcap`, `…node1…`, `…node2…`.
    pub samples: Vec<Sample>,
    /// Ground truth.
    pub truth: Truth,
}

/// A frame seen by one node's capture at its true time (ns since the scenario start).
struct Seen {
    t: u64,
    seq: usize,
    frame: Vec<u8>,
}

/// The model's state while playing.
struct Model {
    rng: rand::rngs::Xoshiro256PlusPlus,
    seen: [Vec<Seen>; 3],
    seq: usize,
    links: Vec<LinkDelays>,
    /// Lost packets (frame numbers still 0) and the sequence number of the copy seen.
    lost: Vec<(TruthPacket, usize)>,
    /// Missed packets, likewise.
    missed: Vec<(TruthPacket, usize)>,
    /// Last arrival on each link direction [from][to], ns: one path, first in first out.
    fifo: [[u64; 3]; 3],
}

impl Model {
    fn see(&mut self, node: usize, t: u64, p: &Packet) -> usize {
        self.seq += 1;
        self.seen[node].push(Seen {
            t,
            seq: self.seq,
            frame: p.build(),
        });
        self.seq
    }

    fn delays(&mut self, from: usize, to: usize) -> &mut Vec<u64> {
        let (src, dst) = (host(from as u8 + 1).ip, host(to as u8 + 1).ip);
        let i = match self.links.iter().position(|l| l.src == src && l.dst == dst) {
            Some(i) => i,
            None => {
                self.links.push(LinkDelays {
                    src,
                    dst,
                    upstream: from,
                    delays_ns: Vec::new(),
                });
                self.links.len() - 1
            }
        };
        &mut self.links[i].delays_ns
    }

    /// Send `p` from `from` to `to` at `t`; returns its arrival time (`None` when lost).
    fn send(&mut self, from: usize, to: usize, t: u64, p: &Packet, q: Queueing) -> Option<u64> {
        let first = self.delays(from, to).is_empty();
        let jitter = if first {
            0
        } else {
            self.rng.random_range(0..q.max)
        };
        // A link never reorders: a packet leaves the queue after the one before it (at least
        // 60 ns later, the serialization of a small frame at 25 Gb/s).
        let earliest = self.fifo[from][to] + 60;
        let d =
            (BASE_DELAY_NS[link_of(from, to)] + q.extra + jitter).max(earliest.saturating_sub(t));
        let up = if q.sniffer_miss {
            None
        } else {
            Some(self.see(from, t, p))
        };
        if q.lost {
            self.lost
                .push((truth_packet(p, from, to), up.unwrap_or_default()));
            return None;
        }
        self.fifo[from][to] = t + d;
        let down = self.see(to, t + d, p);
        match up {
            Some(_) => self.delays(from, to).push(d),
            None => self.missed.push((truth_packet(p, to, from), down)),
        }
        Some(t + d)
    }
}

/// A truth entry for `p`, held by `seen_in`'s capture and not by `missing_in`'s; frame number
/// still unknown.
fn truth_packet(p: &Packet, seen_in: usize, missing_in: usize) -> TruthPacket {
    let (src, dst) = match &p.net {
        super::super::frame::Net::Ipv4 { src, dst, .. } => (*src, *dst),
        _ => ([0; 4], [0; 4]),
    };
    TruthPacket {
        src,
        dst,
        dest_qp: p.bth.dest_qp,
        psn: p.bth.psn,
        opcode: p.bth.opcode.0,
        seen_in,
        missing_in,
        frame: 0,
    }
}

/// How one packet crosses its link.
#[derive(Clone, Copy, Default)]
struct Queueing {
    /// Queueing jitter bound, ns (exclusive).
    max: u64,
    /// Extra queueing, ns.
    extra: u64,
    lost: bool,
    sniffer_miss: bool,
}

/// The ring link between two neighbours, named by its sending node in the ring direction.
fn link_of(a: usize, b: usize) -> usize {
    if (a + 1) % 3 == b { a } else { b }
}

/// QPN of QP `q` on the link from `node`, as the receiver numbers it.
fn data_qpn(node: usize, q: usize) -> u32 {
    0x00_0100 * (node as u32 + 1) + 0x10 + q as u32
}

/// QPN of the sender's QP `q` (destination of ACKs).
fn ack_qpn(node: usize, q: usize) -> u32 {
    0x00_0100 * (node as u32 + 1) + 0x80 + q as u32
}

fn path(from: usize, to: usize, dest_qp: u32) -> Path {
    let (f, t): (Host, Host) = (host(from as u8 + 1), host(to as u8 + 1));
    Path {
        from: f,
        to: t,
        dest_qp,
        udp_src: 0xc000 | (dest_qp as u16 & 0x0fff),
        tos: 0x6a,
    }
}

/// Play the scenario.
pub fn scenario() -> Allreduce {
    let mut m = Model {
        rng: super::rng(0x616c_6c72_6564),
        seen: [Vec::new(), Vec::new(), Vec::new()],
        seq: 0,
        links: Vec::new(),
        lost: Vec::new(),
        missed: Vec::new(),
        fifo: [[0; 3]; 3],
    };
    // Initial PSNs are random 24-bit values in practice; fixed ones here.
    let mut psn = [0, 1, 2].map(|n| [0, 1].map(|q| (data_qpn(n, q) * 0x9e37) & 0xff_ffff));
    let mut msn = [[0u32; 2]; 3];
    for step in 0..STEPS {
        for node in 0..3 {
            for q in 0..2 {
                let t0 = 20_000 + step as u64 * STEP_NS + node as u64 * 700 + q as u64 * 5_000;
                let start = psn[node][q];
                psn[node][q] = message(&mut m, node, q, step, t0, start, &mut msn[node][q]);
            }
        }
    }
    finish(m)
}

/// One RDMA WRITE WITH IMMEDIATE message: QP `q` of the link from `node`, in `step`.
struct Message {
    node: usize,
    q: usize,
    step: usize,
    first_psn: u32,
    sizes: Vec<u32>,
}

impl Message {
    fn to(&self) -> usize {
        (self.node + 1) % 3
    }

    /// Packet `i`: RETH on the first, immediate (the step) and AckReq on the last.
    fn packet(&self, i: usize) -> Packet {
        let fwd = path(self.node, self.to(), data_qpn(self.node, self.q));
        let n = self.sizes.len();
        let mut p = fwd.packet(write_opcode(i, n, true), psn_add(self.first_psn, i as u32));
        p.payload_len = self.sizes[i] as usize;
        p.payload_seed = (self.step * 16 + self.q) as u8;
        if i == 0 {
            let va = 0x7f00_0000_0000 + ((self.step as u64) << 20);
            p.ext.reth = Reth {
                va,
                rkey: 0x0000_2a00 + self.q as u32,
                dma_len: CHUNK_BYTES[self.q],
            };
        }
        if i + 1 == n {
            p.ext.imm.data = self.step as u32;
            p.bth.ack_req = true;
        }
        p
    }

    /// How packet `i` crosses the link (`first`: its first transmission).
    fn queueing(&self, i: usize, first: bool) -> Queueing {
        let (node, q, step) = (self.node, self.q, self.step);
        let congested = node == 0 && (4..6).contains(&step);
        Queueing {
            max: 1_200,
            extra: if congested { 2_000 + 500 * i as u64 } else { 0 },
            lost: first && node == LOSSY_LINK && q == 0 && i == 1 && LOST_STEPS.contains(&step),
            sniffer_miss: first && node == SNIFFER_NODE && SNIFFER_MISSES.contains(&(step, q, i)),
        }
    }

    /// The receiver's ACK (or NAK) for PSN index `i`, sent at `t`.
    fn ack(&self, m: &mut Model, t: u64, i: usize, syn: u8, msn: u32) -> Option<u64> {
        let back = path(self.to(), self.node, ack_qpn(self.node, self.q));
        let p = back.ack(psn_add(self.first_psn, i as u32), syn, msn);
        let q = Queueing {
            max: 400,
            ..Queueing::default()
        };
        m.send(self.to(), self.node, t, &p, q)
    }

    /// Send packets `from..` back to back from `t`: their arrival times and the end time.
    fn burst(
        &self,
        m: &mut Model,
        from: usize,
        mut t: u64,
        first: bool,
    ) -> (Vec<Option<u64>>, u64) {
        let mut arrivals = Vec::new();
        for i in from..self.sizes.len() {
            let p = self.packet(i);
            arrivals.push(m.send(self.node, self.to(), t, &p, self.queueing(i, first)));
            t += wire_ns(p.build().len(), 100.0);
        }
        (arrivals, t)
    }
}

/// Play one message from `first_psn` at `t0`, with its ACK (and NAK and go-back-N when a
/// packet is lost); returns the next PSN.
fn message(
    m: &mut Model,
    node: usize,
    q: usize,
    step: usize,
    t0: u64,
    first_psn: u32,
    msn: &mut u32,
) -> u32 {
    let msg = Message {
        node,
        q,
        step,
        first_psn,
        sizes: segments(CHUNK_BYTES[q], PMTU),
    };
    let last = msg.sizes.len() - 1;
    let (arrivals, t) = msg.burst(m, 0, t0, true);
    let mut done = arrivals[last].unwrap_or(t);
    if let Some(gap) = arrivals.iter().position(Option::is_none) {
        // The next packet arrives out of sequence: NAK, then go-back-N from the gap.
        let nak_at = arrivals[gap + 1].unwrap_or(t) + 300;
        let nak_rx = msg.ack(m, nak_at, gap, syndrome::NAK_PSN_SEQUENCE, *msn);
        let (again, end) = msg.burst(m, gap, nak_rx.unwrap_or(nak_at) + 300, false);
        done = again.last().copied().flatten().unwrap_or(end);
    }
    *msn += 1;
    msg.ack(m, done + 400, last, syndrome::ACK_UNLIMITED, *msn);
    psn_add(first_psn, msg.sizes.len() as u32)
}

/// Sort each node's frames into its capture (own clock) and resolve the truth's frame numbers.
fn finish(m: Model) -> Allreduce {
    let mut frame_of = std::collections::HashMap::new();
    let mut samples = Vec::new();
    for (node, mut seen) in m.seen.into_iter().enumerate() {
        seen.sort_by_key(|s| (s.t, s.seq));
        let records = seen
            .iter()
            .enumerate()
            .map(|(k, s)| {
                frame_of.insert(s.seq, k as u64 + 1);
                let ts = (BASE_NS + s.t) as i64 + OFFSETS_NS[node];
                Record::new(ts as u64, s.frame.clone())
            })
            .collect();
        samples.push(Sample {
            file: [
                "allreduce_node0.pcap",
                "allreduce_node1.pcap",
                "allreduce_node2.pcap",
            ][node],
            format: Format::Pcap,
            records,
        });
    }
    let resolve = |v: &[(TruthPacket, usize)]| {
        v.iter()
            .map(|(p, seq)| TruthPacket {
                frame: frame_of[seq],
                ..*p
            })
            .collect()
    };
    Allreduce {
        samples,
        truth: Truth {
            offsets_ns: OFFSETS_NS,
            links: m.links,
            lost: resolve(&m.lost),
            missed: resolve(&m.missed),
        },
    }
}
