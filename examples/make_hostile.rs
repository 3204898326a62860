//! Write the hostile-input captures under `tests/hostile/` (issue 7, point 3):
//! `cargo run --example make_hostile [DIR]`. The files are committed; rerunning this rewrites
//! them byte for byte. Every file is written here byte by byte (pcap record headers and pcapng
//! blocks included), so that record headers can lie; frames come from the builder in
//! `tests/common/frames.rs` (the project's frame builder). `tests/hostile/README.md` describes each file and `tests/hostile.rs`
//! asserts the exact counts.

#[path = "../tests/common/frames.rs"]
mod frames;

use frames::{Ext, V2, ip_checksum};
use roce_inspect::decode::{Aeth, Reth};
use std::path::{Path, PathBuf};

/// 2023-11-14T22:13:20Z in seconds.
const T0: u32 = 1_700_000_000;

/// A classic pcap file with nanosecond timestamps, Ethernet.
struct Pcap(Vec<u8>);

impl Pcap {
    fn new() -> Pcap {
        let mut v = Vec::new();
        v.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // ns magic
        v.extend_from_slice(&2u16.to_le_bytes());
        v.extend_from_slice(&4u16.to_le_bytes());
        v.extend_from_slice(&0u32.to_le_bytes()); // thiszone
        v.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        v.extend_from_slice(&262_144u32.to_le_bytes()); // snaplen
        v.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
        Pcap(v)
    }
    /// A record with explicit header fields.
    fn raw(&mut self, sec: u32, ns: u32, caplen: u32, len: u32, data: &[u8]) -> &mut Self {
        for x in [sec, ns, caplen, len] {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
        self.0.extend_from_slice(data);
        self
    }
    fn rec(&mut self, sec: u32, ns: u32, data: &[u8]) -> &mut Self {
        let n = data.len() as u32;
        self.raw(sec, ns, n, n, data)
    }
}

/// Ethernet + IPv4 (20 bytes, correct checksum) + UDP to 4791 around `transport`, with the IP
/// total length and UDP length taken from the arguments when given (else from the bytes).
fn udp_frame(transport: &[u8], ip_total: Option<u16>, udp_len: Option<u16>) -> Vec<u8> {
    let real_udp = 8 + transport.len();
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[1] = 0x02;
    let tl = ip_total.unwrap_or((20 + real_udp) as u16);
    ip[2..4].copy_from_slice(&tl.to_be_bytes());
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
    ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
    let c = ip_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&ip);
    f.extend_from_slice(&0xc000u16.to_be_bytes());
    f.extend_from_slice(&4791u16.to_be_bytes());
    f.extend_from_slice(&udp_len.unwrap_or(real_udp as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(transport);
    f
}

/// A 12-byte BTH.
fn bth(opcode: u8, pad: u8, qp: u32, ack_req: bool, psn: u32) -> Vec<u8> {
    let mut b = vec![opcode, (pad & 3) << 4, 0xff, 0xff, 0];
    b.extend_from_slice(&qp.to_be_bytes()[1..]);
    b.push(u8::from(ack_req) << 7);
    b.extend_from_slice(&psn.to_be_bytes()[1..]);
    b
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
    println!("{name}: {} bytes", bytes.len());
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile"));
    std::fs::create_dir_all(&dir).unwrap();

    // 1. rxe-style opcode 0xFF: a 48-byte UDP datagram (BTH opcode 0xFF + 28 bytes), and a
    //    48-byte IP packet (UDP 28 bytes: BTH + 8 bytes).
    let mut t = bth(0xff, 0, 0x11, false, 1);
    t.extend_from_slice(&[0xab; 28]);
    let a = udp_frame(&t, None, None);
    let mut t = bth(0xff, 0, 0x11, false, 2);
    t.extend_from_slice(&[0xab; 8]);
    let b = udp_frame(&t, None, None);
    write(
        &dir,
        "rxe_opcode_ff.pcap",
        &Pcap::new().rec(T0, 0, &a).rec(T0, 1000, &b).0,
    );

    // 2. Pad count larger than the payload: RC SEND ONLY, pad 3, 2 payload bytes; RC ACK
    //    (no payload) with pad 3.
    let mut t = bth(0x04, 3, 0x11, true, 5);
    t.extend_from_slice(&[9, 9, 0, 0, 0, 0]);
    let a = udp_frame(&t, None, None);
    let mut t = bth(0x11, 3, 0x12, false, 5);
    t.extend_from_slice(&[0x1f, 0, 0, 1, 0, 0, 0, 0]);
    let b = udp_frame(&t, None, None);
    write(
        &dir,
        "pad_exceeds_payload.pcap",
        &Pcap::new().rec(T0, 0, &a).rec(T0, 1000, &b).0,
    );

    // 3. UDP length larger than the frame: (a) UDP length 1000 in a 100-byte IP packet whose
    //    total length is right; (b) IP total length 1020 and UDP length 1000 in a frame of 114
    //    bytes captured whole (caplen = len): both length fields lie, the snap length cut
    //    nothing.
    let mut t = bth(0x04, 0, 0x11, false, 7);
    t.extend_from_slice(&[0x55; 56]);
    let a = udp_frame(&t, None, Some(1000));
    let b = udp_frame(&t, Some(1020), Some(1000));
    write(
        &dir,
        "udp_len_exceeds_frame.pcap",
        &Pcap::new().rec(T0, 0, &a).rec(T0, 1000, &b).0,
    );

    // 4. IPv4 header length < 20: IHL 4 (16 bytes) and IHL 0, otherwise a RoCEv2 frame.
    let good_psn = |psn: u32| {
        V2 {
            opcode: 0x0a,
            psn,
            payload: 64,
            ext: Ext {
                reth: Reth {
                    va: 0x1000,
                    rkey: 0x1234,
                    dma_len: 64,
                },
                ..Ext::default()
            },
            ..V2::default()
        }
        .build()
    };
    let good = good_psn(0);
    let mut a = good.clone();
    a[14] = 0x44;
    let mut b = good.clone();
    b[14] = 0x40;
    write(
        &dir,
        "ipv4_ihl_short.pcap",
        &Pcap::new().rec(T0, 0, &a).rec(T0, 1000, &b).0,
    );

    // 5. Nested VLAN tags: (a) 802.1Q tags (VID 1, TPID 0x8100 again) up to the end of a
    //    9 000-byte (jumbo) frame; (b) 300 alternating 802.1ad/802.1Q tags, then a valid RoCEv2 packet
    //    (ICRC good: Ethernet and tags are not covered); (c) tags ending exactly at the frame end
    //    (the last tag's Ethertype is the last 2 bytes).
    let mut a = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
    while a.len() < 9_000 {
        a.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]);
    }
    let mut b = good[..12].to_vec();
    for k in 0..300 {
        b.extend_from_slice(if k % 2 == 0 {
            &[0x88, 0xa8]
        } else {
            &[0x81, 0x00]
        });
        b.extend_from_slice(&[0x00, (k % 200) as u8 + 1]);
    }
    b.extend_from_slice(&good[12..]);
    let mut c = good[..12].to_vec();
    for _ in 0..10 {
        c.extend_from_slice(&[0x81, 0x00, 0x00, 0x02]);
    }
    c.extend_from_slice(&[0x81, 0x00]);
    write(
        &dir,
        "nested_vlan.pcap",
        &Pcap::new()
            .rec(T0, 0, &a)
            .rec(T0, 1000, &b)
            .rec(T0, 2000, &c)
            .0,
    );

