//! The IBA BTH OpCode: transport class, operation name, and the extended headers it implies.
//!
//! Facts from the IBTA opcode table as digested in `spec/roce.md` §2 (sources there: the Linux rxe
//! `rxe_opcode.c` per-opcode layout table, `include/rdma/ib_pack.h`, the rxe XRC patch series, and
//! Wireshark's `packet-infiniband.c` header-order arrays). Written from those facts, not copied.

use std::fmt;

pub use super::headers::{CNP_RESERVED_LEN, ExtKind, Opcode};

/// Transport service class: bits 7:5 of the BTH OpCode (IBTA Vol 1 §9.2.1, `ib_pack.h`).
/// Serialized as its [`Transport::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Transport {
    /// Reliable Connected, prefix `0x00`.
    Rc,
    /// Unreliable Connected, prefix `0x20`.
    Uc,
    /// Reliable Datagram, prefix `0x40`.
    Rd,
    /// Unreliable Datagram, prefix `0x60`.
    Ud,
    /// Congestion notification, prefix `0x80` (`0x80` native-IB CNP, `0x81` RoCEv2 CNP).
    Cnp,
    /// Extended Reliable Connected, prefix `0xA0`.
    Xrc,
    /// Manufacturer-specific opcodes `0xC0`–`0xFF`; never decoded as IBTA.
    #[serde(rename = "MSP")]
    Vendor,
}

impl Transport {
    /// Short upper-case name as engineers write it (`RC`, `UC`, `RD`, `UD`, `CNP`, `XRC`, `MSP`).
    pub fn name(self) -> &'static str {
        match self {
            Transport::Rc => "RC",
            Transport::Uc => "UC",
            Transport::Rd => "RD",
            Transport::Ud => "UD",
            Transport::Cnp => "CNP",
            Transport::Xrc => "XRC",
            Transport::Vendor => "MSP",
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a packet sits in its message (IBTA Vol 1 §9.8.3; rxe START/MIDDLE/END masks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// `*_FIRST`: starts a multi-packet message.
    First,
    /// `*_MIDDLE`.
    Middle,
    /// `*_LAST*`: ends a multi-packet message.
    Last,
    /// `*_ONLY*`, READ request, atomics, ACKs: a whole message in one packet.
    Only,
}

/// The operation (low 5 bits of the OpCode) independent of transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    SendFirst,
    SendMiddle,
    SendLast,
    SendLastImm,
    SendOnly,
    SendOnlyImm,
    WriteFirst,
    WriteMiddle,
    WriteLast,
    WriteLastImm,
    WriteOnly,
    WriteOnlyImm,
    ReadRequest,
    ReadResponseFirst,
    ReadResponseMiddle,
    ReadResponseLast,
    ReadResponseOnly,
    Acknowledge,
    AtomicAcknowledge,
    CompareSwap,
    FetchAdd,
    Resync,
    SendLastInv,
    SendOnlyInv,
    Flush,
    AtomicWrite,
    /// RoCEv2 (0x81) or native-IB (0x80) congestion notification packet.
    Cnp,
}

impl Operation {
    /// Name as used by the Linux kernel's `ib_pack.h` opcode enum, without transport prefix.
    pub fn name(self) -> &'static str {
        use Operation::*;
        match self {
            SendFirst => "SEND_FIRST",
            SendMiddle => "SEND_MIDDLE",
            SendLast => "SEND_LAST",
            SendLastImm => "SEND_LAST_WITH_IMMEDIATE",
            SendOnly => "SEND_ONLY",
            SendOnlyImm => "SEND_ONLY_WITH_IMMEDIATE",
            WriteFirst => "RDMA_WRITE_FIRST",
            WriteMiddle => "RDMA_WRITE_MIDDLE",
            WriteLast => "RDMA_WRITE_LAST",
            WriteLastImm => "RDMA_WRITE_LAST_WITH_IMMEDIATE",
            WriteOnly => "RDMA_WRITE_ONLY",
            WriteOnlyImm => "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
            ReadRequest => "RDMA_READ_REQUEST",
            ReadResponseFirst => "RDMA_READ_RESPONSE_FIRST",
            ReadResponseMiddle => "RDMA_READ_RESPONSE_MIDDLE",
            ReadResponseLast => "RDMA_READ_RESPONSE_LAST",
            ReadResponseOnly => "RDMA_READ_RESPONSE_ONLY",
            Acknowledge => "ACKNOWLEDGE",
            AtomicAcknowledge => "ATOMIC_ACKNOWLEDGE",
            CompareSwap => "COMPARE_SWAP",
            FetchAdd => "FETCH_ADD",
            Resync => "RESYNC",
            SendLastInv => "SEND_LAST_WITH_INVALIDATE",
            SendOnlyInv => "SEND_ONLY_WITH_INVALIDATE",
            Flush => "FLUSH",
            AtomicWrite => "ATOMIC_WRITE",
            Cnp => "CNP",
        }
    }

