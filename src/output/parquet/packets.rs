//! The `packets` table: one row per RoCE frame, with the per-packet fields of `read --json`
//! (src/output/json.rs) flattened into typed columns: a nested object's keys are joined to its
//! name with `_` (`bth.psn` → `bth_psn`), `ts_ns` becomes the `ts` timestamp column, the
//! `encap` array of tunnel layers is its JSON text, and a header the packet lacks is null in
//! every column of that header.
//!
//! The column names are those the field registry (src/filter/fields.rs) gives its fields: the
//! build checks that the two agree both ways, and tests/field_table.rs that the types are
//! compatible.
//!
//! Column types follow the fields' bit widths in IBTA Vol 1 §9.2–9.5 (the BTH PSN and DestQP
//! are 24 bits → UInt32, the P_Key 16 bits → UInt16, …); addresses are strings as in JSON.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray, UInt8Array, UInt16Array,
    UInt32Array, UInt64Array,
};
use arrow_schema::{ArrowError, DataType, SchemaRef};

use super::Constants;
use super::columns::{Column, Texts, UtcTimestamps, part_if, ts_type};

use crate::analyze::marks::Marks;
use crate::decode::{Address, AethKind, Frame, IcrcStatus, LinkSummary, RocePacket};
use crate::source::FrameCtx;

/// An address column: each address as `read --json` writes it, formatted once per run of
/// recent ones (most packets repeat the two ends of a few flows).
struct Addresses(StringArray);

impl FromIterator<Option<Address>> for Addresses {
    fn from_iter<I: IntoIterator<Item = Option<Address>>>(it: I) -> Self {
        let it = it.into_iter();
        let mut cache = AddrCache::default();
        let mut b = Texts::builder(it.size_hint().0);
        for a in it {
            match a {
                Some(a) => b.append_value(cache.text(&a)),
                None => b.append_null(),
            }
        }
        Addresses(b.finish())
    }
}

impl Column for Addresses {
    fn into_column(self) -> ArrayRef {
        Arc::new(self.0)
    }
}

// The parts of a row whose columns are null without them (`only` in `columns!`), one bit each.
const VLAN: u32 = 1;
const INNER_VLAN: u32 = 1 << 1;
const ENCAP: u32 = 1 << 2;
const LRH: u32 = 1 << 3;
const GRH: u32 = 1 << 4;
const RDETH: u32 = 1 << 5;
const DETH: u32 = 1 << 6;
const XRCETH: u32 = 1 << 7;
const FETH: u32 = 1 << 8;
const RETH: u32 = 1 << 9;
const ATOMIC_ETH: u32 = 1 << 10;
const AETH: u32 = 1 << 11;
const RNR_NAK: u32 = 1 << 12;
const NAK: u32 = 1 << 13;
const ATOMIC_ACK_ETH: u32 = 1 << 14;
const IMM: u32 = 1 << 15;
const IETH: u32 = 1 << 16;
const UNCHECKED: u32 = 1 << 17;
const MALFORMED: u32 = 1 << 18;

