//! Our own synthesizer: RoCEv2/IPv4 frames built byte by byte (Ethernet, IPv4 with checksum,
//! UDP to 4791, BTH, extended headers, payload, pad, ICRC from `decode::icrc::rocev2_ipv4`), fed
//! through the real decoder into the analyzer. Each scenario asserts the exact counts it was
//! designed to produce.

use roce_inspect::analyze::message::{MessageKind, MessageStatus};
use roce_inspect::analyze::{AnalyzeConfig, Analyzer, Report};
use roce_inspect::decode::{DecodeConfig, IcrcStatus, LinkType, decode_frame, icrc};

const US: u64 = 1_000;
const T0: u64 = 1_700_000_000_000_000_000;

/// One RoCEv2 packet to build.
#[derive(Clone)]
struct P {
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    ecn: u8,
    opcode: u8,
    qp: u32,
    psn: u32,
    ack_req: bool,
    becn: bool,
    ext: Vec<u8>,
    payload: usize,
}

fn be24(v: u32) -> [u8; 3] {
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

fn reth(va: u64, rkey: u32, len: u32) -> Vec<u8> {
    let mut v = va.to_be_bytes().to_vec();
    v.extend(rkey.to_be_bytes());
    v.extend(len.to_be_bytes());
    v
}

fn aeth(syndrome: u8, msn: u32) -> Vec<u8> {
    let mut v = vec![syndrome];
    v.extend(be24(msn));
    v
}

fn deth(qkey: u32, src_qp: u32) -> Vec<u8> {
    let mut v = qkey.to_be_bytes().to_vec();
    v.push(0);
    v.extend(be24(src_qp));
    v
}

/// Ethernet + IPv4 + UDP + BTH + ext + payload + pad + ICRC.
fn build(p: &P) -> Vec<u8> {
    let pad = (4 - p.payload % 4) % 4;
    let mut t = vec![
        p.opcode,
        (pad as u8) << 4,
        0xff,
        0xff,
        if p.becn { 0x40 } else { 0 },
    ];
    t.extend(be24(p.qp));
    t.push(if p.ack_req { 0x80 } else { 0 });
    t.extend(be24(p.psn));
    t.extend(&p.ext);
    t.extend((0..p.payload).map(|i| i as u8));
    t.extend(std::iter::repeat_n(0u8, pad));
    let udp_len = 8 + t.len() + 4;
    let ip_len = 20 + udp_len;
    let mut ip = vec![
        0x45,
        (26 << 2) | p.ecn,
        (ip_len >> 8) as u8,
        ip_len as u8,
        0x12,
        0x34,
        0x40,
        0,
        64,
        17,
        0,
        0,
    ];
    ip.extend(p.src);
    ip.extend(p.dst);
    let mut sum: u32 = ip
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let ck = !(sum as u16);
    ip[10] = (ck >> 8) as u8;
    ip[11] = ck as u8;
    let mut udp = p.sport.to_be_bytes().to_vec();
    udp.extend(4791u16.to_be_bytes());
    udp.extend((udp_len as u16).to_be_bytes());
    udp.extend([0, 0]);
    let crc = icrc::rocev2_ipv4(&ip, &udp, &t);
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend(ip);
    f.extend(udp);
    f.extend(t);
    f.extend(crc.to_le_bytes());
    f
}

/// A capture being synthesised: frames with timestamps, analysed on `run`.
#[derive(Default)]
struct Sim {
    frames: Vec<(u64, Vec<u8>)>,
}

impl Sim {
    fn push(&mut self, ts: u64, p: &P) -> u64 {
        self.frames.push((ts, build(p)));
        self.frames.len() as u64
    }

    fn run(&self, cfg: AnalyzeConfig) -> Report {
        let mut a = Analyzer::new(cfg);
        let dcfg = DecodeConfig::default();
        for (n, (ts, b)) in self.frames.iter().enumerate() {
            let f = decode_frame(LinkType::ETHERNET, b, b.len() as u32, &dcfg);
            let r = f.roce().expect("RoCE");
            assert_eq!(r.icrc.status, IcrcStatus::Good, "frame {}", n + 1);
            assert!(r.malformed.is_none(), "frame {}: {:?}", n + 1, r.malformed);
            a.push(n as u64 + 1, *ts, &f);
        }
        a.finish()
    }
}

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

/// Requester A (QP `qa`) → responder B (QP `qb`).
struct Qp {
    qa: u32,
    qb: u32,
    sport_req: u16,
    sport_resp: u16,
}

impl Qp {
    fn req(&self, opcode: u8, psn: u32, ack_req: bool, ext: Vec<u8>, payload: usize) -> P {
        P {
            src: A,
            dst: B,
            sport: self.sport_req,
            ecn: 2,
            opcode,
            qp: self.qb,
            psn: psn & 0xff_ffff,
            ack_req,
            becn: false,
            ext,
            payload,
        }
    }
    fn resp(&self, opcode: u8, psn: u32, ext: Vec<u8>, payload: usize) -> P {
        P {
            src: B,
            dst: A,
            sport: self.sport_resp,
            ecn: 2,
            opcode,
            qp: self.qa,
            psn: psn & 0xff_ffff,
            ack_req: false,
            becn: false,
            ext,
            payload,
        }
    }
    fn ack(&self, psn: u32, msn: u32) -> P {
        self.resp(0x11, psn, aeth(0x1f, msn), 0)
    }
}

fn flow(
    r: &Report,
    src: [u8; 4],
    dst: [u8; 4],
    qp: u32,
) -> &roce_inspect::analyze::report::FlowReport {
    let (s, d) = (
        std::net::Ipv4Addr::from(src).to_string(),
        std::net::Ipv4Addr::from(dst).to_string(),
    );
    r.flows
        .iter()
        .find(|f| {
            f.src == roce_inspect::decode::Address::V4(src)
                && f.dst == roce_inspect::decode::Address::V4(dst)
                && f.dest_qp == qp
        })
        .unwrap_or_else(|| panic!("no flow {s} -> {d} qp {qp:#x}"))
}

/// Four 3-packet WRITEs starting 3 PSNs before the 2^24 wrap; PSN p0+4 is lost before the tap;
/// the responder NAKs (PSN sequence error, PSN p0+4); the requester goes back to p0+4 and resends
/// everything. A second QP pair between the same hosts (same-port convention) and a third whose
/// two directions use different UDP ports (paired by PSN only) run alongside.
#[test]
fn write_loss_go_back_n_across_psn_wrap_with_three_qps() {
    let q = Qp {
        qa: 0x200,
        qb: 0x100,
        sport_req: 0xc001,
        sport_resp: 0xc001,
    };
    let q2 = Qp {
        qa: 0x201,
        qb: 0x101,
        sport_req: 0xc002,
        sport_resp: 0xc002,
    };
    let q3 = Qp {
        qa: 0x202,
        qb: 0x102,
        sport_req: 0xc003,
        sport_resp: 0xd00d,
    };
    let p0: u32 = 0xFF_FFFD;
    let pkt = |i: u32| {
        // message m = i / 3; FIRST (RETH), MIDDLE, LAST (AckReq); 1024 + 1024 + 500 bytes.
        match i % 3 {
            0 => q.req(
                0x06,
                p0 + i,
                false,
                reth(0x1000 * u64::from(i), 0x77, 2548),
                1024,
            ),
            1 => q.req(0x07, p0 + i, false, vec![], 1024),
            _ => q.req(0x08, p0 + i, true, vec![], 500),
        }
    };
    let mut s = Sim::default();
    let mut t = T0;
    // Other QP pairs start first so that several QPs share the host pair from the outset.
    s.push(t, &q2.req(0x0a, 500, true, reth(0, 1, 64), 64));
    s.push(t + US, &q3.req(0x0a, 9000, true, reth(0, 1, 64), 64));
    t += 2 * US;
    for i in 0..4 {
        s.push(t, &pkt(i));
        t += US;
    }
    s.push(t, &q.ack(p0 + 2, 1));
    t += US;
    let gap_frame = s.push(t, &pkt(5)); // p0+4 lost
    t += US;
    s.push(t, &pkt(6));
    let nak_t = t + US;
    let nak_frame = s.push(nak_t, &q.resp(0x11, p0 + 4, aeth(0x60, 1), 0));
    s.push(nak_t + US, &pkt(7)); // already in flight
    let retx_t = nak_t + 3 * US;
    let retx_frame = s.push(retx_t, &pkt(4));
    t = retx_t;
    for i in 5..12 {
        t += US;
        s.push(t, &pkt(i));
    }
    s.push(t + 5 * US, &q2.ack(500, 1));
    s.push(t + 6 * US, &q3.ack(9000, 1));
    s.push(t + 9 * US, &q.ack(p0 + 11, 4));
    let r = s.run(AnalyzeConfig {
        keep_messages: true,
        ..Default::default()
    });

    let f = flow(&r, A, B, 0x100);
    assert_eq!(f.packets, 4 + 2 + 1 + 8);
    assert_eq!(f.psn.first, Some(p0));
    assert_eq!(f.psn.last, Some((p0 + 11) & 0xff_ffff));
    assert_eq!(f.psn.gap_events, 1);
    assert_eq!(f.psn.missing, 1);
    assert_eq!(f.psn.retransmitted, 4); // p0+4 ..= p0+7 behind the expected p0+8
    assert_eq!(
        (f.messages.write.count, f.messages.write.bytes),
        (4, 4 * 2548)
    );
    assert_eq!(f.incomplete_messages, 0);
    assert_eq!((f.loss.nak_retransmissions, f.loss.timeouts), (1, 0));
    assert_eq!(
        f.loss.nak_delay_ns.as_deref().unwrap().max,
        nak_t - (T0 + 7 * US)
    );
    assert_eq!(f.loss.retx_delay_ns.as_deref().unwrap().max, 3 * US);
    // ACK RTT: m1 LAST, m3 LAST, m4 LAST (m2 LAST was resent: Karn).
    assert_eq!(f.ack_rtt_ns.unwrap().count, 3);
    let back = flow(&r, B, A, 0x200);
    assert_eq!(back.acks, 2);
    assert_eq!(back.naks.psn_seq_err, 1);
    // The loss story.
    assert_eq!(r.gaps.len(), 1);
    let g = r.gaps[0];
    assert_eq!(
        (g.frame, g.expected_psn, g.received_psn, g.missing),
        (gap_frame, 1, 2, 1)
    );
    let nak = g.nak.unwrap();
    assert_eq!(
        (nak.frame, nak.delay_ns),
        (nak_frame, Some(nak_t - g.ts_ns))
    );
    let rt = g.retransmission.unwrap();
    assert_eq!(
        (rt.frame, rt.delay_ns, rt.trigger.name()),
        (retx_frame, Some(3 * US), "nak")
    );
    // Messages: 4 complete WRITEs with their RETH; the first straddles the wrap.
    let msgs: Vec<_> = r
        .messages
        .as_ref()
        .unwrap()
        .iter()
        .filter(|m| m.flow == f.id)
        .collect();
    assert_eq!(msgs.len(), 4);
    assert!(
        msgs.iter()
            .all(|m| m.complete && m.packets == 3 && m.bytes == 2548 && !m.dma_len_mismatch)
    );
    assert_eq!((msgs[1].first_psn, msgs[1].last_psn), (0, 2));
    // MSN: every ACK agrees with the reassembled messages.
    let c = &r.connections[f.connection.unwrap()];
    assert_eq!(c.paired_by.name(), "udp_sport");
    assert_eq!(c.msn[0].msn_delta, 3);
    assert_eq!(c.msn[0].messages, 3);
    assert_eq!(c.msn[0].mismatched_aeths, 0);
    // Three QP pairs between one host pair, each paired with the right reverse flow.
    assert_eq!(r.connections.len(), 3);
    let f2 = flow(&r, A, B, 0x101);
    let b2 = flow(&r, B, A, 0x201);
    assert_eq!(f2.connection, b2.connection);
    let f3 = flow(&r, A, B, 0x102);
    let b3 = flow(&r, B, A, 0x202);
    assert_eq!(f3.connection, b3.connection);
    assert_eq!(
        r.connections[f3.connection.unwrap()].paired_by.name(),
        "psn"
    );
    assert_eq!(r.pmtu, Some(1024));
}

/// SEND ONLY ×3; the second finds no receive WQE: RNR NAK (timer code 1 = 10 µs), then the
/// requester resends PSN q+1 and q+2 after 15 µs.
#[test]
fn rnr_nak_and_retry() {
    let q = Qp {
        qa: 0x20,
        qb: 0x10,
        sport_req: 0xc100,
        sport_resp: 0xc100,
    };
    let q0 = 77;
    let mut s = Sim::default();
    let mut t = T0;
    for i in 0..3 {
        s.push(t, &q.req(0x04, q0 + i, true, vec![], 100));
        t += US;
    }
    s.push(t, &q.ack(q0, 1));
    let rnr_t = t + US;
    s.push(rnr_t, &q.resp(0x11, q0 + 1, aeth(0x21, 1), 0));
    s.push(rnr_t + 15 * US, &q.req(0x04, q0 + 1, true, vec![], 100));
    s.push(rnr_t + 16 * US, &q.req(0x04, q0 + 2, true, vec![], 100));
    s.push(rnr_t + 18 * US, &q.ack(q0 + 2, 3));
    let r = s.run(AnalyzeConfig::default());
    let f = flow(&r, A, B, 0x10);
    let b = flow(&r, B, A, 0x20);
    assert_eq!((f.psn.gap_events, f.psn.retransmitted), (0, 2));
    assert_eq!((f.messages.send.count, f.messages.send.bytes), (3, 300));
    assert_eq!(b.rnr_naks, 1);
    assert_eq!(b.acks, 2);
    assert_eq!(b.naks.psn_seq_err, 0);
    assert_eq!(b.loss.rnr_timer_us.as_deref().unwrap().max, 10);
    assert_eq!((f.loss.rnr_retransmissions, f.loss.timeouts), (1, 0));
    assert_eq!(f.loss.rnr_delay_ns.as_deref().unwrap().max, 15 * US);
    let c = &r.connections[f.connection.unwrap()];
    assert_eq!((c.msn[0].msn_delta, c.msn[0].mismatched_aeths), (2, 0));
    assert!(r.gaps.is_empty());
}

/// WRITE ONLY ×4, AckReq on the last; the ACK is lost after the tap, so after 500 µs of silence
/// the requester resends all four (a timeout retransmission, no gap, no NAK).
#[test]
fn timeout_retransmission() {
    let q = Qp {
        qa: 0x21,
        qb: 0x11,
        sport_req: 0xc200,
        sport_resp: 0xc200,
    };
    let mut s = Sim::default();
    for i in 0..4u32 {
        s.push(
            T0 + u64::from(i) * US,
            &q.req(0x0a, 40 + i, i == 3, reth(0, 5, 8), 8),
        );
    }
    for i in 0..4u32 {
        s.push(
            T0 + 503 * US + u64::from(i) * US,
            &q.req(0x0a, 40 + i, i == 3, reth(0, 5, 8), 8),
        );
    }
    s.push(T0 + 510 * US, &q.ack(43, 4));
    let r = s.run(AnalyzeConfig::default());
    let f = flow(&r, A, B, 0x11);
    assert_eq!((f.psn.gap_events, f.psn.retransmitted), (0, 4));
    assert_eq!((f.loss.timeouts, f.loss.nak_retransmissions), (1, 0));
    assert_eq!(f.loss.timeout_delay_ns.as_deref().unwrap().max, 500 * US);
    assert_eq!((f.messages.write.count, f.messages.write.bytes), (4, 32));
    // Karn: the only AckReq packet was resent, so no RTT sample.
    assert!(f.ack_rtt_ns.is_none());
}

/// Ten WRITE ONLY at 1 µs; packets 3, 4 and 8 CE-marked; the receiver answers with CNPs (0x81,
/// BECN, UDP source port 0) 1.5 µs after packet 3 and 3 µs after packet 8. The CNP flow starts
/// before any ACK, so pairing happens when the first ACK brings the UDP port.
#[test]
fn ce_marks_and_cnps() {
    let q = Qp {
        qa: 0x22,
        qb: 0x12,
        sport_req: 0xc300,
        sport_resp: 0xc300,
    };
    let mut s = Sim::default();
    let cnp = |t: u64, s: &mut Sim| {
        let mut p = q.resp(0x81, 0, vec![0; 16], 0);
        p.sport = 0;
        p.becn = true;
        p.ecn = 2;
        s.push(t, &p)
    };
    for i in 0..10u32 {
        let mut p = q.req(0x0a, 1000 + i, i == 9, reth(0, 9, 256), 256);
        if matches!(i, 3 | 4 | 8) {
            p.ecn = 3;
        }
        s.push(T0 + u64::from(i) * US, &p);
        if i == 4 {
            cnp(T0 + 4 * US + 500, &mut s);
        }
        if i == 9 {
            cnp(T0 + 11 * US, &mut s);
        }
    }
    s.push(T0 + 12 * US, &q.ack(1009, 10));
    let r = s.run(AnalyzeConfig::default());
    let f = flow(&r, A, B, 0x12);
    let b = flow(&r, B, A, 0x22);
    assert_eq!(
        (f.ecn.ce, f.ecn.ect0, f.ecn.not_ect, f.ecn.ect1),
        (3, 7, 0, 0)
    );
    assert!((f.ce_fraction - 0.3).abs() < 1e-12);
    assert_eq!((b.cnps, b.becn, b.fecn, b.payload_bytes), (2, 2, 0, 0));
    assert_eq!(b.opcodes["CNP"], 2);
    let c = &r.connections[f.connection.expect("paired")];
    assert_eq!(b.connection, f.connection);
    assert_eq!(c.congestion.len(), 1);
    let d = &c.congestion[0];
    assert_eq!(
        (d.data_flow, d.cnp_flow, d.ce_marked, d.cnps),
        (f.id, b.id, 3, 2)
    );
    // CE→CNP runs from the latest CE before each CNP: CE at 4 µs → CNP at 4.5 µs (500 ns; the
    // CE at 3 µs came earlier in the same window), CE at 8 µs → CNP at 11 µs.
    let ce = d.ce_to_cnp_ns.unwrap();
    assert_eq!((ce.count, ce.min, ce.max), (2, 500, 3 * US));
    let ia = d.cnp_interarrival_ns.unwrap();
    assert_eq!((ia.count, ia.min), (1, 6500));
    // The two CNPs, 6.5 µs apart, are one train: one before/after sample, from the first CNP
    // (frame 6) to the last (frame 12), its window the spacing clamped to 10 µs.
    assert_eq!(d.rate_samples.len(), 1);
    let s = d.rate_samples[0];
    assert_eq!((s.cnp_frame, s.last_cnp_frame, s.cnps), (6, 12, 2));
    assert_eq!(s.window_ns, 10_000);
}

/// READ of 5000 bytes (5 PSNs at PMTU 1024) followed by a SEND before the PMTU is known, then
/// the responses, then a 100-byte READ and a SEND: no gap anywhere, two READ messages paired
/// with their requests. Also a READ response ONLY for which no request was seen: counted in
/// `responses.unmatched`, not a message (issue 11, point 3).
#[test]
fn read_reservation_and_responses() {
    let q = Qp {
        qa: 0x23,
        qb: 0x13,
        sport_req: 0xc400,
        sport_resp: 0xc400,
    };
    let s0 = 0xFF_FFFE;
    let mut s = Sim::default();
    let mut t = T0;
    let mut at = |s: &mut Sim, p: P| {
        t += US;
        s.push(t, &p)
    };
    at(
        &mut s,
        q.req(0x0c, s0, true, reth(0xdead_0000, 0x42, 5000), 0),
    );
    at(&mut s, q.req(0x04, s0 + 5, true, vec![], 16));
    at(&mut s, q.resp(0x0d, s0, aeth(0x1f, 1), 1024));
    for k in 1..4 {
        at(&mut s, q.resp(0x0e, s0 + k, vec![], 1024));
    }
    at(&mut s, q.resp(0x0f, s0 + 4, aeth(0x1f, 1), 904));
    at(&mut s, q.ack(s0 + 5, 2));
    at(
        &mut s,
        q.req(0x0c, s0 + 6, true, reth(0xbeef, 0x43, 100), 0),
    );
    at(&mut s, q.req(0x04, s0 + 7, true, vec![], 16));
    at(&mut s, q.resp(0x10, s0 + 6, aeth(0x1f, 3), 100));
    at(&mut s, q.ack(s0 + 7, 4));
    // A response to a READ never seen: counted, no request attached, no panic.
    at(&mut s, q.resp(0x10, s0 + 8, aeth(0x1f, 5), 10));
    let r = s.run(AnalyzeConfig {
        keep_messages: true,
        ..Default::default()
    });
    let f = flow(&r, A, B, 0x13);
    let b = flow(&r, B, A, 0x23);
    assert_eq!(f.psn.gap_events + b.psn.gap_events, 0);
    assert_eq!(f.psn.retransmitted + b.psn.retransmitted, 0);
    assert_eq!(
        (f.psn.first, f.psn.last),
        (Some(s0), Some((s0 + 7) & 0xff_ffff))
    );
    assert_eq!(
        (b.psn.first, b.psn.last),
        (Some(s0), Some((s0 + 8) & 0xff_ffff))
    );
    assert_eq!((f.messages.send.count, f.messages.read.count), (2, 0));
    assert_eq!((b.messages.read.count, b.messages.read.bytes), (2, 5100));
    assert_eq!((b.responses.unmatched, b.responses.duplicate), (1, 0));
    assert_eq!(b.acks, 2);
    let reads: Vec<_> = r
        .messages
        .as_ref()
        .unwrap()
        .iter()
        .filter(|m| m.kind == MessageKind::Read)
        .collect();
    assert_eq!(reads.len(), 2);
    assert_eq!(reads[0].reth.unwrap().dma_len, 5000);
    assert_eq!(reads[0].packets, 5);
    assert_eq!(reads[0].request_frame, Some(1));
    assert_eq!(reads[0].read_latency_ns, Some(7 * US - US));
    assert_eq!(reads[1].reth.unwrap().va, 0xbeef);
    assert!(reads.iter().all(|m| m.status == MessageStatus::Ok));
    assert!(reads.iter().all(|m| !m.dma_len_mismatch));
}

/// UD sender (DETH source QP 0x300) with one PSN skipped, CE marks, and CNPs to QP 0x300.
#[test]
fn ud_gap_and_cnp_pairing() {
    let mut s = Sim::default();
    let ud = |psn: u32, ecn: u8| P {
        src: A,
        dst: B,
        sport: 0xc500,
        ecn,
        opcode: 0x64,
        qp: 0x99,
        psn,
        ack_req: false,
        becn: false,
        ext: deth(0x1111_1111, 0x300),
        payload: 64,
    };
    for (k, psn) in [10u32, 11, 13, 14, 15].into_iter().enumerate() {
        s.push(T0 + k as u64 * US, &ud(psn, if psn == 13 { 3 } else { 2 }));
    }
    s.push(
        T0 + 10 * US,
        &P {
            src: B,
            dst: A,
            sport: 0,
            ecn: 2,
            opcode: 0x81,
            qp: 0x300,
            psn: 0,
            ack_req: false,
            becn: true,
            ext: vec![0; 16],
            payload: 0,
        },
    );
    let r = s.run(AnalyzeConfig::default());
    let f = flow(&r, A, B, 0x99);
    let c = flow(&r, B, A, 0x300);
    assert_eq!(f.transport.name(), "UD");
    assert_eq!(
        (f.psn.gap_events, f.psn.missing, f.psn.retransmitted),
        (1, 1, 0)
    );
    assert_eq!((f.messages.send.count, f.messages.send.bytes), (5, 320));
    assert_eq!(c.cnps, 1);
    assert_eq!(c.transport.name(), "UD");
    assert!(f.connection.is_some() && f.connection == c.connection);
    let conn = &r.connections[f.connection.unwrap()];
    assert_eq!(conn.paired_by.name(), "cnp");
    assert_eq!(conn.congestion[0].ce_to_cnp_ns.unwrap().max, 8 * US);
    assert!(r.gaps[0].nak.is_none());
}

/// Hostile sequences: READ responses with no request, a READ of 4 GiB − 1 bytes, CNPs for an
/// unknown QP, duplicates, ACKs and NAKs for PSNs never sent, MIDDLE/LAST without FIRST,
/// max_flows reached. Nothing panics and the counts stay consistent.
#[test]
fn hostile_sequences_do_not_panic() {
    let q = Qp {
        qa: 0x24,
        qb: 0x14,
        sport_req: 0xc600,
        sport_resp: 0xc600,
    };
    let mut s = Sim::default();
    let mut t = T0;
    let mut at = |s: &mut Sim, p: P| {
        t += US;
        s.push(t, &p);
    };
    at(&mut s, q.resp(0x0e, 5, vec![], 1024));
    at(&mut s, q.resp(0x0f, 6, aeth(0x1f, 0), 3));
    at(&mut s, q.req(0x0c, 100, true, reth(0, 0, u32::MAX), 0));
    at(&mut s, q.req(0x04, 101, true, vec![], 1));
    at(&mut s, q.req(0x04, 101, true, vec![], 1));
    at(&mut s, q.req(0x07, 102, false, vec![], 1024));
    at(&mut s, q.req(0x08, 103, false, vec![], 1));
    at(&mut s, q.ack(0x7f_ffff, 0xff_ffff));
    at(&mut s, q.resp(0x11, 3, aeth(0x60, 0), 0));
    at(&mut s, q.resp(0x11, 3, aeth(0x45, 0), 0));
    for qp in [0x999u32, 0] {
        let mut p = q.resp(0x81, 0, vec![0; 16], 0);
        p.qp = qp;
        at(&mut s, p);
    }
    let r = s.run(AnalyzeConfig {
        keep_messages: true,
        max_flows: 3,
        ..Default::default()
    });
    assert_eq!(r.frames.roce, 12);
    assert_eq!(r.flows.len(), 3);
    assert_eq!(r.frames.untracked, 1);
    let in_flows: u64 = r.flows.iter().map(|f| f.packets).sum();
    assert_eq!(in_flows + r.frames.untracked, r.frames.roce);
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"connections\""));
    // Also random bytes on the RoCE port.
    let mut a = Analyzer::new(AnalyzeConfig::default());
    let mut x: u64 = 0x1234_5678;
    for n in 0..2000u64 {
        let mut p = q.req(
            (x >> 8) as u8,
            (x >> 16) as u32,
            x & 1 == 1,
            vec![],
            (x % 40) as usize,
        );
        p.ext = (0..(x >> 40) % 40).map(|i| (x >> (i % 56)) as u8).collect();
        let b = build(&p);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f = decode_frame(
            LinkType::ETHERNET,
            &b,
            b.len() as u32,
            &DecodeConfig::default(),
        );
        a.push(n + 1, T0 + n, &f);
    }
    let r = a.finish();
    assert_eq!(r.frames.total, 2000);
}

