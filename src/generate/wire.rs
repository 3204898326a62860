//! The out-of-band messages `generate` exchanges over TCP before and after the RDMA traffic.
//!
//! perftest (`perftest_communication.c`) sends each side's QPN, PSN, rkey, virtual address and
//! GID as a 108-byte ASCII line, and versions and MTU in separate exchanges. This is our own,
//! smaller, binary and versioned format (not interoperable with `ib_write_bw`). All integers are
//! big-endian.
//!
//! ```text
//! header, 8 bytes:  magic "RcIn" | version u8 (=1) | kind u8 | body length u16
//! Params  (kind 1): path MTU code u8 | flags u8 | QP count u16 | count × QP entry
//!   QP entry, 44 bytes: QPN u32 | start PSN u32 | rkey u32 | buffer address u64 |
//!                       buffer length u64 | GID [16]
//! Ready   (kind 2): empty — a barrier: "my QPs are ready for the traffic".
//! Done    (kind 3): messages u64 | bytes u64 — the client's totals; the server answers Done.
//! Abort   (kind 4): UTF-8 reason (at most 1024 bytes) — the peer gave up; say why.
//! ```
//!
//! [`Message::decode`] never panics: truncated, oversized or inconsistent input is a
//! [`WireError`].

use super::gid::Gid;
use super::mtu::Mtu;

/// The first four bytes of every message.
pub const MAGIC: [u8; 4] = *b"RcIn";
/// The format version this build speaks.
pub const VERSION: u8 = 1;
/// Header size in bytes.
pub const HEADER_LEN: usize = 8;
/// Size in bytes of one QP entry of a Params message.
pub const QP_ENTRY_LEN: usize = 44;
/// The most QPs one Params message may describe (also the `--qps` limit).
pub const MAX_QPS: usize = 256;
/// The longest Abort reason, in bytes.
pub const MAX_REASON: usize = 1024;
/// Params flag: the client sends RDMA WRITE WITH IMMEDIATE, so the server must post receives.
pub const FLAG_IMM: u8 = 0x01;

const KIND_PARAMS: u8 = 1;
const KIND_READY: u8 = 2;
const KIND_DONE: u8 = 3;
const KIND_ABORT: u8 = 4;

/// What one side tells the other about one of its QPs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpInfo {
    /// Queue pair number (24 bits, IBA BTH DestQP).
    pub qpn: u32,
    /// First packet sequence number this side will send (24 bits).
    pub psn: u32,
    /// Remote key of the buffer the peer may write to.
    pub rkey: u32,
    /// Virtual address (iova) of that buffer, as it appears in the RETH.
    pub addr: u64,
    /// Length of that buffer in bytes.
    pub len: u64,
    /// The GID this side sends from (the peer's destination GID).
    pub gid: Gid,
}

/// One side's connection parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// This side's active MTU, after its own `--mtu` cap.
    pub mtu: Mtu,
    /// [`FLAG_IMM`] and future flags; unknown bits are ignored by the receiver.
    pub flags: u8,
    /// One entry per QP, in QP order.
    pub qps: Vec<QpInfo>,
}

/// A message of the out-of-band protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Connection parameters.
    Params(Params),
    /// Barrier.
    Ready,
    /// End of traffic, with the client's totals.
    Done {
        /// RDMA WRITEs completed.
        messages: u64,
        /// Payload bytes written.
        bytes: u64,
    },
    /// The peer stopped, with its reason.
    Abort(String),
}

/// A malformed, truncated or unsupported message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Fewer bytes than the header or its body length says.
    #[error("truncated message: {got} of {need} bytes")]
    Truncated {
        /// Bytes needed.
        need: usize,
        /// Bytes present.
        got: usize,
    },
    /// More bytes than the header's body length.
    #[error("{0} unexpected bytes after the message")]
    Trailing(usize),
    /// Not our protocol.
    #[error(
        "bad magic {0:02x?}: the peer is not `roce-inspect generate` (perftest's ib_write_bw \
         uses another format)"
    )]
    BadMagic([u8; 4]),
    /// A version this build does not speak.
    #[error("peer speaks message version {0}, this build speaks version {VERSION}")]
    Version(u8),
    /// An unknown message kind.
    #[error("unknown message kind {0}")]
    Kind(u8),
    /// The body does not match its kind.
    #[error("malformed {kind} message: {why}")]
    Body {
        /// The message kind.
        kind: &'static str,
        /// What is wrong.
        why: String,
    },
}

fn body_err(kind: &'static str, why: impl Into<String>) -> WireError {
    WireError::Body {
        kind,
        why: why.into(),
    }
}

