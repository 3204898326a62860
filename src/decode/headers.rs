//! Owned, `Copy` representations of the IBA transport headers, parsed from byte slices.
//!
//! Bit layouts from IBTA Vol 1 §9.2–§9.3 as digested in `spec/roce.md` §1 (sources: Linux rxe
//! `rxe_hdr.h`, scapy `contrib/roce.py`). Every multi-byte field is big-endian on the wire.
//! Each `parse` takes a slice that the caller has checked to be at least the header's length.

use super::opcode::Opcode;

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
fn be24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}
fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// Base Transport Header, 12 bytes (IBTA Vol 1 §9.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bth {
    /// OpCode, 8 bits.
    pub opcode: Opcode,
    /// Solicited Event, 1 bit.
    pub se: bool,
    /// MigReq, 1 bit.
    pub m: bool,
    /// Pad count, 2 bits: bytes (0–3) of padding after the payload.
    pub pad: u8,
    /// Transport header version, 4 bits; 0 for every IBTA transport.
    pub tver: u8,
    /// Partition key, 16 bits.
    pub pkey: u16,
    /// Forward ECN, 1 bit (IBTA Annex A10).
    pub fecn: bool,
    /// Backward ECN, 1 bit (IBTA Annex A10).
    pub becn: bool,
    /// Reserved 6 bits after F/B (variant: masked in the ICRC).
    pub resv6: u8,
    /// Destination QP number, 24 bits.
    pub dest_qp: u32,
    /// Acknowledge request, 1 bit.
    pub ack_req: bool,
    /// Reserved 7 bits (transmitted 0, invariant).
    pub resv7: u8,
    /// Packet sequence number, 24 bits.
    pub psn: u32,
}

impl Bth {
    /// BTH length in bytes.
    pub const LEN: usize = 12;

    /// Parse the first 12 bytes of `b` (caller guarantees `b.len() >= 12`).
    pub fn parse(b: &[u8]) -> Bth {
        // One bounds check for the 12 bytes instead of one per field.
        let b: &[u8; Bth::LEN] = b[..Bth::LEN].try_into().expect("12 bytes");
        Bth {
            opcode: Opcode(b[0]),
            se: b[1] & 0x80 != 0,
            m: b[1] & 0x40 != 0,
            pad: (b[1] >> 4) & 0x3,
            tver: b[1] & 0x0f,
            pkey: be16(&b[2..]),
            fecn: b[4] & 0x80 != 0,
            becn: b[4] & 0x40 != 0,
            resv6: b[4] & 0x3f,
            dest_qp: be24(&b[5..]),
            ack_req: b[8] & 0x80 != 0,
            resv7: b[8] & 0x7f,
            psn: be24(&b[9..]),
        }
    }
}

/// Reliable Datagram Extended Transport Header, 4 bytes: EE-Context, 24 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rdeth {
    /// End-to-end context, 24 bits.
    pub ee_context: u32,
}

/// Datagram Extended Transport Header, 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deth {
    /// Queue key, 32 bits (GSI uses `0x80010000`).
    pub qkey: u32,
    /// Source QP number, 24 bits.
    pub src_qp: u32,
}

/// XRC Extended Transport Header, 4 bytes: XRC SRQ number, 24 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xrceth {
    /// XRC shared receive queue number, 24 bits.
    pub xrc_srq: u32,
}

/// RDMA Extended Transport Header, 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reth {
    /// Remote virtual address, 64 bits.
    pub va: u64,
    /// Remote key, 32 bits.
    pub rkey: u32,
    /// DMA length in bytes, 32 bits.
    pub dma_len: u32,
}

/// Atomic Extended Transport Header, 28 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicEth {
    /// Remote virtual address, 64 bits.
    pub va: u64,
    /// Remote key, 32 bits.
    pub rkey: u32,
    /// Swap value (CmpSwap) or add value (FetchAdd), 64 bits.
    pub swap_add: u64,
    /// Compare value (CmpSwap only), 64 bits.
    pub compare: u64,
}

