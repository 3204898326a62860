//! Owned, `Copy` representations of the IBA transport headers, parsed from and emitted to byte
//! slices, in smoltcp's style.
//!
//! Bit layouts from IBTA Vol 1 §9.2–§9.3 (transport), §8.3 (GRH) and §7.7 (LRH), as digested in
//! `spec/roce.md` §1 (sources: Linux rxe `rxe_hdr.h`, scapy `contrib/roce.py`). Every multi-byte
//! field is big-endian on the wire.
//!
//! Each header's layout is written down once, in [`field`]: the byte range of each field, and
//! for fields narrower than a byte the byte and its mask. Every header then has
//!
//! * `LEN` (bytes) and `NAME` (as IBTA writes it),
//! * `parse(b)`, which checks `b.len() >= LEN` and returns [`Truncated`] otherwise,
//! * `parse_unchecked(b)`, the decoder's fast path for a length it has already checked,
//! * `emit(buf)` and `to_bytes()`, writing through the same ranges; `src/synth` builds its
//!   frames with them.
//!
//! Reserved bits: [`Bth`] keeps its two reserved fields (`resv6`, `resv7`), so every BTH byte
//! round-trips. The other headers drop their reserved bits on parse and emit them as 0 (IBTA:
//! "transmitted as 0"): RDETH, DETH and XRCETH their reserved byte, FETH its 26 upper bits, LRH
//! its bits 11:10 of byte 1 and 7:3 of byte 4.

/// A header shorter than its fixed length: the bytes given to a checked `parse`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{header} needs {need} bytes, got {len}")]
pub struct Truncated {
    /// The header's name as IBTA writes it (`"BTH"`, `"RETH"`, …).
    pub header: &'static str,
    /// Bytes available.
    pub len: usize,
    /// Bytes the header needs (its fixed length).
    pub need: usize,
}

/// Byte offsets of every header field, one sub-module per header.
///
/// A `Field` is the byte range a field occupies from the start of its header; a `usize` is the
/// one byte that holds several sub-byte fields, each named with its mask (and shift, where the
/// field does not start at bit 0). Bit numbers are IBTA's: bit 7 is the most significant bit of
/// a byte.
pub mod field {
    /// Byte range of a field, from the start of its header.
    pub type Field = core::ops::Range<usize>;

    /// BTH, 12 bytes (IBTA Vol 1 §9.2; spec/roce.md §1 table "BTH").
    pub mod bth {
        use super::Field;
        /// OpCode, 8 bits.
        pub const OPCODE: usize = 0;
        /// The byte holding SE, M, PadCnt and TVer.
        pub const FLAGS: usize = 1;
        /// Solicited event, bit 7 of [`FLAGS`].
        pub const SE: u8 = 0x80;
        /// MigReq, bit 6 of [`FLAGS`].
        pub const MIG_REQ: u8 = 0x40;
        /// Pad count, bits 5:4 of [`FLAGS`].
        pub const PAD_MASK: u8 = 0x30;
        /// Shift of the pad count in [`FLAGS`].
        pub const PAD_SHIFT: u32 = 4;
        /// Transport header version, bits 3:0 of [`FLAGS`].
        pub const TVER_MASK: u8 = 0x0f;
        /// Partition key, 16 bits.
        pub const PKEY: Field = 2..4;
        /// The byte holding FECN, BECN and 6 reserved bits.
        pub const ECN: usize = 4;
        /// FECN, bit 7 of [`ECN`].
        pub const FECN: u8 = 0x80;
        /// BECN, bit 6 of [`ECN`].
        pub const BECN: u8 = 0x40;
        /// Reserved (variant), bits 5:0 of [`ECN`].
        pub const RESV6_MASK: u8 = 0x3f;
        /// Destination QP, 24 bits.
        pub const DEST_QP: Field = 5..8;
        /// The byte holding AckReq and 7 reserved bits.
        pub const ACK: usize = 8;
        /// AckReq, bit 7 of [`ACK`].
        pub const ACK_REQ: u8 = 0x80;
        /// Reserved (invariant), bits 6:0 of [`ACK`].
        pub const RESV7_MASK: u8 = 0x7f;
        /// Packet sequence number, 24 bits.
        pub const PSN: Field = 9..12;
        /// Header length in bytes.
        pub const LEN: usize = 12;
    }

