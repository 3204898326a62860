//! One line per packet, tshark-like and aligned: frame number, relative time, source →
//! destination, transport + operation, QP, PSN, flags, payload length, key extended-header fields,
//! and problem marks. Built in a reused [`Line`] buffer: no allocation per packet.

use std::io::{self, Write};

use super::line::Line;
use super::style::{Ansi, AnsiPalette, Palette};
use super::verbose;
use super::{FrameCtx, Printer};
use crate::decode::{
    AethKind, Ecn, Encap, EncapKind, Frame, FrameKind, IcrcStatus, OtherKind, RocePacket,
    RoceVersion,
};

/// The per-packet text printer (`-V` switches to the header tree).
pub struct TextPrinter<W: Write> {
    out: W,
    pal: Palette,
    ansi: AnsiPalette,
    line: Line,
    verbose: bool,
}

impl<W: Write> TextPrinter<W> {
    /// A printer writing to `out` (no buffering needed: lines collect in the printer's own
    /// buffer), coloured when `color`.
    pub fn new(out: W, color: bool, verbose: bool) -> Self {
        let pal = Palette::new(color);
        TextPrinter {
            out,
            ansi: AnsiPalette::new(&pal),
            pal,
            line: Line::new(),
            verbose,
        }
    }
}

impl<W: Write> Printer for TextPrinter<W> {
    fn frame(&mut self, ctx: &FrameCtx, frame: &Frame<'_>) -> io::Result<()> {
        write_line(&mut self.line, &self.ansi, ctx, frame);
        if self.verbose {
            verbose::write_tree(&mut self.line.buf, &self.pal, ctx, frame)?;
        }
        self.line.spill(&mut self.out)
    }

