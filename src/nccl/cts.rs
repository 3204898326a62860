//! NCCL's clear-to-send (CTS) FIFO entries and the wire signatures of its IB transport.
//!
//! Facts from NVIDIA's NCCL source (github.com/NVIDIA/nccl, `src/transport/net_ib.cc` up to
//! 2.22 and `src/transport/net_ib/{common.h,p2p.cc}` since): the receiver posts a receive by
//! writing one `ncclIbSendFifo` entry per receive (up to `NCCL_NET_IB_MAX_RECVS` = 8) into the
//! sender's CTS FIFO with one RDMA WRITE (`ncclIbPostFifo`), to slot `slot × 8 × sizeof(entry)`.
//! The entry is in the receiver's byte order (little-endian on x86 and Arm hosts):
//!
//! | era | entry bytes | `addr` | `size` | `rkeys` | `nreqs` | `tag` | `idx` |
//! |---|---|---|---|---|---|---|---|
//! | up to 2.18 | 32 | 0, u64 | 8, i32 | 12, one u32 | 16 | 20 | 24, u64 |
//! | 2.19–2.25 | 64 (`alignas(64)`) | 0, u64 | 8, i32 | 12, two u32 | 20 | 24 | 32, u64 |
//! | since 2.26 | 48 or 64 | 0, u64 | 8, u64 | 16, four u32 | 32 | 36 | 40, u64 |
//!
//! The sender then writes the data to exactly `addr` with `rkeys[dev]` (`ncclIbMultiSend`), the
//! last work request carrying the size as immediate data: `htobe32(size)` since 2.29 (big-endian
//! on the wire), the host-order `size` before (little-endian bytes on the wire from x86 hosts).

/// One parsed CTS entry (sizes in bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtsEntry {
    /// Receive buffer's virtual address (the data's RETH VA).
    pub addr: u64,
    /// Receive buffer size in bytes (the most the sender may write).
    pub size: u64,
    /// R_Key of the receive buffer on the receiver's first device (the data's RETH R_Key).
    pub rkey: u32,
    /// Receives posted in this FIFO slot (1 to 8).
    pub nreqs: u32,
    /// NCCL's tag of the receive.
    pub tag: u32,
    /// The connection's request counter + 1 (`fifoHead + 1` on the sender).
    pub idx: u64,
}

/// The layout of a CTS entry, which dates the NCCL version that wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// 32-byte entries, 32-bit size, one R_Key (NCCL up to 2.18).
    Entry32,
    /// 64-byte entries, 32-bit size, two R_Keys (NCCL 2.19 to 2.25).
    Entry64Size32,
    /// 48- or 64-byte entries, 64-bit size (NCCL 2.26 and later).
    Size64,
}

impl Layout {
    /// The NCCL versions that write this layout.
    pub fn versions(self) -> &'static str {
        match self {
            Layout::Entry32 => "<= 2.18",
            Layout::Entry64Size32 => "2.19-2.25",
            Layout::Size64 => ">= 2.26",
        }
    }
}

/// Byte order of the immediate data that carries a send's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImmOrder {
    /// Little-endian bytes on the wire: NCCL before 2.29 on x86/Arm hosts.
    LittleEndian,
    /// Big-endian (network order): NCCL 2.29 and later (`htobe32`).
    BigEndian,
}

impl ImmOrder {
    /// The NCCL versions that send this order.
    pub fn versions(self) -> &'static str {
        match self {
            ImmOrder::LittleEndian => "< 2.29",
            ImmOrder::BigEndian => ">= 2.29",
        }
    }

    /// The size that immediate `imm` (as the BTH-order u32 the decoder reads) carries.
    pub fn size(self, imm: u32) -> u32 {
        match self {
            ImmOrder::LittleEndian => imm.swap_bytes(),
            ImmOrder::BigEndian => imm,
        }
    }
}

/// The byte order in which immediate `imm` equals `len` bytes, little-endian first (a value
/// that reads the same both ways, such as 0, is reported little-endian); `None` when neither.
pub fn imm_order(imm: u32, len: u64) -> Option<ImmOrder> {
    if u64::from(imm.swap_bytes()) == len {
        Some(ImmOrder::LittleEndian)
    } else if u64::from(imm) == len {
        Some(ImmOrder::BigEndian)
    } else {
        None
    }
}

