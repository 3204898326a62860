//! `-V`: the full header tree of each packet, field by field, like `tshark -V`.

use std::io::{self, Write};

use super::FrameCtx;
use super::style::{Palette, paint};
use crate::decode::{
    AethKind, Frame, FrameKind, IcrcStatus, LinkSummary, RocePacket, UncheckedReason,
};

fn b(v: bool) -> u8 {
    v as u8
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
        "    Frame {}: {} bytes on wire, {} bytes captured, time {}.{:09}",
        ctx.number,
        ctx.len,
        ctx.caplen,
        ctx.ts_ns / 1_000_000_000,
        ctx.ts_ns % 1_000_000_000
    )?;
    if !frame.encap.is_empty() {
        if let Some(link) = &frame.encap.outer_link {
            link_tree(w, "Carrier ", link)?;
        }
        super::verbose_encap::write_layers(w, &frame.encap)?;
    }
    link_tree(w, "", &frame.link)?;
    match (&frame.kind, frame.net()) {
        (FrameKind::Roce(p), _) => roce_tree(w, pal, p)?,
        // Another frame's IP addresses, when its IP header was decoded (the frame may end
        // inside the UDP header after it).
        (FrameKind::Other(_), Some(n)) => {
            writeln!(w, "    Internet Protocol: {} → {}", n.src, n.dst)?;
        }
        (FrameKind::Other(_), None) => {}
    }
    writeln!(w)
}

/// The Ethernet and VLAN lines of a link summary; `what` prefixes them (`Carrier ` for the
/// outermost frame of a mirrored copy).
fn link_tree<W: Write>(w: &mut W, what: &str, link: &LinkSummary) -> io::Result<()> {
    if let Some((dst, src)) = link.mac {
        let m = |a: [u8; 6]| {
            format!(
                "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
                a[0], a[1], a[2], a[3], a[4], a[5]
            )
        };
        write!(w, "    {what}Ethernet II: {} → {}", m(src), m(dst))?;
        if let Some(et) = link.ethertype {
            write!(w, ", Ethertype 0x{et:04x}")?;
        }
        writeln!(w)?;
    }
    let outer = (link.vlan_id, link.vlan_pcp, link.vlan_tpid_dei);
    vlan_line(w, what, outer)?;
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
    vlan_line(w, what, inner)
}

/// One VLAN tag as Wireshark's tree names it (by its TPID), VLAN ID
/// (12 bits), PCP (3 bits), DEI (1 bit) and the TPID (IEEE 802.1Q §9.6).
fn vlan_line<W: Write>(
    w: &mut W,
    what: &str,
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
        "    {what}{name}: ID {id}, PCP {pcp}, DEI {} (TPID 0x{tpid:04x})",
        u8::from(dei)
    )
}

