//! `--json`: one JSON object per packet per line (NDJSON). The schema is documented in README
//! ("JSON output"); names follow Wireshark's `infiniband.*` field names where they exist.
//! Serialised from borrowed view structs straight into the writer: no JSON tree per packet.

use std::fmt::Display;
use std::io::{self, Write};

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::{FrameCtx, Printer};
use crate::decode::{
    AethKind, Frame, FrameKind, Grh, IcrcStatus, Lrh, OtherKind, RocePacket, UncheckedReason,
};

/// The NDJSON printer.
pub struct JsonPrinter<W: Write> {
    out: W,
}

impl<W: Write> JsonPrinter<W> {
    /// A printer writing to `out` (give it a buffered writer).
    pub fn new(out: W) -> Self {
        JsonPrinter { out }
    }
}

impl<W: Write> Printer for JsonPrinter<W> {
    fn frame(&mut self, ctx: &FrameCtx, frame: &Frame<'_>) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, &FrameJson { ctx, frame }).map_err(io::Error::from)?;
        self.out.write_all(b"\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Serialises a `Display` value as a JSON string without allocating.
struct Str<T>(T);

impl<T: Display> Serialize for Str<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

struct FrameJson<'a, 'b> {
    ctx: &'a FrameCtx,
    frame: &'a Frame<'b>,
}

impl Serialize for FrameJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        let c = self.ctx;
        m.serialize_entry("frame", &c.number)?;
        m.serialize_entry("ts_ns", &c.ts_ns)?;
        m.serialize_entry("len", &c.len)?;
        m.serialize_entry("caplen", &c.caplen)?;
        let l = &self.frame.link;
        if let Some(id) = l.vlan_id {
            m.serialize_entry("vlan", &id)?;
            m.serialize_entry("vlan_pcp", &l.vlan_pcp)?;
            if let Some(inner) = l.inner_vlan_id {
                m.serialize_entry("inner_vlan", &inner)?;
            }
        }
        match &self.frame.kind {
            FrameKind::Roce(p) => roce(&mut m, p)?,
            FrameKind::Other(o) => {
                m.serialize_entry("roce", &None::<()>)?;
                if let Some(n) = self.frame.net {
                    m.serialize_entry("src", &Str(n.src))?;
                    m.serialize_entry("dst", &Str(n.dst))?;
                }
                other(&mut m, o)?;
            }
        }
        m.end()
    }
}

fn other<M: SerializeMap>(m: &mut M, o: &OtherKind) -> Result<(), M::Error> {
    match o {
        OtherKind::Udp { src_port, dst_port } => {
            m.serialize_entry("proto", "udp")?;
            m.serialize_entry("src_port", src_port)?;
            m.serialize_entry("dst_port", dst_port)
        }
        OtherKind::Tcp { src_port, dst_port } => {
            m.serialize_entry("proto", "tcp")?;
            m.serialize_entry("src_port", src_port)?;
            m.serialize_entry("dst_port", dst_port)
        }
        OtherKind::Ip { protocol } => m.serialize_entry("ip_proto", protocol),
        OtherKind::Arp => m.serialize_entry("proto", "arp"),
        OtherKind::EtherType(t) => m.serialize_entry("ethertype", t),
        OtherKind::IbNonIba => m.serialize_entry("proto", "ib-non-iba"),
        OtherKind::ErfType(t) => m.serialize_entry("erf_type", t),
        OtherKind::Undecodable(u) => {
            let truncated = matches!(u, crate::decode::Undecodable::Truncated(_));
            if truncated {
                m.serialize_entry("truncated", &true)?;
            } else {
                m.serialize_entry("malformed", &Str(u))?;
            }
            m.serialize_entry("error", &Str(u))
        }
    }
}

fn roce<M: SerializeMap>(m: &mut M, p: &RocePacket<'_>) -> Result<(), M::Error> {
    m.serialize_entry("roce", p.version.name())?;
    m.serialize_entry("src", &Str(p.src))?;
    m.serialize_entry("dst", &Str(p.dst))?;
    m.serialize_entry("ecn", &p.ecn.map(|e| e.name()))?;
    if let Some(d) = p.dscp {
        m.serialize_entry("dscp", &d)?;
    }
    if let Some(h) = p.hop_limit {
        m.serialize_entry("hop_limit", &h)?;
    }
    if let (Some(s), Some(d)) = (p.udp_src_port, p.udp_dst_port) {
        m.serialize_entry("udp_src_port", &s)?;
        m.serialize_entry("udp_dst_port", &d)?;
    }
    if let Some(l) = &p.lrh {
        m.serialize_entry("lrh", &LrhJson(l))?;
    }
    if let Some(g) = &p.grh {
        m.serialize_entry("grh", &GrhJson(g))?;
    }
    if let Some(b) = &p.bth {
        m.serialize_entry(
            "bth",
            &BthJson {
                opcode: b.opcode.0,
                opcode_name: b.opcode.token(),
                se: b.se,
                m: b.m,
                pad: b.pad,
                tver: b.tver,
                pkey: b.pkey,
                fecn: b.fecn,
                becn: b.becn,
                dest_qp: b.dest_qp,
                ack_req: b.ack_req,
                psn: b.psn,
            },
        )?;
    }
    let e = &p.ext;
    if let Some(r) = &e.rdeth {
        m.serialize_entry("rdeth", &One("ee_context", r.ee_context))?;
    }
    if let Some(d) = &e.deth {
        m.serialize_entry("deth", &Two("qkey", d.qkey, "src_qp", d.src_qp))?;
    }
    if let Some(x) = &e.xrceth {
        m.serialize_entry("xrceth", &One("xrc_srq", x.xrc_srq))?;
    }
    if let Some(f) = &e.feth {
        m.serialize_entry("feth", &Two("sel", f.sel as u32, "plt", f.plt as u32))?;
    }
    if let Some(r) = &e.reth {
        m.serialize_entry(
            "reth",
            &RethJson {
                va: r.va,
                rkey: r.rkey,
                dma_len: r.dma_len,
            },
        )?;
    }
    if let Some(a) = &e.atomic_eth {
        m.serialize_entry(
            "atomic_eth",
            &AtomicJson {
                va: a.va,
                rkey: a.rkey,
                swap_add: a.swap_add,
                compare: a.compare,
            },
        )?;
    }
    if let Some(a) = &e.aeth {
        let (kind, value) = match a.kind() {
            AethKind::Ack { code, .. } => ("ack", code),
            AethKind::RnrNak { code, .. } => ("rnr_nak", code),
            AethKind::Nak(_) => ("nak", a.syndrome & 0x1f),
            AethKind::Reserved => ("reserved", a.syndrome & 0x1f),
        };
        m.serialize_entry(
            "aeth",
            &AethJson {
                syndrome: a.syndrome,
                kind,
                value,
                credits: match a.kind() {
                    AethKind::Ack { credits, .. } => credits,
                    _ => None,
                },
                rnr_timer_ms: match a.kind() {
                    AethKind::RnrNak { timer_us, .. } => Some(timer_us as f64 / 1000.0),
                    _ => None,
                },
                nak: match a.kind() {
                    AethKind::Nak(c) => Some(c.name()),
                    _ => None,
                },
                msn: a.msn,
            },
        )?;
    }
    if let Some(a) = &e.atomic_ack_eth {
        m.serialize_entry("atomic_ack_eth", &One64("orig", a.orig))?;
    }
    if let Some(i) = e.imm {
        m.serialize_entry("imm", &i)?;
    }
    if let Some(i) = e.ieth {
        m.serialize_entry("ieth", &One("rkey", i))?;
    }
    if p.bth.is_some() {
        m.serialize_entry("payload_len", &p.payload_len)?;
    }
    m.serialize_entry(
        "icrc",
        &IcrcJson {
            status: p.icrc.status_name(),
            reason: match p.icrc.status {
                IcrcStatus::Unchecked(UncheckedReason::Truncated) => Some("truncated"),
                IcrcStatus::Unchecked(UncheckedReason::Malformed) => Some("malformed"),
                IcrcStatus::Unchecked(UncheckedReason::NoRule) => Some("no-rule"),
                _ => None,
            },
            value: p.icrc.value,
            expected: p.icrc.expected,
        },
    )?;
    if let Some(mf) = &p.malformed {
        m.serialize_entry("malformed", &Str(mf))?;
    }
    if p.truncated {
        m.serialize_entry("truncated", &true)?;
    }
    Ok(())
}

#[derive(serde::Serialize)]
struct BthJson {
    opcode: u8,
    opcode_name: &'static str,
    se: bool,
    m: bool,
    pad: u8,
    tver: u8,
    pkey: u16,
    fecn: bool,
    becn: bool,
    dest_qp: u32,
    ack_req: bool,
    psn: u32,
}

#[derive(serde::Serialize)]
struct RethJson {
    va: u64,
    rkey: u32,
    dma_len: u32,
}

#[derive(serde::Serialize)]
struct AtomicJson {
    va: u64,
    rkey: u32,
    swap_add: u64,
    compare: u64,
}

#[derive(serde::Serialize)]
struct AethJson {
    syndrome: u8,
    kind: &'static str,
    value: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    credits: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rnr_timer_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nak: Option<&'static str>,
    msn: u32,
}

#[derive(serde::Serialize)]
struct IcrcJson {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    value: Option<u32>,
    expected: Option<u32>,
}

struct One(&'static str, u32);
impl Serialize for One {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(self.0, &self.1)?;
        m.end()
    }
}

struct One64(&'static str, u64);
impl Serialize for One64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(self.0, &self.1)?;
        m.end()
    }
}

