//! Write a synthetic RoCEv2 capture for benchmarks: `cargo run --release --example make_trace --
//! OUT.pcap [PACKETS] [QP_PAIRS]` (`-` or `/dev/stdout` as OUT streams it).
//!
//! Traffic: QP_PAIRS (default 8) RC QP pairs between two hosts, each doing 64-byte RDMA WRITE
//! ONLY requests (AckReq set) answered by ACKs, round-robin, 1 µs apart, every ICRC valid. About
//! 138 bytes per frame on average, like the 1M-packet / 138 MB trace the figures were
//! measured on. With many QP pairs (up to 7 000 000) it sprays QPNs: 2 × QP_PAIRS flows, for
//! testing `--max-flows` (`scripts/scale-test.sh`).

use pcap::{Capture, Linktype, Packet, PacketHeader, Precision};
use roce_inspect::decode::icrc::rocev2_ipv4;

fn frame(src: [u8; 4], dst: [u8; 4], sport: u16, bth_and_ext: &[u8], payload: usize) -> Vec<u8> {
    let tlen = bth_and_ext.len() + payload + 4;
    let udp_len = 8 + tlen;
    let ip_len = 20 + udp_len;
    let mut f = Vec::with_capacity(14 + ip_len);
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00]);
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[1] = 0x02; // ECT(0)
    ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
    ip[6] = 0x40; // DF
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let mut sum: u32 = 0;
    for c in ip.chunks(2) {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    let mut udp = [0u8; 8];
    udp[0..2].copy_from_slice(&sport.to_be_bytes());
    udp[2..4].copy_from_slice(&4791u16.to_be_bytes());
    udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
    let mut t = bth_and_ext.to_vec();
    t.extend(std::iter::repeat_n(0x5a, payload));
    let crc = rocev2_ipv4(&ip, &udp, &t);
    f.extend_from_slice(&ip);
    f.extend_from_slice(&udp);
    f.extend_from_slice(&t);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .ok_or("usage: make_trace OUT.pcap [PACKETS] [QP_PAIRS]")?;
    let out = if out == "-" {
        "/dev/stdout".to_string()
    } else {
        out
    };
    let n: u64 = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let pairs: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(8);
    if !(1..=7_000_000).contains(&pairs) {
        return Err("QP_PAIRS must be 1..=7000000".into());
    }
    // Requester and responder QPNs of pair q: the historical 0x100+q / 0x200+q for up to 256
    // pairs, else two disjoint 24-bit ranges.
    let qpn = |q: u32| {
        if pairs <= 256 {
            (0x100 + q, 0x200 + q)
        } else {
            (0x10_0000 + q, 0x80_0000 + q)
        }
    };
    let cap = Capture::dead_with_precision(Linktype::ETHERNET, Precision::Nano)?;
    let mut save = cap.savefile(&out)?;
    let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let mut psn = vec![0u32; pairs as usize];
    let mut ts: u64 = 1_700_000_000_000_000_000;
    let mut i = 0u64;
    while i < n {
        let q = (i / 2 % u64::from(pairs)) as usize;
        let (req_qp, resp_qp) = qpn(q as u32);
        let f = if i % 2 == 0 {
            let mut h = vec![0x0a, 0, 0xff, 0xff, 0];
            h.extend_from_slice(&resp_qp.to_be_bytes()[1..]);
            h.push(0x80);
            h.extend_from_slice(&psn[q].to_be_bytes()[1..]);
            h.extend_from_slice(&0x7f00_0000_1000u64.to_be_bytes());
            h.extend_from_slice(&0x1234u32.to_be_bytes());
            h.extend_from_slice(&64u32.to_be_bytes());
            frame(a, b, 0xc000 + (q % 0x3000) as u16, &h, 64)
        } else {
            let mut h = vec![0x11, 0, 0xff, 0xff, 0];
            h.extend_from_slice(&req_qp.to_be_bytes()[1..]);
            h.push(0);
            h.extend_from_slice(&psn[q].to_be_bytes()[1..]);
            h.push(0x1f);
            h.extend_from_slice(&(psn[q] + 1).to_be_bytes()[1..]);
            psn[q] = (psn[q] + 1) & 0xff_ffff;
            frame(b, a, 0xc000 + (q % 0x3000) as u16, &h, 0)
        };
        let hdr = PacketHeader {
            ts: libc::timeval {
                tv_sec: (ts / 1_000_000_000) as libc::time_t,
                tv_usec: (ts % 1_000_000_000) as libc::suseconds_t,
            },
            caplen: f.len() as u32,
            len: f.len() as u32,
        };
        save.write(&Packet::new(&hdr, &f));
        ts += 1000;
        i += 1;
    }
    save.flush()?;
    Ok(())
}