columns! {
    rows: PacketRow;
    frame: UInt64Array = DataType::UInt64, false, |r| Some(r.frame);
    ts: UtcTimestamps = ts_type(), false,
        |r| Some(i64::try_from(r.ts_ns).unwrap_or(i64::MAX));
    len: UInt32Array = DataType::UInt32, false, |r| Some(r.len);
    caplen: UInt32Array = DataType::UInt32, false, |r| Some(r.caplen);
    // As in JSON: the PCPs only with their tag.
    vlan: UInt16Array = DataType::UInt16, true, only VLAN, |r| r.link.vlan_id;
    vlan_pcp: UInt8Array = DataType::UInt8, true, only VLAN,
        |r| r.link.vlan_id.and(r.link.vlan_pcp);
    inner_vlan: UInt16Array = DataType::UInt16, true, only INNER_VLAN, |r| r.inner_vlan();
    inner_vlan_pcp: UInt8Array = DataType::UInt8, true,
        only INNER_VLAN, |r| r.inner_vlan().and(r.link.inner_vlan_pcp);
    encap: Texts = DataType::Utf8, true, only ENCAP, |r| r.encap.as_deref();
    roce: Texts = DataType::Utf8, false, |r| Some(r.p.version.name());
    src: Addresses = DataType::Utf8, false, |r| Some(r.p.src);
    dst: Addresses = DataType::Utf8, false, |r| Some(r.p.dst);
    ecn: Texts = DataType::Utf8, true, |r| r.p.ecn.map(|e| e.name());
    dscp: UInt8Array = DataType::UInt8, true, |r| r.p.dscp;
    hop_limit: UInt8Array = DataType::UInt8, true, |r| r.p.hop_limit;
    udp_src_port: UInt16Array = DataType::UInt16, true, |r| r.p.udp_src_port;
    udp_dst_port: UInt16Array = DataType::UInt16, true, |r| r.p.udp_dst_port;
    lrh_vl: UInt8Array = DataType::UInt8, true, only LRH, |r| r.p.lrh.map(|l| l.vl);
    lrh_lver: UInt8Array = DataType::UInt8, true, only LRH, |r| r.p.lrh.map(|l| l.lver);
    lrh_sl: UInt8Array = DataType::UInt8, true, only LRH, |r| r.p.lrh.map(|l| l.sl);
    lrh_lnh: UInt8Array = DataType::UInt8, true, only LRH, |r| r.p.lrh.map(|l| l.lnh);
    lrh_dlid: UInt16Array = DataType::UInt16, true, only LRH, |r| r.p.lrh.map(|l| l.dlid);
    lrh_pkt_len: UInt16Array = DataType::UInt16, true, only LRH, |r| r.p.lrh.map(|l| l.pkt_len);
    lrh_slid: UInt16Array = DataType::UInt16, true, only LRH, |r| r.p.lrh.map(|l| l.slid);
    grh_ip_ver: UInt8Array = DataType::UInt8, true, only GRH, |r| r.p.grh.map(|g| g.ip_ver);
    grh_tclass: UInt8Array = DataType::UInt8, true, only GRH, |r| r.p.grh.map(|g| g.tclass);
    grh_flow_label: UInt32Array = DataType::UInt32, true, only GRH,
        |r| r.p.grh.map(|g| g.flow_label);
    grh_pay_len: UInt16Array = DataType::UInt16, true, only GRH, |r| r.p.grh.map(|g| g.pay_len);
    grh_next_hdr: UInt8Array = DataType::UInt8, true, only GRH, |r| r.p.grh.map(|g| g.next_hdr);
    grh_hop_limit: UInt8Array = DataType::UInt8, true, only GRH, |r| r.p.grh.map(|g| g.hop_limit);
    grh_sgid: Addresses = DataType::Utf8, true, only GRH, |r| r.p.grh.map(|g| Address::Gid(g.sgid));
    grh_dgid: Addresses = DataType::Utf8, true, only GRH, |r| r.p.grh.map(|g| Address::Gid(g.dgid));
    bth_opcode: UInt8Array = DataType::UInt8, true, |r| r.p.bth.map(|t| t.opcode.0);
    bth_opcode_name: Texts = DataType::Utf8, true, |r| r.p.bth.map(|t| t.opcode.token());
    bth_se: BooleanArray = DataType::Boolean, true, |r| r.p.bth.map(|t| t.se);
    bth_m: BooleanArray = DataType::Boolean, true, |r| r.p.bth.map(|t| t.m);
    bth_pad: UInt8Array = DataType::UInt8, true, |r| r.p.bth.map(|t| t.pad);
    bth_tver: UInt8Array = DataType::UInt8, true, |r| r.p.bth.map(|t| t.tver);
    bth_pkey: UInt16Array = DataType::UInt16, true, |r| r.p.bth.map(|t| t.pkey);
    bth_fecn: BooleanArray = DataType::Boolean, true, |r| r.p.bth.map(|t| t.fecn);
    bth_becn: BooleanArray = DataType::Boolean, true, |r| r.p.bth.map(|t| t.becn);
    bth_dest_qp: UInt32Array = DataType::UInt32, true, |r| r.p.bth.map(|t| t.dest_qp);
    bth_ack_req: BooleanArray = DataType::Boolean, true, |r| r.p.bth.map(|t| t.ack_req);
    bth_psn: UInt32Array = DataType::UInt32, true, |r| r.p.bth.map(|t| t.psn);
    rdeth_ee_context: UInt32Array = DataType::UInt32, true, only RDETH,
        |r| r.p.ext.rdeth.map(|x| x.ee_context);
    deth_qkey: UInt32Array = DataType::UInt32, true, only DETH, |r| r.p.ext.deth.map(|d| d.qkey);
    deth_src_qp: UInt32Array = DataType::UInt32, true, only DETH,
        |r| r.p.ext.deth.map(|d| d.src_qp);
    xrceth_xrc_srq: UInt32Array = DataType::UInt32, true, only XRCETH,
        |r| r.p.ext.xrceth.map(|x| x.xrc_srq);
    feth_sel: UInt8Array = DataType::UInt8, true, only FETH, |r| r.p.ext.feth.map(|f| f.sel);
    feth_plt: UInt8Array = DataType::UInt8, true, only FETH, |r| r.p.ext.feth.map(|f| f.plt);
    reth_va: UInt64Array = DataType::UInt64, true, only RETH, |r| r.p.ext.reth.map(|x| x.va);
    reth_rkey: UInt32Array = DataType::UInt32, true, only RETH, |r| r.p.ext.reth.map(|x| x.rkey);
    reth_dma_len: UInt32Array = DataType::UInt32, true, only RETH,
        |r| r.p.ext.reth.map(|x| x.dma_len);
    atomic_eth_va: UInt64Array = DataType::UInt64, true, only ATOMIC_ETH,
        |r| r.p.ext.atomic_eth.map(|a| a.va);
    atomic_eth_rkey: UInt32Array = DataType::UInt32, true, only ATOMIC_ETH,
        |r| r.p.ext.atomic_eth.map(|a| a.rkey);
    atomic_eth_swap_add: UInt64Array = DataType::UInt64, true,
        only ATOMIC_ETH, |r| r.p.ext.atomic_eth.map(|a| a.swap_add);
    atomic_eth_compare: UInt64Array = DataType::UInt64, true,
        only ATOMIC_ETH, |r| r.p.ext.atomic_eth.map(|a| a.compare);
    aeth_syndrome: UInt8Array = DataType::UInt8, true, only AETH,
        |r| r.p.ext.aeth.map(|a| a.syndrome);
    aeth_kind: Texts = DataType::Utf8, true, only AETH, |r| r.aeth().map(|a| a.kind);
    aeth_value: UInt8Array = DataType::UInt8, true, only AETH,
        |r| r.p.ext.aeth.map(|a| a.syndrome & 0x1f);
    aeth_credits: UInt32Array = DataType::UInt32, true, only AETH,
        |r| r.aeth().and_then(|a| a.credits);
    aeth_rnr_timer_ms: Float64Array = DataType::Float64, true,
        only RNR_NAK, |r| r.aeth().and_then(|a| a.rnr_timer_ms);
    aeth_nak: Texts = DataType::Utf8, true, only NAK, |r| r.aeth().and_then(|a| a.nak);
    aeth_msn: UInt32Array = DataType::UInt32, true, only AETH, |r| r.p.ext.aeth.map(|a| a.msn);
    atomic_ack_eth_orig: UInt64Array = DataType::UInt64, true,
        only ATOMIC_ACK_ETH, |r| r.p.ext.atomic_ack_eth.map(|a| a.orig);
    imm: UInt32Array = DataType::UInt32, true, only IMM, |r| r.p.ext.imm;
    ieth_rkey: UInt32Array = DataType::UInt32, true, only IETH, |r| r.p.ext.ieth;
    payload_len: UInt32Array = DataType::UInt32, true, |r| r.p.bth.map(|_| r.p.payload_len);
    icrc_status: Texts = DataType::Utf8, false, |r| Some(r.p.icrc.status_name());
    icrc_reason: Texts = DataType::Utf8, true, only UNCHECKED, |r| icrc_reason(&r.p);
    icrc_value: UInt32Array = DataType::UInt32, true, |r| r.p.icrc.value;
    icrc_expected: UInt32Array = DataType::UInt32, true, |r| r.p.icrc.expected;
    malformed: Texts = DataType::Utf8, true, only MALFORMED,
        |r| r.p.malformed.map(|e| e.to_string());
    truncated: BooleanArray = DataType::Boolean, false, |r| Some(r.p.truncated);
    // As `read --marks --json`'s `analysis` object: null where the mark is not set.
    analysis_retransmission: BooleanArray = DataType::Boolean, true,
        |r| r.flag(|m| m.retransmission);
    analysis_out_of_order: BooleanArray = DataType::Boolean, true,
        |r| r.flag(|m| m.out_of_order);
    analysis_duplicate: BooleanArray = DataType::Boolean, true, |r| r.flag(|m| m.duplicate);
    analysis_after_gap: BooleanArray = DataType::Boolean, true, |r| r.flag(|m| m.gap > 0);
    analysis_gap: UInt32Array = DataType::UInt32, true,
        |r| r.marks.map(|m| m.gap).filter(|&g| g > 0);
    analysis_naked: BooleanArray = DataType::Boolean, true, |r| r.flag(|m| m.naked);
    analysis_nak_reason: Texts = DataType::Utf8, true, |r| r.marks.and_then(|m| m.nak_reason);
    analysis_ack_rtt_ns: UInt64Array = DataType::UInt64, true,
        |r| r.marks.and_then(|m| m.ack_rtt_ns);
    analysis_cnp_for: UInt64Array = DataType::UInt64, true, |r| r.marks.and_then(|m| m.cnp_for);
    analysis_message: UInt64Array = DataType::UInt64, true, |r| r.marks.and_then(|m| m.message);
}