/// ACK Extended Transport Header, 4 bytes (IBTA Vol 1 §9.3.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aeth {
    /// Syndrome, 8 bits: bit 7 reserved, bits 6:5 type, bits 4:0 value.
    pub syndrome: u8,
    /// Message sequence number, 24 bits.
    pub msn: u32,
}

/// The meaning of an AETH syndrome (IBTA Vol 1 Table 43; spec/roce.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AethKind {
    /// ACK with a credit count. `credits` is `None` for code 31 (invalid / unlimited).
    Ack {
        /// 5-bit credit code.
        code: u8,
        /// Credits the code stands for (IBTA table; rdmavt `credit_table`).
        credits: Option<u32>,
    },
    /// Receiver-not-ready NAK with its timer.
    RnrNak {
        /// 5-bit RNR timer code.
        code: u8,
        /// Minimum delay in microseconds before the retry.
        timer_us: u32,
    },
    /// NAK with its code.
    Nak(NakCode),
    /// Syndrome type `10`, reserved.
    Reserved,
}

impl AethKind {
    /// JSON / Parquet name of the syndrome type: `ack`, `rnr_nak`, `nak` or `reserved`.
    pub fn name(&self) -> &'static str {
        match self {
            AethKind::Ack { .. } => "ack",
            AethKind::RnrNak { .. } => "rnr_nak",
            AethKind::Nak(_) => "nak",
            AethKind::Reserved => "reserved",
        }
    }
}

/// NAK codes (AETH syndrome `011xxxxx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NakCode {
    /// 0: PSN sequence error (the AETH's BTH PSN is the expected PSN).
    PsnSeqErr,
    /// 1: invalid request.
    InvalidRequest,
    /// 2: remote access error.
    RemoteAccess,
    /// 3: remote operational error.
    RemoteOp,
    /// 4: invalid RD request.
    InvalidRd,
    /// 5–31: reserved code.
    Reserved(u8),
}

impl NakCode {
    /// The snake_case name used in JSON (`psn_seq_err`, …).
    pub fn name(self) -> &'static str {
        match self {
            NakCode::PsnSeqErr => "psn_seq_err",
            NakCode::InvalidRequest => "invalid_request",
            NakCode::RemoteAccess => "remote_access",
            NakCode::RemoteOp => "remote_op",
            NakCode::InvalidRd => "invalid_rd",
            NakCode::Reserved(_) => "reserved",
        }
    }
}

/// AETH credit code → credits, codes 0–30 (IBTA Vol 1 Table 44; rdmavt `credit_table`).
pub const AETH_CREDITS: [u32; 31] = [
    0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
    2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
];

/// RNR NAK timer code → minimum delay in µs (IBTA Vol 1 Table 45; spec/roce.md §3).
pub const RNR_TIMER_US: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840,
    5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
    245_760, 327_680, 491_520,
];

impl Aeth {
    /// Interpret the syndrome.
    pub fn kind(&self) -> AethKind {
        let value = self.syndrome & 0x1f;
        match (self.syndrome >> 5) & 0x3 {
            0 => AethKind::Ack {
                code: value,
                credits: AETH_CREDITS.get(value as usize).copied(),
            },
            1 => AethKind::RnrNak {
                code: value,
                timer_us: RNR_TIMER_US[value as usize],
            },
            3 => AethKind::Nak(match value {
                0 => NakCode::PsnSeqErr,
                1 => NakCode::InvalidRequest,
                2 => NakCode::RemoteAccess,
                3 => NakCode::RemoteOp,
                4 => NakCode::InvalidRd,
                v => NakCode::Reserved(v),
            }),
            _ => AethKind::Reserved,
        }
    }
}

/// Atomic Acknowledge Extended Transport Header, 8 bytes: the original remote data, 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicAckEth {
    /// Value at the remote address before the atomic, 64 bits.
    pub orig: u64,
}