impl Message {
    fn kind(&self) -> u8 {
        match self {
            Message::Params(_) => KIND_PARAMS,
            Message::Ready => KIND_READY,
            Message::Done { .. } => KIND_DONE,
            Message::Abort(_) => KIND_ABORT,
        }
    }

    /// A short name for error messages.
    pub fn name(&self) -> &'static str {
        match self {
            Message::Params(_) => "Params",
            Message::Ready => "Ready",
            Message::Done { .. } => "Done",
            Message::Abort(_) => "Abort",
        }
    }

    /// Encodes the message with its header.
    ///
    /// Values that do not fit the format are clamped so that encoding cannot fail: QPN and PSN
    /// to 24 bits, at most [`MAX_QPS`] entries, the Abort reason to [`MAX_REASON`] bytes (at a
    /// character boundary). Callers validate before that (`--qps` is limited to [`MAX_QPS`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        match self {
            Message::Params(p) => {
                let n = p.qps.len().min(MAX_QPS);
                body.push(p.mtu.code() as u8);
                body.push(p.flags);
                body.extend_from_slice(&(n as u16).to_be_bytes());
                for q in &p.qps[..n] {
                    body.extend_from_slice(&(q.qpn & 0xff_ffff).to_be_bytes());
                    body.extend_from_slice(&(q.psn & 0xff_ffff).to_be_bytes());
                    body.extend_from_slice(&q.rkey.to_be_bytes());
                    body.extend_from_slice(&q.addr.to_be_bytes());
                    body.extend_from_slice(&q.len.to_be_bytes());
                    body.extend_from_slice(&q.gid.0);
                }
            }
            Message::Ready => {}
            Message::Done { messages, bytes } => {
                body.extend_from_slice(&messages.to_be_bytes());
                body.extend_from_slice(&bytes.to_be_bytes());
            }
            Message::Abort(reason) => {
                let mut end = reason.len().min(MAX_REASON);
                while !reason.is_char_boundary(end) {
                    end -= 1;
                }
                body.extend_from_slice(&reason.as_bytes()[..end]);
            }
        }
        let mut out = Vec::with_capacity(HEADER_LEN + body.len());
        out.extend_from_slice(&MAGIC);
        out.push(VERSION);
        out.push(self.kind());
        out.extend_from_slice(&(body.len() as u16).to_be_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// Validates a header and returns the body length it announces.
    pub fn body_len(header: &[u8]) -> Result<usize, WireError> {
        if header.len() < HEADER_LEN {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                got: header.len(),
            });
        }
        let magic = [header[0], header[1], header[2], header[3]];
        if magic != MAGIC {
            return Err(WireError::BadMagic(magic));
        }
        if header[4] != VERSION {
            return Err(WireError::Version(header[4]));
        }
        if !(KIND_PARAMS..=KIND_ABORT).contains(&header[5]) {
            return Err(WireError::Kind(header[5]));
        }
        Ok(u16::from_be_bytes([header[6], header[7]]) as usize)
    }

    /// Decodes exactly one message (header and body) from `buf`.
    pub fn decode(buf: &[u8]) -> Result<Message, WireError> {
        let len = Message::body_len(buf)?;
        let need = HEADER_LEN + len;
        if buf.len() < need {
            return Err(WireError::Truncated {
                need,
                got: buf.len(),
            });
        }
        if buf.len() > need {
            return Err(WireError::Trailing(buf.len() - need));
        }
        let body = &buf[HEADER_LEN..];
        match buf[5] {
            KIND_PARAMS => decode_params(body).map(Message::Params),
            KIND_READY if body.is_empty() => Ok(Message::Ready),
            KIND_READY => Err(body_err(
                "Ready",
                format!("{} body bytes, expected 0", body.len()),
            )),
            KIND_DONE => {
                let (m, b) = body
                    .split_first_chunk::<8>()
                    .and_then(|(m, rest)| Some((m, <[u8; 8]>::try_from(rest).ok()?)))
                    .ok_or_else(|| {
                        body_err("Done", format!("{} body bytes, expected 16", body.len()))
                    })?;
                Ok(Message::Done {
                    messages: u64::from_be_bytes(*m),
                    bytes: u64::from_be_bytes(b),
                })
            }
            KIND_ABORT => {
                if body.len() > MAX_REASON {
                    return Err(body_err("Abort", "reason longer than 1024 bytes"));
                }
                Ok(Message::Abort(String::from_utf8_lossy(body).into_owned()))
            }
            other => Err(WireError::Kind(other)),
        }
    }
}

fn be_u32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_be_bytes(a)
}

fn be_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

