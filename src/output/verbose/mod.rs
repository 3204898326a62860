//! `-V`: the full header tree of each packet, field by field, like `tshark -V`. A registry
//! field's line is its label in the field registry (src/filter/fields.rs) with its value as
//! the registry's format writes it, so the labels are spelled in one place.

mod encap;

use std::io::{self, Write};

use super::FrameCtx;
use super::style::{Palette, paint};
use crate::decode::{
    AethKind, Frame, FrameKind, IcrcStatus, LinkSummary, RocePacket, UncheckedReason,
};
use crate::filter::fields::{FIELDS, Field, Shown, Value};

/// The registry entry of the field named `$name`, found at compile time.
macro_rules! field {
    ($name:literal) => {
        &FIELDS[const { crate::filter::fields::index($name) }]
    };
}
pub(super) use field;

/// Field `f` with the number `v`, as `-V` prints it.
pub(super) fn num(f: &'static Field, v: impl Into<u64>) -> Shown {
    f.shown(Value::Uint(v.into()))
}

/// Field `f` with the flag `v`, as `-V` prints it (`0`, `1`).
fn bit(f: &'static Field, v: bool) -> Shown {
    f.shown(Value::Bool(v))
}

/// Field `f` with the name or address `v`, as `-V` prints it.
pub(super) fn text(f: &'static Field, v: Value) -> Shown {
    f.shown(v)
}

/// A header's heading: its label in the registry.
pub(super) fn head(f: &'static Field) -> Shown {
    f.shown(Value::Present)
}

/// Write the indented header tree that follows a packet's one-line summary.
///
/// # Errors
/// The writer's I/O error.
pub fn write_tree<W: Write>(
    w: &mut W,
    pal: &Palette,
    ctx: &FrameCtx,
    frame: &Frame<'_>,
) -> io::Result<()> {
    writeln!(
        w,
        "    {}: {}, {}, {}",
        num(field!("frame"), ctx.number),
        num(field!("len"), ctx.len),
        num(field!("caplen"), ctx.caplen),
        num(field!("ts_ns"), ctx.ts_ns)
    )?;
    if !frame.encap.is_empty() {
        if let Some(link) = &frame.encap.outer_link {
            link_tree(w, "Carrier ", link, CARRIER_TAGS)?;
        }
        encap::write_layers(w, &frame.encap)?;
    }
    link_tree(w, "", &frame.link, TAGS)?;
    match (&frame.kind, frame.net()) {
        (FrameKind::Roce(p), _) => roce_tree(w, pal, p)?,
        // Another frame's IP addresses, when its IP header was decoded (the frame may end
        // inside the UDP header after it).
        (FrameKind::Other(_), Some(n)) => {
            writeln!(
                w,
                "    {}{}",
                text(field!("src"), Value::Addr(n.src)),
                text(field!("dst"), Value::Addr(n.dst))
            )?;
        }
        (FrameKind::Other(_), None) => {}
    }
    writeln!(w)
}

/// The registry fields of a VLAN tag: its ID and its PCP.
type TagFields = (&'static Field, &'static Field);

/// The fields of the outer and the inner VLAN tag of a frame.
const TAGS: [TagFields; 2] = [
    (field!("vlan"), field!("vlan_pcp")),
    (field!("inner_vlan"), field!("inner_vlan_pcp")),
];

/// The fields of the outer and the inner VLAN tag of a mirrored copy's carrier frame (the
/// registry has its outer tag's ID only; its PCPs are shown as a frame's).
const CARRIER_TAGS: [TagFields; 2] = [
    (field!("encap.carrier_vlan"), field!("vlan_pcp")),
    (field!("inner_vlan"), field!("inner_vlan_pcp")),
];

/// The Ethernet and VLAN lines of a link summary; `what` prefixes them (`Carrier ` for the
/// outermost frame of a mirrored copy), `tags` are the registry fields of its VLAN tags.
fn link_tree<W: Write>(
    w: &mut W,
    what: &str,
    link: &LinkSummary,
    tags: [TagFields; 2],
) -> io::Result<()> {
    if let Some((dst, src)) = link.mac {
        let m = |a: [u8; 6]| {
            format!(
                "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
                a[0], a[1], a[2], a[3], a[4], a[5]
            )
        };
        write!(w, "    {what}Ethernet II: {} → {}", m(src), m(dst))?;
        if let Some(et) = link.ethertype {
            write!(w, ", {}", num(field!("ethertype"), et))?;
        }
        writeln!(w)?;
    }
    let outer = (link.vlan_id, link.vlan_pcp, link.vlan_tpid_dei);
    vlan_line(w, what, tags[0], outer)?;
    match link.vlan_tags {
        0..=2 => {}
        3 => writeln!(w, "    {what}… 1 more VLAN tag")?,
        n => writeln!(w, "    {what}… {} more VLAN tags", n - 2)?,
    }
    let inner = (
        link.inner_vlan_id,
        link.inner_vlan_pcp,
        link.inner_vlan_tpid_dei,
    );
    vlan_line(w, what, tags[1], inner)
}

