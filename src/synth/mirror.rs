//! Switch mirror tunnels around captured frames, as a switch's mirror session sends them to a
//! collector: ERSPAN type II and type III in GRE (draft-foschiano-erspan-03 §4.2–4.3, GRE per
//! RFC 2784 with the RFC 2890 sequence number) and VXLAN in UDP (RFC 7348 §5), over IPv4 from
//! the switch (192.168.100.1, MAC 02:00:00:00:01:01) to the collector (192.168.100.2, MAC
//! 02:00:00:00:01:02). The bundled mirrored samples are made with it.

use super::frame::ipv4_checksum;

/// GRE protocol type of ERSPAN type II (and I): 0x88BE.
pub const GRE_ERSPAN2: u16 = 0x88be;
/// GRE protocol type of ERSPAN type III: 0x22EB.
pub const GRE_ERSPAN3: u16 = 0x22eb;
/// IANA's VXLAN port, 4789 (RFC 7348 §5).
pub const VXLAN_PORT: u16 = 4789;
/// The VXLAN port of the Linux kernel's default (`ip link add … type vxlan` without
/// `dstport`), and of early Open vSwitch and Cisco deployments: 8472.
pub const VXLAN_LINUX_PORT: u16 = 8472;

/// The switch's (mirror source's) IPv4 address.
pub const SWITCH_IP: [u8; 4] = [192, 168, 100, 1];
/// The collector's IPv4 address.
pub const COLLECTOR_IP: [u8; 4] = [192, 168, 100, 2];

/// ERSPAN III timestamp granularity (Gra, 2 bits): IEEE 1588, the timestamp word holding the
/// ns within the second (draft-foschiano-erspan-03 §4.3).
pub const GRA_IEEE_1588: u8 = 2;
/// ERSPAN III platform ID 5 (the platform-specific subheader's top 6 bits): its second word
/// carries the timestamp's seconds (Wireshark's `packet-erspan.c`).
pub const PLATFORM_SECONDS: u8 = 5;

/// How a frame is mirrored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mirror {
    /// ERSPAN type II: session ID (10 bits), the port index (20 bits).
    Erspan2 {
        /// Session ID (10 bits).
        session: u16,
        /// Index (20 bits): the mirrored port.
        index: u32,
    },
    /// ERSPAN type III with an IEEE 1588 timestamp: its ns in the header, its seconds in a
    /// platform-specific subheader of platform ID 5.
    Erspan3 {
        /// Session ID (10 bits).
        session: u16,
        /// Hardware ID (6 bits): the mirror engine.
        hw: u8,
        /// The switch's time of the frame, ns since the Unix epoch.
        ts_ns: u64,
    },
    /// VXLAN with this VNI (24 bits) to UDP `port`.
    Vxlan {
        /// VXLAN network identifier (24 bits).
        vni: u32,
        /// UDP destination port.
        port: u16,
    },
}

/// The GRE header with the sequence number (S = 1) and protocol `proto`, then `body`.
fn gre(proto: u16, seq: u32, body: &[u8]) -> Vec<u8> {
    let mut g = Vec::with_capacity(8 + body.len());
    g.extend_from_slice(&0x1000u16.to_be_bytes());
    g.extend_from_slice(&proto.to_be_bytes());
    g.extend_from_slice(&seq.to_be_bytes());
    g.extend_from_slice(body);
    g
}

/// The ERSPAN II header (8 bytes): Ver 1 | VLAN 0; COS 0 | En 0 | T 0 | session; Reserved |
/// Index.
fn erspan2(session: u16, index: u32) -> [u8; 8] {
    let mut h = [0u8; 8];
    h[0..2].copy_from_slice(&0x1000u16.to_be_bytes());
    h[2..4].copy_from_slice(&(session & 0x3ff).to_be_bytes());
    h[4..8].copy_from_slice(&(index & 0xf_ffff).to_be_bytes());
    h
}

/// The ERSPAN III header (12 bytes) and its platform-specific subheader (8 bytes): Ver 2 |
/// VLAN 0; COS 0 | BSO 0 | T 0 | session; timestamp (ns within the second); SGT 0; P 1 | FT 0
/// (Ethernet) | HW ID | D 0 | Gra 2 | O 1; then platform ID 5 | switch ID 0 | port 0 and the
/// seconds.
fn erspan3(session: u16, hw: u8, ts_ns: u64) -> [u8; 20] {
    let mut h = [0u8; 20];
    h[0..2].copy_from_slice(&0x2000u16.to_be_bytes());
    h[2..4].copy_from_slice(&(session & 0x3ff).to_be_bytes());
    h[4..8].copy_from_slice(&((ts_ns % 1_000_000_000) as u32).to_be_bytes());
    let w = 0x8000 | (u16::from(hw & 0x3f) << 4) | (u16::from(GRA_IEEE_1588) << 1) | 1;
    h[10..12].copy_from_slice(&w.to_be_bytes());
    h[12..16].copy_from_slice(&(u32::from(PLATFORM_SECONDS) << 26).to_be_bytes());
    h[16..20].copy_from_slice(&((ts_ns / 1_000_000_000) as u32).to_be_bytes());
    h
}

