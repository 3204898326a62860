//! Scenario writers for the findings (issue 34): one fault each — retry exhaustion at a given
//! local ACK timeout exponent and retry count, a silent responder (both directions captured, and
//! a one-sided capture), RNR NAKs, a fatal NAK, Not-ECT data, data and ACKs in different
//! traffic classes, CNPs without CE marks, and clean traffic — with the truth the tests compare
//! the findings with: the QP, PSN, attempts, timeout exponent and the frame numbers of the
//! evidence, from the writer's own construction.
//!
//! The model: host 10.0.0.1 (QPN [`REQ_QP`]) sends RDMA WRITE ONLY requests of
//! [`WRITE_BYTES`] bytes with AckReq to 10.0.0.2 (QPN [`RESP_QP`]), which ACKs each after
//! [`ACK_NS`]; a second, healthy QP pair from 10.0.0.1 (QPN [`SIDE_REQ_QP`]) to 10.0.0.3
//! (QPN [`SIDE_RESP_QP`]) keeps the capture going while the first one fails. Both directions of
//! a QP pair share one UDP source port, so the analysis pairs them. The capture point sees every
//! packet that was sent (losses happen after it).

use super::super::capfile::Record;
use super::super::frame::Packet;
use super::{BASE_NS, Path, host, op, psn_add, rng, syndrome};
use crate::decode::Reth;
use rand::RngExt;

/// Requester QPN of the QP pair that fails.
pub const REQ_QP: u32 = 0x0001a1;
/// Responder QPN of the QP pair that fails (the DestQP of its requests).
pub const RESP_QP: u32 = 0x0001b1;
/// Requester QPN of the healthy QP pair.
pub const SIDE_REQ_QP: u32 = 0x0002a2;
/// Responder QPN of the healthy QP pair.
pub const SIDE_RESP_QP: u32 = 0x0002c3;
/// First request PSN of the failing QP pair.
pub const FIRST_PSN: u32 = 0x12_3400;
/// Payload of every WRITE, bytes.
pub const WRITE_BYTES: usize = 512;
/// Request → ACK at the capture point, ns.
pub const ACK_NS: u64 = 3_000;
/// DSCP 26 with ECT(0): the usual RoCE traffic class (IP TOS byte).
pub const TOS_ROCE: u8 = (26 << 2) | 2;
/// RNR timer code the RNR scenario's responder sends (IBTA Vol 1 Table 45: 1.28 ms).
pub const RNR_CODE: u8 = 14;
/// AETH syndrome of a NAK: remote access error (IBTA Vol 1 Table 45, `011 00010`).
pub const NAK_REMOTE_ACCESS: u8 = 0x62;
/// CNP spacing in the CNP scenario, ns (the NIC's `min_time_between_cnps`).
pub const CNP_SPACING_NS: u64 = 50_000;

/// What the scenario did, for the tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Truth {
    /// DestQP of the flow the finding concerns.
    pub dest_qp: u32,
    /// The PSN concerned.
    pub psn: Option<u32>,
    /// Sends of the retried PSN (original and retries).
    pub attempts: Option<u32>,
    /// The local ACK timeout exponent the requester ran.
    pub timeout_exp: Option<u8>,
    /// Evidence frames a finding must list (1-based).
    pub frames: Vec<u64>,
    /// Events the finding counts (requests, NAKs, CNPs).
    pub count: Option<u64>,
    /// Time lost, ns (RNR: NAK → retry, summed).
    pub time_lost_ns: Option<u64>,
}

/// A scenario's frames and truth.
pub struct Fault {
    /// Captured frames, in time order.
    pub records: Vec<Record>,
    /// Ground truth.
    pub truth: Truth,
}

/// Packets pushed with their capture time (ns since [`BASE_NS`]); frame numbers are known once
/// they are put in time order.
#[derive(Default)]
struct Capture {
    pkts: Vec<(u64, usize, Vec<u8>)>,
}

