//! The `packets` table: one row per RoCE frame, with the per-packet fields of `read --json`
//! (src/output/json.rs) flattened into typed columns: a nested object's keys are joined to its
//! name with `_` (`bth.psn` → `bth_psn`), `ts_ns` becomes the `ts` timestamp column, the
//! `encap` array of tunnel layers is its JSON text, and a header the packet lacks is null in
//! every column of that header.
//!
//! Column types follow the fields' bit widths in IBTA Vol 1 §9.2–9.5 (the BTH PSN and DestQP
//! are 24 bits → UInt32, the P_Key 16 bits → UInt16, …); addresses are strings as in JSON.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Float64Builder, StringBuilder, TimestampNanosecondBuilder,
    UInt8Builder, UInt16Builder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};

use crate::decode::{
    Address, AethKind, Encap, ExtHeaders, IcrcStatus, LinkSummary, RocePacket, UncheckedReason,
};

/// The Arrow type of `ts`: ns since the Unix epoch, UTC (Parquet `TIMESTAMP(NANOS, true)`).
fn ts_type() -> DataType {
    DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
}

/// Declares the column builders, the schema (same order) and `finish`, from one list.
macro_rules! columns {
    ($( $name:ident : $builder:ty = $dt:expr, $nullable:expr; )*) => {
        /// One builder per column, in schema order.
        struct Builders { $( $name: $builder, )* }

        impl Builders {
            fn new() -> Builders {
                Builders { $( $name: <$builder>::default(), )* }
            }

            fn fields() -> Vec<Field> {
                vec![ $( Field::new(stringify!($name), $dt, $nullable), )* ]
            }

            fn finish(&mut self) -> Vec<ArrayRef> {
                vec![ $( ArrayBuilder::finish(&mut self.$name), )* ]
            }
        }
    };
}