    /// Position of a packet with this operation inside its message.
    pub fn position(self) -> Position {
        use Operation::*;
        match self {
            SendFirst | WriteFirst | ReadResponseFirst => Position::First,
            SendMiddle | WriteMiddle | ReadResponseMiddle => Position::Middle,
            SendLast | SendLastImm | SendLastInv | WriteLast | WriteLastImm | ReadResponseLast => {
                Position::Last
            }
            _ => Position::Only,
        }
    }

    /// True for SEND (any form).
    pub fn is_send(self) -> bool {
        use Operation::*;
        matches!(
            self,
            SendFirst
                | SendMiddle
                | SendLast
                | SendLastImm
                | SendOnly
                | SendOnlyImm
                | SendLastInv
                | SendOnlyInv
        )
    }

    /// True for RDMA WRITE (any form).
    pub fn is_write(self) -> bool {
        use Operation::*;
        matches!(
            self,
            WriteFirst | WriteMiddle | WriteLast | WriteLastImm | WriteOnly | WriteOnlyImm
        )
    }

    /// True for an RDMA READ response packet (FIRST/MIDDLE/LAST/ONLY).
    pub fn is_read_response(self) -> bool {
        use Operation::*;
        matches!(
            self,
            ReadResponseFirst | ReadResponseMiddle | ReadResponseLast | ReadResponseOnly
        )
    }

    /// True for atomics (CmpSwap, FetchAdd; ATOMIC WRITE is counted with them).
    pub fn is_atomic(self) -> bool {
        matches!(
            self,
            Operation::CompareSwap | Operation::FetchAdd | Operation::AtomicWrite
        )
    }

    /// True for packets a requester sends (consume request PSNs), as opposed to responses
    /// (ACK, ATOMIC ACK, READ responses) and CNPs.
    pub fn is_request(self) -> bool {
        self.is_send()
            || self.is_write()
            || self.is_atomic()
            || matches!(
                self,
                Operation::ReadRequest | Operation::Flush | Operation::Resync
            )
    }

    /// True when the operation carries immediate data.
    pub fn has_immediate(self) -> bool {
        use Operation::*;
        matches!(
            self,
            SendLastImm | SendOnlyImm | WriteLastImm | WriteOnlyImm
        )
    }
}

/// Header layout of one opcode: which extended headers follow the BTH, in wire order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Extended headers in wire order.
    pub headers: &'static [ExtKind],
    /// Bytes of those headers together (the sum of their [`ExtKind::size`]s), 0 to 32.
    pub ext_len: usize,
    /// Whether a payload may follow the headers.
    pub payload: bool,
}

const fn lay(headers: &'static [ExtKind], payload: bool) -> Option<Layout> {
    let mut ext_len = 0;
    let mut i = 0;
    while i < headers.len() {
        ext_len += headers[i].size();
        i += 1;
    }
    Some(Layout {
        headers,
        ext_len,
        payload,
    })
}

use ExtKind::*;

