//! Hand-built mirror tunnels around the RoCEv2 frames of [`super::frames`]: ERSPAN type II and
//! III (draft-foschiano-erspan-03 §4), GRE transparent Ethernet bridging (RFC 2784 / 2890) and
//! VXLAN (RFC 7348), over IPv4 or IPv6 and Ethernet with or without an 802.1Q tag, written from
//! the specifications' layouts, independently of the decoder; and the records as a pcap file.
#![allow(dead_code)]

use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, Record, pcap_bytes};

use super::frames::ip_checksum;

/// The tunnel to build.
#[derive(Clone, Copy, Debug)]
pub enum Tunnel {
    /// ERSPAN type II (GRE 0x88BE with sequence number).
    Erspan2 {
        /// Session ID (10 bits).
        session: u16,
        /// Original VLAN (12 bits).
        vlan: u16,
        /// COS (3 bits).
        cos: u8,
        /// T bit.
        truncated: bool,
        /// Index (20 bits).
        index: u32,
    },
    /// ERSPAN type III (GRE 0x22EB with sequence number).
    Erspan3 {
        /// Session ID.
        session: u16,
        /// Original VLAN.
        vlan: u16,
        /// COS.
        cos: u8,
        /// T bit.
        truncated: bool,
        /// 32-bit timestamp.
        timestamp: u32,
        /// Granularity (2 bits).
        gra: u8,
        /// Hardware ID (6 bits).
        hw: u8,
        /// Platform subheader (platform ID, second word), sets O.
        platform: Option<(u8, u32)>,
    },
    /// ERSPAN type I: GRE 0x88BE without sequence number, the Ethernet frame right after.
    Erspan1,
    /// IP-in-GRE (protocol 0x0800): the inner frame without its Ethernet header.
    GreIp {
        /// Key.
        key: Option<u32>,
    },
    /// GRE protocol 0x6558 with the optional checksum, key and sequence number.
    Teb {
        /// Add a checksum.
        checksum: bool,
        /// Key.
        key: Option<u32>,
        /// Add the sequence number.
        seq: bool,
    },
    /// VXLAN to `port`.
    Vxlan {
        /// VNI (24 bits).
        vni: u32,
        /// UDP destination port.
        port: u16,
    },
}

/// The outer (carrier) network.
#[derive(Clone, Copy, Debug)]
pub struct Carrier {
    /// IPv6 instead of IPv4.
    pub v6: bool,
    /// An 802.1Q tag with this VLAN ID on the carrier's Ethernet header.
    pub vlan: Option<u16>,
}

