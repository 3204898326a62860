//! `congestion.pcap`: two senders into one receiver (incast), captured on the receiver.
//!
//! 10.0.0.1 (QPN 0x000a31) and 10.0.0.2 (QPN 0x000a32) each write 150 messages of 512 bytes
//! (RDMA WRITE ONLY, DSCP 26, ECT(0), AckReq on every 16th) to 10.0.0.3 (QPNs 0x000c31,
//! 0x000c32), starting at the 25 Gb/s line rate, the second 5 µs after the first. The switch
//! port towards the receiver drains at 25 Gb/s, so a queue builds; the switch marks packets CE
//! with a probability rising linearly from 0 at 4 KB of queue to 1 at 24 KB (RED/ECN as DCQCN
//! configures it). The receiver's NIC (the notification point) answers CE-marked packets with a
//! CNP (BTH opcode 0x81, BECN set, DestQP = the sender's QP; IBTA Annex A17 §A17.9.2) at most
//! once per 4 µs per QP (ConnectX `min_time_between_cnps`), sent with DSCP 48. Each sender (the
//! reaction point) cuts its rate on a CNP, DCQCN style: α ← (1 − g)·α + g with g = 1/16, target
//! ← rate, rate ← rate·(1 − α/2); every 20 µs without a CNP the target rises by 2 Gb/s
//! (additive increase) and the rate recovers halfway to it (fast recovery); the timer is shorter
//! than a NIC's so that recovery shows in a small sample.

use rand::RngExt;

use super::{Format, Host, Path, Sample, Trace, host, op, psn_add, syndrome, wire_ns};
use crate::decode::Reth;

/// Messages per sender.
pub const MESSAGES: usize = 150;
/// Bytes per message (one WRITE ONLY packet).
pub const MESSAGE_BYTES: usize = 512;
/// Line and bottleneck rate in Gb/s.
pub const LINE_GBPS: f64 = 25.0;
/// Minimum time between two CNPs to one QP, ns.
pub const CNP_INTERVAL_NS: u64 = 4_000;
/// Sender QPNs (destinations of CNPs and ACKs).
pub const SENDER_QPNS: [u32; 2] = [0x000a31, 0x000a32];
/// Receiver QPNs (destinations of the WRITEs).
pub const RECEIVER_QPNS: [u32; 2] = [0x000c31, 0x000c32];
/// First PSN of each sender.
pub const FIRST_PSNS: [u32; 2] = [0x10_0000, 0x20_0000];

/// What the model did, per sender (index 0: 10.0.0.1, 1: 10.0.0.2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Truth {
    /// WRITE packets captured per sender.
    pub packets: [usize; 2],
    /// Of those, CE-marked.
    pub ce: [usize; 2],
    /// CNPs the receiver sent to each sender.
    pub cnps: [usize; 2],
    /// ACKs the receiver sent to each sender.
    pub acks: [usize; 2],
    /// Each sender's lowest rate in Gb/s.
    pub min_rate_gbps: [f64; 2],
    /// Each sender's rate (Gb/s, wire bytes: frame + 20 of preamble and gap) when the first
    /// CNP reached it, before its cut.
    pub rate_at_first_cnp_gbps: [f64; 2],
    /// Each sender's rate (Gb/s, wire bytes) after its cut on the last CNP that reached it.
    pub rate_after_last_cnp_gbps: [f64; 2],
}

/// The sample and its truth.
pub struct Congestion {
    /// `congestion.pcap`.
    pub sample: Sample,
    /// Ground truth.
    pub truth: Truth,
}

/// DCQCN reaction point state of one sender.
struct Sender {
    data: Path,
    next_send: u64,
    sent: usize,
    rate: f64,
    target: f64,
    alpha: f64,
    last_change: u64,
    cnp_arrivals: Vec<u64>,
    /// The rate before the first cut and after the latest, Gb/s.
    cut: Option<(f64, f64)>,
}

impl Sender {
    fn react(&mut self, now: u64) {
        while let Some(&t) = self.cnp_arrivals.first() {
            if t > now {
                break;
            }
            self.cnp_arrivals.remove(0);
            self.alpha = (1.0 - 1.0 / 16.0) * self.alpha + 1.0 / 16.0;
            self.target = self.rate;
            let first = self.cut.map_or(self.rate, |c| c.0);
            self.rate *= 1.0 - self.alpha / 2.0;
            self.cut = Some((first, self.rate));
            self.last_change = t;
        }
        // Every 20 µs without a CNP: the target rises by 2 Gb/s (additive increase) and the
        // rate recovers halfway to it (fast recovery), up to the line rate.
        while now >= self.last_change + 20_000 && self.rate < LINE_GBPS {
            self.target = (self.target + 2.0).min(LINE_GBPS);
            self.rate = (self.rate + self.target) / 2.0;
            self.last_change += 20_000;
        }
    }
}