    /// RDETH, 4 bytes: reserved byte, EE-Context 24 bits (IBTA Vol 1 §9.3; spec/roce.md §1).
    pub mod rdeth {
        use super::Field;
        /// End-to-end context, 24 bits (byte 0 is reserved).
        pub const EE_CONTEXT: Field = 1..4;
        /// Header length in bytes.
        pub const LEN: usize = 4;
    }

    /// DETH, 8 bytes: Q_Key 32 bits, reserved byte, SrcQP 24 bits (IBTA Vol 1 §9.3;
    /// spec/roce.md §1).
    pub mod deth {
        use super::Field;
        /// Queue key, 32 bits.
        pub const QKEY: Field = 0..4;
        /// Source QP, 24 bits (byte 4 is reserved).
        pub const SRC_QP: Field = 5..8;
        /// Header length in bytes.
        pub const LEN: usize = 8;
    }

    /// XRCETH, 4 bytes: reserved byte, XRC SRQ number 24 bits (IBTA Vol 1 XRC; spec/roce.md §1,
    /// rxe `XRCETH_XRCSRQ_MASK`).
    pub mod xrceth {
        use super::Field;
        /// XRC shared receive queue number, 24 bits (byte 0 is reserved).
        pub const XRC_SRQ: Field = 1..4;
        /// Header length in bytes.
        pub const LEN: usize = 4;
    }

    /// RETH, 16 bytes: VA 64, R_Key 32, DMA length 32 bits (IBTA Vol 1 §9.3; spec/roce.md §1).
    pub mod reth {
        use super::Field;
        /// Remote virtual address, 64 bits.
        pub const VA: Field = 0..8;
        /// Remote key, 32 bits.
        pub const RKEY: Field = 8..12;
        /// DMA length in bytes, 32 bits.
        pub const DMA_LEN: Field = 12..16;
        /// Header length in bytes.
        pub const LEN: usize = 16;
    }

    /// AtomicETH, 28 bytes: VA 64, R_Key 32, Swap/Add 64, Compare 64 bits (IBTA Vol 1 §9.3;
    /// spec/roce.md §1).
    pub mod atomic_eth {
        use super::Field;
        /// Remote virtual address, 64 bits.
        pub const VA: Field = 0..8;
        /// Remote key, 32 bits.
        pub const RKEY: Field = 8..12;
        /// Swap (CmpSwap) or add (FetchAdd) data, 64 bits.
        pub const SWAP_ADD: Field = 12..20;
        /// Compare data, 64 bits.
        pub const COMPARE: Field = 20..28;
        /// Header length in bytes.
        pub const LEN: usize = 28;
    }

    /// AETH, 4 bytes: Syndrome 8, MSN 24 bits (IBTA Vol 1 §9.3.5; spec/roce.md §1).
    pub mod aeth {
        use super::Field;
        /// Syndrome, 8 bits.
        pub const SYNDROME: usize = 0;
        /// Message sequence number, 24 bits.
        pub const MSN: Field = 1..4;
        /// Header length in bytes.
        pub const LEN: usize = 4;
    }

    /// AtomicAckETH, 8 bytes: original remote data 64 bits (IBTA Vol 1 §9.3; spec/roce.md §1).
    pub mod atomic_ack_eth {
        use super::Field;
        /// Original remote data, 64 bits.
        pub const ORIG: Field = 0..8;
        /// Header length in bytes.
        pub const LEN: usize = 8;
    }

    /// ImmDt, 4 bytes: immediate data 32 bits (IBTA Vol 1 §9.3; spec/roce.md §1).
    pub mod imm_dt {
        use super::Field;
        /// Immediate data, 32 bits.
        pub const DATA: Field = 0..4;
        /// Header length in bytes.
        pub const LEN: usize = 4;
    }

    /// IETH, 4 bytes: R_Key to invalidate 32 bits (IBTA Vol 1 §9.3; spec/roce.md §1).
    pub mod ieth {
        use super::Field;
        /// R_Key to invalidate, 32 bits.
        pub const RKEY: Field = 0..4;
        /// Header length in bytes.
        pub const LEN: usize = 4;
    }