/// Most receives in one FIFO slot (`NCCL_NET_IB_MAX_RECVS`).
pub const MAX_RECVS: usize = 8;

/// Whether a plain RDMA WRITE ONLY of `len` bytes may be a CTS write: 32, 48 or 64 bytes times
/// 1 to 8 entries.
pub fn cts_length(len: u32) -> bool {
    let len = len as usize;
    [32, 48, 64]
        .iter()
        .any(|e| len % e == 0 && (1..=MAX_RECVS).contains(&(len / e)))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Parse the entries of a CTS write's captured payload `p` (`len` bytes on the wire): the
/// layout whose `nreqs` field times its entry size equals `len`, and every entry's address
/// non-zero and `idx` the same. `None` when the payload was not captured whole or fits no
/// layout.
pub fn parse(p: &[u8], len: u32) -> Option<(Layout, Vec<CtsEntry>)> {
    if p.len() < len as usize || !cts_length(len) {
        return None;
    }
    // (layout, entry bytes, size is 64-bit, rkey, nreqs, tag, idx offsets)
    const LAYOUTS: [(Layout, usize, bool, usize, usize, usize, usize); 4] = [
        (Layout::Entry64Size32, 64, false, 12, 20, 24, 32),
        (Layout::Entry32, 32, false, 12, 16, 20, 24),
        (Layout::Size64, 64, true, 16, 32, 36, 40),
        (Layout::Size64, 48, true, 16, 32, 36, 40),
    ];
    for (layout, esz, wide, rk, nr, tg, ix) in LAYOUTS {
        let n = len as usize / esz;
        if len as usize % esz != 0 || u32_at(p, nr) != Some(n as u32) {
            continue;
        }
        let entries: Option<Vec<CtsEntry>> = (0..n)
            .map(|i| {
                let e = &p[i * esz..(i + 1) * esz];
                let size = if wide {
                    u64_at(e, 8)?
                } else {
                    u64::from(u32_at(e, 8)?)
                };
                Some(CtsEntry {
                    addr: u64_at(e, 0)?,
                    size,
                    rkey: u32_at(e, rk)?,
                    nreqs: u32_at(e, nr)?,
                    tag: u32_at(e, tg)?,
                    idx: u64_at(e, ix)?,
                })
            })
            .collect();
        let Some(entries) = entries else { continue };
        let idx = entries[0].idx;
        if entries
            .iter()
            .all(|e| e.addr != 0 && e.idx == idx && e.idx != 0)
        {
            return Some((layout, entries));
        }
    }
    None
}

/// NCCL's protocol, told from a data packet's payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Protocol {
    /// Plain data.
    #[serde(rename = "SIMPLE")]
    Simple,
    /// Low-latency: 16-byte lines of two 4-byte data words each followed by a 4-byte flag,
    /// both flags equal (`union ncclLLFifoLine`, NCCL src/device/common.h).
    #[serde(rename = "LL")]
    Ll,
    /// LL128: 128-byte lines whose last 8 bytes are a flag, the same in every line of a step.
    #[serde(rename = "LL128")]
    Ll128,
}

impl Protocol {
    /// NCCL's name.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Simple => "SIMPLE",
            Protocol::Ll => "LL",
            Protocol::Ll128 => "LL128",
        }
    }
}

