//! `--json`: one JSON object per packet per line (NDJSON). The schema is documented in README
//! ("JSON output"); names follow Wireshark's `infiniband.*` field names where they exist.
//!
//! Lines are emitted directly into a reused [`Line`] buffer rather than through serde: keys are
//! static ASCII, values are integers, booleans and strings we produce ourselves (the few free-text
//! strings go through [`Line::json_str`]): escaping every key dominated `serde_json` with
//! borrowed views (docs/perf.md). The tests parse the output with `serde_json` and compare it
//! field by field with the decoder's values.

use std::io::{self, Write};

use super::line::Line;
use super::{FrameCtx, Printer};
use crate::decode::encap::GreInfo;
use crate::decode::{
    AethKind, Encap, EncapKind, Frame, FrameKind, IcrcStatus, OtherKind, RocePacket,
};

/// The NDJSON printer. `out` needs no buffering: lines collect in the printer's own buffer.
pub struct JsonPrinter<W: Write> {
    out: W,
    line: Line,
}

impl<W: Write> JsonPrinter<W> {
    /// A printer writing to `out` (give it a buffered writer).
    pub fn new(out: W) -> Self {
        JsonPrinter {
            out,
            line: Line::new(),
        }
    }
}

impl<W: Write> Printer for JsonPrinter<W> {
    fn frame(&mut self, ctx: &FrameCtx, frame: &Frame<'_>) -> io::Result<()> {
        write_frame(&mut self.line, ctx, frame);
        self.line.spill(&mut self.out)
    }

    fn frame_marked(
        &mut self,
        ctx: &FrameCtx,
        frame: &Frame<'_>,
        marks: &crate::analyze::marks::Marks,
    ) -> io::Result<()> {
        write_frame(&mut self.line, ctx, frame);
        super::marks::append_json(&mut self.line, marks);
        self.line.spill(&mut self.out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.line.drain(&mut self.out)?;
        self.out.flush()
    }
}

/// A JSON object being written: tracks whether a comma is needed.
struct Obj<'a> {
    l: &'a mut Line,
    first: bool,
}

impl<'a> Obj<'a> {
    #[inline(always)]
    fn open(l: &'a mut Line) -> Obj<'a> {
        l.s("{");
        Obj { l, first: true }
    }
    #[inline(always)]
    fn key(&mut self, k: &str) -> &mut Line {
        if !self.first {
            self.l.buf.push(b',');
        }
        self.first = false;
        self.l.buf.push(b'"');
        self.l.s(k);
        self.l.buf.extend_from_slice(b"\":");
        self.l
    }
    #[inline(always)]
    fn u(&mut self, k: &str, v: u64) {
        self.key(k).u(v);
    }
    #[inline(always)]
    fn b(&mut self, k: &str, v: bool) {
        self.key(k).s(if v { "true" } else { "false" });
    }
    /// A string known to need no escaping (our own ASCII names).
    #[inline(always)]
    fn name(&mut self, k: &str, v: &str) {
        self.key(k).s("\"").s(v).s("\"");
    }
    #[inline(always)]
    fn null(&mut self, k: &str) {
        self.key(k).s("null");
    }
    #[inline(always)]
    fn opt_u(&mut self, k: &str, v: Option<u64>) {
        match v {
            Some(v) => self.u(k, v),
            None => self.null(k),
        }
    }
    #[inline(always)]
    fn addr(&mut self, k: &str, a: &crate::decode::Address) {
        self.key(k).s("\"").addr(a).s("\"");
    }
    #[inline(always)]
    fn obj(&mut self, k: &str) -> Obj<'_> {
        self.key(k);
        Obj::open(self.l)
    }
    #[inline(always)]
    fn close(self) {
        self.l.s("}");
    }
}