    /// FETH, 4 bytes: 26 reserved bits, SEL 2 bits, PLT 4 bits (IBTA Vol 1 2021 memory-placement
    /// annex; spec/roce.md §1, rxe `rxe_hdr.h`).
    pub mod feth {
        /// The byte holding SEL and PLT (bytes 0–2 are reserved).
        pub const SEL_PLT: usize = 3;
        /// Selectivity level, bits 5:4 of [`SEL_PLT`].
        pub const SEL_MASK: u8 = 0x30;
        /// Shift of the selectivity level in [`SEL_PLT`].
        pub const SEL_SHIFT: u32 = 4;
        /// Placement type, bits 3:0 of [`SEL_PLT`].
        pub const PLT_MASK: u8 = 0x0f;
        /// Header length in bytes.
        pub const LEN: usize = 4;
    }

    /// GRH, 40 bytes, the IPv6 header's layout (IBTA Vol 1 §8.3).
    pub mod grh {
        use super::Field;
        /// IPVer 4 bits (31:28), TClass 8 bits (27:20), FlowLabel 20 bits (19:0).
        pub const VER_TCLASS_FLOW: Field = 0..4;
        /// Payload length in bytes, 16 bits.
        pub const PAY_LEN: Field = 4..6;
        /// Next header, 8 bits.
        pub const NXT_HDR: usize = 6;
        /// Hop limit, 8 bits.
        pub const HOP_LMT: usize = 7;
        /// Source GID, 128 bits.
        pub const SGID: Field = 8..24;
        /// Destination GID, 128 bits.
        pub const DGID: Field = 24..40;
        /// Header length in bytes.
        pub const LEN: usize = 40;
    }

    /// LRH, 8 bytes (IBTA Vol 1 §7.7).
    pub mod lrh {
        use super::Field;
        /// The byte holding VL (bits 7:4) and LVer (bits 3:0).
        pub const VL_LVER: usize = 0;
        /// The byte holding SL (bits 7:4), 2 reserved bits and LNH (bits 1:0).
        pub const SL_LNH: usize = 1;
        /// Link next header, bits 1:0 of [`SL_LNH`].
        pub const LNH_MASK: u8 = 0x03;
        /// Destination LID, 16 bits.
        pub const DLID: Field = 2..4;
        /// 5 reserved bits, then packet length in 4-byte words, 11 bits.
        pub const PKT_LEN: Field = 4..6;
        /// Packet length's 11 bits within [`PKT_LEN`].
        pub const PKT_LEN_MASK: u16 = 0x07ff;
        /// Source LID, 16 bits.
        pub const SLID: Field = 6..8;
        /// Header length in bytes.
        pub const LEN: usize = 8;
    }
}

use field::Field;

/// The first `N` bytes of `b`, one bounds check for the whole header.
///
/// # Panics
/// When `b.len() < N`: the `parse_unchecked` contract.
#[inline(always)]
fn head<const N: usize>(b: &[u8]) -> &[u8; N] {
    match b.first_chunk::<N>() {
        Some(h) => h,
        None => panic!("header needs {N} bytes, got {}", b.len()),
    }
}

/// The bytes of field `f` as an array (`f` is `N` bytes long).
#[inline(always)]
fn get<const N: usize>(b: &[u8], f: Field) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[f]);
    a
}
#[inline(always)]
fn be16(b: &[u8], f: Field) -> u16 {
    u16::from_be_bytes(get(b, f))
}
#[inline(always)]
fn be24(b: &[u8], f: Field) -> u32 {
    let [x, y, z] = get(b, f);
    u32::from_be_bytes([0, x, y, z])
}
#[inline(always)]
fn be32(b: &[u8], f: Field) -> u32 {
    u32::from_be_bytes(get(b, f))
}
#[inline(always)]
fn be64(b: &[u8], f: Field) -> u64 {
    u64::from_be_bytes(get(b, f))
}
#[inline(always)]
fn put16(b: &mut [u8], f: Field, v: u16) {
    b[f].copy_from_slice(&v.to_be_bytes());
}
/// Writes the low 24 bits of `v`.
#[inline(always)]
fn put24(b: &mut [u8], f: Field, v: u32) {
    b[f].copy_from_slice(&v.to_be_bytes()[1..]);
}
#[inline(always)]
fn put32(b: &mut [u8], f: Field, v: u32) {
    b[f].copy_from_slice(&v.to_be_bytes());
}
#[inline(always)]
fn put64(b: &mut [u8], f: Field, v: u64) {
    b[f].copy_from_slice(&v.to_be_bytes());
}
/// `mask` when `on`, else 0.
#[inline(always)]
fn bit(on: bool, mask: u8) -> u8 {
    if on { mask } else { 0 }
}