/// Play the scenario.
pub fn scenario() -> Congestion {
    let r: Host = host(3);
    let mut senders: Vec<Sender> = (0..2)
        .map(|s| Sender {
            data: Path {
                from: host(s as u8 + 1),
                to: r,
                dest_qp: RECEIVER_QPNS[s],
                udp_src: 0xc300 + s as u16,
                tos: 0x6a,
            },
            next_send: 10_000 + 5_000 * s as u64,
            sent: 0,
            rate: LINE_GBPS,
            target: LINE_GBPS,
            alpha: 1.0,
            last_change: 0,
            cnp_arrivals: Vec::new(),
            cut: None,
        })
        .collect();
    let mut rng = super::rng(0x6365_6e63);
    let mut trace = Trace::default();
    let mut truth = Truth {
        min_rate_gbps: [LINE_GBPS; 2],
        ..Truth::default()
    };
    let mut port_free = 0u64;
    let mut last_cnp = [None::<u64>; 2];
    while let Some(s) = (0..2)
        .filter(|&s| senders[s].sent < MESSAGES)
        .min_by_key(|&s| senders[s].next_send)
    {
        let now = senders[s].next_send;
        senders[s].react(now);
        let snd = &mut senders[s];
        let mut p = snd
            .data
            .packet(op::WRITE_ONLY, psn_add(FIRST_PSNS[s], snd.sent as u32));
        p.payload_len = MESSAGE_BYTES;
        p.ext.reth = Reth {
            va: 0x7f10_0000_0000 + (snd.sent * MESSAGE_BYTES) as u64,
            rkey: 0x77,
            dma_len: MESSAGE_BYTES as u32,
        };
        p.bth.ack_req = snd.sent % 16 == 15;
        let len = p.build().len();
        snd.sent += 1;
        snd.next_send = now + (wire_ns(len, 1.0) as f64 / snd.rate).round() as u64;
        truth.min_rate_gbps[s] = truth.min_rate_gbps[s].min(snd.rate);
        // Switch egress queue.
        let at_switch = now + 500;
        let backlog_ns = port_free.saturating_sub(at_switch);
        let queue_bytes = backlog_ns as f64 * LINE_GBPS / 8.0;
        let p_mark = ((queue_bytes - 4_096.0) / 20_480.0).clamp(0.0, 1.0);
        let ce = rng.random::<f64>() < p_mark;
        port_free = port_free.max(at_switch) + wire_ns(len, LINE_GBPS);
        if ce {
            p.set_ecn(3);
        }
        let captured = port_free + 300;
        trace.push(captured, &p);
        truth.packets[s] += 1;
        let back = Path {
            from: r,
            to: host(s as u8 + 1),
            dest_qp: SENDER_QPNS[s],
            udp_src: 0xd300 + s as u16,
            tos: 0x6a,
        };
        if ce {
            truth.ce[s] += 1;
            if last_cnp[s].is_none_or(|t| captured + 400 >= t + CNP_INTERVAL_NS) {
                let t_cnp = captured + 400;
                last_cnp[s] = Some(t_cnp);
                let mut cnp = Path { tos: 0xc0, ..back }.packet(op::CNP, 0);
                cnp.bth.becn = true;
                trace.push(t_cnp, &cnp);
                truth.cnps[s] += 1;
                senders[s].cnp_arrivals.push(t_cnp + 1_000);
            }
        }
        if p.bth.ack_req {
            let ack = back.ack(p.bth.psn, syndrome::ACK_UNLIMITED, (senders[s].sent) as u32);
            trace.push(captured + 450, &ack);
            truth.acks[s] += 1;
        }
    }
    for (s, snd) in senders.iter().enumerate() {
        if let Some((first, last)) = snd.cut {
            truth.rate_at_first_cnp_gbps[s] = first;
            truth.rate_after_last_cnp_gbps[s] = last;
        }
    }
    Congestion {
        sample: Sample {
            file: "congestion.pcap",
            format: Format::Pcap,
            records: trace.records(),
        },
        truth,
    }
}