columns! {
    capture: StringBuilder = DataType::Utf8, false;
    host: StringBuilder = DataType::Utf8, false;
    frame: UInt64Builder = DataType::UInt64, false;
    ts: TimestampNanosecondBuilder = ts_type(), false;
    len: UInt32Builder = DataType::UInt32, false;
    caplen: UInt32Builder = DataType::UInt32, false;
    vlan: UInt16Builder = DataType::UInt16, true;
    vlan_pcp: UInt8Builder = DataType::UInt8, true;
    inner_vlan: UInt16Builder = DataType::UInt16, true;
    inner_vlan_pcp: UInt8Builder = DataType::UInt8, true;
    encap: StringBuilder = DataType::Utf8, true;
    roce: StringBuilder = DataType::Utf8, false;
    src: StringBuilder = DataType::Utf8, false;
    dst: StringBuilder = DataType::Utf8, false;
    ecn: StringBuilder = DataType::Utf8, true;
    dscp: UInt8Builder = DataType::UInt8, true;
    hop_limit: UInt8Builder = DataType::UInt8, true;
    udp_src_port: UInt16Builder = DataType::UInt16, true;
    udp_dst_port: UInt16Builder = DataType::UInt16, true;
    lrh_vl: UInt8Builder = DataType::UInt8, true;
    lrh_lver: UInt8Builder = DataType::UInt8, true;
    lrh_sl: UInt8Builder = DataType::UInt8, true;
    lrh_lnh: UInt8Builder = DataType::UInt8, true;
    lrh_dlid: UInt16Builder = DataType::UInt16, true;
    lrh_pkt_len: UInt16Builder = DataType::UInt16, true;
    lrh_slid: UInt16Builder = DataType::UInt16, true;
    grh_ip_ver: UInt8Builder = DataType::UInt8, true;
    grh_tclass: UInt8Builder = DataType::UInt8, true;
    grh_flow_label: UInt32Builder = DataType::UInt32, true;
    grh_pay_len: UInt16Builder = DataType::UInt16, true;
    grh_next_hdr: UInt8Builder = DataType::UInt8, true;
    grh_hop_limit: UInt8Builder = DataType::UInt8, true;
    grh_sgid: StringBuilder = DataType::Utf8, true;
    grh_dgid: StringBuilder = DataType::Utf8, true;
    bth_opcode: UInt8Builder = DataType::UInt8, true;
    bth_opcode_name: StringBuilder = DataType::Utf8, true;
    bth_se: BooleanBuilder = DataType::Boolean, true;
    bth_m: BooleanBuilder = DataType::Boolean, true;
    bth_pad: UInt8Builder = DataType::UInt8, true;
    bth_tver: UInt8Builder = DataType::UInt8, true;
    bth_pkey: UInt16Builder = DataType::UInt16, true;
    bth_fecn: BooleanBuilder = DataType::Boolean, true;
    bth_becn: BooleanBuilder = DataType::Boolean, true;
    bth_dest_qp: UInt32Builder = DataType::UInt32, true;
    bth_ack_req: BooleanBuilder = DataType::Boolean, true;
    bth_psn: UInt32Builder = DataType::UInt32, true;
    rdeth_ee_context: UInt32Builder = DataType::UInt32, true;
    deth_qkey: UInt32Builder = DataType::UInt32, true;
    deth_src_qp: UInt32Builder = DataType::UInt32, true;
    xrceth_xrc_srq: UInt32Builder = DataType::UInt32, true;
    feth_sel: UInt8Builder = DataType::UInt8, true;
    feth_plt: UInt8Builder = DataType::UInt8, true;
    reth_va: UInt64Builder = DataType::UInt64, true;
    reth_rkey: UInt32Builder = DataType::UInt32, true;
    reth_dma_len: UInt32Builder = DataType::UInt32, true;
    atomic_eth_va: UInt64Builder = DataType::UInt64, true;
    atomic_eth_rkey: UInt32Builder = DataType::UInt32, true;
    atomic_eth_swap_add: UInt64Builder = DataType::UInt64, true;
    atomic_eth_compare: UInt64Builder = DataType::UInt64, true;
    aeth_syndrome: UInt8Builder = DataType::UInt8, true;
    aeth_kind: StringBuilder = DataType::Utf8, true;
    aeth_value: UInt8Builder = DataType::UInt8, true;
    aeth_credits: UInt32Builder = DataType::UInt32, true;
    aeth_rnr_timer_ms: Float64Builder = DataType::Float64, true;
    aeth_nak: StringBuilder = DataType::Utf8, true;
    aeth_msn: UInt32Builder = DataType::UInt32, true;
    atomic_ack_eth_orig: UInt64Builder = DataType::UInt64, true;
    imm: UInt32Builder = DataType::UInt32, true;
    ieth_rkey: UInt32Builder = DataType::UInt32, true;
    payload_len: UInt32Builder = DataType::UInt32, true;
    icrc_status: StringBuilder = DataType::Utf8, false;
    icrc_reason: StringBuilder = DataType::Utf8, true;
    icrc_value: UInt32Builder = DataType::UInt32, true;
    icrc_expected: UInt32Builder = DataType::UInt32, true;
    malformed: StringBuilder = DataType::Utf8, true;
    truncated: BooleanBuilder = DataType::Boolean, false;
}

/// The `packets` table's Arrow schema (column names and types as documented in README).
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(Builders::fields()))
}

/// Capture-level facts of one packet (from the source record).
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
    /// Link-layer summary (VLAN tags).
    pub link: &'a LinkSummary,
    /// Tunnel layers (GRE, ERSPAN, VXLAN) around the packet.
    pub encap: &'a Encap,
}

/// Rows of the `packets` table being collected into one record batch.
pub struct PacketRows {
    b: Builders,
    schema: SchemaRef,
    rows: usize,
    /// Recent addresses and their text: most packets repeat the two ends of a few flows.
    addr_cache: AddrCache,
}

impl PacketRows {
    /// Empty rows.
    pub fn new() -> PacketRows {
        let mut b = Builders::new();
        b.ts = TimestampNanosecondBuilder::new().with_timezone("UTC");
        PacketRows {
            b,
            schema: schema(),
            rows: 0,
            addr_cache: Default::default(),
        }
    }