impl Capture {
    /// Capture `p` at `ts`; returns its id for [`Capture::finish`].
    fn push(&mut self, ts: u64, p: &Packet) -> usize {
        let id = self.pkts.len();
        self.pkts.push((ts, id, p.build()));
        id
    }

    /// The records in time order (ties in push order) and the frame number of each id.
    fn finish(mut self) -> (Vec<Record>, Vec<u64>) {
        self.pkts.sort_by_key(|(t, id, _)| (*t, *id));
        let mut frame_of = vec![0; self.pkts.len()];
        let records = self
            .pkts
            .into_iter()
            .enumerate()
            .map(|(n, (t, id, b))| {
                frame_of[id] = n as u64 + 1;
                Record::new(BASE_NS + t, b)
            })
            .collect();
        (records, frame_of)
    }
}

/// The two directions of a QP pair between hosts `a` and `b` with TOS bytes for each.
fn pair(a: u8, b: u8, req_qp: u32, resp_qp: u32, tos: (u8, u8)) -> (Path, Path) {
    let sport = 0xc000 | (req_qp as u16 & 0x0fff);
    (
        Path {
            from: host(a),
            to: host(b),
            dest_qp: resp_qp,
            udp_src: sport,
            tos: tos.0,
        },
        Path {
            from: host(b),
            to: host(a),
            dest_qp: req_qp,
            udp_src: sport,
            tos: tos.1,
        },
    )
}

fn main_pair(tos: (u8, u8)) -> (Path, Path) {
    pair(1, 2, REQ_QP, RESP_QP, tos)
}

/// A WRITE ONLY with AckReq on `req` at `psn`.
fn write(req: &Path, psn: u32) -> Packet {
    let mut p = req.packet(op::WRITE_ONLY, psn);
    p.ext.reth = Reth {
        va: 0x7f00_0000_0000 + u64::from(psn) * 4096,
        rkey: 0x1234,
        dma_len: WRITE_BYTES as u32,
    };
    p.payload_len = WRITE_BYTES;
    p.bth.ack_req = true;
    p
}

/// `n` WRITEs ACKed one by one from `t`, 10 µs apart; returns the time after them.
fn healthy(c: &mut Capture, req: &Path, resp: &Path, psn: u32, n: u32, t: u64) -> u64 {
    for k in 0..n {
        let at = t + u64::from(k) * 10_000;
        c.push(at, &write(req, psn_add(psn, k)));
        c.push(
            at + ACK_NS,
            &resp.ack(psn_add(psn, k), syndrome::ACK_UNLIMITED, k + 1),
        );
    }
    t + u64::from(n) * 10_000
}

/// The healthy QP pair's WRITEs every `every` ns from `from` to `to` (ACKed unless `one_way`).
fn side(c: &mut Capture, from: u64, to: u64, every: u64, one_way: bool) {
    let (req, resp) = pair(1, 3, SIDE_REQ_QP, SIDE_RESP_QP, (TOS_ROCE, TOS_ROCE));
    let mut t = from;
    let mut k = 0u32;
    while t <= to {
        c.push(t, &write(&req, psn_add(0x50_0000, k)));
        if !one_way {
            c.push(
                t + 1_500,
                &resp.ack(psn_add(0x50_0000, k), syndrome::ACK_UNLIMITED, k + 1),
            );
        }
        t += every;
        k += 1;
    }
}

