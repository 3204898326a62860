//! `rxe_write.pcap`: what README's Soft-RoCE walk-through captures on the server (host A,
//! 192.168.1.2) while host B (192.168.1.3) runs `roce-inspect generate --peer 192.168.1.2
//! --size 8K --tx-depth 4`, cut to [`WRITES`] WRITEs so the sample stays small.
//!
//! The client's QP (QPN 0x000011) writes messages of 8192 bytes over path MTU 1024 (rxe on a
//! 1500-byte netdev) to the server's QP 0x000012, starting at PSN [`FIRST_PSN`]: RDMA WRITE
//! FIRST with RETH (remote address advancing by 8 KiB per message, rkey [`RKEY`]), 6 × MIDDLE,
//! LAST with AckReq. At most 4 WRITEs are outstanding: the 5th starts when the 1st one's ACK
//! is back. The server ACKs each message's LAST (MSN = messages done). A 1 Gb/s VM NIC: one
//! frame every 10 µs; the ACK leaves the server 30 µs after the LAST arrived (the ACK RTT the
//! capture shows) and reaches the client 40 µs after that. Nothing is lost.

use super::super::frame::Packet;
use super::{BASE_NS, Format, Host, Path, Sample, Trace, psn_add, segments, syndrome};
use crate::decode::Reth;

/// WRITE messages.
pub const WRITES: usize = 12;
/// Bytes per WRITE (`--size 8K`).
pub const WRITE_BYTES: u32 = 8192;
/// Path MTU (bytes).
pub const PMTU: u32 = 1024;
/// Outstanding WRITEs (`--tx-depth 4`).
pub const TX_DEPTH: usize = 4;
/// The client's first PSN (its "local PSN").
pub const FIRST_PSN: u32 = 0x5b_2c31;
/// The server's QPN (the WRITEs' destination QP).
pub const SERVER_QPN: u32 = 0x000012;
/// The client's QPN (the ACKs' destination QP).
pub const CLIENT_QPN: u32 = 0x000011;
/// The server buffer's rkey.
pub const RKEY: u32 = 0x0000_1a2b;
/// The server buffer's address (the first WRITE's RETH virtual address).
pub const REMOTE_ADDR: u64 = 0x5612_3456_7000;

/// The sample.
pub fn sample() -> Sample {
    let server = Host {
        mac: [0x52, 0x54, 0, 0x12, 0x34, 0x02],
        ip: [192, 168, 1, 2],
    };
    let client = Host {
        mac: [0x52, 0x54, 0, 0x12, 0x34, 0x03],
        ip: [192, 168, 1, 3],
    };
    let fwd = Path {
        from: client,
        to: server,
        dest_qp: SERVER_QPN,
        udp_src: 0xe1a7,
        tos: 0,
    };
    let back = Path {
        from: server,
        to: client,
        dest_qp: CLIENT_QPN,
        udp_src: 0xe1a7,
        tos: 0,
    };
    let per_msg = segments(WRITE_BYTES, PMTU);
    let mut trace = Trace::default();
    let mut ack_back = [0u64; WRITES]; // when each message's ACK reaches the client
    let mut psn = FIRST_PSN;
    let mut t = 20_000u64;
    for m in 0..WRITES {
        if m >= TX_DEPTH {
            t = t.max(ack_back[m - TX_DEPTH]);
        }
        let n = per_msg.len();
        for (i, &len) in per_msg.iter().enumerate() {
            let p = write_packet(&fwd, m, i, n, psn, len);
            trace.push(t, &p);
            t += 10_000;
            psn = psn_add(psn, 1);
        }
        let last_psn = psn_add(psn, 0xff_ffff);
        let acked = t + 20_000;
        trace.push(
            acked,
            &back.ack(last_psn, syndrome::ACK_UNLIMITED, m as u32 + 1),
        );
        ack_back[m] = acked + 40_000;
    }
    let records = trace.records();
    debug_assert!(records.iter().all(|r| r.ts_ns >= BASE_NS));
    Sample {
        file: "rxe_write.pcap",
        format: Format::Pcap,
        records,
    }
}

/// Packet `i` of `n` of message `m`, at `psn`, carrying `len` bytes.
fn write_packet(fwd: &Path, m: usize, i: usize, n: usize, psn: u32, len: u32) -> Packet {
    let mut p = fwd.packet(super::write_opcode(i, n, false), psn);
    if i == 0 {
        p.ext.reth = Reth {
            va: REMOTE_ADDR + u64::from(WRITE_BYTES) * m as u64,
            rkey: RKEY,
            dma_len: WRITE_BYTES,
        };
    }
    p.bth.ack_req = i + 1 == n;
    p.payload_len = len as usize;
    p
}
