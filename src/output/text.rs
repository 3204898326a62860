//! One line per packet, tshark-like and aligned: frame number, relative time, source →
//! destination, transport + operation, QP, PSN, flags, payload length, key extended-header fields,
//! and problem marks. Writes straight into the buffered writer: no per-packet allocation.

use std::io::{self, Write};

use super::style::{Palette, paint};
use super::verbose;
use super::{FrameCtx, Printer};
use crate::decode::{
    AethKind, Ecn, Frame, FrameKind, IcrcStatus, OtherKind, RocePacket, Undecodable,
};

/// The per-packet text printer (`-V` switches to the header tree).
pub struct TextPrinter<W: Write> {
    out: W,
    pal: Palette,
    verbose: bool,
}

impl<W: Write> TextPrinter<W> {
    /// A printer writing to `out` (give it a buffered writer), coloured when `color`.
    pub fn new(out: W, color: bool, verbose: bool) -> Self {
        TextPrinter {
            out,
            pal: Palette::new(color),
            verbose,
        }
    }
}

impl<W: Write> Printer for TextPrinter<W> {
    fn frame(&mut self, ctx: &FrameCtx, frame: &Frame<'_>) -> io::Result<()> {
        if self.verbose {
            return verbose::write_tree(&mut self.out, &self.pal, ctx, frame);
        }
        write_line(&mut self.out, &self.pal, ctx, frame)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Relative time as `seconds.nanoseconds`, 9 decimals (exact).
pub struct RelTime(pub u64);

impl std::fmt::Display for RelTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = format_args!("{}.{:09}", self.0 / 1_000_000_000, self.0 % 1_000_000_000);
        // Pad without allocating: compute the width by hand.
        let digits = (self.0 / 1_000_000_000).checked_ilog10().unwrap_or(0) as usize + 11;
        let w = f.width().unwrap_or(0);
        for _ in digits..w {
            f.write_str(" ")?;
        }
        f.write_fmt(s)
    }
}

/// Write the one-line summary of `frame`.
///
/// # Errors
/// The writer's I/O error.
pub fn write_line<W: Write>(
    w: &mut W,
    pal: &Palette,
    ctx: &FrameCtx,
    frame: &Frame<'_>,
) -> io::Result<()> {
    write!(w, "{:>6} {:>14} ", ctx.number, RelTime(ctx.rel_ns))?;
    match &frame.kind {
        FrameKind::Roce(p) => roce_line(w, pal, p)?,
        FrameKind::Other(o) => other_line(w, pal, frame, o)?,
    }
    w.write_all(b"\n")
}

fn roce_line<W: Write>(w: &mut W, pal: &Palette, p: &RocePacket<'_>) -> io::Result<()> {
    write!(
        w,
        "{:>15} → {:<15} ",
        paint(p.src, pal.addr),
        paint(p.dst, pal.addr)
    )?;
    let Some(bth) = p.bth else {
        write!(w, "RoCE{} (no BTH)", p.version.name())?;
        return marks(w, pal, p);
    };
    write!(w, "{:<36} ", paint(bth.opcode.label(), pal.op))?;
    write!(
        w,
        "QP {} PSN {:>8}",
        paint(format_args!("0x{:06x}", bth.dest_qp), pal.qp),
        bth.psn
    )?;
    if bth.ack_req {
        w.write_all(b" A")?;
    }
    if bth.se {
        w.write_all(b" SE")?;
    }
    if bth.m {
        w.write_all(b" M")?;
    }
    if bth.fecn {
        write!(w, " {}", paint("FECN", pal.warn))?;
    }
    if bth.becn {
        write!(w, " {}", paint("BECN", pal.warn))?;
    }
    match p.ecn {
        Some(Ecn::NotEct) | None => {}
        Some(Ecn::Ce) => write!(w, " {}", paint("CE", pal.bad))?,
        Some(e) => write!(w, " {}", e.name().to_ascii_uppercase())?,
    }
    if bth.opcode.layout().is_some_and(|l| l.payload) {
        write!(w, " len {}", p.payload_len)?;
    }
    ext_fields(w, pal, p)?;
    marks(w, pal, p)
}