/// Retry exhaustion: four WRITEs ACKed, then the path to the responder dies; the next WRITE
/// is sent, and re-sent `retry_cnt` times, each after the local ACK timeout 4.096 µs ·
/// 2^`timeout_exp` (plus up to 1/8 of it: the timer's granularity); then the QP is in the
/// error state and sends nothing. The healthy pair goes on for two more timeouts.
pub fn retry_exhausted(timeout_exp: u8, retry_cnt: u8) -> Fault {
    let timeout = 4_096u64 << timeout_exp;
    let mut r = rng(0x7265_7472 ^ u64::from(timeout_exp) << 8 ^ u64::from(retry_cnt));
    let mut c = Capture::default();
    let (req, resp) = main_pair((TOS_ROCE, TOS_ROCE));
    let t = healthy(&mut c, &req, &resp, FIRST_PSN, 4, 10_000);
    let lost = psn_add(FIRST_PSN, 4);
    c.push(t, &write(&req, lost));
    let mut at = t;
    let mut retries = Vec::new();
    for _ in 0..retry_cnt {
        at += timeout + r.random_range(0..=timeout / 8);
        retries.push(c.push(at, &write(&req, lost)));
    }
    let every = (timeout / 4).max(2_000);
    side(&mut c, 5_000, at + 2 * timeout + every, every, false);
    let (records, frame_of) = c.finish();
    Fault {
        records,
        truth: Truth {
            dest_qp: RESP_QP,
            psn: Some(lost),
            attempts: Some(u32::from(retry_cnt) + 1),
            timeout_exp: Some(timeout_exp),
            frames: retries.iter().map(|&i| frame_of[i]).collect(),
            ..Truth::default()
        },
    }
}

/// A silent responder: three WRITEs to 10.0.0.2 and not a packet back (a routing or GID
/// mismatch), while the healthy pair is answered for 2 ms; with `one_sided`, the healthy pair's
/// ACKs are not captured either (a capture of one direction only).
pub fn silent_responder(one_sided: bool) -> Fault {
    let mut c = Capture::default();
    let (req, _) = main_pair((TOS_ROCE, TOS_ROCE));
    let first = c.push(20_000, &write(&req, FIRST_PSN));
    for k in 1..3 {
        c.push(
            20_000 + k * 10_000,
            &write(&req, psn_add(FIRST_PSN, k as u32)),
        );
    }
    side(&mut c, 5_000, 2_000_000, 100_000, one_sided);
    let (records, frame_of) = c.finish();
    Fault {
        records,
        truth: Truth {
            dest_qp: RESP_QP,
            psn: Some(FIRST_PSN),
            frames: vec![frame_of[first]],
            count: Some(3),
            ..Truth::default()
        },
    }
}

/// RNR: two SENDs each refused once with an RNR NAK (timer code [`RNR_CODE`]) and re-sent
/// after the timer plus 5–25 µs, then ACKed.
pub fn rnr() -> Fault {
    let timer_ns = u64::from(crate::decode::headers::RNR_TIMER_US[RNR_CODE as usize]) * 1_000;
    let mut r = rng(0x0072_6e72);
    let mut c = Capture::default();
    let (req, resp) = main_pair((TOS_ROCE, TOS_ROCE));
    let mut t = 10_000;
    let mut naks = Vec::new();
    let mut lost = 0;
    for k in 0..2u32 {
        let psn = psn_add(FIRST_PSN, k);
        let mut send = req.packet(op::SEND_ONLY, psn);
        send.payload_len = 256;
        send.bth.ack_req = true;
        c.push(t, &send);
        let nak_at = t + ACK_NS;
        naks.push(c.push(nak_at, &resp.ack(psn, 0x20 | RNR_CODE, k)));
        let retry_at = nak_at + timer_ns + r.random_range(5_000..25_000);
        lost += retry_at - nak_at;
        c.push(retry_at, &send);
        c.push(
            retry_at + ACK_NS,
            &resp.ack(psn, syndrome::ACK_UNLIMITED, k + 1),
        );
        t = retry_at + 20_000;
    }
    let (records, frame_of) = c.finish();
    Fault {
        records,
        truth: Truth {
            dest_qp: RESP_QP,
            frames: naks.iter().map(|&i| frame_of[i]).collect(),
            count: Some(2),
            time_lost_ns: Some(lost),
            ..Truth::default()
        },
    }
}