/// UDP header (checksum 0, allowed over IPv4) and the VXLAN header (flags I, VNI) before
/// `inner`; the source port is the flow entropy `sport`.
fn vxlan(vni: u32, port: u16, sport: u16, inner: &[u8]) -> Vec<u8> {
    let mut u = Vec::with_capacity(16 + inner.len());
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&port.to_be_bytes());
    u.extend_from_slice(&((16 + inner.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(&[0x08, 0, 0, 0]);
    u.extend_from_slice(&((vni & 0xff_ffff) << 8).to_be_bytes());
    u.extend_from_slice(inner);
    u
}

/// The mirrored copy of `inner` (a whole Ethernet frame) as the collector receives it: Ethernet
/// ‖ IPv4 (DF, TTL 64, ID `seq`) ‖ GRE + ERSPAN or UDP + VXLAN ‖ `inner`. `seq` is the
/// session's copy counter (GRE sequence number; VXLAN's UDP source port entropy).
pub fn wrap(inner: &[u8], m: &Mirror, seq: u32) -> Vec<u8> {
    let (proto, body) = match *m {
        Mirror::Erspan2 { session, index } => {
            let mut b = erspan2(session, index).to_vec();
            b.extend_from_slice(inner);
            (47u8, gre(GRE_ERSPAN2, seq, &b))
        }
        Mirror::Erspan3 { session, hw, ts_ns } => {
            let mut b = erspan3(session, hw, ts_ns).to_vec();
            b.extend_from_slice(inner);
            (47, gre(GRE_ERSPAN3, seq, &b))
        }
        Mirror::Vxlan { vni, port } => (17, vxlan(vni, port, 49152 | (seq as u16 & 0x3fff), inner)),
    };
    let mut f = Vec::with_capacity(34 + body.len());
    f.extend_from_slice(&[0x02, 0, 0, 0, 1, 2, 0x02, 0, 0, 0, 1, 1, 0x08, 0x00]);
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((20 + body.len()) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&(seq as u16).to_be_bytes());
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = proto;
    ip[12..16].copy_from_slice(&SWITCH_IP);
    ip[16..20].copy_from_slice(&COLLECTOR_IP);
    let ck = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&body);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed bytes of each header for one known input.
    #[test]
    fn headers_as_the_draft_and_rfc_lay_them_out() {
        let inner = [0xaa; 4];
        // ERSPAN II, session 5, index 3, GRE seq 7.
        let f = wrap(
            &inner,
            &Mirror::Erspan2 {
                session: 5,
                index: 3,
            },
            7,
        );
        assert_eq!(f.len(), 14 + 20 + 8 + 8 + 4);
        assert_eq!(&f[23..24], &[47]);
        assert_eq!(&f[34..42], &[0x10, 0, 0x88, 0xbe, 0, 0, 0, 7]);
        assert_eq!(&f[42..50], &[0x10, 0, 0, 5, 0, 0, 0, 3]);
        assert_eq!(&f[50..], &inner);
        // ERSPAN III at 1 700 000 000.123456789 s, session 7, HW 9.
        let ts = 1_700_000_000_123_456_789;
        let f = wrap(
            &inner,
            &Mirror::Erspan3 {
                session: 7,
                hw: 9,
                ts_ns: ts,
            },
            1,
        );
        assert_eq!(&f[36..38], &[0x22, 0xeb]);
        let e = &f[42..62];
        assert_eq!(&e[0..4], &[0x20, 0, 0, 7]);
        assert_eq!(&e[4..8], &123_456_789u32.to_be_bytes());
        // P 1, FT 0, HW 9 (0b001001), D 0, Gra 0b10, O 1: 1000 0000 1001 0101.
        assert_eq!(&e[10..12], &[0x80, 0x95]);
        assert_eq!(&e[12..16], &[0x14, 0, 0, 0]); // platform ID 5 << 2 in the top byte
        assert_eq!(&e[16..20], &1_700_000_000u32.to_be_bytes());
        // VXLAN VNI 0x1092 to 8472: UDP length 16 + 4.
        let f = wrap(
            &inner,
            &Mirror::Vxlan {
                vni: 0x1092,
                port: 8472,
            },
            2,
        );
        assert_eq!(&f[23..24], &[17]);
        assert_eq!(
            &f[34..50],
            &[
                0xc0, 2, 0x21, 0x18, 0, 20, 0, 0, 8, 0, 0, 0, 0, 0x10, 0x92, 0
            ]
        );
        // The IPv4 header checksums to zero.
        assert_eq!(ipv4_checksum(&f[14..34]), 0);
    }
}
