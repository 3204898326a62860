//! `read_timeout.pcap`: RDMA READs whose responses are lost, captured on the requester.
//!
//! Host 10.0.0.1 (QPN 0x000a21) reads 12 buffers of 3000 bytes from 10.0.0.2 (QPN 0x000b22)
//! over path MTU 1024, at most 4 READs outstanding (the responder's max_rd_atomic). Each READ
//! REQUEST reserves 3 PSNs, one per READ RESPONSE (FIRST, MIDDLE, LAST; IBTA Vol. 1 §9.4.4).
//! Two losses, each ended by the requester's local ACK timeout (4.096 µs × 2^14 ≈ 67.1 ms,
//! IBTA §9.7.6.1.3) since nothing else is outstanding to reveal them earlier:
//! - the RESPONSE LAST of READ 8 (the last of the second batch of four) is lost: after the timeout the requester re-issues the READ from
//!   the missing PSN (VA advanced by 2048 bytes, 952 bytes left), answered by one READ
//!   RESPONSE ONLY (§9.7.5.1.4: a re-issued READ may start in the middle of the original);
//! - the REQUEST of READ 12 (the last of the third batch) is lost: after the timeout it is
//!   sent again whole, at the same PSN.

use rand::RngExt;

use super::super::frame::Packet;
use super::{
    Format, Path, Sample, Trace, host, op, psn_add, read_response_opcode, segments, wire_ns,
};
use crate::decode::{Aeth, Reth};

/// Path MTU in bytes.
pub const PMTU: u32 = 1024;
/// Bytes per READ.
pub const READ_BYTES: u32 = 3000;
/// READs posted.
pub const READS: usize = 12;
/// PSN of the first READ REQUEST.
pub const FIRST_PSN: u32 = 0x00_e000;
/// Local ACK timeout in ns (4.096 µs × 2^14).
pub const TIMEOUT_NS: u64 = 4_096 * (1 << 14);
/// READ (from 0) whose RESPONSE LAST is lost.
pub const LAST_LOST: usize = 7;
/// READ (from 0) whose REQUEST is lost.
pub const REQUEST_LOST: usize = 11;
/// Requester QPN (destination of the responses).
pub const REQUESTER_QPN: u32 = 0x000a21;
/// Responder QPN (destination of the requests).
pub const RESPONDER_QPN: u32 = 0x000b22;

/// What the model did, for tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truth {
    /// READ REQUEST packets captured (first transmissions and re-issues).
    pub requests: usize,
    /// READ RESPONSE packets captured.
    pub responses: usize,
    /// Re-issued READ REQUESTs: (PSN, VA, DMA length in bytes).
    pub reissued: Vec<(u32, u64, u32)>,
    /// Every READ completed: bytes read in all.
    pub bytes: u64,
}

/// The sample and its truth.
pub struct ReadTimeout {
    /// `read_timeout.pcap`.
    pub sample: Sample,
    /// Ground truth.
    pub truth: Truth,
}

const VA: u64 = 0x7f2e_4000_0000;
const RKEY: u32 = 0x0004_1b2c;

struct Link {
    req: Path,
    resp: Path,
    trace: Trace,
    rng: rand::rngs::Xoshiro256PlusPlus,
    truth: Truth,
    /// The responder sends one response at a time: when its last one leaves (ns).
    resp_busy: u64,
    /// Last arrival on each direction (ns): one path, so no reordering.
    last_req: u64,
    last_resp: u64,
}

impl Link {
    /// Arrival time of a packet sent at `t` on the path whose last arrival is `*last`: a
    /// 2 µs propagation and switching delay with up to 120 ns of jitter, in order.
    fn arrival(&mut self, t: u64, last: u64) -> u64 {
        (t + 2_000 + self.rng.random_range(0..120u64)).max(last + 60)
    }

    /// The requester sends a READ REQUEST at `t` (captured then); returns the arrival time at
    /// the responder, or `None` when `lost`.
    fn request(&mut self, t: u64, psn: u32, va: u64, len: u32, lost: bool) -> Option<u64> {
        let mut p = self.req.packet(op::READ_REQUEST, psn);
        p.ext.reth = Reth {
            va,
            rkey: RKEY,
            dma_len: len,
        };
        p.bth.ack_req = true;
        self.trace.push(t, &p);
        self.truth.requests += 1;
        let arrive = self.arrival(t, self.last_req);
        self.last_req = arrive;
        (!lost).then_some(arrive)
    }