/// Append the JSON object for `frame`, newline included.
pub fn write_frame(l: &mut Line, ctx: &FrameCtx, frame: &Frame<'_>) {
    let mut o = Obj::open(l);
    o.u("frame", ctx.number);
    o.u("ts_ns", ctx.ts_ns);
    o.u("len", ctx.len as u64);
    o.u("caplen", ctx.caplen as u64);
    let link = &frame.link;
    if let Some(id) = link.vlan_id {
        o.u("vlan", id as u64);
        o.opt_u("vlan_pcp", link.vlan_pcp.map(u64::from));
        if let Some(inner) = link.inner_vlan_id {
            o.u("inner_vlan", inner as u64);
            o.opt_u("inner_vlan_pcp", link.inner_vlan_pcp.map(u64::from));
        }
    }
    if !frame.encap.is_empty() {
        encap(&mut o, &frame.encap);
    }
    match &frame.kind {
        FrameKind::Roce(p) => roce(&mut o, p),
        FrameKind::Other(k) => {
            o.null("roce");
            if let Some(n) = frame.net() {
                o.addr("src", &n.src);
                o.addr("dst", &n.dst);
            }
            other(&mut o, k);
        }
    }
    o.close();
    l.s("\n");
}

fn other(o: &mut Obj<'_>, k: &OtherKind) {
    match k {
        OtherKind::Udp { src_port, dst_port } => {
            o.name("proto", "udp");
            o.u("src_port", *src_port as u64);
            o.u("dst_port", *dst_port as u64);
        }
        OtherKind::Tcp { src_port, dst_port } => {
            o.name("proto", "tcp");
            o.u("src_port", *src_port as u64);
            o.u("dst_port", *dst_port as u64);
        }
        OtherKind::Ip { protocol } => o.u("ip_proto", *protocol as u64),
        OtherKind::Arp => o.name("proto", "arp"),
        OtherKind::EtherType(t) => o.u("ethertype", *t as u64),
        OtherKind::IbNonIba => o.name("proto", "ib-non-iba"),
        OtherKind::ErfType(t) => o.u("erf_type", *t as u64),
        OtherKind::Undecodable(u) => {
            let msg = u.to_string();
            match u {
                u if u.is_truncation() => o.b("truncated", true),
                _ => {
                    o.key("malformed").json_str(&msg);
                }
            }
            o.key("error").json_str(&msg);
        }
    }
}

/// The `encap` array's JSON text, as in a packet's line (the Parquet export's `encap` column).
pub fn encap_json(e: &Encap) -> String {
    let mut l = Line::new();
    let mut o = Obj::open(&mut l);
    encap(&mut o, e);
    o.close();
    // `{"encap":[…]}` → `[…]`.
    let text = String::from_utf8_lossy(&l.buf);
    text.strip_prefix("{\"encap\":")
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or_default()
        .to_string()
}

/// `encap`: the tunnel layers, outermost first (README "JSON output").
fn encap(o: &mut Obj<'_>, e: &Encap) {
    o.key("encap").s("[");
    for (i, layer) in e.layers().enumerate() {
        if i > 0 {
            o.l.s(",");
        }
        let mut t = Obj::open(o.l);
        t.name("type", layer.kind.name());
        t.addr("src", &layer.src);
        t.addr("dst", &layer.dst);
        if i == 0
            && let Some(id) = e.outer_link.and_then(|l| l.vlan_id)
        {
            t.u("carrier_vlan", id as u64);
        }
        encap_kind(&mut t, &layer.kind);
        t.close();
    }
    o.l.s("]");
}

fn gre(o: &mut Obj<'_>, g: &GreInfo) {
    o.u("gre_proto", g.protocol as u64);
    if let Some(c) = g.checksum {
        o.u("gre_checksum", c as u64);
    }
    if let Some(k) = g.key {
        o.u("gre_key", k as u64);
    }
    if let Some(s) = g.seq {
        o.u("gre_seq", s as u64);
    }
}