// The columns are the registry's (src/filter/fields.rs): a column no registry field names, or
// a field's column missing here, stops the build with its name.
const _: () = crate::filter::fields::check_columns(COLUMNS);

/// The `packets` table's Arrow schema (column names and types as documented in README):
/// `capture`, `host`, then the columns of the packet.
pub fn schema() -> SchemaRef {
    super::table_schema(fields())
}

/// One packet as the export takes it: the source record's facts and the decoded frame.
#[derive(Clone, Copy, Debug)]
pub struct PacketMeta<'a> {
    /// Frame number in the file, from 1.
    pub frame: u64,
    /// Capture time, ns since the Unix epoch.
    pub ts_ns: u64,
    /// Bytes on the wire.
    pub len: u32,
    /// Bytes captured.
    pub caplen: u32,
    /// The decoded frame (its link summary with the VLAN tags, its tunnel layers).
    pub decoded: &'a Frame<'a>,
}

/// One row of the `packets` table, owned (the packet's headers without its payload bytes), so
/// that a batch of rows can be turned into columns on the writer thread.
pub struct PacketRow {
    frame: u64,
    ts_ns: u64,
    len: u32,
    caplen: u32,
    link: LinkSummary,
    /// `read --json`'s `encap` array as text; `None` without tunnel layers.
    encap: Option<String>,
    p: RocePacket<'static>,
    /// The frame's analysis marks (`None` when the export runs no analysis).
    marks: Option<Marks>,
}