    /// The responder answers a READ that arrived at `t`; returns the time the last response
    /// that was not lost reached the requester. `drop_last` loses the final packet.
    fn respond(&mut self, t: u64, psn: u32, len: u32, msn: u32, drop_last: bool) -> u64 {
        let segs = segments(len, PMTU);
        let mut t_out = (t + 600).max(self.resp_busy);
        let mut last_arrival = t;
        for (i, &n) in segs.iter().enumerate() {
            let mut p: Packet = self
                .resp
                .packet(read_response_opcode(i, segs.len()), psn_add(psn, i as u32));
            p.payload_len = n as usize;
            // FIRST, LAST and ONLY carry an AETH (IBTA §9.4.4).
            p.ext.aeth = Aeth {
                syndrome: 0x1f,
                msn,
            };
            let frame = p.build().len();
            let arrive = self.arrival(t_out, self.last_resp);
            self.last_resp = arrive;
            t_out += wire_ns(frame, 25.0);
            self.resp_busy = t_out;
            if drop_last && i + 1 == segs.len() {
                continue;
            }
            self.trace.push(arrive, &p);
            self.truth.responses += 1;
            last_arrival = last_arrival.max(arrive);
        }
        last_arrival
    }
}

/// Play the scenario.
pub fn scenario() -> ReadTimeout {
    let (a, b) = (host(1), host(2));
    let mut l = Link {
        req: Path {
            from: a,
            to: b,
            dest_qp: RESPONDER_QPN,
            udp_src: 0xc2a3,
            tos: 0x6a,
        },
        resp: Path {
            from: b,
            to: a,
            dest_qp: REQUESTER_QPN,
            udp_src: 0xd4b5,
            tos: 0x6a,
        },
        trace: Trace::default(),
        rng: super::rng(0x7265_6164),
        truth: Truth {
            requests: 0,
            responses: 0,
            reissued: Vec::new(),
            bytes: 0,
        },
        resp_busy: 0,
        last_req: 0,
        last_resp: 0,
    };
    let per_read = segments(READ_BYTES, PMTU).len() as u32;
    let mut t = 10_000u64;
    let mut msn = 0u32;
    // Batches of at most 4 outstanding READs: 0..4, 4..8, 8..12.
    for batch in (0..READS).collect::<Vec<_>>().chunks(4) {
        let mut done = t;
        for &r in batch {
            let psn = psn_add(FIRST_PSN, r as u32 * per_read);
            let va = VA + r as u64 * u64::from(READ_BYTES);
            let arrive = l.request(t, psn, va, READ_BYTES, r == REQUEST_LOST);
            t += 150;
            let end = match arrive {
                Some(at) => {
                    msn += 1;
                    l.respond(at, psn, READ_BYTES, msn, r == LAST_LOST)
                }
                None => t,
            };
            done = done.max(end);
            if r == LAST_LOST || r == REQUEST_LOST {
                // Nothing after this READ in the batch reveals the loss: the timeout does.
                let (rpsn, rva, rlen) = if r == LAST_LOST {
                    let sent = 2 * PMTU;
                    (psn_add(psn, 2), va + u64::from(sent), READ_BYTES - sent)
                } else {
                    (psn, va, READ_BYTES)
                };
                let t_retry = t - 150 + TIMEOUT_NS;
                l.truth.reissued.push((rpsn, rva, rlen));
                let at = l
                    .request(t_retry, rpsn, rva, rlen, false)
                    .unwrap_or(t_retry);
                if r == REQUEST_LOST {
                    msn += 1;
                }
                done = l.respond(at, rpsn, rlen, msn, false);
                t = done;
            }
        }
        t = done + 1_500;
    }
    l.truth.bytes = READS as u64 * u64::from(READ_BYTES);
    ReadTimeout {
        sample: Sample {
            file: "read_timeout.pcap",
            format: Format::Pcap,
            records: l.trace.records(),
        },
        truth: l.truth,
    }
}
