//! A DCQCN-style rate cut with a known rate before and after each train of CNPs (issue 39),
//! captured on the sender, for the before/after-CNP rate analysis.
//!
//! 10.0.0.1 (QPN 0x000a41) writes 1024-byte RDMA WRITE ONLYs (AckReq on every 16th, each ACKed
//! 450 ns later by 10.0.0.2, QPN 0x000b41, so the two flows pair) at `before_gbps`. Then a train
//! of `cnps` CNPs (opcode 0x81, BECN, DestQP 0x000a41) arrives `spacing_ns` apart; on each the
//! sender steps its rate down geometrically, reaching `after_gbps` on the last, which it holds
//! for [`HOLD_NS`] (1.2 ms); then it sends at `before_gbps` again for [`HIGH_NS`] (1.5 ms)
//! before the next train. As the tap is at the sender, a CNP takes effect when captured: the next
//! packet leaves one interval of the new rate after the previous one.
//!
//! Rates count transport bytes (BTH through ICRC: 12 + 16 + 1024 + 4 = 1056 bytes a packet);
//! a packet interval is rounded to the ns, and the truth holds the rates those intervals give.

use super::{Path, Trace, host, op, syndrome};
use crate::decode::Reth;
use crate::synth::capfile::Record;

/// Transport bytes of a data packet: BTH 12, RETH 16, payload 1024, ICRC 4.
pub const TRANSPORT_BYTES: u64 = 12 + 16 + 1024 + 4;
/// How long the sender holds the rate it has after a train's last CNP, ns.
pub const HOLD_NS: u64 = 1_200_000;
/// How long the sender runs at the higher rate before each train, ns.
pub const HIGH_NS: u64 = 1_500_000;
/// The sender's QPN (the CNPs' DestQP).
pub const SENDER_QPN: u32 = 0x000a41;
/// The receiver's QPN.
pub const RECEIVER_QPN: u32 = 0x000b41;

/// What the writer is asked for.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Rate before each train, Gb/s.
    pub before_gbps: f64,
    /// Rate after each train's last CNP, Gb/s.
    pub after_gbps: f64,
    /// CNPs per train.
    pub cnps: u32,
    /// Time between two CNPs of a train, ns.
    pub spacing_ns: u64,
    /// Trains.
    pub trains: u32,
}

/// What the writer did.
#[derive(Clone, Debug, PartialEq)]
pub struct Truth {
    /// The rate the sender had before each train, Gb/s (from the rounded interval).
    pub before_gbps: f64,
    /// The rate it had after each train's last CNP, Gb/s.
    pub after_gbps: f64,
    /// Capture times of every train's CNPs, ns from the start.
    pub trains: Vec<Vec<u64>>,
    /// Data packets sent.
    pub packets: u64,
}

/// The sender: its next PSN and departure time.
struct Sender {
    data: Path,
    back: Path,
    psn: u32,
    next: u64,
    trace: Trace,
}

/// The packet interval of `gbps`, ns.
fn interval(gbps: f64) -> u64 {
    (TRANSPORT_BYTES as f64 * 8.0 / gbps).round() as u64
}

/// The rate an `interval` gives, Gb/s.
fn rate(interval: u64) -> f64 {
    TRANSPORT_BYTES as f64 * 8.0 / interval as f64
}

impl Sender {
    /// Send one packet every `interval` ns while it leaves before `until`.
    fn send_until(&mut self, until: u64, interval: u64) {
        while self.next < until {
            let mut p = self.data.packet(op::WRITE_ONLY, self.psn);
            p.payload_len = 1024;
            p.ext.reth = Reth {
                va: 0x7f20_0000_0000 + u64::from(self.psn) * 1024,
                rkey: 0x41,
                dma_len: 1024,
            };
            p.bth.ack_req = self.psn % 16 == 15;
            self.trace.push(self.next, &p);
            if p.bth.ack_req {
                let ack = self
                    .back
                    .ack(self.psn, syndrome::ACK_UNLIMITED, self.psn / 16 + 1);
                self.trace.push(self.next + 450, &ack);
            }
            self.psn += 1;
            self.next += interval;
        }
    }

    /// A CNP captured at `at`; the rate changes to `interval` from the next packet on.
    fn cnp(&mut self, at: u64, old: u64, new: u64) {
        let mut c = self.back.packet(op::CNP, 0);
        c.bth.becn = true;
        self.trace.push(at, &c);
        // The next packet leaves one new interval after the previous one (not before `at`).
        self.next = (self.next - old + new).max(at + 1);
    }
}

/// Play the scenario: its frames and truth.
pub fn scenario(p: &Params) -> (Vec<Record>, Truth) {
    let (a, b) = (host(1), host(2));
    let mut s = Sender {
        data: Path {
            from: a,
            to: b,
            dest_qp: RECEIVER_QPN,
            udp_src: 0xc410,
            tos: 0x6a,
        },
        back: Path {
            from: b,
            to: a,
            dest_qp: SENDER_QPN,
            udp_src: 0xd410,
            tos: 0x6a,
        },
        psn: 0,
        next: 0,
        trace: Trace::default(),
    };
    let high = interval(p.before_gbps);
    let low = interval(p.after_gbps);
    let ratio = p.after_gbps / p.before_gbps;
    let mut truth = Truth {
        before_gbps: rate(high),
        after_gbps: rate(low),
        trains: Vec::new(),
        packets: 0,
    };
    let mut t = HIGH_NS;
    for _ in 0..p.trains {
        let mut times = Vec::new();
        let mut cur = high;
        for k in 1..=p.cnps {
            s.send_until(t, cur);
            let next = if k == p.cnps {
                low
            } else {
                interval(p.before_gbps * ratio.powf(f64::from(k) / f64::from(p.cnps)))
            };
            s.cnp(t, cur, next);
            times.push(t);
            cur = next;
            if k < p.cnps {
                t += p.spacing_ns;
            }
        }
        s.send_until(t + HOLD_NS, low);
        s.next = s.next - low + high;
        t += HOLD_NS + HIGH_NS;
        s.send_until(t, high);
        truth.trains.push(times);
    }
    s.send_until(t + HOLD_NS, high);
    truth.packets = u64::from(s.psn);
    (s.trace.records(), truth)
}