    /// Rows collected since the last [`PacketRows::take_batch`].
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether no row was collected since the last batch.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Append one RoCE packet as a row of `capture` taken on `host`.
    pub fn push(&mut self, capture: &str, host: &str, m: &PacketMeta<'_>, p: &RocePacket<'_>) {
        self.rows += 1;
        let b = &mut self.b;
        b.capture.append_value(capture);
        b.host.append_value(host);
        b.frame.append_value(m.frame);
        b.ts.append_value(i64::try_from(m.ts_ns).unwrap_or(i64::MAX));
        b.len.append_value(m.len);
        b.caplen.append_value(m.caplen);
        link(b, m.link);
        if m.encap.is_empty() {
            b.encap.append_null();
        } else {
            b.encap
                .append_value(crate::output::json::encap_json(m.encap));
        }
        b.roce.append_value(p.version.name());
        b.src.append_value(self.addr_cache.text(&p.src));
        b.dst.append_value(self.addr_cache.text(&p.dst));
        b.ecn.append_option(p.ecn.map(|e| e.name()));
        b.dscp.append_option(p.dscp);
        b.hop_limit.append_option(p.hop_limit);
        b.udp_src_port.append_option(p.udp_src_port);
        b.udp_dst_port.append_option(p.udp_dst_port);
        lrh(b, p);
        grh(b, p);
        bth(b, p);
        ext(b, &p.ext);
        aeth(b, &p.ext);
        b.payload_len.append_option(p.bth.map(|_| p.payload_len));
        icrc(b, p);
        match &p.malformed {
            Some(e) => {
                let _ = write!(b.malformed, "{e}");
                b.malformed.append_value("");
            }
            None => b.malformed.append_null(),
        }
        b.truncated.append_value(p.truncated);
    }

    /// The rows collected so far as a record batch; the rows start again empty.
    ///
    /// # Errors
    /// Arrow's error if the columns disagree with the schema (a bug).
    pub fn take_batch(&mut self) -> Result<RecordBatch, ArrowError> {
        self.rows = 0;
        RecordBatch::try_new(self.schema.clone(), self.b.finish())
    }
}

