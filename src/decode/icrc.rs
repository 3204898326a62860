//! Invariant CRC (ICRC) computation, IBTA Vol 1 §7.8.1 and Annex A17.3.3.
//!
//! CRC-32 (IEEE 802.3 polynomial, reflected, init and xorout all ones — `crc32fast`) over: eight
//! 0xFF bytes standing in for the LRH, the network header with its variant fields set to all
//! ones, the UDP header with its checksum set to all ones (RoCEv2), the BTH with byte 4
//! (FECN, BECN, Resv6a) set to all ones, and everything after the BTH up to the ICRC. The result
//! is sent least-significant byte first. Masks per spec/roce.md §4 (sources: Linux rxe
//! `rxe_icrc.c`, scapy `contrib/roce.py`); the two worked vectors there are unit tests below.

use std::sync::OnceLock;

use crc32fast::Hasher;

/// CRC-32 of the eight 0xFF bytes that stand in for the LRH, so every computation can start
/// from it instead of hashing them again (`zlib.crc32(b"\xff" * 8)`; its complement 0xdebb20e3
/// is the seed rxe uses).
const CRC_OF_PSEUDO_LRH: u32 = 0x2144_df1c;

/// A hasher that has hashed the pseudo-LRH. `Hasher::new_with_initial` detects the CPU's
/// features (carry-less multiply) on every call, about 30 instructions per packet; a clone of
/// this one does not.
fn after_pseudo_lrh() -> Hasher {
    static SEEDED: OnceLock<Hasher> = OnceLock::new();
    SEEDED
        .get_or_init(|| Hasher::new_with_initial(CRC_OF_PSEUDO_LRH))
        .clone()
}

/// Longest masked prefix: IPv4 header with options (60) + UDP (8) + BTH (12) bytes.
const PREFIX_MAX: usize = 60 + 8 + 12;

/// Hash the masked headers as one buffer, then the rest of the transport bytes: two `update`
/// calls instead of one per header keeps short packets cheap.
fn finish(prefix: &[u8], transport: &[u8]) -> u32 {
    let mut h = after_pseudo_lrh();
    h.update(prefix);
    h.update(&transport[12..]);
    h.finalize()
}

/// Append the BTH with byte 4 (FECN, BECN, Resv6a) masked.
fn put_bth(buf: &mut [u8; PREFIX_MAX], at: usize, transport: &[u8]) -> usize {
    buf[at..at + 12].copy_from_slice(&transport[..12]);
    buf[at + 4] = 0xff;
    at + 12
}

/// Append the UDP header with its checksum masked.
fn put_udp(buf: &mut [u8; PREFIX_MAX], at: usize, udp_hdr: &[u8]) -> usize {
    buf[at..at + 8].copy_from_slice(&udp_hdr[..8]);
    buf[at + 6] = 0xff;
    buf[at + 7] = 0xff;
    at + 8
}

/// ICRC of a RoCEv2 packet over IPv4.
///
/// `ip_hdr` is the whole IPv4 header (20–60 bytes, options included), `udp_hdr` the 8-byte UDP
/// header, `transport` the bytes from the BTH up to (excluding) the ICRC, at least 12 bytes.
/// Masked: TOS, TTL, header checksum, UDP checksum.
pub fn rocev2_ipv4(ip_hdr: &[u8], udp_hdr: &[u8], transport: &[u8]) -> u32 {
    let mut buf = [0u8; PREFIX_MAX];
    let n = ip_hdr.len().min(60);
    if n == 20 {
        // The usual header, without options: a copy of known length is a few moves, not a
        // call to memcpy.
        buf[..20].copy_from_slice(&ip_hdr[..20]);
    } else {
        buf[..n].copy_from_slice(&ip_hdr[..n]);
    }
    buf[1] = 0xff; // TOS: DSCP + ECN
    buf[8] = 0xff; // TTL
    buf[10] = 0xff; // header checksum
    buf[11] = 0xff;
    let at = put_udp(&mut buf, n, udp_hdr);
    let at = put_bth(&mut buf, at, transport);
    finish(&buf[..at], transport)
}

/// ICRC of a RoCEv2 packet over IPv6.
///
/// `ip_hdr` is the 40-byte fixed IPv6 header followed by any extension headers (covered as is),
/// `udp_hdr` and `transport` as for [`rocev2_ipv4`]. Masked: traffic class, flow label, hop
/// limit, UDP checksum.
pub fn rocev2_ipv6(ip_hdr: &[u8], udp_hdr: &[u8], transport: &[u8]) -> u32 {
    let mut ip = [0u8; 40];
    ip.copy_from_slice(&ip_hdr[..40]);
    mask_grh_like(&mut ip);
    let mut h = after_pseudo_lrh();
    h.update(&ip);
    h.update(&ip_hdr[40..]);
    let mut buf = [0u8; PREFIX_MAX];
    let at = put_udp(&mut buf, 0, udp_hdr);
    let at = put_bth(&mut buf, at, transport);
    h.update(&buf[..at]);
    h.update(&transport[12..]);
    h.finalize()
}

/// Mask traffic class, flow label and hop limit of an IPv6 header or GRH (same layout of the
/// first 8 bytes: version 4, class 8, flow label 20, length 16, next header 8, hop limit 8).
fn mask_grh_like(h: &mut [u8; 40]) {
    h[0] |= 0x0f;
    h[1] = 0xff;
    h[2] = 0xff;
    h[3] = 0xff;
    h[7] = 0xff;
}