/// Source and destination of the outer IPv4 header.
pub const OUTER_V4: ([u8; 4], [u8; 4]) = ([192, 168, 9, 1], [192, 168, 9, 200]);
/// Source and destination of the outer IPv6 header.
pub const OUTER_V6: ([u8; 16], [u8; 16]) = (
    [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
);

fn gre(proto: u16, checksum: bool, key: Option<u32>, seq: Option<u32>, body: &[u8]) -> Vec<u8> {
    let mut flags = 0u16;
    if checksum {
        flags |= 0x8000;
    }
    if key.is_some() {
        flags |= 0x2000;
    }
    if seq.is_some() {
        flags |= 0x1000;
    }
    let mut g = Vec::new();
    g.extend_from_slice(&flags.to_be_bytes());
    g.extend_from_slice(&proto.to_be_bytes());
    if checksum {
        g.extend_from_slice(&[0; 4]);
    }
    if let Some(k) = key {
        g.extend_from_slice(&k.to_be_bytes());
    }
    if let Some(s) = seq {
        g.extend_from_slice(&s.to_be_bytes());
    }
    g.extend_from_slice(body);
    if checksum {
        // RFC 2784 §2.5: the ones' complement sum over the GRE header and payload.
        let c = ip_checksum(&g);
        g[4..6].copy_from_slice(&c.to_be_bytes());
    }
    g
}

/// The tunnel payload (GRE header and what follows, or UDP + VXLAN) around `inner`, and the
/// outer IP protocol number.
fn tunnel(t: &Tunnel, seq: u32, inner: &[u8]) -> (u8, Vec<u8>) {
    match *t {
        Tunnel::Erspan2 {
            session,
            vlan,
            cos,
            truncated,
            index,
        } => {
            let mut h = Vec::new();
            h.extend_from_slice(&(0x1000 | (vlan & 0x0fff)).to_be_bytes());
            let w = (u16::from(cos & 7) << 13) | (u16::from(truncated) << 10) | (session & 0x3ff);
            h.extend_from_slice(&w.to_be_bytes());
            h.extend_from_slice(&(index & 0xfffff).to_be_bytes());
            h.extend_from_slice(inner);
            (47, gre(0x88be, false, None, Some(seq), &h))
        }
        Tunnel::Erspan3 {
            session,
            vlan,
            cos,
            truncated,
            timestamp,
            gra,
            hw,
            platform,
        } => {
            let mut h = Vec::new();
            h.extend_from_slice(&(0x2000 | (vlan & 0x0fff)).to_be_bytes());
            let w = (u16::from(cos & 7) << 13) | (u16::from(truncated) << 10) | (session & 0x3ff);
            h.extend_from_slice(&w.to_be_bytes());
            h.extend_from_slice(&timestamp.to_be_bytes());
            h.extend_from_slice(&0x0bb8u16.to_be_bytes()); // SGT 3000
            // P = 1, FT = 0 (Ethernet), HW ID, D = 0, Gra, O.
            let w = 0x8000
                | (u16::from(hw & 0x3f) << 4)
                | (u16::from(gra & 3) << 1)
                | u16::from(platform.is_some());
            h.extend_from_slice(&w.to_be_bytes());
            if let Some((id, word)) = platform {
                h.extend_from_slice(&((u32::from(id) << 26) | 0x42).to_be_bytes());
                h.extend_from_slice(&word.to_be_bytes());
            }
            h.extend_from_slice(inner);
            (47, gre(0x22eb, false, None, Some(seq), &h))
        }
        Tunnel::Erspan1 => (47, gre(0x88be, false, None, None, inner)),
        Tunnel::GreIp { key } => {
            // Drop the inner Ethernet header (and its tag, if any).
            let off = if inner[12..14] == [0x81, 0x00] {
                18
            } else {
                14
            };
            (47, gre(0x0800, false, key, Some(seq), &inner[off..]))
        }
        Tunnel::Teb {
            checksum,
            key,
            seq: s,
        } => (47, gre(0x6558, checksum, key, s.then_some(seq), inner)),
        Tunnel::Vxlan { vni, port } => {
            let mut u = Vec::new();
            u.extend_from_slice(&(49152 + (seq as u16 & 0x3fff)).to_be_bytes());
            u.extend_from_slice(&port.to_be_bytes());
            u.extend_from_slice(&((16 + inner.len()) as u16).to_be_bytes());
            u.extend_from_slice(&[0, 0]);
            u.extend_from_slice(&[0x08, 0, 0, 0]);
            u.extend_from_slice(&(vni << 8).to_be_bytes());
            u.extend_from_slice(inner);
            (17, u)
        }
    }
}

/// The whole mirrored frame: carrier Ethernet [+ tag] ‖ outer IP ‖ tunnel ‖ `inner`.
pub fn wrap(inner: &[u8], t: &Tunnel, c: &Carrier, seq: u32) -> Vec<u8> {
    let (proto, body) = tunnel(t, seq, inner);
    let mut f = vec![0x02, 0, 0, 0, 0, 0x99, 0x02, 0, 0, 0, 0, 0x98];
    if let Some(v) = c.vlan {
        f.extend_from_slice(&[0x81, 0x00]);
        f.extend_from_slice(&(0x2000 | (v & 0x0fff)).to_be_bytes());
    }
    if c.v6 {
        f.extend_from_slice(&[0x86, 0xdd]);
        f.extend_from_slice(&[0x60, 0, 0, 0]);
        f.extend_from_slice(&(body.len() as u16).to_be_bytes());
        f.push(proto);
        f.push(64);
        f.extend_from_slice(&OUTER_V6.0);
        f.extend_from_slice(&OUTER_V6.1);
    } else {
        f.extend_from_slice(&[0x08, 0x00]);
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((20 + body.len()) as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&(seq as u16).to_be_bytes());
        ip[8] = 255;
        ip[9] = proto;
        ip[12..16].copy_from_slice(&OUTER_V4.0);
        ip[16..20].copy_from_slice(&OUTER_V4.1);
        let ck = ip_checksum(&ip);
        ip[10..12].copy_from_slice(&ck.to_be_bytes());
        f.extend_from_slice(&ip);
    }
    f.extend_from_slice(&body);
    f
}

/// One pcap record: time (ns), captured bytes, length on the wire.
pub type Rec = (u64, Vec<u8>, u32);

/// A nanosecond pcap (LINKTYPE_ETHERNET) of `recs`, written by the project's capture writer.
pub fn pcap(recs: &[Rec]) -> Vec<u8> {
    let records: Vec<Record> = recs
        .iter()
        .map(|(ts_ns, data, orig_len)| Record {
            ts_ns: *ts_ns,
            data: data.clone(),
            orig_len: *orig_len,
        })
        .collect();
    pcap_bytes(LINKTYPE_ETHERNET, 65535, &records)
}