/// One VLAN tag as Wireshark's tree names it (by its TPID), VLAN ID
/// (12 bits), PCP (3 bits), DEI (1 bit) and the TPID (IEEE 802.1Q §9.6).
fn vlan_line<W: Write>(
    w: &mut W,
    what: &str,
    (f_id, f_pcp): TagFields,
    tag: (Option<u16>, Option<u8>, Option<(u16, bool)>),
) -> io::Result<()> {
    let (Some(id), Some(pcp), Some((tpid, dei))) = tag else {
        return Ok(());
    };
    // tshark 4.0 names a 0x9100 tag as it names an 802.1Q one; the TPID tells them apart.
    let name = match tpid {
        0x88a8 => "IEEE 802.1ad",
        _ => "802.1Q Virtual LAN",
    };
    writeln!(
        w,
        "    {what}{name}: {}, {}, DEI {} (TPID 0x{tpid:04x})",
        num(f_id, id),
        num(f_pcp, pcp),
        u8::from(dei)
    )
}

fn roce_tree<W: Write>(w: &mut W, pal: &Palette, p: &RocePacket<'_>) -> io::Result<()> {
    if let Some(l) = p.lrh {
        writeln!(
            w,
            "    {}{} {} {} {} {} {} {}",
            head(field!("lrh")),
            num(field!("lrh.vl"), l.vl),
            num(field!("lrh.lver"), l.lver),
            num(field!("lrh.sl"), l.sl),
            num(field!("lrh.lnh"), l.lnh),
            num(field!("lrh.dlid"), l.dlid),
            num(field!("lrh.pkt_len"), l.pkt_len),
            num(field!("lrh.slid"), l.slid)
        )?;
    }
    if let Some(g) = p.grh {
        writeln!(w, "    {}", head(field!("grh")))?;
        writeln!(
            w,
            "        {} {} {} {} {} {}",
            num(field!("grh.ip_ver"), g.ip_ver),
            num(field!("grh.tclass"), g.tclass),
            num(field!("grh.flow_label"), g.flow_label),
            num(field!("grh.pay_len"), g.pay_len),
            num(field!("grh.next_hdr"), g.next_hdr),
            num(field!("grh.hop_limit"), g.hop_limit)
        )?;
        let gid = |a| Value::Addr(crate::decode::Address::Gid(a));
        writeln!(w, "        {}", text(field!("grh.sgid"), gid(g.sgid)))?;
        writeln!(w, "        {}", text(field!("grh.dgid"), gid(g.dgid)))?;
    }
    if p.version == crate::decode::RoceVersion::V2 {
        writeln!(
            w,
            "    {}{}, {}, {}, {}",
            text(field!("src"), Value::Addr(p.src)),
            text(field!("dst"), Value::Addr(p.dst)),
            num(field!("dscp"), p.dscp.unwrap_or(0)),
            text(field!("ecn"), Value::Str(p.ecn.map_or("-", |e| e.name()))),
            num(field!("hop_limit"), p.hop_limit.unwrap_or(0))
        )?;
        writeln!(
            w,
            "    {}{}",
            num(field!("udp_src_port"), p.udp_src_port.unwrap_or(0)),
            num(field!("udp_dst_port"), p.udp_dst_port.unwrap_or(0))
        )?;
    }
    let Some(h) = p.bth else {
        return writeln!(w, "    {}: not captured", head(field!("bth")));
    };
    writeln!(w, "    {}", head(field!("bth")))?;
    writeln!(
        w,
        "        {} {}",
        num(field!("bth.opcode"), h.opcode.0),
        paint(h.opcode.label(), pal.op)
    )?;
    writeln!(
        w,
        "        {}  {}  {}  {}",
        bit(field!("bth.se"), h.se),
        bit(field!("bth.m"), h.m),
        num(field!("bth.pad"), h.pad),
        num(field!("bth.tver"), h.tver)
    )?;
    writeln!(w, "        {}", num(field!("bth.pkey"), h.pkey))?;
    writeln!(
        w,
        "        {}  {}  Reserved: 0x{:02x}",
        bit(field!("bth.fecn"), h.fecn),
        bit(field!("bth.becn"), h.becn),
        h.resv6
    )?;
    writeln!(w, "        {}", num(field!("bth.dest_qp"), h.dest_qp))?;
    writeln!(
        w,
        "        {}  Reserved: 0x{:02x}",
        bit(field!("bth.ack_req"), h.ack_req),
        h.resv7
    )?;
    writeln!(w, "        {}", num(field!("bth.psn"), h.psn))?;
    ext_tree(w, p)?;
    if h.opcode.layout().is_some_and(|l| l.payload) {
        writeln!(
            w,
            "    {} ({} captured), pad {} bytes",
            num(field!("payload_len"), p.payload_len),
            p.payload.len(),
            h.pad
        )?;
    }
    // The CRC-32 value, and the bytes as they are on the wire (least significant first), which
    // Wireshark shows as one number ("Invariant CRC: 0x1e9b7883" for the value 0x83789b1e).
    let wire = |v: u32| {
        let b = v.to_le_bytes();
        format!("wire {:02x} {:02x} {:02x} {:02x}", b[0], b[1], b[2], b[3])
    };
    match (p.icrc.status, p.icrc.value, p.icrc.expected) {
        (IcrcStatus::Good, Some(v), _) => writeln!(
            w,
            "    {} ({}) [good]",
            num(field!("icrc.value"), v),
            wire(v)
        )?,
        (IcrcStatus::Bad, v, Some(e)) => writeln!(
            w,
            "    {} ({}) {} ({}, {})",
            num(field!("icrc.value"), v.unwrap_or(0)),
            wire(v.unwrap_or(0)),
            paint("[bad]", pal.bad),
            num(field!("icrc.expected"), e),
            wire(e)
        )?,
        (IcrcStatus::Unchecked(r), _, _) => {
            let why = match r {
                UncheckedReason::Truncated => "cut by the snap length",
                UncheckedReason::Malformed => "packet malformed",
                UncheckedReason::NoRule => "no rule for this opcode",
            };
            writeln!(w, "    {}unchecked ({why})", head(field!("icrc")))?
        }
        _ => {}
    }
    if let Some(m) = p.malformed {
        let label = field!("malformed").label().trim_end();
        writeln!(w, "    {} {m}", paint(label, pal.bad))?;
    }
    if p.truncated {
        writeln!(
            w,
            "    {} captured bytes end before the packet does",
            paint(field!("truncated").label(), pal.warn)
        )?;
    }
    Ok(())
}