/// `LEN`, `NAME`, the checked `parse` and `to_bytes` of a header type whose `parse_unchecked`
/// and `emit` are written by hand.
macro_rules! header_common {
    ($t:ident, $name:literal, $len:expr) => {
        impl $t {
            /// Header length in bytes.
            pub const LEN: usize = $len;
            /// Header name as IBTA writes it (used in [`Truncated`]).
            pub const NAME: &'static str = $name;

            /// Parse the first `LEN` bytes of `b`; bytes after them are ignored.
            ///
            /// # Errors
            /// [`Truncated`] when `b` is shorter than `LEN`.
            pub fn parse(b: &[u8]) -> Result<Self, Truncated> {
                if b.len() < Self::LEN {
                    return Err(Truncated {
                        header: Self::NAME,
                        len: b.len(),
                        need: Self::LEN,
                    });
                }
                Ok(Self::parse_unchecked(b))
            }

            /// The header's `LEN` bytes, as [`emit`](Self::emit) writes them.
            pub fn to_bytes(&self) -> [u8; $len] {
                let mut b = [0u8; $len];
                self.emit(&mut b);
                b
            }
        }
    };
}

/// Base Transport Header, 12 bytes (IBTA Vol 1 §9.2; layout in [`field::bth`]).
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

header_common!(Bth, "BTH", field::bth::LEN);

impl Default for Bth {
    /// RC SEND Only (opcode `0x0a`) to QP 0, PSN 0, default P_Key `0xffff` (rxe `BTH_DEF_PKEY`),
    /// every flag and reserved bit 0, TVer 0.
    fn default() -> Self {
        Bth {
            opcode: Opcode(0x0a),
            se: false,
            m: false,
            pad: 0,
            tver: 0,
            pkey: 0xffff,
            fecn: false,
            becn: false,
            resv6: 0,
            dest_qp: 0,
            ack_req: false,
            resv7: 0,
            psn: 0,
        }
    }
}

impl Bth {
    /// Parse the first 12 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 12`; [`Bth::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> Bth {
        use field::bth as f;
        let b: &[u8; f::LEN] = head(b);
        Bth {
            opcode: Opcode(b[f::OPCODE]),
            se: b[f::FLAGS] & f::SE != 0,
            m: b[f::FLAGS] & f::MIG_REQ != 0,
            pad: (b[f::FLAGS] & f::PAD_MASK) >> f::PAD_SHIFT,
            tver: b[f::FLAGS] & f::TVER_MASK,
            pkey: be16(b, f::PKEY),
            fecn: b[f::ECN] & f::FECN != 0,
            becn: b[f::ECN] & f::BECN != 0,
            resv6: b[f::ECN] & f::RESV6_MASK,
            dest_qp: be24(b, f::DEST_QP),
            ack_req: b[f::ACK] & f::ACK_REQ != 0,
            resv7: b[f::ACK] & f::RESV7_MASK,
            psn: be24(b, f::PSN),
        }
    }

    /// Write the 12 bytes into `buf[..12]`; each field is cut to its bit width.
    ///
    /// # Panics
    /// When `buf.len() < 12`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::bth as f;
        let b = &mut buf[..f::LEN];
        b[f::OPCODE] = self.opcode.0;
        b[f::FLAGS] = bit(self.se, f::SE)
            | bit(self.m, f::MIG_REQ)
            | ((self.pad << f::PAD_SHIFT) & f::PAD_MASK)
            | (self.tver & f::TVER_MASK);
        put16(b, f::PKEY, self.pkey);
        b[f::ECN] =
            bit(self.fecn, f::FECN) | bit(self.becn, f::BECN) | (self.resv6 & f::RESV6_MASK);
        put24(b, f::DEST_QP, self.dest_qp);
        b[f::ACK] = bit(self.ack_req, f::ACK_REQ) | (self.resv7 & f::RESV7_MASK);
        put24(b, f::PSN, self.psn);
    }
}