impl Opcode {
    /// Transport class from bits 7:5.
    pub const fn transport(self) -> Transport {
        match self.0 >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            4 => Transport::Cnp,
            5 => Transport::Xrc,
            _ => Transport::Vendor,
        }
    }

    /// Operation, when the opcode is defined for its transport; `None` for reserved and
    /// manufacturer-specific opcodes.
    pub fn operation(self) -> Option<Operation> {
        OPERATIONS[self.0 as usize]
    }

    /// Extended-header layout for this opcode, or `None` if the opcode is reserved for its
    /// transport or manufacturer-specific (spec/roce.md §2 second table).
    pub fn layout(self) -> Option<Layout> {
        LAYOUTS[self.0 as usize]
    }

    /// Name with transport prefix, e.g. `RC RDMA_WRITE_FIRST`; `MSP manufacturer-specific 0xE0` for
    /// manufacturer-specific and `RC reserved 0x18` for undefined opcodes. Allocates: printers
    /// use [`Opcode::label`].
    pub fn full_name(self) -> String {
        match self.operation() {
            Some(Operation::Cnp) => "CNP".to_string(),
            Some(op) => format!("{} {}", self.transport(), op.name()),
            None => format!(
                "{} {} 0x{:02X}",
                self.transport(),
                self.unknown_label(),
                self.0
            ),
        }
    }

    /// The opcode name as one token, `RC_RDMA_WRITE_FIRST`, as used in JSON `opcode_name` and
    /// accepted by `--opcode`.
    pub fn token(self) -> &'static str {
        OPCODE_TOKENS[self.0 as usize]
    }

    /// Like [`Opcode::full_name`] but a `&'static str`, for the hot printing path.
    pub fn label(self) -> &'static str {
        OPCODE_LABELS[self.0 as usize]
    }

    fn unknown_label(self) -> &'static str {
        if self.transport() == Transport::Vendor {
            "manufacturer-specific"
        } else {
            "reserved"
        }
    }
}

/// `f(Opcode(i))` for each of the 256 opcodes, in a table built at compile time.
macro_rules! per_opcode {
    ($f:ident) => {{
        let mut t = [None; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = $f(Opcode(i as u8));
            i += 1;
        }
        t
    }};
}

/// [`Opcode::operation`] of each of the 256 opcodes, computed at compile time: the decoder and
/// the analysis ask for every packet.
static OPERATIONS: [Option<Operation>; 256] = per_opcode!(operation_of);

/// [`Opcode::layout`] of each of the 256 opcodes, computed at compile time.
static LAYOUTS: [Option<Layout>; 256] = per_opcode!(layout_of);

/// The operation of `op` (see [`Opcode::operation`]).
const fn operation_of(op: Opcode) -> Option<Operation> {
    use Operation::*;
    let t = op.transport();
    if matches!(t, Transport::Cnp) {
        return if matches!(op.0, 0x80 | 0x81) {
            Some(Cnp)
        } else {
            None
        };
    }
    if matches!(t, Transport::Vendor) {
        return None;
    }
    let o = match op.0 & 0x1f {
        0x00 => SendFirst,
        0x01 => SendMiddle,
        0x02 => SendLast,
        0x03 => SendLastImm,
        0x04 => SendOnly,
        0x05 => SendOnlyImm,
        0x06 => WriteFirst,
        0x07 => WriteMiddle,
        0x08 => WriteLast,
        0x09 => WriteLastImm,
        0x0a => WriteOnly,
        0x0b => WriteOnlyImm,
        0x0c => ReadRequest,
        0x0d => ReadResponseFirst,
        0x0e => ReadResponseMiddle,
        0x0f => ReadResponseLast,
        0x10 => ReadResponseOnly,
        0x11 => Acknowledge,
        0x12 => AtomicAcknowledge,
        0x13 => CompareSwap,
        0x14 => FetchAdd,
        0x15 => Resync,
        0x16 => SendLastInv,
        0x17 => SendOnlyInv,
        0x1c => Flush,
        0x1d => AtomicWrite,
        _ => return None,
    };
    if layout_of(op).is_some() {
        Some(o)
    } else {
        None
    }
}

/// The extended-header layout of `op` (see [`Opcode::layout`]).
const fn layout_of(op: Opcode) -> Option<Layout> {
    let low = op.0 & 0x1f;
    match op.transport() {
        Transport::Rc => rc_layout(low, true),
        Transport::Uc => match low {
            // UC defines SEND and RDMA WRITE only (ib_pack.h: UC 0x20–0x2B).
            0x00..=0x0b => rc_layout(low, false),
            _ => None,
        },
        Transport::Rd => rd_layout(low),
        Transport::Ud => match low {
            0x04 => lay(&[Deth], true),
            0x05 => lay(&[Deth, ImmDt], true),
            _ => None,
        },
        Transport::Xrc => xrc_layout(low),
        Transport::Cnp => match op.0 {
            0x81 => lay(&[CnpReserved], false),
            // The native-IB CNP (IBTA Vol 1 Annex A10.3.2) carries no extended header.
            0x80 => lay(&[], false),
            _ => None,
        },
        Transport::Vendor => None,
    }
}