fn encap_kind(o: &mut Obj<'_>, k: &EncapKind) {
    match k {
        EncapKind::Gre(g) | EncapKind::Erspan1(g) => gre(o, g),
        EncapKind::Erspan2(g, e) => {
            gre(o, g);
            o.u("session", e.session as u64);
            o.u("vlan", e.vlan as u64);
            o.u("cos", e.cos as u64);
            o.u("en", e.encap_type as u64);
            o.b("truncated", e.truncated);
            o.u("index", e.index as u64);
        }
        EncapKind::Erspan3(g, e) => {
            gre(o, g);
            o.u("session", e.session as u64);
            o.u("vlan", e.vlan as u64);
            o.u("cos", e.cos as u64);
            o.u("bso", e.bso as u64);
            o.b("truncated", e.truncated);
            o.u("timestamp", e.timestamp as u64);
            o.u("granularity", e.granularity as u64);
            o.u("sgt", e.sgt as u64);
            o.b("pdu", e.pdu);
            o.u("frame_type", e.frame_type as u64);
            o.u("hw_id", e.hw_id as u64);
            o.name("direction", if e.egress { "egress" } else { "ingress" });
            if let Some(id) = e.platform_id() {
                o.u("platform_id", id as u64);
            }
            if let Some(up) = e.timestamp_upper() {
                o.u("timestamp_upper", up as u64);
            }
        }
        EncapKind::Vxlan {
            src_port,
            dst_port,
            flags,
            vni,
        } => {
            o.u("src_port", *src_port as u64);
            o.u("dst_port", *dst_port as u64);
            o.u("flags", *flags as u64);
            o.u("vni", *vni as u64);
        }
    }
}

fn roce(o: &mut Obj<'_>, p: &RocePacket<'_>) {
    o.name("roce", p.version.name());
    o.addr("src", &p.src);
    o.addr("dst", &p.dst);
    match p.ecn {
        Some(e) => o.name("ecn", e.name()),
        None => o.null("ecn"),
    }
    if let Some(d) = p.dscp {
        o.u("dscp", d as u64);
    }
    if let Some(h) = p.hop_limit {
        o.u("hop_limit", h as u64);
    }
    if let (Some(s), Some(d)) = (p.udp_src_port, p.udp_dst_port) {
        o.u("udp_src_port", s as u64);
        o.u("udp_dst_port", d as u64);
    }
    if let Some(l) = &p.lrh {
        let mut x = o.obj("lrh");
        x.u("vl", l.vl as u64);
        x.u("lver", l.lver as u64);
        x.u("sl", l.sl as u64);
        x.u("lnh", l.lnh as u64);
        x.u("dlid", l.dlid as u64);
        x.u("pkt_len", l.pkt_len as u64);
        x.u("slid", l.slid as u64);
        x.close();
    }
    if let Some(g) = &p.grh {
        let mut x = o.obj("grh");
        x.u("ip_ver", g.ip_ver as u64);
        x.u("tclass", g.tclass as u64);
        x.u("flow_label", g.flow_label as u64);
        x.u("pay_len", g.pay_len as u64);
        x.u("next_hdr", g.next_hdr as u64);
        x.u("hop_limit", g.hop_limit as u64);
        x.addr("sgid", &crate::decode::Address::Gid(g.sgid));
        x.addr("dgid", &crate::decode::Address::Gid(g.dgid));
        x.close();
    }
    if let Some(b) = &p.bth {
        let mut x = o.obj("bth");
        x.u("opcode", b.opcode.0 as u64);
        x.name("opcode_name", b.opcode.token());
        x.b("se", b.se);
        x.b("m", b.m);
        x.u("pad", b.pad as u64);
        x.u("tver", b.tver as u64);
        x.u("pkey", b.pkey as u64);
        x.b("fecn", b.fecn);
        x.b("becn", b.becn);
        x.u("dest_qp", b.dest_qp as u64);
        x.b("ack_req", b.ack_req);
        x.u("psn", b.psn as u64);
        x.close();
    }
    ext(o, p);
    if p.bth.is_some() {
        o.u("payload_len", p.payload_len as u64);
    }
    let mut x = o.obj("icrc");
    x.name("status", p.icrc.status_name());
    if let IcrcStatus::Unchecked(r) = p.icrc.status {
        x.name("reason", r.name());
    }
    x.opt_u("value", p.icrc.value.map(u64::from));
    x.opt_u("expected", p.icrc.expected.map(u64::from));
    x.close();
    if let Some(m) = &p.malformed {
        let msg = m.to_string();
        o.key("malformed").json_str(&msg);
    }
    if p.truncated {
        o.b("truncated", true);
    }
}