/// Reliable Datagram Extended Transport Header, 4 bytes (layout in [`field::rdeth`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rdeth {
    /// End-to-end context, 24 bits.
    pub ee_context: u32,
}

header_common!(Rdeth, "RDETH", field::rdeth::LEN);

impl Rdeth {
    /// Parse the first 4 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 4`; [`Rdeth::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> Rdeth {
        use field::rdeth as f;
        let b: &[u8; f::LEN] = head(b);
        Rdeth {
            ee_context: be24(b, f::EE_CONTEXT),
        }
    }

    /// Write the 4 bytes into `buf[..4]` (reserved byte 0; EE-Context cut to 24 bits).
    ///
    /// # Panics
    /// When `buf.len() < 4`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::rdeth as f;
        let b = &mut buf[..f::LEN];
        b.fill(0);
        put24(b, f::EE_CONTEXT, self.ee_context);
    }
}

/// Datagram Extended Transport Header, 8 bytes (layout in [`field::deth`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deth {
    /// Queue key, 32 bits (GSI uses `0x80010000`).
    pub qkey: u32,
    /// Source QP number, 24 bits.
    pub src_qp: u32,
}

header_common!(Deth, "DETH", field::deth::LEN);

impl Deth {
    /// Parse the first 8 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 8`; [`Deth::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> Deth {
        use field::deth as f;
        let b: &[u8; f::LEN] = head(b);
        Deth {
            qkey: be32(b, f::QKEY),
            src_qp: be24(b, f::SRC_QP),
        }
    }

    /// Write the 8 bytes into `buf[..8]` (reserved byte 0; SrcQP cut to 24 bits).
    ///
    /// # Panics
    /// When `buf.len() < 8`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::deth as f;
        let b = &mut buf[..f::LEN];
        b.fill(0);
        put32(b, f::QKEY, self.qkey);
        put24(b, f::SRC_QP, self.src_qp);
    }
}

/// XRC Extended Transport Header, 4 bytes (layout in [`field::xrceth`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Xrceth {
    /// XRC shared receive queue number, 24 bits.
    pub xrc_srq: u32,
}

header_common!(Xrceth, "XRCETH", field::xrceth::LEN);

impl Xrceth {
    /// Parse the first 4 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 4`; [`Xrceth::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> Xrceth {
        use field::xrceth as f;
        let b: &[u8; f::LEN] = head(b);
        Xrceth {
            xrc_srq: be24(b, f::XRC_SRQ),
        }
    }

    /// Write the 4 bytes into `buf[..4]` (reserved byte 0; SRQ number cut to 24 bits).
    ///
    /// # Panics
    /// When `buf.len() < 4`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::xrceth as f;
        let b = &mut buf[..f::LEN];
        b.fill(0);
        put24(b, f::XRC_SRQ, self.xrc_srq);
    }
}

/// RDMA Extended Transport Header, 16 bytes (layout in [`field::reth`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reth {
    /// Remote virtual address, 64 bits.
    pub va: u64,
    /// Remote key, 32 bits.
    pub rkey: u32,
    /// DMA length in bytes, 32 bits.
    pub dma_len: u32,
}

header_common!(Reth, "RETH", field::reth::LEN);

impl Reth {
    /// Parse the first 16 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 16`; [`Reth::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> Reth {
        use field::reth as f;
        let b: &[u8; f::LEN] = head(b);
        Reth {
            va: be64(b, f::VA),
            rkey: be32(b, f::RKEY),
            dma_len: be32(b, f::DMA_LEN),
        }
    }

    /// Write the 16 bytes into `buf[..16]`.
    ///
    /// # Panics
    /// When `buf.len() < 16`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::reth as f;
        let b = &mut buf[..f::LEN];
        put64(b, f::VA, self.va);
        put32(b, f::RKEY, self.rkey);
        put32(b, f::DMA_LEN, self.dma_len);
    }
}

/// Atomic Extended Transport Header, 28 bytes (layout in [`field::atomic_eth`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

header_common!(AtomicEth, "AtomicETH", field::atomic_eth::LEN);