    // 6. READ request with DMA length 2^32 − 1 at PSN 100 (QP 0x11 on 10.0.0.2), a WRITE ONLY at
    //    PSN 101, and a WRITE ONLY at PSN 100 + 2^20 (the PSN after the READ's reservation at
    //    PMTU 4096), each with AckReq; then the responder's READ RESPONSE ONLY (PSN 100, 16
    //    bytes) and an ACK of PSN 100 + 2^20.
    let req = |opcode: u8, psn: u32, dma: u32, payload: usize| V2 {
        opcode,
        psn,
        ack_req: true,
        payload,
        pad: ((4 - payload % 4) % 4) as u8,
        ext: Ext {
            reth: Reth {
                va: 0x7f00_0000_0000,
                rkey: 0xbeef,
                dma_len: dma,
            },
            ..Ext::default()
        },
        ..V2::default()
    };
    let resp = |opcode: u8, psn: u32, payload: usize| V2 {
        src: [10, 0, 0, 2],
        dst: [10, 0, 0, 1],
        dest_qp: 0x22,
        opcode,
        psn,
        payload,
        ext: Ext {
            aeth: Aeth {
                syndrome: 0x1f,
                msn: 1,
            },
            ..Ext::default()
        },
        ..V2::default()
    };
    let mut p = Pcap::new();
    p.rec(T0, 0, &req(0x0c, 100, u32::MAX, 0).build())
        .rec(T0, 1000, &req(0x0a, 101, 8, 8).build())
        .rec(T0, 2000, &req(0x0a, 100 + (1 << 20), 8, 8).build())
        .rec(T0, 3000, &resp(0x10, 100, 16).build())
        .rec(T0, 4000, &resp(0x11, 100 + (1 << 20), 0).build());
    write(&dir, "read_dma_len_max.pcap", &p.0);

