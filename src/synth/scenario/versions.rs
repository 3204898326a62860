//! `rocev1_ipv6_vlan.pcapng`: the framings a RoCE inspector meets besides RoCEv2 over plain
//! IPv4, in one pcapng file:
//! - RoCEv1 (EtherType 0x8915, GRH with link-local GIDs; IBTA Annex A16): an RC SEND ONLY and
//!   its ACK, twice;
//! - RoCEv2 over IPv6 (traffic class 0x6a: DSCP 26, ECT(0)): an RDMA WRITE FIRST / LAST of
//!   1500 bytes over PMTU 1024 and its ACK;
//! - RoCEv2 over IPv4 in an 802.1Q tag (VLAN 100, PCP 3): an RDMA READ of 2048 bytes and its two
//!   responses;
//! - RoCEv2 over IPv4 in 802.1ad + 802.1Q tags (S-VLAN 200, C-VLAN 100, PCP 3): a UD SEND ONLY
//!   (DETH Q_Key 0x11111111) each way;
//! - an 802.1Q priority tag (VLAN 0, PCP 3), as PFC-enabled NICs send: an RDMA WRITE ONLY and
//!   its ACK.

use super::super::frame::{Eth, Net, Packet, VlanTag};
use super::{Format, Path, Sample, Trace, host, op, syndrome};
use crate::decode::{Aeth, Deth, Reth};

fn gid(n: u8) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[0] = 0xfe;
    g[1] = 0x80;
    g[8..16].copy_from_slice(&[0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, n]);
    g
}

fn ula(n: u8) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[0] = 0xfd;
    a[15] = n;
    a
}

fn retarget(p: &mut Packet, net: Net, tags: Vec<VlanTag>) {
    p.net = net;
    p.eth = Eth {
        tags,
        ..p.eth.clone()
    };
}

fn rocev1(from: u8, to: u8, mut p: Packet) -> Packet {
    let net = Net::Grh {
        sgid: gid(from),
        dgid: gid(to),
        tclass: 0,
        flow_label: 0,
        hop_limit: 1,
    };
    retarget(&mut p, net, Vec::new());
    p
}

fn ipv6(from: u8, to: u8, mut p: Packet) -> Packet {
    let net = Net::Ipv6 {
        src: ula(from),
        dst: ula(to),
        tclass: 0x6a,
        flow_label: 0x2a7c1,
        hop_limit: 64,
    };
    retarget(&mut p, net, Vec::new());
    p
}

fn tagged(mut p: Packet, tags: Vec<VlanTag>) -> Packet {
    p.eth.tags = tags;
    p
}

fn paths(qa: u32, qb: u32) -> (Path, Path) {
    let (a, b) = (host(1), host(2));
    let fwd = Path {
        from: a,
        to: b,
        dest_qp: qb,
        udp_src: 0xc400,
        tos: 0x6a,
    };
    let back = Path {
        from: b,
        to: a,
        dest_qp: qa,
        udp_src: 0xd400,
        tos: 0x6a,
    };
    (fwd, back)
}

/// The sample.
pub fn sample() -> Sample {
    let mut tr = Trace::default();
    let mut t = 1_000u64;
    let mut put = |tr: &mut Trace, gap: u64, p: Packet| {
        t += gap;
        tr.push(t, &p);
    };
    // RoCEv1 SEND ONLY + ACK, twice.
    let (f, b) = paths(0x000101, 0x000102);
    for k in 0..2u32 {
        let mut s = f.packet(op::SEND_ONLY, 0x0a_0000 + k);
        s.payload_len = 64;
        s.bth.ack_req = true;
        put(&mut tr, 10_000, rocev1(1, 2, s));
        put(
            &mut tr,
            3_000,
            rocev1(2, 1, b.ack(0x0a_0000 + k, syndrome::ACK_UNLIMITED, k + 1)),
        );
    }
    // RoCEv2 over IPv6: WRITE FIRST/LAST + ACK.
    let (f, b) = paths(0x000201, 0x000202);
    let mut w1 = f.packet(op::WRITE_FIRST, 0x0b_0000);
    w1.payload_len = 1024;
    w1.ext.reth = Reth {
        va: 0x7f00_1000_0000,
        rkey: 0x2222,
        dma_len: 1500,
    };
    let mut w2 = f.packet(op::WRITE_LAST, 0x0b_0001);
    w2.payload_len = 476;
    w2.bth.ack_req = true;
    put(&mut tr, 10_000, ipv6(1, 2, w1));
    put(&mut tr, 500, ipv6(1, 2, w2));
    put(
        &mut tr,
        3_000,
        ipv6(2, 1, b.ack(0x0b_0001, syndrome::ACK_UNLIMITED, 1)),
    );
    // 802.1Q VLAN 100 PCP 3: READ + two responses.
    let q = vec![VlanTag::dot1q(100, 3)];
    let (f, b) = paths(0x000301, 0x000302);
    let mut rr = f.packet(op::READ_REQUEST, 0x0c_0000);
    rr.ext.reth = Reth {
        va: 0x7f00_2000_0000,
        rkey: 0x3333,
        dma_len: 2048,
    };
    put(&mut tr, 10_000, tagged(rr, q.clone()));
    for (i, opc) in [op::READ_RESPONSE_FIRST, op::READ_RESPONSE_LAST]
        .into_iter()
        .enumerate()
    {
        let mut r = b.packet(opc, 0x0c_0000 + i as u32);
        r.payload_len = 1024;
        r.ext.aeth = Aeth {
            syndrome: syndrome::ACK_UNLIMITED,
            msn: 1,
        };
        put(&mut tr, 3_000 - 2_500 * i as u64, tagged(r, q.clone()));
    }
    // 802.1ad S-tag 200 + 802.1Q C-tag 100: UD SEND ONLY each way.
    let qinq = vec![
        VlanTag {
            tpid: 0x88a8,
            pcp: 3,
            vid: 200,
        },
        VlanTag::dot1q(100, 3),
    ];
    let (f, b) = paths(0x000401, 0x000402);
    for (p, src_qp) in [(f, 0x000401u32), (b, 0x000402)] {
        let mut u = p.packet(op::UD_SEND_ONLY, 0x0d_0000);
        u.payload_len = 256;
        u.ext.deth = Deth {
            qkey: 0x1111_1111,
            src_qp,
        };
        put(&mut tr, 10_000, tagged(u, qinq.clone()));
    }
    // Priority tag (VLAN 0, PCP 3): WRITE ONLY + ACK.
    let prio = vec![VlanTag::dot1q(0, 3)];
    let (f, b) = paths(0x000501, 0x000502);
    let mut w = f.packet(op::WRITE_ONLY, 0x0e_0000);
    w.payload_len = 128;
    w.bth.ack_req = true;
    w.ext.reth = Reth {
        va: 0x7f00_3000_0000,
        rkey: 0x5555,
        dma_len: 128,
    };
    put(&mut tr, 10_000, tagged(w, prio.clone()));
    put(
        &mut tr,
        3_000,
        tagged(b.ack(0x0e_0000, syndrome::ACK_UNLIMITED, 1), prio),
    );
    Sample {
        file: "rocev1_ipv6_vlan.pcapng",
        format: Format::Pcapng,
        records: tr.records(),
    }
}