/// FLUSH Extended Transport Header, 4 bytes (IBTA Vol 1 §9.3.x, 2021 memory-placement annex).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Feth {
    /// Selectivity level, bits 5:4.
    pub sel: u8,
    /// Placement type, bits 3:0.
    pub plt: u8,
}

/// All extended headers a packet may carry; each `Some` only when its opcode implies it and
/// its bytes were captured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtHeaders {
    /// RDETH (RD only).
    pub rdeth: Option<Rdeth>,
    /// DETH (UD, RD requests).
    pub deth: Option<Deth>,
    /// XRCETH (XRC requests).
    pub xrceth: Option<Xrceth>,
    /// RETH.
    pub reth: Option<Reth>,
    /// FETH (FLUSH).
    pub feth: Option<Feth>,
    /// AtomicETH.
    pub atomic_eth: Option<AtomicEth>,
    /// AETH.
    pub aeth: Option<Aeth>,
    /// AtomicAckETH.
    pub atomic_ack_eth: Option<AtomicAckEth>,
    /// Immediate data, 32 bits, as sent (network order value).
    pub imm: Option<u32>,
    /// IETH: R_Key to invalidate, 32 bits.
    pub ieth: Option<u32>,
    /// True when a RoCEv2 CNP's 16 reserved bytes were present.
    pub cnp_reserved: bool,
}

impl ExtHeaders {
    /// Store one parsed header of `kind` from `b` (caller guarantees `b.len() >= kind.len()`).
    pub fn set(&mut self, kind: super::opcode::ExtKind, b: &[u8]) {
        use super::opcode::ExtKind as K;
        match kind {
            K::Rdeth => {
                self.rdeth = Some(Rdeth {
                    ee_context: be24(&b[1..]),
                })
            }
            K::Deth => {
                self.deth = Some(Deth {
                    qkey: be32(b),
                    src_qp: be24(&b[5..]),
                })
            }
            K::Xrceth => {
                self.xrceth = Some(Xrceth {
                    xrc_srq: be24(&b[1..]),
                })
            }
            K::Reth => {
                self.reth = Some(Reth {
                    va: be64(b),
                    rkey: be32(&b[8..]),
                    dma_len: be32(&b[12..]),
                })
            }
            K::AtomicEth => {
                self.atomic_eth = Some(AtomicEth {
                    va: be64(b),
                    rkey: be32(&b[8..]),
                    swap_add: be64(&b[12..]),
                    compare: be64(&b[20..]),
                })
            }
            K::Aeth => {
                self.aeth = Some(Aeth {
                    syndrome: b[0],
                    msn: be24(&b[1..]),
                })
            }
            K::AtomicAckEth => self.atomic_ack_eth = Some(AtomicAckEth { orig: be64(b) }),
            K::ImmDt => self.imm = Some(be32(b)),
            K::Ieth => self.ieth = Some(be32(b)),
            K::Feth => {
                self.feth = Some(Feth {
                    sel: (b[3] >> 4) & 0x3,
                    plt: b[3] & 0xf,
                })
            }
            K::CnpReserved => self.cnp_reserved = true,
        }
    }
}

/// InfiniBand Global Route Header, 40 bytes (IBTA Vol 1 §8.3); also RoCEv1's network header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grh {
    /// IP version, 4 bits (6).
    pub ip_ver: u8,
    /// Traffic class, 8 bits.
    pub tclass: u8,
    /// Flow label, 20 bits.
    pub flow_label: u32,
    /// Payload length in bytes (after the GRH, including ICRC; for native IB also VCRC), 16 bits.
    pub pay_len: u16,
    /// Next header, 8 bits (`0x1B` = BTH follows).
    pub next_hdr: u8,
    /// Hop limit, 8 bits.
    pub hop_limit: u8,
    /// Source GID, 128 bits.
    pub sgid: [u8; 16],
    /// Destination GID, 128 bits.
    pub dgid: [u8; 16],
}