/// The AETH's derived columns, as `read --json` derives them from the syndrome (IBTA Vol 1
/// Tables 43–45).
struct AethText {
    kind: &'static str,
    credits: Option<u32>,
    rnr_timer_ms: Option<f64>,
    nak: Option<&'static str>,
}

impl PacketRow {
    /// The row of `p` with the record's facts `m`.
    pub fn new(m: &PacketMeta<'_>, p: &RocePacket<'_>) -> PacketRow {
        PacketRow {
            frame: m.frame,
            ts_ns: m.ts_ns,
            len: m.len,
            caplen: m.caplen,
            link: m.decoded.link,
            encap: (!m.decoded.encap.is_empty()).then(|| {
                let ctx = FrameCtx {
                    number: m.frame,
                    ts_ns: m.ts_ns,
                    rel_ns: 0,
                    caplen: m.caplen,
                    len: m.len,
                };
                crate::output::json::encap_json(&ctx, m.decoded)
            }),
            p: RocePacket { payload: &[], ..*p },
            marks: None,
        }
    }

    /// Set the row's analysis marks.
    pub fn set_marks(&mut self, m: Marks) {
        self.marks = Some(m);
    }

    /// A NAK that came after the row named its PSN (a late mark).
    pub fn mark_naked(&mut self) {
        if let Some(m) = &mut self.marks {
            m.naked = true;
        }
    }

    /// A flag mark as a column value: `true`, or null when unset (as JSON leaves it out).
    fn flag(&self, f: impl Fn(&Marks) -> bool) -> Option<bool> {
        self.marks.as_ref().filter(|m| f(m)).map(|_| true)
    }

