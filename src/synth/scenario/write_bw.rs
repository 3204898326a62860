//! `write_bw.pcap`: what `ib_write_bw` does on a 25 Gb/s link with one lost packet, captured on
//! the responder.
//!
//! Host 10.0.0.1 (QPN 0x000a11) writes 24 messages of 4096 bytes to 10.0.0.2 (QPN 0x000b12)
//! over path MTU 1024, back to back (WRITE FIRST with RETH, MIDDLE, MIDDLE, LAST with AckReq).
//! The responder acknowledges every message (AETH ACK, unlimited credits, MSN = messages done).
//! The third packet of message 10 is lost between the hosts: the responder sees the next PSN,
//! answers once with a NAK *PSN sequence error* (IBTA Vol. 1 §9.7.5.1.2) carrying the expected
//! PSN, and silently drops what follows until the requester, on receiving the NAK, goes back
//! to the lost PSN and sends everything again from there (go-back-N, §9.7.5.2.3). The capture
//! (on the responder) therefore shows a one-PSN gap, the NAK, the packets sent before the NAK
//! arrived, and their retransmissions.

use rand::RngExt;

use super::super::frame::Packet;
use super::{
    Format, Host, Path, Sample, Trace, host, psn_add, segments, syndrome, wire_ns, write_opcode,
};
use crate::decode::Reth;

/// Path MTU in bytes.
pub const PMTU: u32 = 1024;
/// Bytes per message.
pub const MESSAGE_BYTES: u32 = 4096;
/// Messages written.
pub const MESSAGES: usize = 24;
/// PSN of the first packet.
pub const FIRST_PSN: u32 = 0x3a_9f10;
/// Index (from 0, over all first transmissions) of the packet lost on the link.
pub const LOST_INDEX: usize = 9 * 4 + 2;
/// Requester QPN (destination of ACKs).
pub const REQUESTER_QPN: u32 = 0x000a11;
/// Responder QPN (destination of the WRITEs).
pub const RESPONDER_QPN: u32 = 0x000b12;

/// What the model did, for tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truth {
    /// PSN of the lost packet (the NAK carries it; the gap starts there).
    pub lost_psn: u32,
    /// WRITE packets in the capture, first transmissions and retransmissions.
    pub write_packets: usize,
    /// Distinct PSNs that appear more than once in the capture (sent before the NAK arrived
    /// and again after it).
    pub resent_psns: usize,
    /// ACKs (not NAKs) sent by the responder.
    pub acks: usize,
    /// NAKs sent by the responder.
    pub naks: usize,
    /// For each message, in the order written, the frame numbers (from 1, in capture order)
    /// of the packets the responder accepted for it: in sequence, so neither the packets it
    /// discarded after the gap nor those copies of them sent before the NAK arrived.
    pub message_frames: Vec<Vec<u64>>,
}

/// The sample and its truth.
pub struct WriteBw {
    /// `write_bw.pcap`.
    pub sample: Sample,
    /// Ground truth.
    pub truth: Truth,
}

/// One data packet of the stream: (message index, packet index in the message).
type Seg = (usize, usize);

/// Play the scenario.
pub fn scenario() -> WriteBw {
    let (a, b): (Host, Host) = (host(1), host(2));
    let fwd = Path {
        from: a,
        to: b,
        dest_qp: RESPONDER_QPN,
        udp_src: 0xc1a2,
        tos: 0x6a,
    };
    let back = Path {
        from: b,
        to: a,
        dest_qp: REQUESTER_QPN,
        udp_src: 0xd3b4,
        tos: 0x6a,
    };
    let per_msg = segments(MESSAGE_BYTES, PMTU);
    let stream: Vec<Seg> = (0..MESSAGES)
        .flat_map(|m| (0..per_msg.len()).map(move |i| (m, i)))
        .collect();
    let mut rng = super::rng(0x0057_7269_7465);
    let mut trace = Trace::default();
    let mut truth = Truth {
        lost_psn: psn_add(FIRST_PSN, LOST_INDEX as u32),
        write_packets: 0,
        resent_psns: 0,
        acks: 0,
        naks: 0,
        message_frames: Vec::new(),
    };
    // Each frame pushed, in push order: its time and the message the responder accepted it
    // into (sorted as the trace sorts its records: stably, by time).
    let mut accepted: Vec<(u64, Option<usize>)> = Vec::new();
    let mut sent_once = vec![0u32; stream.len()];
    // Requester state.
    let mut next = 0usize;
    let mut t_send = 10_000u64;
    let mut pending_nak: Option<(u64, usize)> = None; // (arrival at the requester, index)
    // Responder state.
    let mut expected = 0usize;
    let mut nak_outstanding = false;
    let mut msn = 0u32;
    while next < stream.len() {
        let (m, i) = stream[next];
        let pkt = write_packet(&fwd, &per_msg, next, m, i);
        let frame_len = pkt.build().len();
        if let Some((t_nak, idx)) = pending_nak {
            if t_nak <= t_send {
                // Go-back-N: resume at the NAK's PSN once the NAK has been processed.
                t_send = t_nak + 300;
                next = idx;
                pending_nak = None;
                continue;
            }
        }
        sent_once[next] += 1;
        let lost = next == LOST_INDEX && sent_once[next] == 1;
        let arrive = t_send + 2_000 + rng.random_range(0..80u64);
        t_send += wire_ns(frame_len, 25.0);
        let this = next;
        next += 1;
        if lost {
            continue;
        }
        trace.push(arrive, &pkt);
        accepted.push((arrive, (this == expected).then_some(m)));
        truth.write_packets += 1;
        if this == expected {
            expected += 1;
            nak_outstanding = false;
            if i + 1 == per_msg.len() {
                msn += 1;
                let ack = back.ack(pkt.bth.psn, syndrome::ACK_UNLIMITED, msn);
                trace.push(arrive + 450, &ack);
                accepted.push((arrive + 450, None));
                truth.acks += 1;
            }
        } else if this > expected && !nak_outstanding {
            let nak_psn = psn_add(FIRST_PSN, expected as u32);
            let nak = back.ack(nak_psn, syndrome::NAK_PSN_SEQUENCE, msn);
            trace.push(arrive + 300, &nak);
            accepted.push((arrive + 300, None));
            truth.naks += 1;
            nak_outstanding = true;
            pending_nak = Some((arrive + 300 + 2_000, expected));
        }
    }
    accepted.sort_by_key(|&(ts, _)| ts);
    truth.message_frames = vec![Vec::new(); MESSAGES];
    for (i, &(_, m)) in accepted.iter().enumerate() {
        if let Some(m) = m {
            truth.message_frames[m].push(i as u64 + 1);
        }
    }
    truth.resent_psns = sent_once.iter().filter(|&&n| n > 1).count() - 1; // the lost one was seen once
    WriteBw {
        sample: Sample {
            file: "write_bw.pcap",
            format: Format::Pcap,
            records: trace.records(),
        },
        truth,
    }
}

fn write_packet(fwd: &Path, per_msg: &[u32], index: usize, m: usize, i: usize) -> Packet {
    let psn = psn_add(FIRST_PSN, index as u32);
    let mut p = fwd.packet(write_opcode(i, per_msg.len(), false), psn);
    p.payload_len = per_msg[i] as usize;
    if i == 0 {
        p.ext.reth = Reth {
            va: 0x7f5c_a000_0000 + (m as u64) * u64::from(MESSAGE_BYTES),
            rkey: 0x0012_3abc,
            dma_len: MESSAGE_BYTES,
        };
    }
    if i + 1 == per_msg.len() {
        p.bth.ack_req = true;
    }
    p
}
