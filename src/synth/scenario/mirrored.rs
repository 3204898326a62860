//! `erspan.pcap`, `erspan3.pcap`, `vxlan.pcap`: one short RC exchange as a collector receives
//! it from a switch's mirror sessions ([`crate::synth::mirror`]), for the README's "Switch
//! mirrors" examples.
//!
//! The exchange: 10.0.0.1 (QPN 0x000c11) writes [`WRITES`] messages of [`WRITE_BYTES`] bytes
//! over path MTU 1024 (WRITE FIRST with RETH, WRITE LAST with AckReq) to 10.0.0.2 (QPN
//! 0x000d12), then sends one SEND ONLY of [`SEND_BYTES`] bytes; 10.0.0.2 acknowledges each
//! message (MSN 1, 2, …). A frame leaves its sender at the model's time and crosses the switch:
//! it passes the sender's port 500 ns later and the receiver's port 1000 ns after that.
//! - `erspan.pcap`: ERSPAN type II, two sessions: session 5 mirrors 10.0.0.1's port (index 1),
//!   session 6 10.0.0.2's (index 2), so every frame is there twice; a copy reaches the
//!   collector 3 µs after it passed its port.
//! - `erspan3.pcap`: ERSPAN type III, session 7 on 10.0.0.2's port, each copy stamped with the
//!   switch's IEEE 1588 time (ns in the header, seconds in platform subheader 5). The copies
//!   reach the collector 25 µs later plus 0–3 µs of jitter (its capture clock), so
//!   `--mirror-time` gives the switch's spacing of the frames.
//! - `vxlan.pcap`: VXLAN (VNI 4242) to UDP port 8472, the Linux kernel's default, not IANA's
//!   4789: `--vxlan-port 8472` decodes it; a copy of every frame at 10.0.0.2's port, 3 µs late.

use super::super::capfile::Record;
use super::super::frame::Packet;
use super::super::mirror::{Mirror, VXLAN_LINUX_PORT, wrap};
use super::{BASE_NS, Format, Path, Sample, host, op, psn_add, rng, syndrome};
use crate::decode::Reth;
use rand::RngExt;

/// RDMA WRITE messages sent.
pub const WRITES: usize = 4;
/// Bytes per WRITE message (two packets over PMTU 1024).
pub const WRITE_BYTES: u32 = 2048;
/// Bytes of the SEND message.
pub const SEND_BYTES: u32 = 256;
/// Requester QPN (destination of the ACKs).
pub const REQUESTER_QPN: u32 = 0x000c11;
/// Responder QPN (destination of the WRITEs and the SEND).
pub const RESPONDER_QPN: u32 = 0x000d12;
/// PSN of the first request packet.
pub const FIRST_PSN: u32 = 0x10_2030;
/// ERSPAN II sessions: 10.0.0.1's port, 10.0.0.2's port.
pub const ERSPAN2_SESSIONS: [u16; 2] = [5, 6];
/// The ERSPAN III session.
pub const ERSPAN3_SESSION: u16 = 7;
/// The VXLAN VNI.
pub const VNI: u32 = 4242;

/// One frame of the exchange: when it left its sender (ns after [`BASE_NS`]), whether the
/// requester (10.0.0.1) sent it, and the packet.
struct Sent {
    t_ns: u64,
    from_requester: bool,
    packet: Packet,
}