/// A NAK is matched to the gap whose expected PSN it carries, not to another one: two gaps in
/// one flow (PSN 3 and PSN 8 missing), a NAK for PSN 8 only; the gap at 3 stays without NAK and
/// its later resend counts as a timeout.
#[test]
fn nak_matched_to_its_gap() {
    let q = Qp {
        qa: 0x25,
        qb: 0x15,
        sport_req: 0xc700,
        sport_resp: 0xc700,
    };
    let mut s = Sim::default();
    let w = |psn: u32| q.req(0x0a, psn, false, reth(0, 1, 4), 4);
    let mut t = T0;
    for psn in [1u32, 2, 4, 5, 6, 7, 9] {
        t += US;
        s.push(t, &w(psn));
    }
    let nak_frame = s.push(t + US, &q.resp(0x11, 8, aeth(0x60, 0), 0));
    s.push(t + 4 * US, &w(8));
    s.push(t + 100 * US, &w(3));
    let r = s.run(AnalyzeConfig::default());
    assert_eq!(r.gaps.len(), 2);
    let (g3, g8) = (r.gaps[0], r.gaps[1]);
    assert_eq!((g3.expected_psn, g8.expected_psn), (3, 8));
    assert!(g3.nak.is_none());
    assert_eq!(g8.nak.unwrap().frame, nak_frame);
    assert_eq!(g8.nak.unwrap().delay_ns, Some(US));
    assert_eq!(g8.retransmission.unwrap().trigger.name(), "nak");
    assert_eq!(g8.retransmission.unwrap().delay_ns, Some(3 * US));
    assert_eq!(g3.retransmission.unwrap().trigger.name(), "timeout");
    assert_eq!(g3.retransmission.unwrap().delay_ns, Some(96 * US));
    let f = flow(&r, A, B, 0x15);
    assert_eq!(
        (f.psn.gap_events, f.psn.missing, f.psn.retransmitted),
        (2, 2, 2)
    );
    assert_eq!((f.loss.nak_retransmissions, f.loss.timeouts), (1, 1));
}

