//! `-V` lines for the mirror tunnels around a frame (GRE, ERSPAN, VXLAN), outermost first,
//! with the field names of Wireshark's GRE, ERSPAN and VXLAN dissectors; a registry field's
//! label comes from the field registry (src/filter/fields.rs).

use std::io::{self, Write};

use crate::decode::encap::GreInfo;
use crate::decode::{Encap, EncapKind};
use crate::filter::fields::{FIELDS, Value};

use super::{field, num, text};

const GRANULARITY: [&str; 4] = ["100 µs", "100 ns", "IEEE 1588", "custom"];

fn gre_line<W: Write>(w: &mut W, g: &GreInfo) -> io::Result<()> {
    write!(w, "    {}", num(field!("encap.gre_proto"), g.protocol))?;
    if let Some(c) = g.checksum {
        write!(w, ", {}", num(field!("encap.gre_checksum"), c))?;
    }
    if let Some(k) = g.key {
        write!(w, ", {}", num(field!("encap.gre_key"), k))?;
    }
    if let Some(s) = g.seq {
        write!(w, ", {}", num(field!("encap.gre_seq"), s))?;
    }
    writeln!(w)
}

/// Write one block per tunnel layer.
///
/// # Errors
/// The writer's I/O error.
pub fn write_layers<W: Write>(w: &mut W, e: &Encap) -> io::Result<()> {
    for layer in e.layers() {
        writeln!(
            w,
            "    {}{}",
            text(field!("encap.src"), Value::Addr(layer.src)),
            text(field!("encap.dst"), Value::Addr(layer.dst))
        )?;
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
                    "    ERSPAN Type II: {} {} {} {} {} {}",
                    num(field!("encap.session"), s.session),
                    num(field!("encap.vlan"), s.vlan),
                    num(field!("encap.cos"), s.cos),
                    num(field!("encap.en"), s.encap_type),
                    field!("encap.truncated").shown(Value::Bool(s.truncated)),
                    num(field!("encap.index"), s.index)
                )?;
            }
            EncapKind::Erspan3(g, s) => {
                gre_line(w, g)?;
                let dir = if s.egress { "egress" } else { "ingress" };
                writeln!(
                    w,
                    "    ERSPAN Type III: {} {} {} {} {} {} {}{}",
                    num(field!("encap.session"), s.session),
                    num(field!("encap.vlan"), s.vlan),
                    num(field!("encap.cos"), s.cos),
                    num(field!("encap.bso"), s.bso),
                    field!("encap.truncated").shown(Value::Bool(s.truncated)),
                    num(field!("encap.sgt"), s.sgt),
                    num(field!("encap.hw_id"), s.hw_id),
                    text(field!("encap.direction"), Value::Str(dir))
                )?;
                write!(
                    w,
                    "        {} {} ({}) {}",
                    num(field!("encap.timestamp"), s.timestamp),
                    num(field!("encap.granularity"), s.granularity),
                    GRANULARITY[s.granularity as usize & 3],
                    num(field!("encap.frame_type"), s.frame_type)
                )?;
                if let Some(id) = s.platform_id() {
                    write!(w, ", {}", num(field!("encap.platform_id"), id))?;
                }
                if let Some(up) = s.timestamp_upper() {
                    write!(w, ", {}", num(field!("encap.timestamp_upper"), up))?;
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
                    "    {}{}, {}, {}",
                    num(field!("encap.src_port"), *src_port),
                    num(field!("encap.dst_port"), *dst_port),
                    num(field!("encap.flags"), *flags),
                    num(field!("encap.vni"), *vni)
                )?;
            }
        }
    }
    Ok(())
}