fn roce_tree<W: Write>(w: &mut W, pal: &Palette, p: &RocePacket<'_>) -> io::Result<()> {
    if let Some(l) = p.lrh {
        writeln!(
            w,
            "    Local Route Header: VL {} LVer {} SL {} LNH {} DLID {} PktLen {} words SLID {}",
            l.vl, l.lver, l.sl, l.lnh, l.dlid, l.pkt_len, l.slid
        )?;
    }
    if let Some(g) = p.grh {
        writeln!(w, "    Global Route Header")?;
        writeln!(
            w,
            "        IPVer {} TClass 0x{:02x} FlowLabel 0x{:05x} PayLen {} NxtHdr 0x{:02x} HopLmt {}",
            g.ip_ver, g.tclass, g.flow_label, g.pay_len, g.next_hdr, g.hop_limit
        )?;
        writeln!(w, "        SGID {}", crate::decode::Address::Gid(g.sgid))?;
        writeln!(w, "        DGID {}", crate::decode::Address::Gid(g.dgid))?;
    }
    if p.version == crate::decode::RoceVersion::V2 {
        writeln!(
            w,
            "    Internet Protocol: {} → {}, DSCP {}, ECN {}, TTL/Hop limit {}",
            p.src,
            p.dst,
            p.dscp.unwrap_or(0),
            p.ecn.map_or("-", |e| e.name()),
            p.hop_limit.unwrap_or(0)
        )?;
        writeln!(
            w,
            "    User Datagram Protocol: {} → {}",
            p.udp_src_port.unwrap_or(0),
            p.udp_dst_port.unwrap_or(0)
        )?;
    }
    let Some(h) = p.bth else {
        return writeln!(w, "    Base Transport Header: not captured");
    };
    writeln!(w, "    Base Transport Header")?;
    writeln!(
        w,
        "        OpCode: 0x{:02x} {}",
        h.opcode.0,
        paint(h.opcode.label(), pal.op)
    )?;
    writeln!(
        w,
        "        Solicited Event: {}  MigReq: {}  Pad Count: {}  Transport Header Version: {}",
        b(h.se),
        b(h.m),
        h.pad,
        h.tver
    )?;
    writeln!(w, "        Partition Key: 0x{:04x}", h.pkey)?;
    writeln!(
        w,
        "        FECN: {}  BECN: {}  Reserved: 0x{:02x}",
        b(h.fecn),
        b(h.becn),
        h.resv6
    )?;
    writeln!(w, "        Destination Queue Pair: 0x{:06x}", h.dest_qp)?;
    writeln!(
        w,
        "        Acknowledge Request: {}  Reserved: 0x{:02x}",
        b(h.ack_req),
        h.resv7
    )?;
    writeln!(w, "        Packet Sequence Number: {}", h.psn)?;
    ext_tree(w, p)?;
    if h.opcode.layout().is_some_and(|l| l.payload) {
        writeln!(
            w,
            "    Payload: {} bytes ({} captured), pad {} bytes",
            p.payload_len,
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
        (IcrcStatus::Good, Some(v), _) => writeln!(w, "    ICRC: 0x{v:08x} ({}) [good]", wire(v))?,
        (IcrcStatus::Bad, v, Some(e)) => writeln!(
            w,
            "    ICRC: 0x{:08x} ({}) {} (expected 0x{e:08x}, {})",
            v.unwrap_or(0),
            wire(v.unwrap_or(0)),
            paint("[bad]", pal.bad),
            wire(e)
        )?,
        (IcrcStatus::Unchecked(r), _, _) => {
            let why = match r {
                UncheckedReason::Truncated => "cut by the snap length",
                UncheckedReason::Malformed => "packet malformed",
                UncheckedReason::NoRule => "no rule for this opcode",
            };
            writeln!(w, "    ICRC: unchecked ({why})")?
        }
        _ => {}
    }
    if let Some(m) = p.malformed {
        writeln!(w, "    {} {m}", paint("[MALFORMED]", pal.bad))?;
    }
    if p.truncated {
        writeln!(
            w,
            "    {} captured bytes end before the packet does",
            paint("[TRUNCATED]", pal.warn)
        )?;
    }
    Ok(())
}

fn ext_tree<W: Write>(w: &mut W, p: &RocePacket<'_>) -> io::Result<()> {
    let e = &p.ext;
    if let Some(r) = e.rdeth {
        writeln!(w, "    Reliable Datagram ETH (RDETH)")?;
        writeln!(w, "        EE Context: 0x{:06x}", r.ee_context)?;
    }
    if let Some(d) = e.deth {
        writeln!(w, "    Datagram ETH (DETH)")?;
        writeln!(w, "        Queue Key: 0x{:08x}", d.qkey)?;
        writeln!(w, "        Source QP: 0x{:06x}", d.src_qp)?;
    }
    if let Some(x) = e.xrceth {
        writeln!(w, "    XRC ETH (XRCETH)")?;
        writeln!(w, "        XRC SRQ: 0x{:06x}", x.xrc_srq)?;
    }
    if let Some(f) = e.feth {
        writeln!(w, "    FLUSH ETH (FETH)")?;
        writeln!(
            w,
            "        Selectivity Level: {}  Placement Type: {}",
            f.sel, f.plt
        )?;
    }
    if let Some(r) = e.reth {
        writeln!(w, "    RDMA ETH (RETH)")?;
        writeln!(w, "        Virtual Address: 0x{:016x}", r.va)?;
        writeln!(w, "        Remote Key: 0x{:08x}", r.rkey)?;
        writeln!(w, "        DMA Length: {}", r.dma_len)?;
    }
    if let Some(a) = e.atomic_eth {
        writeln!(w, "    Atomic ETH (AtomicETH)")?;
        writeln!(w, "        Virtual Address: 0x{:016x}", a.va)?;
        writeln!(w, "        Remote Key: 0x{:08x}", a.rkey)?;
        writeln!(w, "        Swap (or Add) Data: 0x{:016x}", a.swap_add)?;
        writeln!(w, "        Compare Data: 0x{:016x}", a.compare)?;
    }
    if let Some(a) = e.aeth {
        writeln!(w, "    ACK ETH (AETH)")?;
        let meaning = match a.kind() {
            AethKind::Ack { code, credits } => match credits {
                Some(c) => format!("ACK, credit code {code} = {c} credits"),
                None => "ACK, credit code 31 (invalid / unlimited)".into(),
            },
            AethKind::RnrNak { code, timer_us } => format!(
                "RNR NAK, timer code {code} = {}.{:02} ms",
                timer_us / 1000,
                (timer_us % 1000) / 10
            ),
            AethKind::Nak(c) => format!("NAK: {}", c.name()),
            AethKind::Reserved => "reserved syndrome type".into(),
        };
        writeln!(w, "        Syndrome: 0x{:02x} ({meaning})", a.syndrome)?;
        writeln!(w, "        Message Sequence Number: {}", a.msn)?;
    }
    if let Some(a) = e.atomic_ack_eth {
        writeln!(w, "    Atomic ACK ETH (AtomicAckETH)")?;
        writeln!(w, "        Original Remote Data: 0x{:016x}", a.orig)?;
    }
    if let Some(i) = e.imm {
        writeln!(w, "    Immediate Data (ImmDt): 0x{i:08x}")?;
    }
    if let Some(i) = e.ieth {
        writeln!(w, "    Invalidate ETH (IETH): R_Key 0x{i:08x}")?;
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
        let ctx = FrameCtx {
            number: 1,
            ts_ns: 0,
            rel_ns: 0,
            caplen: b.len() as u32,
            len: b.len() as u32,
        };
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