fn ext_tree<W: Write>(w: &mut W, p: &RocePacket<'_>) -> io::Result<()> {
    let e = &p.ext;
    if let Some(r) = e.rdeth {
        writeln!(w, "    {}", head(field!("rdeth")))?;
        writeln!(
            w,
            "        {}",
            num(field!("rdeth.ee_context"), r.ee_context)
        )?;
    }
    if let Some(d) = e.deth {
        writeln!(w, "    {}", head(field!("deth")))?;
        writeln!(w, "        {}", num(field!("deth.qkey"), d.qkey))?;
        writeln!(w, "        {}", num(field!("deth.src_qp"), d.src_qp))?;
    }
    if let Some(x) = e.xrceth {
        writeln!(w, "    {}", head(field!("xrceth")))?;
        writeln!(w, "        {}", num(field!("xrceth.xrc_srq"), x.xrc_srq))?;
    }
    if let Some(f) = e.feth {
        writeln!(w, "    {}", head(field!("feth")))?;
        writeln!(
            w,
            "        {}  {}",
            num(field!("feth.sel"), f.sel),
            num(field!("feth.plt"), f.plt)
        )?;
    }
    if let Some(r) = e.reth {
        writeln!(w, "    {}", head(field!("reth")))?;
        writeln!(w, "        {}", num(field!("reth.va"), r.va))?;
        writeln!(w, "        {}", num(field!("reth.rkey"), r.rkey))?;
        writeln!(w, "        {}", num(field!("reth.dma_len"), r.dma_len))?;
    }
    if let Some(a) = e.atomic_eth {
        writeln!(w, "    {}", head(field!("atomic_eth")))?;
        writeln!(w, "        {}", num(field!("atomic_eth.va"), a.va))?;
        writeln!(w, "        {}", num(field!("atomic_eth.rkey"), a.rkey))?;
        writeln!(
            w,
            "        {}",
            num(field!("atomic_eth.swap_add"), a.swap_add)
        )?;
        writeln!(
            w,
            "        {}",
            num(field!("atomic_eth.compare"), a.compare)
        )?;
    }
    if let Some(a) = e.aeth {
        writeln!(w, "    {}", head(field!("aeth")))?;
        let meaning = match a.kind() {
            AethKind::Ack { code, credits } => match credits {
                Some(c) => format!("ACK, credit code {code} {}", num(field!("aeth.credits"), c)),
                None => "ACK, credit code 31 (invalid / unlimited)".into(),
            },
            // The timers of IBTA Vol 1 Table 45 are whole multiples of 10 µs: two decimals
            // of a ms are exact.
            AethKind::RnrNak { code, timer_us } => format!(
                "RNR NAK, timer code {code} {}",
                field!("aeth.rnr_timer_ms").shown(Value::Float(f64::from(timer_us) / 1000.0))
            ),
            AethKind::Nak(c) => text(field!("aeth.nak"), Value::Str(c.name())).to_string(),
            AethKind::Reserved => "reserved syndrome type".into(),
        };
        writeln!(
            w,
            "        {} ({meaning})",
            num(field!("aeth.syndrome"), a.syndrome)
        )?;
        writeln!(w, "        {}", num(field!("aeth.msn"), a.msn))?;
    }
    if let Some(a) = e.atomic_ack_eth {
        writeln!(w, "    {}", head(field!("atomic_ack_eth")))?;
        writeln!(w, "        {}", num(field!("atomic_ack_eth.orig"), a.orig))?;
    }
    if let Some(i) = e.imm {
        writeln!(w, "    {}", num(field!("imm"), i))?;
    }
    if let Some(i) = e.ieth {
        writeln!(
            w,
            "    {}: {}",
            head(field!("ieth")),
            num(field!("ieth.rkey"), i)
        )?;
    }
    if e.cnp_reserved {
        writeln!(w, "    CNP: 16 reserved bytes")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::test_util::hex;
    use crate::decode::{DecodeConfig, LinkType, decode_frame};

    /// The tree of the spec/roce.md §4 CNP behind an S-tag (TPID 0x88a8, PCP 5, DEI 1, VLAN 200:
    /// 0xb0c8), a pre-standard 0x9100 tag (VLAN 5) and a C-tag (PCP 3, VLAN 100: 0x6064). tshark
    /// 4.0 shows the first and last as "IEEE 802.1ad, ID: 200" (Priority 5, DEI 1) and
    /// "802.1Q Virtual LAN, PRI: 3, DEI: 0, ID: 100".
    fn tree(tags: &str) -> String {
        let b = hex(&format!(
            "e41d2dab2bc2 7cfe90643b32 {tags} 0800 \
             45c2003c718c400040119161 0a001101 0a001201 000012b700280000 \
             8100ffff40000118 00000000 00000000000000000000000000000000 82fd002a"
        ));
        let f = decode_frame(
            LinkType::ETHERNET,
            &b,
            b.len() as u32,
            &DecodeConfig::default(),
        );
        let ctx = FrameCtx::whole(1, 0, b.len());
        let mut out = Vec::new();
        write_tree(&mut out, &Palette::new(false), &ctx, &f).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_vlan_tag_shows_its_tpid_pcp_and_dei() {
        let t = tree("88a8 b0c8 9100 0005 8100 6064");
        let lines: Vec<&str> = t.lines().skip(2).take(3).collect();
        assert_eq!(
            lines,
            [
                "    IEEE 802.1ad: ID 200, PCP 5, DEI 1 (TPID 0x88a8)",
                "    … 1 more VLAN tag",
                "    802.1Q Virtual LAN: ID 100, PCP 3, DEI 0 (TPID 0x8100)",
            ],
            "{t}"
        );
        let t = tree("9100 2005");
        assert!(
            t.contains("\n    802.1Q Virtual LAN: ID 5, PCP 1, DEI 0 (TPID 0x9100)\n    Internet"),
            "{t}"
        );
    }
}