struct Two(&'static str, u32, &'static str, u32);
impl Serialize for Two {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry(self.0, &self.1)?;
        m.serialize_entry(self.2, &self.3)?;
        m.end()
    }
}

struct LrhJson<'a>(&'a Lrh);
impl Serialize for LrhJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let l = self.0;
        let mut m = s.serialize_map(Some(7))?;
        m.serialize_entry("vl", &l.vl)?;
        m.serialize_entry("lver", &l.lver)?;
        m.serialize_entry("sl", &l.sl)?;
        m.serialize_entry("lnh", &l.lnh)?;
        m.serialize_entry("dlid", &l.dlid)?;
        m.serialize_entry("pkt_len", &l.pkt_len)?;
        m.serialize_entry("slid", &l.slid)?;
        m.end()
    }
}

struct GrhJson<'a>(&'a Grh);
impl Serialize for GrhJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let g = self.0;
        let mut m = s.serialize_map(Some(8))?;
        m.serialize_entry("ip_ver", &g.ip_ver)?;
        m.serialize_entry("tclass", &g.tclass)?;
        m.serialize_entry("flow_label", &g.flow_label)?;
        m.serialize_entry("pay_len", &g.pay_len)?;
        m.serialize_entry("next_hdr", &g.next_hdr)?;
        m.serialize_entry("hop_limit", &g.hop_limit)?;
        m.serialize_entry("sgid", &Str(crate::decode::Address::Gid(g.sgid)))?;
        m.serialize_entry("dgid", &Str(crate::decode::Address::Gid(g.dgid)))?;
        m.end()
    }
}