/// ICRC of a packet that carries a GRH (RoCEv1, or native IB with LNH = 3): the LRH (if any) is
/// replaced by eight 0xFF bytes and the GRH's traffic class, flow label and hop limit are
/// masked. `grh` is the 40-byte GRH, `transport` as for [`rocev2_ipv4`].
///
/// Rule confirmed against a public native-IB ERF capture (spec/roce.md §4, "Check made since").
pub fn with_grh(grh: &[u8], transport: &[u8]) -> u32 {
    let mut g = [0u8; 40];
    g.copy_from_slice(&grh[..40]);
    mask_grh_like(&mut g);
    let mut h = after_pseudo_lrh();
    h.update(&g);
    let mut bth = [0u8; 12];
    bth.copy_from_slice(&transport[..12]);
    bth[4] = 0xff;
    h.update(&bth);
    h.update(&transport[12..]);
    h.finalize()
}

/// ICRC of a native-IB packet without GRH (LNH = 2): the real LRH with only its VL field (4
/// bits) masked, then the transport bytes (spec/roce.md §4).
pub fn ib_local(lrh: &[u8], transport: &[u8]) -> u32 {
    let mut buf = [0u8; 20];
    buf[..8].copy_from_slice(&lrh[..8]);
    buf[0] |= 0xf0;
    buf[8..20].copy_from_slice(&transport[..12]);
    buf[12] = 0xff; // BTH byte 4
    static PLAIN: OnceLock<Hasher> = OnceLock::new();
    let mut h = PLAIN.get_or_init(Hasher::new).clone();
    h.update(&buf);
    h.update(&transport[12..]);
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::test_util::hex;

    /// spec/roce.md §4 vector 1: a CNP captured on a ConnectX-4 Lx; wire ICRC bytes 82 fd 00 2a.
    #[test]
    fn cnp_vector() {
        let ip = hex("45c2 003c 718c 4000 4011 9161 0a001101 0a001201");
        let udp = hex("0000 12b7 0028 0000");
        let mut t = hex("81 00 ffff 40 000118 00 000000");
        t.extend_from_slice(&[0u8; 16]);
        let crc = rocev2_ipv4(&ip, &udp, &t);
        assert_eq!(crc.to_le_bytes(), [0x82, 0xfd, 0x00, 0x2a]);
    }

    /// spec/roce.md §4 vector 2: UC SEND ONLY from scapy's tests; wire ICRC 78 f3 53 f3.
    /// IPv4 tos 1, id 1144, DF, ttl 64, 192.168.0.7 → 192.168.0.7, checksum 0xb4d5;
    /// UDP 49152 → 4791, length 44, checksum 0xaca2; BTH 0x24, M=1, pad 2, QP 211,
    /// PSN 13571856; the test's 20 payload bytes, the last two of which are pad.
    #[test]
    fn uc_send_vector() {
        let ip = hex("4501 0040 0478 4000 4011 b4d5 c0a80007 c0a80007");
        let udp = hex("c000 12b7 002c aca2");
        let mut t = hex("24 60 ffff 00 0000d3 00 cf1710");
        t.extend(hex("4630 818b e289 35d9 0e9a 9550 5401 be88 5e50 0000"));
        let crc = rocev2_ipv4(&ip, &udp, &t);
        assert_eq!(crc.to_le_bytes(), [0x78, 0xf3, 0x53, 0xf3]);
    }

    /// The covered bytes written out in full and hashed in one go (IBTA Vol 1 §7.8.1 order:
    /// pseudo-LRH or LRH, network header, UDP header, BTH, the rest), against the masked
    /// prefix and rest hashed apart above, for every header form, IPv4 options and IPv6
    /// extension headers, and payloads from none to 4 KiB.
    #[test]
    fn pieces_equal_written_out() {
        let bytes = |n: usize, seed: u8| -> Vec<u8> {
            (0..n)
                .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
                .collect()
        };
        for rest in [
            0usize, 1, 4, 15, 16, 17, 63, 64, 100, 175, 176, 177, 200, 256, 300, 4096,
        ] {
            let t = bytes(12 + rest, 7);
            let mut bth = t[..12].to_vec();
            bth[4] = 0xff;
            let udp = bytes(8, 3);
            let mut udp_m = udp.clone();
            udp_m[6] = 0xff;
            udp_m[7] = 0xff;
            for opts in [0usize, 40] {
                let mut ip = bytes(20 + opts, 11);
                ip[0] = 0x45 + (opts / 4) as u8;
                let mut ip_m = ip.clone();
                for i in [1, 8, 10, 11] {
                    ip_m[i] = 0xff;
                }
                let all = [&[0xff; 8][..], &ip_m, &udp_m, &bth, &t[12..]].concat();
                assert_eq!(
                    rocev2_ipv4(&ip, &udp, &t),
                    crc32fast::hash(&all),
                    "v4 {opts} {rest}"
                );
            }
            for ext in [0usize, 8, 200] {
                let ip6 = bytes(40 + ext, 5);
                let mut g = ip6[..40].to_vec();
                g[0] |= 0x0f;
                for i in [1, 2, 3, 7] {
                    g[i] = 0xff;
                }
                let all = [&[0xff; 8][..], &g, &ip6[40..], &udp_m, &bth, &t[12..]].concat();
                assert_eq!(
                    rocev2_ipv6(&ip6, &udp, &t),
                    crc32fast::hash(&all),
                    "v6 {ext} {rest}"
                );
                let all = [&[0xff; 8][..], &g, &bth, &t[12..]].concat();
                assert_eq!(
                    with_grh(&ip6[..40], &t),
                    crc32fast::hash(&all),
                    "grh {rest}"
                );
            }
            let lrh = bytes(8, 9);
            let mut lrh_m = lrh.clone();
            lrh_m[0] |= 0xf0;
            let all = [&lrh_m[..], &bth, &t[12..]].concat();
            assert_eq!(ib_local(&lrh, &t), crc32fast::hash(&all), "lrh {rest}");
        }
    }
}
