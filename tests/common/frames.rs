//! A small, independent builder of Ethernet/IPv4/UDP RoCEv2 frames with a correct ICRC, for the
//! property tests, the hostile-file generator and the fuzz targets (which include this file with
//! `#[path]`). It uses only `roce_inspect::decode::icrc` and the opcode layout table, so every
//! header the opcode implies is written in wire order from the chosen field values.
#![allow(dead_code)]

use roce_inspect::decode::icrc::rocev2_ipv4;
use roce_inspect::decode::{ExtKind, Opcode};

/// Field values for the extended headers; only those the opcode implies are written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ext {
    /// RETH (va, rkey, dma_len).
    pub reth: (u64, u32, u32),
    /// AETH (syndrome, MSN).
    pub aeth: (u8, u32),
    /// DETH (Q_Key, source QP).
    pub deth: (u32, u32),
    /// Immediate data.
    pub imm: u32,
    /// IETH R_Key.
    pub ieth: u32,
    /// AtomicETH (va, rkey, swap/add, compare).
    pub atomic: (u64, u32, u64, u64),
    /// AtomicAckETH original value.
    pub atomic_ack: u64,
    /// RDETH EE context.
    pub rdeth: u32,
    /// XRCETH XRC SRQ.
    pub xrc_srq: u32,
    /// FETH word.
    pub feth: u32,
}

/// One RoCEv2 packet over IPv4 and Ethernet (optionally 802.1Q-tagged).
#[derive(Clone, Debug)]
pub struct V2 {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    pub tos: u8,
    pub ttl: u8,
    pub ip_id: u16,
    pub vlan: Option<u16>,
    pub opcode: u8,
    pub se: bool,
    pub m: bool,
    pub pad: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    pub dest_qp: u32,
    pub ack_req: bool,
    pub psn: u32,
    pub ext: Ext,
    pub payload: usize,
}

impl Default for V2 {
    fn default() -> Self {
        V2 {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            sport: 0xc000,
            dport: 4791,
            tos: 0x02,
            ttl: 64,
            ip_id: 0x1234,
            vlan: None,
            opcode: 0x0a,
            se: false,
            m: false,
            pad: 0,
            pkey: 0xffff,
            fecn: false,
            becn: false,
            dest_qp: 0x11,
            ack_req: false,
            psn: 0,
            ext: Ext::default(),
            payload: 0,
        }
    }
}

/// IPv4 header checksum of `h` (checksum field included as it is).
pub fn ip_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in h.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl V2 {
    /// BTH, the extended headers the opcode implies, payload and pad bytes (no ICRC).
    pub fn transport(&self) -> Vec<u8> {
        let mut t = Vec::with_capacity(64 + self.payload);
        t.push(self.opcode);
        t.push(u8::from(self.se) << 7 | u8::from(self.m) << 6 | (self.pad & 3) << 4);
        t.extend_from_slice(&self.pkey.to_be_bytes());
        t.push(u8::from(self.fecn) << 7 | u8::from(self.becn) << 6);
        t.extend_from_slice(&(self.dest_qp & 0xff_ffff).to_be_bytes()[1..]);
        t.push(u8::from(self.ack_req) << 7);
        t.extend_from_slice(&(self.psn & 0xff_ffff).to_be_bytes()[1..]);
        let e = &self.ext;
        if let Some(layout) = Opcode(self.opcode).layout() {
            for h in layout.headers {
                match h {
                    ExtKind::Rdeth => t.extend_from_slice(&(e.rdeth & 0xff_ffff).to_be_bytes()),
                    ExtKind::Deth => {
                        t.extend_from_slice(&e.deth.0.to_be_bytes());
                        t.extend_from_slice(&(e.deth.1 & 0xff_ffff).to_be_bytes());
                    }
                    ExtKind::Xrceth => t.extend_from_slice(&(e.xrc_srq & 0xff_ffff).to_be_bytes()),
                    ExtKind::Reth => {
                        t.extend_from_slice(&e.reth.0.to_be_bytes());
                        t.extend_from_slice(&e.reth.1.to_be_bytes());
                        t.extend_from_slice(&e.reth.2.to_be_bytes());
                    }
                    ExtKind::AtomicEth => {
                        t.extend_from_slice(&e.atomic.0.to_be_bytes());
                        t.extend_from_slice(&e.atomic.1.to_be_bytes());
                        t.extend_from_slice(&e.atomic.2.to_be_bytes());
                        t.extend_from_slice(&e.atomic.3.to_be_bytes());
                    }
                    ExtKind::Aeth => {
                        t.push(e.aeth.0);
                        t.extend_from_slice(&(e.aeth.1 & 0xff_ffff).to_be_bytes()[1..]);
                    }
                    ExtKind::AtomicAckEth => t.extend_from_slice(&e.atomic_ack.to_be_bytes()),
                    ExtKind::ImmDt => t.extend_from_slice(&e.imm.to_be_bytes()),
                    ExtKind::Ieth => t.extend_from_slice(&e.ieth.to_be_bytes()),
                    ExtKind::Feth => t.extend_from_slice(&e.feth.to_be_bytes()),
                    ExtKind::CnpReserved => t.extend_from_slice(&[0; 16]),
                }
            }
        }
        t.extend((0..self.payload).map(|i| (i as u8).wrapping_mul(31).wrapping_add(7)));
        t.extend(std::iter::repeat_n(0u8, usize::from(self.pad & 3)));
        t
    }

    /// The whole frame: Ethernet [+ VLAN] ‖ IPv4 ‖ UDP ‖ transport ‖ ICRC (little-endian).
    pub fn build(&self) -> Vec<u8> {
        let t = self.transport();
        let udp_len = 8 + t.len() + 4;
        let ip_len = 20 + udp_len;
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[1] = self.tos;
        ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
        ip[6] = 0x40;
        ip[8] = self.ttl;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&self.src);
        ip[16..20].copy_from_slice(&self.dst);
        let c = ip_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        let mut udp = [0u8; 8];
        udp[0..2].copy_from_slice(&self.sport.to_be_bytes());
        udp[2..4].copy_from_slice(&self.dport.to_be_bytes());
        udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
        let crc = rocev2_ipv4(&ip, &udp, &t);
        let mut f = Vec::with_capacity(18 + ip_len);
        f.extend_from_slice(&[0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1]);
        if let Some(v) = self.vlan {
            f.extend_from_slice(&[0x81, 0x00]);
            f.extend_from_slice(&(v & 0x0fff).to_be_bytes());
        }
        f.extend_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(&ip);
        f.extend_from_slice(&udp);
        f.extend_from_slice(&t);
        f.extend_from_slice(&crc.to_le_bytes());
        f
    }

    /// Offset of the IPv4 header in [`V2::build`]'s frame.
    pub fn ip_offset(&self) -> usize {
        if self.vlan.is_some() { 18 } else { 14 }
    }
}