const fn rc_layout(low: u8, rc: bool) -> Option<Layout> {
    match low {
        0x00..=0x02 | 0x04 => lay(&[], true),
        0x03 | 0x05 => lay(&[ImmDt], true),
        0x06 | 0x0a => lay(&[Reth], true),
        0x07 | 0x08 => lay(&[], true),
        0x09 => lay(&[ImmDt], true),
        0x0b => lay(&[Reth, ImmDt], true),
        _ if !rc => None,
        0x0c => lay(&[Reth], false),
        0x0d | 0x0f | 0x10 => lay(&[Aeth], true),
        0x0e => lay(&[], true),
        0x11 => lay(&[Aeth], false),
        0x12 => lay(&[Aeth, AtomicAckEth], false),
        0x13 | 0x14 => lay(&[AtomicEth], false),
        0x16 | 0x17 => lay(&[Ieth], true),
        0x1c => lay(&[Feth, Reth], false),
        // ATOMIC WRITE: RETH then the 8-byte value as payload (rxe RXE_PAYLOAD_MASK).
        0x1d => lay(&[Reth], true),
        _ => None,
    }
}

const fn rd_layout(low: u8) -> Option<Layout> {
    match low {
        0x00..=0x02 | 0x04 | 0x07 | 0x08 => lay(&[Rdeth, Deth], true),
        0x03 | 0x05 | 0x09 => lay(&[Rdeth, Deth, ImmDt], true),
        0x06 | 0x0a => lay(&[Rdeth, Deth, Reth], true),
        0x0b => lay(&[Rdeth, Deth, Reth, ImmDt], true),
        0x0c => lay(&[Rdeth, Deth, Reth], false),
        0x0d | 0x0f | 0x10 => lay(&[Rdeth, Aeth], true),
        0x0e => lay(&[Rdeth], true),
        0x11 => lay(&[Rdeth, Aeth], false),
        0x12 => lay(&[Rdeth, Aeth, AtomicAckEth], false),
        0x13 | 0x14 => lay(&[Rdeth, Deth, AtomicEth], false),
        0x15 => lay(&[Rdeth, Deth], false),
        0x1c => lay(&[Rdeth, Deth, Feth, Reth], false),
        _ => None,
    }
}

const fn xrc_layout(low: u8) -> Option<Layout> {
    match low {
        0x00..=0x02 | 0x04 | 0x07 | 0x08 => lay(&[Xrceth], true),
        0x03 | 0x05 | 0x09 => lay(&[Xrceth, ImmDt], true),
        0x06 | 0x0a => lay(&[Xrceth, Reth], true),
        0x0b => lay(&[Xrceth, Reth, ImmDt], true),
        0x0c => lay(&[Xrceth, Reth], false),
        // Responses carry no XRCETH.
        0x0d | 0x0f | 0x10 => lay(&[Aeth], true),
        0x0e => lay(&[], true),
        0x11 => lay(&[Aeth], false),
        0x12 => lay(&[Aeth, AtomicAckEth], false),
        0x13 | 0x14 => lay(&[Xrceth, AtomicEth], false),
        0x16 | 0x17 => lay(&[Xrceth, Ieth], true),
        _ => None,
    }
}

/// `TRANSPORT_OPERATION` tokens for all 256 opcodes; reserved ones read `RC_RESERVED_0x18`.
static OPCODE_TOKENS: std::sync::LazyLock<[&'static str; 256]> = std::sync::LazyLock::new(|| {
    std::array::from_fn(|i| {
        let op = Opcode(i as u8);
        let s = match op.operation() {
            Some(Operation::Cnp) => "CNP".to_string(),
            Some(o) => format!("{}_{}", op.transport(), o.name()),
            None if op.transport() == Transport::Vendor => format!("MSP_0x{i:02X}"),
            None => format!("{}_RESERVED_0x{i:02X}", op.transport()),
        };
        &*Box::leak(s.into_boxed_str())
    })
});

/// [`Opcode::full_name`] for all 256 opcodes, built once.
static OPCODE_LABELS: std::sync::LazyLock<[&'static str; 256]> = std::sync::LazyLock::new(|| {
    std::array::from_fn(|i| &*Box::leak(Opcode(i as u8).full_name().into_boxed_str()))
});

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.label())
    }
}