fn ext_fields<W: Write>(w: &mut W, pal: &Palette, p: &RocePacket<'_>) -> io::Result<()> {
    let e = &p.ext;
    if let Some(r) = e.rdeth {
        write!(w, " EEC 0x{:06x}", r.ee_context)?;
    }
    if let Some(x) = e.xrceth {
        write!(w, " XRCSRQ 0x{:06x}", x.xrc_srq)?;
    }
    if let Some(d) = e.deth {
        write!(w, " QKey 0x{:08x} SrcQP 0x{:06x}", d.qkey, d.src_qp)?;
    }
    if let Some(f) = e.feth {
        write!(w, " SEL {} PLT {}", f.sel, f.plt)?;
    }
    if let Some(r) = e.reth {
        write!(
            w,
            " va 0x{:x} rkey 0x{:08x} dma_len {}",
            r.va, r.rkey, r.dma_len
        )?;
    }
    if let Some(a) = e.atomic_eth {
        write!(
            w,
            " va 0x{:x} rkey 0x{:08x} swap/add 0x{:x} cmp 0x{:x}",
            a.va, a.rkey, a.swap_add, a.compare
        )?;
    }
    if let Some(a) = e.aeth {
        match a.kind() {
            AethKind::Ack { credits, .. } => match credits {
                Some(c) => write!(w, " ACK credits {c}")?,
                None => w.write_all(b" ACK credits unlimited")?,
            },
            AethKind::RnrNak { timer_us, .. } => write!(
                w,
                " {} {}.{:02} ms",
                paint("RNR NAK", pal.warn),
                timer_us / 1000,
                (timer_us % 1000) / 10
            )?,
            AethKind::Nak(code) => write!(
                w,
                " {}",
                paint(format_args!("NAK {}", code.name()), pal.bad)
            )?,
            AethKind::Reserved => write!(w, " AETH reserved 0x{:02x}", a.syndrome)?,
        }
        write!(w, " MSN {}", a.msn)?;
    }
    if let Some(a) = e.atomic_ack_eth {
        write!(w, " orig 0x{:x}", a.orig)?;
    }
    if let Some(i) = e.imm {
        write!(w, " imm 0x{i:08x}")?;
    }
    if let Some(i) = e.ieth {
        write!(w, " inv_rkey 0x{i:08x}")?;
    }
    Ok(())
}

fn marks<W: Write>(w: &mut W, pal: &Palette, p: &RocePacket<'_>) -> io::Result<()> {
    if p.icrc.status == IcrcStatus::Bad {
        write!(w, " {}", paint("[ICRC BAD]", pal.bad))?;
    }
    if let Some(m) = p.malformed {
        write!(w, " {} {m}", paint("[MALFORMED]", pal.bad))?;
    }
    if p.truncated {
        write!(w, " {}", paint("[TRUNCATED]", pal.warn))?;
    }
    Ok(())
}

fn other_line<W: Write>(
    w: &mut W,
    pal: &Palette,
    frame: &Frame<'_>,
    o: &OtherKind,
) -> io::Result<()> {
    if let Some(n) = frame.net {
        write!(
            w,
            "{:>15} → {:<15} ",
            paint(n.src, pal.dim),
            paint(n.dst, pal.dim)
        )?;
    } else {
        write!(w, "{:>15}   {:<15} ", "", "")?;
    }
    match o {
        OtherKind::Udp { src_port, dst_port } => write!(w, "UDP {src_port} → {dst_port}"),
        OtherKind::Tcp { src_port, dst_port } => write!(w, "TCP {src_port} → {dst_port}"),
        OtherKind::Ip { protocol } => write!(w, "IP protocol {protocol}"),
        OtherKind::Arp => w.write_all(b"ARP"),
        OtherKind::EtherType(t) => write!(w, "Ethertype 0x{t:04x}"),
        OtherKind::IbNonIba => w.write_all(b"InfiniBand non-IBA (raw/IP)"),
        OtherKind::ErfType(t) => write!(w, "ERF record type {t}"),
        OtherKind::Undecodable(u) => {
            let mark = match u {
                Undecodable::Truncated(_) => "[TRUNCATED]",
                _ => "[MALFORMED]",
            };
            write!(w, "{} {u}", paint(mark, pal.bad))
        }
    }
}