impl AtomicEth {
    /// Parse the first 28 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 28`; [`AtomicEth::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> AtomicEth {
        use field::atomic_eth as f;
        let b: &[u8; f::LEN] = head(b);
        AtomicEth {
            va: be64(b, f::VA),
            rkey: be32(b, f::RKEY),
            swap_add: be64(b, f::SWAP_ADD),
            compare: be64(b, f::COMPARE),
        }
    }

    /// Write the 28 bytes into `buf[..28]`.
    ///
    /// # Panics
    /// When `buf.len() < 28`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::atomic_eth as f;
        let b = &mut buf[..f::LEN];
        put64(b, f::VA, self.va);
        put32(b, f::RKEY, self.rkey);
        put64(b, f::SWAP_ADD, self.swap_add);
        put64(b, f::COMPARE, self.compare);
    }
}

/// ACK Extended Transport Header, 4 bytes (IBTA Vol 1 §9.3.5; layout in [`field::aeth`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Aeth {
    /// Syndrome, 8 bits: bit 7 reserved, bits 6:5 type, bits 4:0 value.
    pub syndrome: u8,
    /// Message sequence number, 24 bits.
    pub msn: u32,
}

header_common!(Aeth, "AETH", field::aeth::LEN);

impl Aeth {
    /// Parse the first 4 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 4`; [`Aeth::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> Aeth {
        use field::aeth as f;
        let b: &[u8; f::LEN] = head(b);
        Aeth {
            syndrome: b[f::SYNDROME],
            msn: be24(b, f::MSN),
        }
    }

    /// Write the 4 bytes into `buf[..4]` (MSN cut to 24 bits).
    ///
    /// # Panics
    /// When `buf.len() < 4`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::aeth as f;
        let b = &mut buf[..f::LEN];
        b[f::SYNDROME] = self.syndrome;
        put24(b, f::MSN, self.msn);
    }
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

/// Atomic Acknowledge Extended Transport Header, 8 bytes: the original remote data, 64 bits
/// (layout in [`field::atomic_ack_eth`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtomicAckEth {
    /// Value at the remote address before the atomic, 64 bits.
    pub orig: u64,
}

header_common!(AtomicAckEth, "AtomicAckETH", field::atomic_ack_eth::LEN);

impl AtomicAckEth {
    /// Parse the first 8 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 8`; [`AtomicAckEth::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> AtomicAckEth {
        use field::atomic_ack_eth as f;
        let b: &[u8; f::LEN] = head(b);
        AtomicAckEth {
            orig: be64(b, f::ORIG),
        }
    }

    /// Write the 8 bytes into `buf[..8]`.
    ///
    /// # Panics
    /// When `buf.len() < 8`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::atomic_ack_eth as f;
        put64(&mut buf[..f::LEN], f::ORIG, self.orig);
    }
}

/// Immediate Data, 4 bytes (layout in [`field::imm_dt`]). [`ExtHeaders`] keeps its value as a
/// plain `u32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImmDt {
    /// Immediate data, 32 bits, as sent (network order value).
    pub data: u32,
}

header_common!(ImmDt, "ImmDt", field::imm_dt::LEN);

impl ImmDt {
    /// Parse the first 4 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 4`; [`ImmDt::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> ImmDt {
        use field::imm_dt as f;
        ImmDt {
            data: be32(head::<{ f::LEN }>(b), f::DATA),
        }
    }

    /// Write the 4 bytes into `buf[..4]`.
    ///
    /// # Panics
    /// When `buf.len() < 4`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::imm_dt as f;
        put32(&mut buf[..f::LEN], f::DATA, self.data);
    }
}

/// Invalidate Extended Transport Header, 4 bytes (layout in [`field::ieth`]). [`ExtHeaders`]
/// keeps its R_Key as a plain `u32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ieth {
    /// R_Key to invalidate, 32 bits.
    pub rkey: u32,
}

header_common!(Ieth, "IETH", field::ieth::LEN);

impl Ieth {
    /// Parse the first 4 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 4`; [`Ieth::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> Ieth {
        use field::ieth as f;
        Ieth {
            rkey: be32(head::<{ f::LEN }>(b), f::RKEY),
        }
    }

    /// Write the 4 bytes into `buf[..4]`.
    ///
    /// # Panics
    /// When `buf.len() < 4`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::ieth as f;
        put32(&mut buf[..f::LEN], f::RKEY, self.rkey);
    }
}