/// UC: a lost MIDDLE drops the whole WRITE (rxe UC responder) and the next ONLY resynchronises;
/// a duplicate is counted as retransmitted but not classified (UC has no retransmission).
#[test]
fn uc_loss_drops_the_message() {
    let q = Qp {
        qa: 0x26,
        qb: 0x16,
        sport_req: 0xc800,
        sport_resp: 0xc800,
    };
    let mut s = Sim::default();
    let mut t = T0;
    let mut at = |s: &mut Sim, p: P| {
        t += US;
        s.push(t, &p);
    };
    at(&mut s, q.req(0x26, 10, false, reth(0, 1, 2100), 1024)); // UC WRITE FIRST
    // 11 (MIDDLE) lost
    at(&mut s, q.req(0x28, 12, false, vec![], 52)); // UC WRITE LAST
    at(&mut s, q.req(0x2a, 13, false, reth(0, 1, 8), 8)); // UC WRITE ONLY
    at(&mut s, q.req(0x2a, 13, false, reth(0, 1, 8), 8)); // duplicate
    at(&mut s, q.req(0x24, 14, false, vec![], 4)); // UC SEND ONLY
    let r = s.run(AnalyzeConfig::default());
    let f = flow(&r, A, B, 0x16);
    assert_eq!(f.transport.name(), "UC");
    assert_eq!(
        (f.psn.gap_events, f.psn.missing, f.psn.retransmitted),
        (1, 1, 1)
    );
    assert_eq!((f.messages.write.count, f.messages.write.bytes), (1, 8));
    assert_eq!((f.messages.send.count, f.messages.send.bytes), (1, 4));
    assert_eq!(f.incomplete_messages, 1);
    assert_eq!(f.loss.timeouts + f.loss.nak_retransmissions, 0);
}