fn decode_params(body: &[u8]) -> Result<Params, WireError> {
    const K: &str = "Params";
    if body.len() < 4 {
        return Err(body_err(
            K,
            format!("{} body bytes, expected at least 4", body.len()),
        ));
    }
    let mtu = Mtu::from_code(u32::from(body[0]))
        .ok_or_else(|| body_err(K, format!("path MTU code {} is not 1..=5", body[0])))?;
    let flags = body[1];
    let count = usize::from(u16::from_be_bytes([body[2], body[3]]));
    if count == 0 || count > MAX_QPS {
        return Err(body_err(
            K,
            format!("QP count {count} is not 1..={MAX_QPS}"),
        ));
    }
    let entries = &body[4..];
    if entries.len() != count * QP_ENTRY_LEN {
        return Err(body_err(
            K,
            format!(
                "{} bytes of QP entries for {count} QPs, expected {}",
                entries.len(),
                count * QP_ENTRY_LEN
            ),
        ));
    }
    let mut qps = Vec::with_capacity(count);
    for (i, e) in entries.chunks_exact(QP_ENTRY_LEN).enumerate() {
        let qpn = be_u32(&e[0..4]);
        let psn = be_u32(&e[4..8]);
        if qpn > 0xff_ffff || qpn == 0 {
            return Err(body_err(
                K,
                format!("QP {i}: QPN {qpn:#x} is not a 24-bit data QPN"),
            ));
        }
        if psn > 0xff_ffff {
            return Err(body_err(K, format!("QP {i}: PSN {psn:#x} exceeds 24 bits")));
        }
        let mut gid = [0u8; 16];
        gid.copy_from_slice(&e[28..44]);
        let info = QpInfo {
            qpn,
            psn,
            rkey: be_u32(&e[8..12]),
            addr: be_u64(&e[12..20]),
            len: be_u64(&e[20..28]),
            gid: Gid(gid),
        };
        if info.gid.is_zero() {
            return Err(body_err(K, format!("QP {i}: zero GID")));
        }
        if info.addr.checked_add(info.len).is_none() {
            return Err(body_err(
                K,
                format!("QP {i}: buffer wraps the address space"),
            ));
        }
        qps.push(info);
    }
    Ok(Params { mtu, flags, qps })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Params {
        Params {
            mtu: Mtu::M1024,
            flags: FLAG_IMM,
            qps: vec![
                QpInfo {
                    qpn: 0x11,
                    psn: 0xabcdef,
                    rkey: 0x1234_5678,
                    addr: 0x7f00_dead_beef_0000,
                    len: 65536,
                    gid: "::ffff:192.168.1.2".parse().unwrap(),
                },
                QpInfo {
                    qpn: 0xff_ffff,
                    psn: 0,
                    rkey: 1,
                    addr: 0x7f00_dead_bef0_0000,
                    len: 65536,
                    gid: "fe80::1".parse().unwrap(),
                },
            ],
        }
    }

    #[test]
    fn params_golden_bytes() {
        let bytes = Message::Params(sample()).encode();
        assert_eq!(bytes.len(), HEADER_LEN + 4 + 2 * QP_ENTRY_LEN);
        assert_eq!(&bytes[..8], b"RcIn\x01\x01\x00\x5c");
        assert_eq!(&bytes[8..12], &[3, FLAG_IMM, 0, 2]);
        // First entry: QPN, PSN, rkey, address, length, GID.
        assert_eq!(&bytes[12..16], &[0, 0, 0, 0x11]);
        assert_eq!(&bytes[16..20], &[0, 0xab, 0xcd, 0xef]);
        assert_eq!(&bytes[20..24], &[0x12, 0x34, 0x56, 0x78]);
        assert_eq!(&bytes[24..32], &[0x7f, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0]);
        assert_eq!(&bytes[32..40], &[0, 0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(
            &bytes[40..56],
            &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 2]
        );
    }

    #[test]
    fn round_trips() {
        for m in [
            Message::Params(sample()),
            Message::Ready,
            Message::Done {
                messages: 5000,
                bytes: 5000 * 65536,
            },
            Message::Abort("no RoCE v2 GID on rxe0 port 1".into()),
            Message::Abort(String::new()),
        ] {
            let bytes = m.encode();
            assert_eq!(Message::decode(&bytes), Ok(m.clone()), "{}", m.name());
        }
    }

    #[test]
    fn every_truncation_is_an_error() {
        for m in [
            Message::Params(sample()),
            Message::Ready,
            Message::Done {
                messages: 1,
                bytes: 2,
            },
            Message::Abort("x".into()),
        ] {
            let bytes = m.encode();
            for cut in 0..bytes.len() {
                match Message::decode(&bytes[..cut]) {
                    Err(WireError::Truncated { need, got }) => {
                        assert_eq!(got, cut);
                        assert!(need > cut);
                    }
                    other => panic!("{} cut at {cut}: {other:?}", m.name()),
                }
            }
            let mut long = bytes.clone();
            long.push(0);
            assert_eq!(Message::decode(&long), Err(WireError::Trailing(1)));
        }
    }

    #[test]
    fn header_errors() {
        let good = Message::Ready.encode();
        let mut b = good.clone();
        b[0] = b'X';
        assert!(matches!(Message::decode(&b), Err(WireError::BadMagic(_))));
        // perftest's ASCII key line starts with the LID: "0000:0000:...".
        assert!(matches!(
            Message::decode(b"0000:0000:000011:abcdef"),
            Err(WireError::BadMagic(_))
        ));
        let mut b = good.clone();
        b[4] = 2;
        assert_eq!(Message::decode(&b), Err(WireError::Version(2)));
        assert!(
            Message::decode(&b)
                .unwrap_err()
                .to_string()
                .contains("version 2")
        );
        let mut b = good.clone();
        b[5] = 9;
        assert_eq!(Message::decode(&b), Err(WireError::Kind(9)));
        let mut b = good;
        b[5] = 0;
        assert_eq!(Message::decode(&b), Err(WireError::Kind(0)));
    }

    fn with_body(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut v = b"RcIn\x01".to_vec();
        v.push(kind);
        v.extend_from_slice(&(body.len() as u16).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn body_errors() {
        let bytes = Message::Params(sample()).encode();
        let body = &bytes[HEADER_LEN..];
        let mutate = |off: usize, val: &[u8]| {
            let mut b = body.to_vec();
            b[off..off + val.len()].copy_from_slice(val);
            Message::decode(&with_body(1, &b)).unwrap_err().to_string()
        };
        assert!(mutate(0, &[0]).contains("MTU code 0"));
        assert!(mutate(0, &[6]).contains("MTU code 6"));
        assert!(mutate(2, &[0, 0]).contains("QP count 0"));
        assert!(mutate(2, &[0, 3]).contains("for 3 QPs"));
        assert!(mutate(2, &[0x01, 0x01]).contains("QP count 257"));
        assert!(mutate(4, &[0x01, 0, 0, 0]).contains("24-bit"));
        assert!(mutate(4, &[0, 0, 0, 0]).contains("24-bit"));
        assert!(mutate(8, &[0x01, 0, 0, 0]).contains("PSN"));
        assert!(mutate(24, &[0xff; 8]).contains("wraps"));
        assert!(mutate(32, &[0; 16]).contains("zero GID"));
        assert!(
            Message::decode(&with_body(1, &[3, 0]))
                .unwrap_err()
                .to_string()
                .contains("at least 4")
        );
        assert!(Message::decode(&with_body(2, &[0])).is_err());
        assert!(Message::decode(&with_body(3, &[0; 15])).is_err());
        assert!(Message::decode(&with_body(3, &[0; 17])).is_err());
        assert!(Message::decode(&with_body(4, &[b'a'; 1025])).is_err());
        assert_eq!(
            Message::decode(&with_body(4, &[0xff, b'a'])),
            Ok(Message::Abort("\u{fffd}a".into()))
        );
    }

    #[test]
    fn encode_clamps() {
        let mut p = sample();
        p.qps[0].qpn = 0x0100_0011;
        let back = Message::decode(&Message::Params(p).encode()).unwrap();
        let Message::Params(back) = back else {
            panic!("not Params")
        };
        assert_eq!(back.qps[0].qpn, 0x11);
        let long = "é".repeat(600); // 1200 bytes
        let Message::Abort(r) = Message::decode(&Message::Abort(long).encode()).unwrap() else {
            panic!("not Abort")
        };
        assert_eq!(r.len(), 1024);
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = Message::decode(&bytes);
        }

        #[test]
        fn decode_never_panics_with_valid_header(kind in 0u8..6, body in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = Message::decode(&with_body(kind, &body));
        }

        #[test]
        fn params_round_trip(
            qpn in 1u32..=0xff_ffff, psn in 0u32..=0xff_ffff, rkey in any::<u32>(),
            addr in 0u64..u64::MAX / 2, len in 0u64..u64::MAX / 2, gid in any::<[u8; 16]>(),
            code in 1u32..=5, flags in any::<u8>(), n in 1usize..=8,
        ) {
            prop_assume!(gid != [0; 16]);
            let qp = QpInfo { qpn, psn, rkey, addr, len, gid: Gid(gid) };
            let p = Params { mtu: Mtu::from_code(code).unwrap(), flags, qps: vec![qp; n] };
            prop_assert_eq!(Message::decode(&Message::Params(p.clone()).encode()), Ok(Message::Params(p)));
        }
    }
}