/// A set of BTH opcodes (IBTA Vol. 1 §9.2, the 8-bit OpCode field): entry N is whether opcode
/// N is in it; what `--opcode` selects ([`parse_opcode_selector`]).
#[derive(Clone, Debug)]
pub struct OpcodeSet(pub Box<[bool; 256]>);

/// Parse a user's `--opcode` value: a number (`10`, `0x0a`), a full token
/// (`RC_RDMA_WRITE_ONLY`), or an operation name matching every transport (`RDMA_WRITE_ONLY`,
/// `CNP`). Case-insensitive. Returns the matching opcodes as a 256-bit set.
///
/// # Errors
/// A message naming the value when nothing matches.
pub fn parse_opcode_selector(s: &str) -> Result<[bool; 256], String> {
    let mut set = [false; 256];
    let t = s.trim();
    let num = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u8::from_str_radix(h, 16).ok()
    } else {
        t.parse::<u8>().ok()
    };
    if let Some(n) = num {
        set[n as usize] = true;
        return Ok(set);
    }
    let up = t.to_ascii_uppercase().replace(['-', ' '], "_");
    let mut any = false;
    for i in 0..=255u8 {
        let op = Opcode(i);
        let hit = op.token() == up
            || op
                .operation()
                .is_some_and(|o| o.name() == up || (o == Operation::Cnp && up == "CNP"));
        if hit {
            set[i as usize] = true;
            any = true;
        }
    }
    if any {
        Ok(set)
    } else {
        Err(format!(
            "unknown opcode '{s}': give a number (0-255, 0x..) or a name such as RDMA_WRITE_FIRST or RC_ACKNOWLEDGE"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transports_follow_top_three_bits() {
        assert_eq!(Opcode(0x06).transport(), Transport::Rc);
        assert_eq!(Opcode(0x2a).transport(), Transport::Uc);
        assert_eq!(Opcode(0x4c).transport(), Transport::Rd);
        assert_eq!(Opcode(0x64).transport(), Transport::Ud);
        assert_eq!(Opcode(0x81).transport(), Transport::Cnp);
        assert_eq!(Opcode(0xa6).transport(), Transport::Xrc);
        assert_eq!(Opcode(0xe0).transport(), Transport::Vendor);
    }

    #[test]
    fn layouts_match_ibta_table() {
        // RC WRITE ONLY with immediate: RETH then ImmDt (rxe offsets 12, 28).
        assert_eq!(Opcode(0x0b).layout().unwrap().headers, &[Reth, ImmDt]);
        // UC has no READ.
        assert!(Opcode(0x2c).layout().is_none());
        // UD defines only SEND ONLY (+imm).
        assert_eq!(Opcode(0x64).layout().unwrap().headers, &[Deth]);
        assert!(Opcode(0x60).layout().is_none());
        // RD: RDETH then DETH for requests.
        assert_eq!(
            Opcode(0x53).layout().unwrap().headers,
            &[Rdeth, Deth, AtomicEth]
        );
        // XRC requests get XRCETH; responses do not.
        assert_eq!(Opcode(0xb3).layout().unwrap().headers, &[Xrceth, AtomicEth]);
        assert_eq!(Opcode(0xb1).layout().unwrap().headers, &[Aeth]);
        // FLUSH: FETH then RETH, no payload.
        let f = Opcode(0x1c).layout().unwrap();
        assert_eq!((f.headers, f.payload), (&[Feth, Reth][..], false));
        assert_eq!(Opcode(0x81).layout().unwrap().headers, &[CnpReserved]);
        assert!(Opcode(0xe0).layout().is_none());
        assert!(Opcode(0x18).layout().is_none());
    }

    #[test]
    fn names_and_selectors() {
        assert_eq!(Opcode(0x06).full_name(), "RC RDMA_WRITE_FIRST");
        assert_eq!(Opcode(0x29).token(), "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE");
        assert_eq!(Opcode(0x81).token(), "CNP");
        assert_eq!(Opcode(0xe0).token(), "MSP_0xE0");
        let s = parse_opcode_selector("rdma_write_only").unwrap();
        assert!(s[0x0a] && s[0x2a] && s[0x4a] && s[0xaa] && !s[0x0b]);
        let s = parse_opcode_selector("0x11").unwrap();
        assert!(s[0x11] && s.iter().filter(|b| **b).count() == 1);
        assert!(parse_opcode_selector("BOGUS").is_err());
    }
}