fn ext(o: &mut Obj<'_>, p: &RocePacket<'_>) {
    let e = &p.ext;
    if let Some(r) = &e.rdeth {
        let mut x = o.obj("rdeth");
        x.u("ee_context", r.ee_context as u64);
        x.close();
    }
    if let Some(d) = &e.deth {
        let mut x = o.obj("deth");
        x.u("qkey", d.qkey as u64);
        x.u("src_qp", d.src_qp as u64);
        x.close();
    }
    if let Some(r) = &e.xrceth {
        let mut x = o.obj("xrceth");
        x.u("xrc_srq", r.xrc_srq as u64);
        x.close();
    }
    if let Some(f) = &e.feth {
        let mut x = o.obj("feth");
        x.u("sel", f.sel as u64);
        x.u("plt", f.plt as u64);
        x.close();
    }
    if let Some(r) = &e.reth {
        let mut x = o.obj("reth");
        x.u("va", r.va);
        x.u("rkey", r.rkey as u64);
        x.u("dma_len", r.dma_len as u64);
        x.close();
    }
    if let Some(a) = &e.atomic_eth {
        let mut x = o.obj("atomic_eth");
        x.u("va", a.va);
        x.u("rkey", a.rkey as u64);
        x.u("swap_add", a.swap_add);
        x.u("compare", a.compare);
        x.close();
    }
    if let Some(a) = &e.aeth {
        let mut x = o.obj("aeth");
        x.u("syndrome", a.syndrome as u64);
        let kind = a.kind();
        x.name("kind", kind.name());
        // The 5 bits after the syndrome type: credit code, RNR timer code or NAK code.
        x.u("value", (a.syndrome & 0x1f) as u64);
        match kind {
            AethKind::Ack { credits, .. } => x.opt_u("credits", credits.map(u64::from)),
            AethKind::RnrNak { timer_us, .. } => {
                x.key("rnr_timer_ms")
                    .fmt(format_args!("{}", timer_us as f64 / 1000.0));
            }
            AethKind::Nak(c) => x.name("nak", c.name()),
            AethKind::Reserved => {}
        }
        x.u("msn", a.msn as u64);
        x.close();
    }
    if let Some(a) = &e.atomic_ack_eth {
        let mut x = o.obj("atomic_ack_eth");
        x.u("orig", a.orig);
        x.close();
    }
    if let Some(i) = e.imm {
        o.u("imm", i as u64);
    }
    if let Some(i) = e.ieth {
        let mut x = o.obj("ieth");
        x.u("rkey", i as u64);
        x.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::test_util::hex;
    use crate::decode::{DecodeConfig, LinkType, decode_frame};

    /// The ConnectX-4 Lx CNP of spec/roce.md §4, as a whole Ethernet frame.
    const CNP: &str = "e41d2dab2bc27cfe90643b320800 45c2003c718c400040119161 0a001101 0a001201 \
                       000012b700280000 8100ffff40000118 00000000 00000000000000000000000000000000 82fd002a";

    #[test]
    fn cnp_line_is_valid_json_with_spec_values() {
        let bytes = hex(CNP);
        let f = decode_frame(
            LinkType::ETHERNET,
            &bytes,
            bytes.len() as u32,
            &DecodeConfig::default(),
        );
        let ctx = FrameCtx::whole(7, 1_000_000_123, bytes.len());
        let mut l = Line::new();
        write_frame(&mut l, &ctx, &f);
        assert_eq!(l.buf.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&l.buf).unwrap();
        assert_eq!(v["frame"], 7);
        assert_eq!(v["ts_ns"], 1_000_000_123u64);
        assert_eq!(v["roce"], "v2");
        assert_eq!(v["src"], "10.0.17.1");
        assert_eq!(v["dst"], "10.0.18.1");
        // TOS 0xC2: DSCP 48, ECN 10 = ECT(0).
        assert_eq!(v["ecn"], "ect0");
        assert_eq!(v["dscp"], 48);
        assert_eq!(v["bth"]["opcode"], 0x81);
        assert_eq!(v["bth"]["opcode_name"], "CNP");
        assert_eq!(v["bth"]["becn"], true);
        assert_eq!(v["bth"]["fecn"], false);
        assert_eq!(v["bth"]["dest_qp"], 0x118);
        assert_eq!(v["payload_len"], 0);
        assert_eq!(v["icrc"]["status"], "good");
        assert_eq!(v["icrc"]["value"], 0x2a00fd82u32);
    }
}