/// FLUSH Extended Transport Header, 4 bytes (IBTA Vol 1 2021 memory-placement annex; layout in
/// [`field::feth`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Feth {
    /// Selectivity level, 2 bits (bits 5:4 of byte 3).
    pub sel: u8,
    /// Placement type, 4 bits (bits 3:0 of byte 3).
    pub plt: u8,
}

header_common!(Feth, "FETH", field::feth::LEN);

impl Feth {
    /// Parse the first 4 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 4`; [`Feth::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> Feth {
        use field::feth as f;
        let b: &[u8; f::LEN] = head(b);
        Feth {
            sel: (b[f::SEL_PLT] & f::SEL_MASK) >> f::SEL_SHIFT,
            plt: b[f::SEL_PLT] & f::PLT_MASK,
        }
    }

    /// Write the 4 bytes into `buf[..4]` (reserved bits 0; SEL and PLT cut to their widths).
    ///
    /// # Panics
    /// When `buf.len() < 4`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::feth as f;
        let b = &mut buf[..f::LEN];
        b.fill(0);
        b[f::SEL_PLT] = ((self.sel << f::SEL_SHIFT) & f::SEL_MASK) | (self.plt & f::PLT_MASK);
    }
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
    /// Store one parsed header of `kind` from `b`.
    ///
    /// # Panics
    /// When `b.len() < kind.size()`; the decoder checks the length first.
    pub fn set(&mut self, kind: ExtKind, b: &[u8]) {
        use ExtKind as K;
        match kind {
            K::Rdeth => self.rdeth = Some(Rdeth::parse_unchecked(b)),
            K::Deth => self.deth = Some(Deth::parse_unchecked(b)),
            K::Xrceth => self.xrceth = Some(Xrceth::parse_unchecked(b)),
            K::Reth => self.reth = Some(Reth::parse_unchecked(b)),
            K::AtomicEth => self.atomic_eth = Some(AtomicEth::parse_unchecked(b)),
            K::Aeth => self.aeth = Some(Aeth::parse_unchecked(b)),
            K::AtomicAckEth => self.atomic_ack_eth = Some(AtomicAckEth::parse_unchecked(b)),
            K::ImmDt => self.imm = Some(ImmDt::parse_unchecked(b).data),
            K::Ieth => self.ieth = Some(Ieth::parse_unchecked(b).rkey),
            K::Feth => self.feth = Some(Feth::parse_unchecked(b)),
            K::CnpReserved => self.cnp_reserved = true,
        }
    }
}

/// InfiniBand Global Route Header, 40 bytes (IBTA Vol 1 §8.3; layout in [`field::grh`]); also
/// RoCEv1's network header, and the layout of the IPv6 header it was modelled on (RFC 8200 §3).
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

header_common!(Grh, "GRH", field::grh::LEN);

impl Grh {
    /// Next-header value meaning "IBA transport (BTH) follows".
    pub const NEXT_HDR_BTH: u8 = 0x1b;

    /// Parse the first 40 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 40`; [`Grh::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> Grh {
        use field::grh as f;
        let b: &[u8; f::LEN] = head(b);
        let w0 = be32(b, f::VER_TCLASS_FLOW);
        Grh {
            ip_ver: (w0 >> 28) as u8,
            tclass: ((w0 >> 20) & 0xff) as u8,
            flow_label: w0 & 0xf_ffff,
            pay_len: be16(b, f::PAY_LEN),
            next_hdr: b[f::NXT_HDR],
            hop_limit: b[f::HOP_LMT],
            sgid: get(b, f::SGID),
            dgid: get(b, f::DGID),
        }
    }

    /// Write the 40 bytes into `buf[..40]` (IPVer cut to 4 bits, FlowLabel to 20).
    ///
    /// # Panics
    /// When `buf.len() < 40`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::grh as f;
        let b = &mut buf[..f::LEN];
        let w0 = u32::from(self.ip_ver & 0xf) << 28
            | u32::from(self.tclass) << 20
            | (self.flow_label & 0xf_ffff);
        put32(b, f::VER_TCLASS_FLOW, w0);
        put16(b, f::PAY_LEN, self.pay_len);
        b[f::NXT_HDR] = self.next_hdr;
        b[f::HOP_LMT] = self.hop_limit;
        b[f::SGID].copy_from_slice(&self.sgid);
        b[f::DGID].copy_from_slice(&self.dgid);
    }
}

