//! `-V` lines for the mirror tunnels around a frame (GRE, ERSPAN, VXLAN), outermost first,
//! with the field names of Wireshark's GRE, ERSPAN and VXLAN dissectors.

use std::io::{self, Write};

use crate::decode::encap::GreInfo;
use crate::decode::{Encap, EncapKind};

const GRANULARITY: [&str; 4] = ["100 µs", "100 ns", "IEEE 1588", "custom"];

fn gre_line<W: Write>(w: &mut W, g: &GreInfo) -> io::Result<()> {
    write!(w, "    GRE: protocol 0x{:04x}", g.protocol)?;
    if let Some(c) = g.checksum {
        write!(w, ", checksum 0x{c:04x}")?;
    }
    if let Some(k) = g.key {
        write!(w, ", key {k}")?;
    }
    if let Some(s) = g.seq {
        write!(w, ", sequence {s}")?;
    }
    writeln!(w)
}

/// Write one block per tunnel layer.
///
/// # Errors
/// The writer's I/O error.
pub fn write_layers<W: Write>(w: &mut W, e: &Encap) -> io::Result<()> {
    for layer in e.layers() {
        writeln!(w, "    Outer IP: {} → {}", layer.src, layer.dst)?;
        match &layer.kind {
            EncapKind::Gre(g) => gre_line(w, g)?,
            EncapKind::Erspan1(g) => {
                gre_line(w, g)?;
                writeln!(w, "    ERSPAN Type I")?;
            }
            EncapKind::Erspan2(g, s) => {
                gre_line(w, g)?;
                writeln!(
                    w,
                    "    ERSPAN Type II: session {} VLAN {} COS {} En {} T {} index {}",
                    s.session, s.vlan, s.cos, s.encap_type, s.truncated as u8, s.index
                )?;
            }
            EncapKind::Erspan3(g, s) => {
                gre_line(w, g)?;
                writeln!(
                    w,
                    "    ERSPAN Type III: session {} VLAN {} COS {} BSO {} T {} SGT {} HW {} {}",
                    s.session,
                    s.vlan,
                    s.cos,
                    s.bso,
                    s.truncated as u8,
                    s.sgt,
                    s.hw_id,
                    if s.egress { "egress" } else { "ingress" }
                )?;
                write!(
                    w,
                    "        timestamp {} granularity {} ({}) frame type {}",
                    s.timestamp,
                    s.granularity,
                    GRANULARITY[s.granularity as usize & 3],
                    s.frame_type
                )?;
                if let Some(id) = s.platform_id() {
                    write!(w, ", platform ID {id}")?;
                }
                if let Some(up) = s.timestamp_upper() {
                    write!(w, ", upper timestamp {up}")?;
                }
                writeln!(w)?;
            }
            EncapKind::Vxlan {
                src_port,
                dst_port,
                flags,
                vni,
            } => {
                writeln!(
                    w,
                    "    VXLAN: UDP {src_port} → {dst_port}, flags 0x{flags:02x}, VNI {vni}"
                )?;
            }
        }
    }
    Ok(())
}