/// The protocol of a data payload `p` (at least 128 captured bytes), `None` when too short.
/// LL needs the same flag in every 16-byte line and LL128 in every 128-byte line, with data
/// words that differ from it somewhere (a payload of one repeated word, such as nccl-tests'
/// buffers of 1.0f, is SIMPLE).
pub fn protocol(p: &[u8]) -> Option<Protocol> {
    if p.len() < 128 {
        return None;
    }
    let flag32 = u32_at(p, 4);
    let ll = flag32 != Some(0)
        && p.chunks_exact(16)
            .all(|l| u32_at(l, 4) == flag32 && u32_at(l, 12) == flag32)
        && p.chunks_exact(16)
            .any(|l| u32_at(l, 0) != flag32 || u32_at(l, 8) != flag32);
    if ll {
        return Some(Protocol::Ll);
    }
    let flag = u64_at(p, 120);
    let ll128 = p.len() >= 256
        && flag != Some(0)
        && p.chunks_exact(128).all(|l| u64_at(l, 120) == flag)
        && p.chunks_exact(8).any(|w| u64_at(w, 0) != flag);
    Some(if ll128 {
        Protocol::Ll128
    } else {
        Protocol::Simple
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first CTS entry of nccl_nccl_node0.pcap (frame 496), as tshark shows its data.
    const NODE0_CTS: &str = "0000b3352e70000000001000573a00000000000001000000000000000000000001000000000000000000000000000000000000000000000000000000000000000000";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn parses_a_2_19_entry() {
        let p = hex(&NODE0_CTS[..128]);
        let (layout, e) = parse(&p, 64).unwrap();
        assert_eq!(layout, Layout::Entry64Size32);
        // Read by hand from the bytes: addr 0x0000702e35b30000 (the VA of the data writes
        // that follow), size 0x100000, rkey 0x3a57 (their R_Key), nreqs 1, tag 0, idx 1.
        assert_eq!(
            e,
            vec![CtsEntry {
                addr: 0x0000_702e_35b3_0000,
                size: 0x10_0000,
                rkey: 0x3a57,
                nreqs: 1,
                tag: 0,
                idx: 1
            }]
        );
    }

    #[test]
    fn parses_old_and_new_layouts() {
        let mut old = vec![0u8; 64];
        for (i, base) in [0usize, 32].into_iter().enumerate() {
            old[base..base + 8].copy_from_slice(&(0x1000u64 << i).to_le_bytes());
            old[base + 8..base + 12].copy_from_slice(&4096u32.to_le_bytes());
            old[base + 12..base + 16].copy_from_slice(&0x77u32.to_le_bytes());
            old[base + 16..base + 20].copy_from_slice(&2u32.to_le_bytes());
            old[base + 24..base + 32].copy_from_slice(&9u64.to_le_bytes());
        }
        let (l, e) = parse(&old, 64).unwrap();
        assert_eq!(
            (l, e.len(), e[1].addr, e[1].rkey),
            (Layout::Entry32, 2, 0x2000, 0x77)
        );
        let mut new = vec![0u8; 64];
        new[..8].copy_from_slice(&0xabcdu64.to_le_bytes());
        new[8..16].copy_from_slice(&(5u64 << 32).to_le_bytes());
        new[16..20].copy_from_slice(&0x55u32.to_le_bytes());
        new[32..36].copy_from_slice(&1u32.to_le_bytes());
        new[40..48].copy_from_slice(&3u64.to_le_bytes());
        let (l, e) = parse(&new, 64).unwrap();
        assert_eq!(
            (l, e[0].size, e[0].rkey, e[0].idx),
            (Layout::Size64, 5 << 32, 0x55, 3)
        );
        // Cut payloads and zero addresses are no CTS.
        assert!(parse(&new[..40], 64).is_none());
        assert!(parse(&[0u8; 64], 64).is_none());
    }

    #[test]
    fn immediate_orders() {
        // 8192 as little-endian bytes 00 20 00 00, read by the decoder as 0x00200000.
        assert_eq!(imm_order(0x0020_0000, 8192), Some(ImmOrder::LittleEndian));
        assert_eq!(imm_order(8192, 8192), Some(ImmOrder::BigEndian));
        assert_eq!(imm_order(8192, 8191), None);
        assert_eq!(ImmOrder::LittleEndian.size(0x0100_0000), 1);
    }

    #[test]
    fn tells_protocols() {
        let mut ll = vec![0u8; 256];
        for l in ll.chunks_exact_mut(16) {
            l[0] = 9;
            l[4] = 7;
            l[12] = 7;
        }
        assert_eq!(protocol(&ll), Some(Protocol::Ll));
        let mut ll128 = vec![3u8; 256];
        for l in ll128.chunks_exact_mut(128) {
            l[120..].copy_from_slice(&42u64.to_le_bytes());
        }
        ll128[4] = 1;
        assert_eq!(protocol(&ll128), Some(Protocol::Ll128));
        let simple: Vec<u8> = (0..256).map(|i| (i * 31 % 251) as u8).collect();
        assert_eq!(protocol(&simple), Some(Protocol::Simple));
        // nccl-tests' 1.0f everywhere (the shared captures' data) is no LL line.
        let ones: Vec<u8> = (0..256).map(|i| [0, 0, 0x80, 0x3f][i % 4]).collect();
        assert_eq!(protocol(&ones), Some(Protocol::Simple));
        assert_eq!(protocol(&simple[..64]), None);
    }
}