    /// The parts (`VLAN`, `GRH`, …) this row has.
    fn parts(&self) -> u32 {
        let (p, x) = (&self.p, &self.p.ext);
        let aeth = match x.aeth.map(|a| a.kind()) {
            None => 0,
            Some(AethKind::RnrNak { .. }) => AETH | RNR_NAK,
            Some(AethKind::Nak(_)) => AETH | NAK,
            Some(_) => AETH,
        };
        aeth | part_if(self.link.vlan_id.is_some(), VLAN)
            | part_if(self.inner_vlan().is_some(), INNER_VLAN)
            | part_if(self.encap.is_some(), ENCAP)
            | part_if(p.lrh.is_some(), LRH)
            | part_if(p.grh.is_some(), GRH)
            | part_if(x.rdeth.is_some(), RDETH)
            | part_if(x.deth.is_some(), DETH)
            | part_if(x.xrceth.is_some(), XRCETH)
            | part_if(x.feth.is_some(), FETH)
            | part_if(x.reth.is_some(), RETH)
            | part_if(x.atomic_eth.is_some(), ATOMIC_ETH)
            | part_if(x.atomic_ack_eth.is_some(), ATOMIC_ACK_ETH)
            | part_if(x.imm.is_some(), IMM)
            | part_if(x.ieth.is_some(), IETH)
            | part_if(icrc_reason(p).is_some(), UNCHECKED)
            | part_if(p.malformed.is_some(), MALFORMED)
    }

    fn inner_vlan(&self) -> Option<u16> {
        self.link.vlan_id.and(self.link.inner_vlan_id)
    }

    fn aeth(&self) -> Option<AethText> {
        let k = self.p.ext.aeth?.kind();
        Some(AethText {
            kind: k.name(),
            credits: match k {
                AethKind::Ack { credits, .. } => credits,
                _ => None,
            },
            rnr_timer_ms: match k {
                AethKind::RnrNak { timer_us, .. } => Some(timer_us as f64 / 1000.0),
                _ => None,
            },
            nak: match k {
                AethKind::Nak(c) => Some(c.name()),
                _ => None,
            },
        })
    }
}