/// InfiniBand Local Route Header, 8 bytes (IBTA Vol 1 §7.7; layout in [`field::lrh`]).
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

header_common!(Lrh, "LRH", field::lrh::LEN);

impl Lrh {
    /// Parse the first 8 bytes of `b`, whose length the caller has checked.
    ///
    /// # Panics
    /// When `b.len() < 8`; [`Lrh::parse`] checks instead.
    #[inline]
    pub fn parse_unchecked(b: &[u8]) -> Lrh {
        use field::lrh as f;
        let b: &[u8; f::LEN] = head(b);
        Lrh {
            vl: b[f::VL_LVER] >> 4,
            lver: b[f::VL_LVER] & 0xf,
            sl: b[f::SL_LNH] >> 4,
            lnh: b[f::SL_LNH] & f::LNH_MASK,
            dlid: be16(b, f::DLID),
            pkt_len: be16(b, f::PKT_LEN) & f::PKT_LEN_MASK,
            slid: be16(b, f::SLID),
        }
    }

    /// Write the 8 bytes into `buf[..8]` (reserved bits 0; each field cut to its width).
    ///
    /// # Panics
    /// When `buf.len() < 8`.
    pub fn emit(&self, buf: &mut [u8]) {
        use field::lrh as f;
        let b = &mut buf[..f::LEN];
        b[f::VL_LVER] = (self.vl << 4) | (self.lver & 0xf);
        b[f::SL_LNH] = (self.sl << 4) | (self.lnh & f::LNH_MASK);
        put16(b, f::DLID, self.dlid);
        put16(b, f::PKT_LEN, self.pkt_len & f::PKT_LEN_MASK);
        put16(b, f::SLID, self.slid);
    }
}

/// A BTH OpCode byte (IBTA Vol 1 §9.2.1), 8 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode(pub u8);

/// One extended transport header that may follow the BTH (IBTA Vol 1 §9.3; sizes in bytes in
/// [`ExtKind::size`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtKind {
    /// Reliable Datagram ETH, 4 bytes.
    Rdeth,
    /// Datagram ETH, 8 bytes.
    Deth,
    /// XRC ETH, 4 bytes (requests only).
    Xrceth,
    /// RDMA ETH, 16 bytes.
    Reth,
    /// Atomic ETH, 28 bytes.
    AtomicEth,
    /// ACK ETH, 4 bytes.
    Aeth,
    /// Atomic Acknowledge ETH, 8 bytes.
    AtomicAckEth,
    /// Immediate data, 4 bytes.
    ImmDt,
    /// Invalidate ETH, 4 bytes.
    Ieth,
    /// FLUSH ETH, 4 bytes.
    Feth,
    /// The 16 reserved bytes of a RoCEv2 CNP (IBTA Annex A17.9.3).
    CnpReserved,
}

/// Bytes of a RoCEv2 CNP's reserved field (IBTA Annex A17.9.3; spec/roce.md §1).
pub const CNP_RESERVED_LEN: usize = 16;

impl ExtKind {
    /// Header length in bytes: the `LEN` of its header struct in `decode::headers`.
    pub const fn size(self) -> usize {
        match self {
            ExtKind::Rdeth => Rdeth::LEN,
            ExtKind::Deth => Deth::LEN,
            ExtKind::Xrceth => Xrceth::LEN,
            ExtKind::Reth => Reth::LEN,
            ExtKind::AtomicEth => AtomicEth::LEN,
            ExtKind::Aeth => Aeth::LEN,
            ExtKind::AtomicAckEth => AtomicAckEth::LEN,
            ExtKind::ImmDt => ImmDt::LEN,
            ExtKind::Ieth => Ieth::LEN,
            ExtKind::Feth => Feth::LEN,
            ExtKind::CnpReserved => CNP_RESERVED_LEN,
        }
    }
}

#[cfg(test)]
mod tests;