impl Grh {
    /// GRH length in bytes.
    pub const LEN: usize = 40;
    /// Next-header value meaning "IBA transport (BTH) follows".
    pub const NEXT_HDR_BTH: u8 = 0x1b;

    /// Parse the first 40 bytes of `b` (caller guarantees the length).
    pub fn parse(b: &[u8]) -> Grh {
        let w0 = be32(b);
        let mut sgid = [0u8; 16];
        let mut dgid = [0u8; 16];
        sgid.copy_from_slice(&b[8..24]);
        dgid.copy_from_slice(&b[24..40]);
        Grh {
            ip_ver: (w0 >> 28) as u8,
            tclass: ((w0 >> 20) & 0xff) as u8,
            flow_label: w0 & 0xf_ffff,
            pay_len: be16(&b[4..]),
            next_hdr: b[6],
            hop_limit: b[7],
            sgid,
            dgid,
        }
    }
}

/// InfiniBand Local Route Header, 8 bytes (IBTA Vol 1 §7.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lrh {
    /// Virtual lane, 4 bits.
    pub vl: u8,
    /// Link version, 4 bits.
    pub lver: u8,
    /// Service level, 4 bits.
    pub sl: u8,
    /// Link next header, 2 bits: 0 raw, 1 IP, 2 IBA local (BTH), 3 IBA global (GRH).
    pub lnh: u8,
    /// Destination LID, 16 bits.
    pub dlid: u16,
    /// Packet length in 4-byte words (LRH to VCRC exclusive), 11 bits.
    pub pkt_len: u16,
    /// Source LID, 16 bits.
    pub slid: u16,
}

impl Lrh {
    /// LRH length in bytes.
    pub const LEN: usize = 8;

    /// Parse the first 8 bytes of `b` (caller guarantees the length).
    pub fn parse(b: &[u8]) -> Lrh {
        Lrh {
            vl: b[0] >> 4,
            lver: b[0] & 0xf,
            sl: b[1] >> 4,
            lnh: b[1] & 0x3,
            dlid: be16(&b[2..]),
            pkt_len: be16(&b[4..]) & 0x7ff,
            slid: be16(&b[6..]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bth_fields_from_hand_bytes() {
        // opcode 0x24, SE=0 M=1 pad=2 tver=0, pkey ffff, F=1 B=1, QP 0x0000d3, A=1, PSN 0xcf1710
        let b = [
            0x24, 0x60, 0xff, 0xff, 0xc0, 0x00, 0x00, 0xd3, 0x80, 0xcf, 0x17, 0x10,
        ];
        let h = Bth::parse(&b);
        assert_eq!(h.opcode, Opcode(0x24));
        assert!(!h.se && h.m && h.fecn && h.becn && h.ack_req);
        assert_eq!((h.pad, h.tver, h.pkey), (2, 0, 0xffff));
        assert_eq!((h.dest_qp, h.psn), (0xd3, 13_571_856));
    }

    #[test]
    fn aeth_kinds() {
        let k = |s| {
            Aeth {
                syndrome: s,
                msn: 0,
            }
            .kind()
        };
        assert_eq!(
            k(0x1f),
            AethKind::Ack {
                code: 31,
                credits: None
            }
        );
        assert_eq!(
            k(0x0d),
            AethKind::Ack {
                code: 13,
                credits: Some(96)
            }
        );
        assert_eq!(
            k(0x2e),
            AethKind::RnrNak {
                code: 14,
                timer_us: 1280
            }
        );
        assert_eq!(
            k(0x20),
            AethKind::RnrNak {
                code: 0,
                timer_us: 655_360
            }
        );
        assert_eq!(k(0x60), AethKind::Nak(NakCode::PsnSeqErr));
        assert_eq!(k(0x64), AethKind::Nak(NakCode::InvalidRd));
        assert_eq!(k(0x45), AethKind::Reserved);
    }
}