/// The exchange as sent: 4 WRITEs of 2 packets and a SEND, each followed by its ACK.
fn exchange() -> Vec<Sent> {
    let (a, b) = (host(1), host(2));
    let fwd = Path {
        from: a,
        to: b,
        dest_qp: RESPONDER_QPN,
        udp_src: 0xc5e1,
        tos: 0x6a,
    };
    let back = Path {
        from: b,
        to: a,
        dest_qp: REQUESTER_QPN,
        udp_src: 0xd5e2,
        tos: 0x6a,
    };
    let mut out = Vec::new();
    let mut psn = FIRST_PSN;
    let mut t = 10_000u64;
    for m in 0..=WRITES {
        let request: Vec<Packet> = if m < WRITES {
            let va = 0x7f3a_0000_0000 + u64::from(WRITE_BYTES) * m as u64;
            let mut first = fwd.packet(op::WRITE_FIRST, psn);
            first.ext.reth = Reth {
                va,
                rkey: 0x2c0f_0031,
                dma_len: WRITE_BYTES,
            };
            first.payload_len = 1024;
            let mut last = fwd.packet(op::WRITE_LAST, psn_add(psn, 1));
            last.bth.ack_req = true;
            last.payload_len = (WRITE_BYTES - 1024) as usize;
            vec![first, last]
        } else {
            let mut send = fwd.packet(op::SEND_ONLY, psn);
            send.bth.ack_req = true;
            send.payload_len = SEND_BYTES as usize;
            vec![send]
        };
        psn = psn_add(psn, request.len() as u32);
        for p in request {
            out.push(Sent {
                t_ns: t,
                from_requester: true,
                packet: p,
            });
            t += 400;
        }
        let ack = back.ack(
            psn_add(psn, 0xff_ffff),
            syndrome::ACK_UNLIMITED,
            m as u32 + 1,
        );
        out.push(Sent {
            t_ns: t + 1_800,
            from_requester: false,
            packet: ack,
        });
        t += 6_000;
    }
    out
}

/// When a frame sent at `t_ns` passes the requester's port (`at_requester`) or the
/// responder's.
fn at_port(s: &Sent, at_requester: bool) -> u64 {
    let first = s.t_ns + 500;
    if at_requester == s.from_requester {
        first
    } else {
        first + 1_000
    }
}

fn sample(file: &'static str, mut records: Vec<Record>) -> Sample {
    records.sort_by_key(|r| r.ts_ns);
    Sample {
        file,
        format: Format::Pcap,
        records,
    }
}

/// `erspan.pcap`: ERSPAN II sessions 5 and 6.
pub fn erspan2() -> Sample {
    let mut records = Vec::new();
    for (k, &session) in ERSPAN2_SESSIONS.iter().enumerate() {
        let m = Mirror::Erspan2 {
            session,
            index: k as u32 + 1,
        };
        for (seq, s) in exchange().iter().enumerate() {
            let ts = BASE_NS + at_port(s, k == 0) + 3_000;
            records.push(Record::new(ts, wrap(&s.packet.build(), &m, seq as u32)));
        }
    }
    sample("erspan.pcap", records)
}

/// `erspan3.pcap`: ERSPAN III session 7 with the switch's timestamps.
pub fn erspan3() -> Sample {
    let mut r = rng(0x0045_5253_5033);
    let mut last = 0u64;
    let mut records = Vec::new();
    for (seq, s) in exchange().iter().enumerate() {
        let switch_ns = BASE_NS + at_port(s, false);
        let m = Mirror::Erspan3 {
            session: ERSPAN3_SESSION,
            hw: 9,
            ts_ns: switch_ns,
        };
        let ts = (switch_ns + 25_000 + r.random_range(0..3_000u64)).max(last + 100);
        last = ts;
        records.push(Record::new(ts, wrap(&s.packet.build(), &m, seq as u32)));
    }
    sample("erspan3.pcap", records)
}

/// `vxlan.pcap`: VXLAN VNI 4242 to UDP 8472.
pub fn vxlan() -> Sample {
    let m = Mirror::Vxlan {
        vni: VNI,
        port: VXLAN_LINUX_PORT,
    };
    let records = exchange()
        .iter()
        .enumerate()
        .map(|(seq, s)| {
            let ts = BASE_NS + at_port(s, false) + 3_000;
            Record::new(ts, wrap(&s.packet.build(), &m, seq as u32))
        })
        .collect();
    sample("vxlan.pcap", records)
}

/// The ERSPAN III switch times of `erspan3.pcap`'s frames, in file order (ns since the
/// epoch): the truth `--mirror-time` must give.
pub fn erspan3_switch_times() -> Vec<u64> {
    let mut t: Vec<u64> = exchange()
        .iter()
        .map(|s| BASE_NS + at_port(s, false))
        .collect();
    t.sort_unstable();
    t
}
