//! The `nccl` report as text: captures, connections, rings and trees, stragglers and hosts,
//! every table within 80 columns for IPv4 addresses.

use std::io::{self, Write};

use super::Report;
use super::straggler::Cause;

/// Bytes with a binary suffix (K, M, G: powers of 1024), 4 significant characters.
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["", " K", " M", " G"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b}")
    } else {
        format!("{v:.1}{}", UNITS[u])
    }
}

fn us(ns: Option<f64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.1}", v / 1e3))
}

/// A rate with about three significant digits.
fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v if v >= 0.01 || v == 0.0 => format!("{v:.2}"),
        v => format!("{v:.1e}"),
    })
}

/// Write `r` to `w`.
///
/// # Errors
/// Write errors of `w`.
pub fn write(r: &Report, w: &mut impl Write) -> io::Result<()> {
    captures(r, w)?;
    connections(r, w)?;
    topology(r, w)?;
    stragglers(r, w)?;
    hosts(r, w)
}

fn captures(r: &Report, w: &mut impl Write) -> io::Result<()> {
    writeln!(
        w,
        "NCCL {} · {} connection{} · {} capture{}",
        r.nccl_version,
        r.connections.len(),
        if r.connections.len() == 1 { "" } else { "s" },
        r.captures.len(),
        if r.captures.len() == 1 { "" } else { "s" }
    )?;
    for c in &r.captures {
        writeln!(
            w,
            "  {}: {} frames, {} RoCE, {} NCCL CTS/data;\n    {} other RoCE packets (ACKs, CNPs, not NCCL's) left alone",
            c.file, c.frames, c.roce, c.nccl, c.other
        )?;
    }
    Ok(())
}

fn connections(r: &Report, w: &mut impl Write) -> io::Result<()> {
    writeln!(
        w,
        "\nConnections (wait: CTS → first data, mean; GB/s: busbw)"
    )?;
    writeln!(
        w,
        "{:>2} {:<33} {:>3} {:>6} {:>8} {:>5} {:>8} {:>7}",
        "#", "sender → receiver", "QPs", "msgs", "bytes", "CTS", "wait µs", "GB/s"
    )?;
    for c in &r.connections {
        writeln!(
            w,
            "{:>2} {:<33} {:>3} {:>6} {:>8} {:>5} {:>8} {:>7}",
            c.id,
            format!("{} → {}", c.sender, c.receiver),
            c.qps.len(),
            c.messages,
            bytes(c.bytes),
            c.cts,
            us(c.wait_mean_ns),
            opt(c.busbw_gbs)
        )?;
    }
    for c in &r.connections {
        let qps: Vec<String> = c.qps.iter().map(|q| format!("0x{q:06x}")).collect();
        let mut sizes = c.sizes.clone();
        sizes.sort_by_key(|s| std::cmp::Reverse(s.1));
        let sizes: Vec<String> = sizes
            .iter()
            .take(4)
            .map(|(s, n)| format!("{}×{n}", bytes(*s)))
            .collect();
        writeln!(
            w,
            "{:>2} {}, data QP {}{}, {} steps{}",
            c.id,
            c.protocol.map_or("protocol ?", |p| p.name()),
            if qps.is_empty() {
                "-".into()
            } else {
                qps.join(" ")
            },
            c.cts_qp
                .map_or(String::new(), |q| format!(", CTS QP 0x{q:06x}")),
            c.steps,
            if c.incomplete_steps > 0 {
                format!(" (+{} incomplete)", c.incomplete_steps)
            } else {
                String::new()
            },
        )?;
        writeln!(
            w,
            "   {}; sizes {}",
            findings(c.retransmitted, c.cnps, c.naks, c.ce),
            if sizes.is_empty() {
                "-".into()
            } else {
                sizes.join(" ")
            }
        )?;
    }
    Ok(())
}

fn findings(retx: u64, cnps: u64, naks: u64, ce: u64) -> String {
    let mut v = Vec::new();
    for (n, what) in [
        (retx, "retransmitted"),
        (naks, "NAK"),
        (cnps, "CNP"),
        (ce, "CE"),
    ] {
        if n > 0 {
            v.push(format!("{n} {what}"));
        }
    }
    if v.is_empty() {
        "no loss or congestion".into()
    } else {
        v.join(", ")
    }
}

fn topology(r: &Report, w: &mut impl Write) -> io::Result<()> {
    if r.rings.is_empty() && r.trees.is_empty() {
        return Ok(());
    }
    writeln!(w)?;
    for ring in &r.rings {
        writeln!(
            w,
            "Ring (channel {}): {}{}",
            ring.channel,
            ring.hosts.join(" → "),
            if ring.closed {
                format!(" → {}", ring.hosts[0])
            } else {
                " (open)".into()
            }
        )?;
    }
    for t in &r.trees {
        let e: Vec<String> = t.edges.iter().map(|(p, c)| format!("{p} ← {c}")).collect();
        writeln!(
            w,
            "Tree (channel {}): root {}; {}",
            t.channel,
            t.root,
            e.join(", ")
        )?;
    }
    Ok(())
}

fn stragglers(r: &Report, w: &mut impl Write) -> io::Result<()> {
    if r.stragglers.is_empty() {
        return Ok(());
    }
    writeln!(w, "\nStragglers ({} rounds of steps)", r.stragglers.len())?;
    writeln!(
        w,
        "{:>2} {:>6} {:>6} {:>6} {:>9}  worst: round, µs, cause",
        "#", "rounds", "recv", "send", "wire"
    )?;
    for c in &r.connections {
        let mine: Vec<_> = r
            .stragglers
            .iter()
            .filter(|s| s.connection == c.id)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let by = |k: Cause| mine.iter().filter(|s| s.cause == k).count();
        let worst = mine.iter().max_by_key(|s| s.span_ns).copied();
        let worst = worst.map_or(String::new(), |s| {
            format!(
                "{}, {:.1}, {}",
                s.round,
                s.span_ns as f64 / 1e3,
                s.cause.text()
            )
        });
        writeln!(
            w,
            "{:>2} {:>6} {:>6} {:>6} {:>9}  {}",
            c.id,
            mine.len(),
            by(Cause::Receiver),
            by(Cause::Sender),
            by(Cause::Wire),
            worst
        )?;
    }
    Ok(())
}

fn hosts(r: &Report, w: &mut impl Write) -> io::Result<()> {
    writeln!(w, "\nHosts")?;
    writeln!(
        w,
        "{:<15} {:>5} {:>5} {:>9} {:>9} {:>8} {:>10}",
        "host", "sends", "recvs", "sent", "received", "GB/s", "straggler"
    )?;
    for h in &r.hosts {
        writeln!(
            w,
            "{:<15} {:>5} {:>5} {:>9} {:>9} {:>8} {:>10}",
            h.host,
            h.sends,
            h.receives,
            bytes(h.sent_bytes),
            bytes(h.received_bytes),
            opt(h.busbw_gbs),
            h.straggler_rounds
        )?;
    }
    Ok(())
}