/// A UD SEND to QP1 carrying a CM MAD (REQ 0x0010 or REP 0x0013) in its payload.
fn cm_mad(src: [u8; 4], dst: [u8; 4], attr: u16, comm: u32, remote_comm: u32, qpn: u32) -> P {
    let mut mad = vec![0u8; 256];
    mad[0] = 1; // base version
    mad[1] = 0x07; // CM class
    mad[2] = 2;
    mad[3] = 3; // Send
    mad[16..18].copy_from_slice(&attr.to_be_bytes());
    let d = 24;
    mad[d..d + 4].copy_from_slice(&comm.to_be_bytes());
    if attr == 0x0010 {
        mad[d + 32..d + 35].copy_from_slice(&be24(qpn)); // REQ Local QPN
    } else {
        mad[d + 4..d + 8].copy_from_slice(&remote_comm.to_be_bytes());
        mad[d + 12..d + 15].copy_from_slice(&be24(qpn)); // REP Local QPN
    }
    let mut ext = deth(0x8001_0000, 1);
    ext.extend(mad);
    P {
        src,
        dst,
        sport: 0xc900,
        ecn: 2,
        opcode: 0x64,
        qp: 1,
        psn: 7,
        ack_req: false,
        becn: false,
        ext,
        payload: 0,
    }
}

