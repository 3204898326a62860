//! Ethernet/IPv4/UDP RoCEv2 frames with a correct ICRC for the property tests, the hostile-file
//! generator and the fuzz targets (which include this file with `#[path]`): a flat set of field
//! values ([`V2`]) written by the project's frame builder (`roce_inspect::synth::frame`), which
//! writes each header through the decoder's own header structs (`decode::headers`, their
//! `emit`), `decode::icrc` and the opcode layout table. So these frames are not independent of
//! the decoder's header layouts: those are checked against hand-computed bytes
//! (src/decode/headers/tests.rs, tests/vectors.rs) and tshark (tests/tshark_diff.rs).
#![allow(dead_code)]

use roce_inspect::decode::Opcode;
use roce_inspect::synth::frame::{Bth, Eth, Net, Packet, VlanTag};

/// Field values for the extended headers; only those the opcode implies are written.
pub use roce_inspect::synth::frame::Ext;

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
    roce_inspect::synth::frame::ipv4_checksum(h)
}

impl V2 {
    /// The same packet for the project's frame builder (payload bytes `i * 31 + 7`).
    pub fn packet(&self) -> Packet {
        Packet {
            eth: Eth {
                dst: [0x02, 0, 0, 0, 0, 2],
                src: [0x02, 0, 0, 0, 0, 1],
                tags: self
                    .vlan
                    .map(|v| VlanTag::dot1q(v & 0x0fff, 0))
                    .into_iter()
                    .collect(),
            },
            net: Net::Ipv4 {
                src: self.src,
                dst: self.dst,
                tos: self.tos,
                ttl: self.ttl,
                id: self.ip_id,
            },
            udp_src: self.sport,
            udp_dst: self.dport,
            bth: Bth {
                opcode: Opcode(self.opcode),
                se: self.se,
                m: self.m,
                pad: self.pad,
                pkey: self.pkey,
                fecn: self.fecn,
                becn: self.becn,
                dest_qp: self.dest_qp,
                ack_req: self.ack_req,
                psn: self.psn,
                // TVer and the reserved bits as IBTA transmits them.
                tver: 0,
                resv6: 0,
                resv7: 0,
            },
            ext: self.ext,
            payload_len: self.payload,
            payload_seed: 7,
        }
    }

    /// BTH, the extended headers the opcode implies, payload and pad bytes (no ICRC).
    pub fn transport(&self) -> Vec<u8> {
        self.packet().transport()
    }

    /// The whole frame: Ethernet [+ VLAN] ‖ IPv4 ‖ UDP ‖ transport ‖ ICRC (little-endian).
    pub fn build(&self) -> Vec<u8> {
        self.packet().build()
    }

    /// Offset of the IPv4 header in [`V2::build`]'s frame.
    pub fn ip_offset(&self) -> usize {
        if self.vlan.is_some() { 18 } else { 14 }
    }
}