    // 7. Records claiming 4 GB lengths: two good frames, then a record header with caplen and
    //    len 0xFFFFFFF0, then a few bytes.
    let mut p = Pcap::new();
    p.rec(T0, 0, &good).rec(T0, 1000, &good_psn(1)).raw(
        T0,
        2000,
        0xffff_fff0,
        0xffff_fff0,
        &good[..40],
    );
    write(&dir, "record_len_4gb.pcap", &p.0);

    // 8. pcapng with a block of unknown type (0x0BADB10C, 28 bytes) between two Enhanced Packet
    //    Blocks, and a custom block (0x00000BAD) after them.
    let mut ng = Vec::new();
    let block = |ng: &mut Vec<u8>, ty: u32, body: &[u8]| {
        let padded = body.len().div_ceil(4) * 4;
        let total = (12 + padded) as u32;
        ng.extend_from_slice(&ty.to_le_bytes());
        ng.extend_from_slice(&total.to_le_bytes());
        ng.extend_from_slice(body);
        ng.extend(std::iter::repeat_n(0u8, padded - body.len()));
        ng.extend_from_slice(&total.to_le_bytes());
    };
    let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&u64::MAX.to_le_bytes()); // section length unknown
    block(&mut ng, 0x0a0d_0d0a, &shb);
    let mut idb = 1u16.to_le_bytes().to_vec(); // LINKTYPE_ETHERNET
    idb.extend_from_slice(&0u16.to_le_bytes());
    idb.extend_from_slice(&262_144u32.to_le_bytes());
    block(&mut ng, 1, &idb);
    let epb = |ts_us: u64, data: &[u8]| {
        let mut e = 0u32.to_le_bytes().to_vec(); // interface 0
        e.extend_from_slice(&((ts_us >> 32) as u32).to_le_bytes());
        e.extend_from_slice(&(ts_us as u32).to_le_bytes());
        e.extend_from_slice(&(data.len() as u32).to_le_bytes());
        e.extend_from_slice(&(data.len() as u32).to_le_bytes());
        e.extend_from_slice(data);
        e
    };
    let t_us = u64::from(T0) * 1_000_000;
    block(&mut ng, 6, &epb(t_us, &good));
    block(
        &mut ng,
        0x0bad_b10c,
        &[
            0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
        ],
    );
    block(&mut ng, 6, &epb(t_us + 1, &good_psn(1)));
    block(&mut ng, 0x0000_0bad, &[0, 0, 0x7f, 0xff, 1, 2, 3, 4]);
    write(&dir, "pcapng_unknown_block.pcapng", &ng);

    // 9. Timestamps going backwards: WRITE ONLY PSN 0 at T0+10 s, WRITE ONLY PSN 2 at T0+9 s (a
    //    gap of 1), the responder's NAK (PSN sequence error, PSN 1) at T0+8 s, the
    //    retransmission of PSN 1 at T0+7 s, then PSN 2 again at T0+11 s; then a frame stamped
    //    before the first one by 10 s.
    let w = |psn: u32| req(0x0a, psn, 8, 8).build();
    let nak = V2 {
        ext: Ext {
            aeth: Aeth {
                syndrome: 0x60,
                msn: 0,
            },
            ..Ext::default()
        },
        ..resp(0x11, 1, 0)
    }
    .build();
    let mut p = Pcap::new();
    p.rec(T0 + 10, 0, &w(0))
        .rec(T0 + 9, 0, &w(2))
        .rec(T0 + 8, 0, &nak)
        .rec(T0 + 7, 0, &w(1))
        .rec(T0 + 11, 0, &w(2))
        .rec(T0, 0, &w(3));
    write(&dir, "ts_backwards.pcap", &p.0);
}