/// CM REQ (A, QPN 0x50) / REP (B, QPN 0x60), then UC SENDs both ways with unrelated UDP ports
/// and no ACKs: only the CM exchange can pair the two flows. A loopback REQ/REP naming one QPN
/// on both sides must not pair a flow with itself.
#[test]
fn cm_req_rep_pairs_flows() {
    let mut s = Sim::default();
    s.push(T0, &cm_mad(A, B, 0x0010, 0xabcd, 0, 0x50));
    s.push(T0 + US, &cm_mad(B, A, 0x0013, 0x1234, 0xabcd, 0x60));
    // A REP that answers no REQ is ignored.
    s.push(T0 + 2 * US, &cm_mad(B, A, 0x0013, 0x9999, 0x7777, 0x61));
    let uc = |src, dst, sport, qp, psn| P {
        src,
        dst,
        sport,
        ecn: 2,
        opcode: 0x24,
        qp,
        psn,
        ack_req: false,
        becn: false,
        ext: vec![],
        payload: 16,
    };
    s.push(T0 + 3 * US, &uc(A, B, 0xd001, 0x60, 100));
    s.push(T0 + 4 * US, &uc(B, A, 0xd002, 0x50, 900));
    s.push(T0 + 5 * US, &uc(A, B, 0xd001, 0x61, 5));
    // Loopback CM naming QPN 0x70 on both ends.
    let c = [10, 0, 0, 3];
    s.push(T0 + 6 * US, &cm_mad(c, c, 0x0010, 1, 0, 0x70));
    s.push(T0 + 7 * US, &cm_mad(c, c, 0x0013, 2, 1, 0x70));
    s.push(T0 + 8 * US, &uc(c, c, 0xd003, 0x70, 1));
    let r = s.run(AnalyzeConfig::default());
    let f = flow(&r, A, B, 0x60);
    let b = flow(&r, B, A, 0x50);
    let conn = f.connection.expect("paired by CM");
    assert_eq!(b.connection, Some(conn));
    assert_eq!(r.connections[conn].paired_by.name(), "cm");
    assert_eq!(
        (r.connections[conn].a.qp, r.connections[conn].b.qp),
        (0x50, 0x60)
    );
    assert!(flow(&r, A, B, 0x61).connection.is_none());
    assert!(flow(&r, c, c, 0x70).connection.is_none());
}