fn icrc_reason(p: &RocePacket<'_>) -> Option<&'static str> {
    match p.icrc.status {
        IcrcStatus::Unchecked(r) => Some(r.name()),
        _ => None,
    }
}

/// Rows of the `packets` table collected for one record batch.
#[derive(Default)]
pub struct PacketRows {
    rows: Vec<PacketRow>,
}

impl PacketRows {
    /// Empty rows.
    pub fn new() -> PacketRows {
        PacketRows::default()
    }

    /// Rows collected since the last [`PacketRows::take`].
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row was collected since the last batch.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Append one RoCE packet.
    pub fn push(&mut self, m: &PacketMeta<'_>, p: &RocePacket<'_>) {
        self.rows.push(PacketRow::new(m, p));
    }

    /// Append one row (made by [`PacketRow::new`], its marks set).
    pub fn push_row(&mut self, r: PacketRow) {
        self.rows.push(r);
    }

    /// The rows collected so far (to be turned into a batch by [`batch`]); the rows start
    /// again empty, with room for as many.
    pub fn take(&mut self) -> Vec<PacketRow> {
        let room = Vec::with_capacity(self.rows.len());
        std::mem::replace(&mut self.rows, room)
    }

    /// The rows collected so far as a record batch of `capture` taken on `host` (for tests:
    /// the export hands the rows to its writer's thread, [`PacketRows::take`]).
    ///
    /// # Errors
    /// Arrow's error if the columns disagree with the schema (a bug).
    #[cfg(test)]
    pub fn take_batch(&mut self, capture: &str, host: &str) -> Result<RecordBatch, ArrowError> {
        batch(&schema(), &self.take(), &mut Constants::new(capture, host))
    }
}

/// `rows` as a record batch of `schema` (from [`schema`]), after the
/// `capture` and `host` columns of `constants`.
///
/// # Errors
/// Arrow's error if the columns disagree with the schema (a bug).
pub fn batch(
    schema: &SchemaRef,
    rows: &[PacketRow],
    constants: &mut Constants,
) -> Result<RecordBatch, ArrowError> {
    let present = rows.iter().fold(0, |m, r| m | r.parts());
    super::table_batch(schema, constants, rows.len(), arrays(rows, present))
}

/// The text of the last few addresses seen (as `read --json` writes them).
#[derive(Default)]
struct AddrCache {
    slots: [(Option<Address>, String); 4],
    next: usize,
}

impl AddrCache {
    /// `a` as text, formatted only when it is not among the last four.
    fn text(&mut self, a: &Address) -> &str {
        let i = match self.slots.iter().position(|(k, _)| *k == Some(*a)) {
            Some(i) => i,
            None => {
                let i = self.next;
                self.next = (i + 1) % self.slots.len();
                let slot = &mut self.slots[i];
                slot.1.clear();
                let _ = write!(slot.1, "{a}");
                slot.0 = Some(*a);
                i
            }
        };
        &self.slots[i].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::test_util::hex;
    use crate::decode::{Aeth, DecodeConfig, LinkType, decode_frame};
    use arrow_array::cast::AsArray;
    use arrow_array::types::{TimestampNanosecondType, UInt8Type, UInt32Type};

    /// The ConnectX-4 Lx CNP of spec/roce.md §4 (the same frame as the JSON printer's test).
    const CNP: &str = "e41d2dab2bc27cfe90643b320800 45c2003c718c400040119161 0a001101 0a001201 \
                       000012b700280000 8100ffff40000118 00000000 00000000000000000000000000000000 82fd002a";

    /// Rows of many kinds: every extended header (IBTA Vol 1 §9.3 layouts, by opcode), the
    /// three AETH kinds, RoCEv1's GRH, an LRH, VLAN tags, a cut frame (ICRC unchecked) and a
    /// malformed one.
    fn rows_of_every_part() -> Vec<PacketRow> {
        use crate::decode::Lrh;
        use crate::decode::Opcode;
        use crate::synth::frame::{Bth, Net, Packet, VlanTag};
        let mut frames = Vec::new();
        // WRITE ONLY (RETH), CmpSwap (AtomicETH), ATOMIC ACK (AETH + AtomicAckETH), SEND ONLY
        // WITH IMMEDIATE, SEND ONLY WITH INVALIDATE (IETH), UD SEND ONLY (DETH), RD SEND ONLY
        // (RDETH + DETH), XRC SEND ONLY (XRCETH), FLUSH (FETH + RETH).
        for opcode in [0x0a, 0x13, 0x12, 0x05, 0x17, 0x64, 0x44, 0xa4, 0x1c] {
            let bth = Bth {
                opcode: Opcode(opcode),
                dest_qp: 0x11,
                ..Bth::default()
            };
            frames.push(Packet::v4([10, 0, 0, 1], [10, 0, 0, 2], bth));
        }
        // ACK, RNR NAK, NAK (remote access error).
        for syndrome in [0x1f, 0x2e, 0x62] {
            let bth = Bth {
                opcode: Opcode(0x11),
                ..Bth::default()
            };
            let mut p = Packet::v4([10, 0, 0, 2], [10, 0, 0, 1], bth);
            p.ext.aeth = Aeth { syndrome, msn: 5 };
            frames.push(p);
        }
        let mut v1 = Packet::v4([0; 4], [0; 4], Bth::default());
        v1.net = Net::Grh {
            sgid: [0xfe; 16],
            dgid: [0x80; 16],
            tclass: 2,
            flow_label: 7,
            hop_limit: 64,
        };
        frames.push(v1);
        let mut tagged = Packet::v4([10, 0, 0, 1], [10, 0, 0, 2], Bth::default());
        tagged.eth.tags = vec![VlanTag::dot1q(100, 3)];
        frames.push(tagged.clone());
        tagged.eth.tags.push(VlanTag::dot1q(200, 5));
        frames.push(tagged);
        let mut bytes: Vec<Vec<u8>> = frames.iter().map(Packet::build).collect();
        let whole = bytes[0].clone();
        bytes.push(whole[..whole.len() - 10].to_vec()); // cut: ICRC unchecked
        let mut short = whole.clone(); // UDP length says fewer bytes than a BTH
        short[38..40].copy_from_slice(&12u16.to_be_bytes());
        bytes.push(short);
        let cfg = DecodeConfig::default();
        let mut rows = Vec::new();
        for b in &bytes {
            let f = decode_frame(LinkType::ETHERNET, b, whole.len().max(b.len()) as u32, &cfg);
            let p = f.roce().expect("a RoCE packet");
            let meta = PacketMeta {
                frame: rows.len() as u64 + 1,
                ts_ns: 1,
                len: b.len() as u32,
                caplen: b.len() as u32,
                decoded: &f,
            };
            rows.push(PacketRow::new(&meta, p));
        }
        // Untagged, not tunnelled: the IB row's link and encap columns are null.
        let plain = decode_frame(LinkType::ETHERNET, &whole, whole.len() as u32, &cfg);
        let mut ib = PacketRow::new(
            &PacketMeta {
                frame: 99,
                ts_ns: 1,
                len: 1,
                caplen: 1,
                decoded: &plain,
            },
            &rows[0].p,
        );
        ib.p.lrh = Some(Lrh {
            vl: 1,
            lver: 0,
            sl: 2,
            lnh: 2,
            dlid: 3,
            pkt_len: 4,
            slid: 5,
        });
        // Every analysis mark (the analysis columns have no part: null where unset).
        ib.set_marks(Marks {
            retransmission: true,
            out_of_order: true,
            duplicate: true,
            gap: 2,
            naked: true,
            nak_reason: Some("psn_seq_err"),
            ack_rtt_ns: Some(900),
            cnp_for: Some(4),
            message: Some(1),
        });
        rows.push(ib);
        rows
    }

    /// A column left null because no row of the batch has its part (`only` in `columns!`)
    /// equals the column built from the rows: for each row alone, and for all of them.
    #[test]
    fn columns_of_absent_parts_are_the_nulls_the_rows_give() {
        let rows = rows_of_every_part();
        let all = rows.iter().fold(0, |m, r| m | r.parts());
        let names: Vec<String> = fields().iter().map(|f| f.name().clone()).collect();
        let mut seen = vec![false; names.len()];
        for i in 0..=rows.len() {
            let batch = if i < rows.len() {
                &rows[i..=i]
            } else {
                &rows[..]
            };
            let present = batch.iter().fold(0, |m, r| m | r.parts());
            let gated = arrays(batch, present);
            let built = arrays(batch, u32::MAX);
            for (c, (g, b)) in gated.iter().zip(&built).enumerate() {
                assert_eq!(g.to_data(), b.to_data(), "row {i}, column {}", names[c]);
                seen[c] |= b.null_count() < b.len();
            }
        }
        // The rows give every column a value somewhere (except `encap`: no tunnel here), so
        // every part was checked in some row.
        for (c, n) in names.iter().enumerate() {
            assert!(seen[c] || n == "encap", "no row has a value in {n}");
        }
        assert_eq!(all & !ENCAP, MALFORMED * 2 - 1 - ENCAP);
    }

    #[test]
    fn cnp_row_has_spec_values_and_nulls_for_absent_headers() {
        let bytes = hex(CNP);
        let f = decode_frame(
            LinkType::ETHERNET,
            &bytes,
            bytes.len() as u32,
            &DecodeConfig::default(),
        );
        let p = f.roce().unwrap();
        let meta = PacketMeta {
            frame: 7,
            ts_ns: 1_000_000_123,
            len: bytes.len() as u32,
            caplen: bytes.len() as u32,
            decoded: &f,
        };
        let mut rows = PacketRows::new();
        rows.push(&meta, p);
        let batch = rows.take_batch("cnp.pcap", "h1").unwrap();
        assert_eq!(batch.num_rows(), 1);
        assert!(rows.is_empty());
        let col = |n: &str| batch.column_by_name(n).unwrap().clone();
        assert_eq!(
            col("ts").as_primitive::<TimestampNanosecondType>().value(0),
            1_000_000_123
        );
        assert_eq!(col("src").as_string::<i32>().value(0), "10.0.17.1");
        assert_eq!(col("ecn").as_string::<i32>().value(0), "ect0");
        // TOS 0xC2: DSCP 48.
        assert_eq!(col("dscp").as_primitive::<UInt8Type>().value(0), 48);
        assert_eq!(col("bth_opcode").as_primitive::<UInt8Type>().value(0), 0x81);
        assert_eq!(
            col("bth_dest_qp").as_primitive::<UInt32Type>().value(0),
            0x118
        );
        assert!(col("bth_becn").as_boolean().value(0));
        assert_eq!(
            col("icrc_value").as_primitive::<UInt32Type>().value(0),
            0x2a00fd82
        );
        for absent in ["vlan", "lrh_vl", "grh_sgid", "reth_va", "aeth_kind", "imm"] {
            assert!(col(absent).is_null(0), "{absent} should be null");
        }
    }
}