/// A fatal NAK: the third WRITE names an rkey the responder does not know, and gets a NAK
/// remote access error; the requester's QP is then in the error state and sends nothing.
pub fn fatal_nak() -> Fault {
    let mut c = Capture::default();
    let (req, resp) = main_pair((TOS_ROCE, TOS_ROCE));
    let t = healthy(&mut c, &req, &resp, FIRST_PSN, 2, 10_000);
    let bad = psn_add(FIRST_PSN, 2);
    let mut w = write(&req, bad);
    w.ext.reth.rkey = 0xdead;
    c.push(t, &w);
    let nak = c.push(t + ACK_NS, &resp.ack(bad, NAK_REMOTE_ACCESS, 2));
    let (records, frame_of) = c.finish();
    Fault {
        records,
        truth: Truth {
            dest_qp: RESP_QP,
            psn: Some(bad),
            frames: vec![frame_of[nak]],
            ..Truth::default()
        },
    }
}

/// Eight WRITEs ACKed, data with TOS `data_tos`, ACKs with `ack_tos`; the first frame is the
/// first WRITE.
fn exchange(data_tos: u8, ack_tos: u8) -> Fault {
    let mut c = Capture::default();
    let (req, resp) = main_pair((data_tos, ack_tos));
    healthy(&mut c, &req, &resp, FIRST_PSN, 8, 10_000);
    let (records, _) = c.finish();
    Fault {
        records,
        truth: Truth {
            dest_qp: RESP_QP,
            frames: vec![1],
            ..Truth::default()
        },
    }
}

/// Clean traffic: ACKed, ECT(0), DSCP 26 both ways.
pub fn clean() -> Fault {
    exchange(TOS_ROCE, TOS_ROCE)
}

/// Data sent Not-ECT (DSCP 26, ECN 00), ACKed.
pub fn not_ect() -> Fault {
    exchange(26 << 2, 26 << 2)
}

/// Data on DSCP 26, its ACKs on DSCP 0 (both ECT(0)): the responder's traffic class differs.
pub fn priority_mix() -> Fault {
    exchange(TOS_ROCE, 2)
}

/// CNPs without CE: data on DSCP 0 with ECT(0), never CE-marked at the capture point (the
/// sender's side), and three CNPs on DSCP 48 back to the sender, [`CNP_SPACING_NS`] apart.
pub fn cnp_without_ce() -> Fault {
    let mut c = Capture::default();
    let (req, resp) = main_pair((2, 2));
    healthy(&mut c, &req, &resp, FIRST_PSN, 20, 10_000);
    let mut cnps = Vec::new();
    for k in 0..3 {
        let mut cnp = Path {
            tos: 48 << 2,
            ..resp
        }
        .packet(op::CNP, 0);
        cnp.bth.becn = true;
        cnps.push(c.push(15_000 + k * CNP_SPACING_NS, &cnp));
    }
    let (records, frame_of) = c.finish();
    Fault {
        records,
        truth: Truth {
            dest_qp: RESP_QP,
            frames: vec![frame_of[cnps[0]]],
            count: Some(3),
            ..Truth::default()
        },
    }
}

/// Data whose DSCP changes within the QP: the first five WRITEs on DSCP 26, the last three on
/// DSCP 10 (a rewrite rule on the path), all ECT(0); the ACKs on DSCP 26.
pub fn dscp_change() -> Fault {
    let mut c = Capture::default();
    let (req, resp) = main_pair((TOS_ROCE, TOS_ROCE));
    let moved = Path {
        tos: (10 << 2) | 2,
        ..req
    };
    for k in 0..8u32 {
        let at = 10_000 + u64::from(k) * 10_000;
        let psn = psn_add(FIRST_PSN, k);
        c.push(at, &write(if k < 5 { &req } else { &moved }, psn));
        c.push(at + ACK_NS, &resp.ack(psn, syndrome::ACK_UNLIMITED, k + 1));
    }
    let (records, _) = c.finish();
    Fault {
        records,
        truth: Truth {
            dest_qp: RESP_QP,
            frames: vec![1],
            count: Some(3),
            ..Truth::default()
        },
    }
}