impl Default for PacketRows {
    fn default() -> Self {
        PacketRows::new()
    }
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

fn link(b: &mut Builders, l: &LinkSummary) {
    // As in JSON: the PCPs only with their tag.
    b.vlan.append_option(l.vlan_id);
    b.vlan_pcp.append_option(l.vlan_id.and(l.vlan_pcp));
    let inner = l.vlan_id.and(l.inner_vlan_id);
    b.inner_vlan.append_option(inner);
    b.inner_vlan_pcp.append_option(inner.and(l.inner_vlan_pcp));
}

fn lrh(b: &mut Builders, p: &RocePacket<'_>) {
    let l = p.lrh.as_ref();
    b.lrh_vl.append_option(l.map(|l| l.vl));
    b.lrh_lver.append_option(l.map(|l| l.lver));
    b.lrh_sl.append_option(l.map(|l| l.sl));
    b.lrh_lnh.append_option(l.map(|l| l.lnh));
    b.lrh_dlid.append_option(l.map(|l| l.dlid));
    b.lrh_pkt_len.append_option(l.map(|l| l.pkt_len));
    b.lrh_slid.append_option(l.map(|l| l.slid));
}

fn grh(b: &mut Builders, p: &RocePacket<'_>) {
    let g = p.grh.as_ref();
    b.grh_ip_ver.append_option(g.map(|g| g.ip_ver));
    b.grh_tclass.append_option(g.map(|g| g.tclass));
    b.grh_flow_label.append_option(g.map(|g| g.flow_label));
    b.grh_pay_len.append_option(g.map(|g| g.pay_len));
    b.grh_next_hdr.append_option(g.map(|g| g.next_hdr));
    b.grh_hop_limit.append_option(g.map(|g| g.hop_limit));
    match g {
        Some(g) => {
            let _ = write!(b.grh_sgid, "{}", Address::Gid(g.sgid));
            b.grh_sgid.append_value("");
            let _ = write!(b.grh_dgid, "{}", Address::Gid(g.dgid));
            b.grh_dgid.append_value("");
        }
        None => {
            b.grh_sgid.append_null();
            b.grh_dgid.append_null();
        }
    }
}

fn bth(b: &mut Builders, p: &RocePacket<'_>) {
    let t = p.bth.as_ref();
    b.bth_opcode.append_option(t.map(|t| t.opcode.0));
    b.bth_opcode_name.append_option(t.map(|t| t.opcode.token()));
    b.bth_se.append_option(t.map(|t| t.se));
    b.bth_m.append_option(t.map(|t| t.m));
    b.bth_pad.append_option(t.map(|t| t.pad));
    b.bth_tver.append_option(t.map(|t| t.tver));
    b.bth_pkey.append_option(t.map(|t| t.pkey));
    b.bth_fecn.append_option(t.map(|t| t.fecn));
    b.bth_becn.append_option(t.map(|t| t.becn));
    b.bth_dest_qp.append_option(t.map(|t| t.dest_qp));
    b.bth_ack_req.append_option(t.map(|t| t.ack_req));
    b.bth_psn.append_option(t.map(|t| t.psn));
}

fn ext(b: &mut Builders, e: &ExtHeaders) {
    b.rdeth_ee_context
        .append_option(e.rdeth.map(|r| r.ee_context));
    b.deth_qkey.append_option(e.deth.map(|d| d.qkey));
    b.deth_src_qp.append_option(e.deth.map(|d| d.src_qp));
    b.xrceth_xrc_srq.append_option(e.xrceth.map(|x| x.xrc_srq));
    b.feth_sel.append_option(e.feth.map(|f| f.sel));
    b.feth_plt.append_option(e.feth.map(|f| f.plt));
    b.reth_va.append_option(e.reth.map(|r| r.va));
    b.reth_rkey.append_option(e.reth.map(|r| r.rkey));
    b.reth_dma_len.append_option(e.reth.map(|r| r.dma_len));
    let a = e.atomic_eth.as_ref();
    b.atomic_eth_va.append_option(a.map(|a| a.va));
    b.atomic_eth_rkey.append_option(a.map(|a| a.rkey));
    b.atomic_eth_swap_add.append_option(a.map(|a| a.swap_add));
    b.atomic_eth_compare.append_option(a.map(|a| a.compare));
    b.atomic_ack_eth_orig
        .append_option(e.atomic_ack_eth.map(|a| a.orig));
    b.imm.append_option(e.imm);
    b.ieth_rkey.append_option(e.ieth);
}

/// AETH columns; `kind`, `value`, `credits`, `rnr_timer_ms` and `nak` as `read --json` derives
/// them from the syndrome (IBTA Vol 1 Tables 43–45).
fn aeth(b: &mut Builders, e: &ExtHeaders) {
    let Some(a) = &e.aeth else {
        b.aeth_syndrome.append_null();
        b.aeth_kind.append_null();
        b.aeth_value.append_null();
        b.aeth_credits.append_null();
        b.aeth_rnr_timer_ms.append_null();
        b.aeth_nak.append_null();
        b.aeth_msn.append_null();
        return;
    };
    b.aeth_syndrome.append_value(a.syndrome);
    b.aeth_value.append_value(a.syndrome & 0x1f);
    let (kind, credits, timer_ms, nak) = match a.kind() {
        AethKind::Ack { credits, .. } => ("ack", credits, None, None),
        AethKind::RnrNak { timer_us, .. } => {
            ("rnr_nak", None, Some(timer_us as f64 / 1000.0), None)
        }
        AethKind::Nak(c) => ("nak", None, None, Some(c.name())),
        AethKind::Reserved => ("reserved", None, None, None),
    };
    b.aeth_kind.append_value(kind);
    b.aeth_credits.append_option(credits);
    b.aeth_rnr_timer_ms.append_option(timer_ms);
    b.aeth_nak.append_option(nak);
    b.aeth_msn.append_value(a.msn);
}

fn icrc(b: &mut Builders, p: &RocePacket<'_>) {
    b.icrc_status.append_value(p.icrc.status_name());
    b.icrc_reason.append_option(match p.icrc.status {
        IcrcStatus::Unchecked(UncheckedReason::Truncated) => Some("truncated"),
        IcrcStatus::Unchecked(UncheckedReason::Malformed) => Some("malformed"),
        IcrcStatus::Unchecked(UncheckedReason::NoRule) => Some("no-rule"),
        _ => None,
    });
    b.icrc_value.append_option(p.icrc.value);
    b.icrc_expected.append_option(p.icrc.expected);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::test_util::hex;
    use crate::decode::{DecodeConfig, LinkType, decode_frame};
    use arrow_array::cast::AsArray;
    use arrow_array::types::{TimestampNanosecondType, UInt8Type, UInt32Type};

    /// The ConnectX-4 Lx CNP of spec/roce.md §4 (the same frame as the JSON printer's test).
    const CNP: &str = "e41d2dab2bc27cfe90643b320800 45c2003c718c400040119161 0a001101 0a001201 \
                       000012b700280000 8100ffff40000118 00000000 00000000000000000000000000000000 82fd002a";

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
            link: &f.link,
            encap: &f.encap,
        };
        let mut rows = PacketRows::new();
        rows.push("cnp.pcap", "h1", &meta, p);
        let batch = rows.take_batch().unwrap();
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