    fn frame_marked(
        &mut self,
        ctx: &FrameCtx,
        frame: &Frame<'_>,
        marks: &crate::analyze::marks::Marks,
    ) -> io::Result<()> {
        write_line(&mut self.line, &self.ansi, ctx, frame);
        super::marks::append_tags(&mut self.line, marks);
        if self.verbose {
            verbose::write_tree(&mut self.line.buf, &self.pal, ctx, frame)?;
            super::marks::append_tree(&mut self.line, marks);
        }
        self.line.spill(&mut self.out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.line.drain(&mut self.out)?;
        self.out.flush()
    }
}

/// Column widths of the one-line format, in characters.
const W_FRAME: usize = 6;
const W_TIME: usize = 14;
const W_ADDR: usize = 15;
const W_OP: usize = 36;
const W_PSN: usize = 8;

fn painted(l: &mut Line, a: &Ansi, f: impl FnOnce(&mut Line)) {
    l.s(&a.start);
    f(l);
    l.s(&a.end);
}

/// Append the one-line summary of `frame`, newline included.
pub fn write_line(l: &mut Line, pal: &AnsiPalette, ctx: &FrameCtx, frame: &Frame<'_>) {
    let m = l.mark();
    l.u(ctx.number).right_align(m, W_FRAME).s(" ");
    // Relative time, seconds with 9 decimals (exact to the ns).
    let m = l.mark();
    if ctx.rel_ns < 0 {
        l.s("-");
    }
    let rel = ctx.rel_ns.unsigned_abs();
    l.u(rel / 1_000_000_000).s(".");
    let frac = rel % 1_000_000_000;
    let f0 = l.mark();
    l.u(frac).right_align(f0, 9);
    for b in &mut l.buf[f0..] {
        if *b == b' ' {
            *b = b'0';
        }
    }
    l.right_align(m, W_TIME).s(" ");
    match &frame.kind {
        FrameKind::Roce(p) => roce_line(l, pal, p),
        FrameKind::Other(o) => other_line(l, pal, frame, o),
    }
    if !frame.encap.is_empty() {
        mirror_mark(l, pal, &frame.encap);
    }
    l.s("\n");
}

fn addresses(l: &mut Line, a: &Ansi, src: &crate::decode::Address, dst: &crate::decode::Address) {
    painted(l, a, |l| {
        let m = l.mark();
        l.addr(src).right_align(m, W_ADDR);
    });
    l.s(" → ");
    painted(l, a, |l| {
        let m = l.mark();
        l.addr(dst).left_align(m, W_ADDR);
    });
    l.s(" ");
}

fn roce_line(l: &mut Line, pal: &AnsiPalette, p: &RocePacket<'_>) {
    addresses(l, &pal.addr, &p.src, &p.dst);
    let Some(bth) = p.bth else {
        l.s(match p.version {
            RoceVersion::V1 => "RoCEv1",
            RoceVersion::V2 => "RoCEv2",
            RoceVersion::Ib => "InfiniBand",
        })
        .s(" (no BTH)");
        return marks(l, pal, p);
    };
    painted(l, &pal.op, |l| {
        let m = l.mark();
        l.s(bth.opcode.label()).left_align(m, W_OP);
    });
    l.s(" QP ");
    painted(l, &pal.qp, |l| {
        l.s("0x").hex(bth.dest_qp as u64, 6);
    });
    l.s(" PSN ");
    let m = l.mark();
    l.u(bth.psn as u64).right_align(m, W_PSN);
    if bth.ack_req {
        l.s(" A");
    }
    if bth.se {
        l.s(" SE");
    }
    if bth.m {
        l.s(" M");
    }
    if bth.fecn {
        l.s(" ");
        painted(l, &pal.warn, |l| {
            l.s("FECN");
        });
    }
    if bth.becn {
        l.s(" ");
        painted(l, &pal.warn, |l| {
            l.s("BECN");
        });
    }
    match p.ecn {
        Some(Ecn::NotEct) | None => {}
        Some(Ecn::Ce) => {
            l.s(" ");
            painted(l, &pal.bad, |l| {
                l.s("CE");
            });
        }
        Some(Ecn::Ect0) => {
            l.s(" ECT0");
        }
        Some(Ecn::Ect1) => {
            l.s(" ECT1");
        }
    }
    if bth.opcode.layout().is_some_and(|x| x.payload) {
        l.s(" len ").u(p.payload_len as u64);
    }
    ext_fields(l, pal, p);
    marks(l, pal, p);
}

fn ext_fields(l: &mut Line, pal: &AnsiPalette, p: &RocePacket<'_>) {
    let e = &p.ext;
    if let Some(r) = e.rdeth {
        l.s(" EEC 0x").hex(r.ee_context as u64, 6);
    }
    if let Some(x) = e.xrceth {
        l.s(" XRCSRQ 0x").hex(x.xrc_srq as u64, 6);
    }
    if let Some(d) = e.deth {
        l.s(" QKey 0x").hex(d.qkey as u64, 8);
        l.s(" SrcQP 0x").hex(d.src_qp as u64, 6);
    }
    if let Some(f) = e.feth {
        l.s(" SEL ").u(f.sel as u64).s(" PLT ").u(f.plt as u64);
    }
    if let Some(r) = e.reth {
        l.s(" va 0x").hex(r.va, 1);
        l.s(" rkey 0x").hex(r.rkey as u64, 8);
        l.s(" dma_len ").u(r.dma_len as u64);
    }
    if let Some(a) = e.atomic_eth {
        l.s(" va 0x").hex(a.va, 1);
        l.s(" rkey 0x").hex(a.rkey as u64, 8);
        l.s(" swap/add 0x").hex(a.swap_add, 1);
        l.s(" cmp 0x").hex(a.compare, 1);
    }
    if let Some(a) = e.aeth {
        match a.kind() {
            AethKind::Ack { credits, .. } => match credits {
                Some(c) => {
                    l.s(" ACK credits ").u(c as u64);
                }
                None => {
                    l.s(" ACK credits unlimited");
                }
            },
            AethKind::RnrNak { timer_us, .. } => {
                l.s(" ");
                painted(l, &pal.warn, |l| {
                    l.s("RNR NAK ").u((timer_us / 1000) as u64).s(".");
                    let cs = (timer_us % 1000) / 10;
                    if cs < 10 {
                        l.s("0");
                    }
                    l.u(cs as u64).s(" ms");
                });
            }
            AethKind::Nak(code) => {
                l.s(" ");
                painted(l, &pal.bad, |l| {
                    l.s("NAK ").s(code.name());
                });
            }
            AethKind::Reserved => {
                l.s(" AETH reserved 0x").hex(a.syndrome as u64, 2);
            }
        }
        l.s(" MSN ").u(a.msn as u64);
    }
    if let Some(a) = e.atomic_ack_eth {
        l.s(" orig 0x").hex(a.orig, 1);
    }
    if let Some(i) = e.imm {
        l.s(" imm 0x").hex(i as u64, 8);
    }
    if let Some(i) = e.ieth {
        l.s(" inv_rkey 0x").hex(i as u64, 8);
    }
}

/// ` [mirrored erspan2 session 5]`: the tunnels, outermost first, with their session / VNI /
/// GRE key.
fn mirror_mark(l: &mut Line, pal: &AnsiPalette, e: &Encap) {
    l.s(" ");
    painted(l, &pal.dim, |l| {
        l.s("[mirrored");
        for (i, layer) in e.layers().enumerate() {
            l.s(if i == 0 { " " } else { "/" }).s(layer.kind.name());
            match layer.kind {
                EncapKind::Vxlan { vni, .. } => {
                    l.s(" vni ").u(vni as u64);
                }
                EncapKind::Gre(g) | EncapKind::Erspan1(g) => {
                    if let Some(k) = g.key {
                        l.s(" key ").u(k as u64);
                    }
                }
                k => {
                    if let Some(s) = k.session() {
                        l.s(" session ").u(s as u64);
                    }
                    if k.truncated() {
                        l.s(" T");
                    }
                }
            }
        }
        l.s("]");
    });
}

fn marks(l: &mut Line, pal: &AnsiPalette, p: &RocePacket<'_>) {
    if p.icrc.status == IcrcStatus::Bad {
        l.s(" ");
        painted(l, &pal.bad, |l| {
            l.s("[ICRC BAD]");
        });
    }
    if let Some(m) = p.malformed {
        l.s(" ");
        painted(l, &pal.bad, |l| {
            l.s("[MALFORMED]");
        });
        l.fmt(format_args!(" {m}"));
    }
    if p.truncated {
        l.s(" ");
        painted(l, &pal.warn, |l| {
            l.s("[TRUNCATED]");
        });
    }
}

fn other_line(l: &mut Line, pal: &AnsiPalette, frame: &Frame<'_>, o: &OtherKind) {
    if let Some(n) = frame.net() {
        addresses(l, &pal.dim, &n.src, &n.dst);
    } else {
        let m = l.mark();
        l.left_align(m, 2 * W_ADDR + 4);
    }
    match o {
        OtherKind::Udp { src_port, dst_port } => {
            l.s("UDP ").u(*src_port as u64).s(" → ").u(*dst_port as u64);
        }
        OtherKind::Tcp { src_port, dst_port } => {
            l.s("TCP ").u(*src_port as u64).s(" → ").u(*dst_port as u64);
        }
        OtherKind::Ip { protocol } => {
            l.s("IP protocol ").u(*protocol as u64);
        }
        OtherKind::Arp => {
            l.s("ARP");
        }
        OtherKind::EtherType(t) => {
            l.s("Ethertype 0x").hex(*t as u64, 4);
        }
        OtherKind::IbNonIba => {
            l.s("InfiniBand non-IBA (raw/IP)");
        }
        OtherKind::ErfType(t) => {
            l.s("ERF record type ").u(*t as u64);
        }
        OtherKind::Undecodable(u) => {
            let (mark, a) = if u.is_truncation() {
                ("[TRUNCATED]", &pal.warn)
            } else {
                ("[MALFORMED]", &pal.bad)
            };
            painted(l, a, |l| {
                l.s(mark);
            });
            l.fmt(format_args!(" {u}"));
        }
    }
}
