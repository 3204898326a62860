//! Text rendering of the analysis [`Report`] for `--summary`, `--gaps` and `--messages`.
//!
//! Tables are drawn by [`crate::output::fit`]; problem cells (gaps, retransmissions, NAKs, CE
//! marks, MSN mismatches, bad ICRCs, incomplete and refused messages, unresolved gaps) are
//! coloured there, and the section titles and problem lines outside tables with owo-colors, in both
//! cases only when `color` is true.

use crate::analyze::Report;
use crate::analyze::message::MessageStatus;
use crate::analyze::report::{CountBytes, FlowReport, GapReport, GapVerdict, RetxTrigger};
use crate::analyze::stats::Stat;
use crate::output::fit::{Cell, Grid, num, right, write_table};
use owo_colors::OwoColorize;
use std::io::{self, Write};

/// Most gap events printed in the summary (all of them with [`write_gaps`]).
const SUMMARY_GAPS: usize = 50;

/// `format!` into a string made with room for a report cell (32 bytes): `format!` starts an
/// empty one when the format begins with an argument, and grows it two or three times for a
/// cell like `10.0.0.1 → 10.0.0.2`, and a report of thousands of flows formats a hundred
/// thousand such cells (docs/perf.md).
macro_rules! cell_text {
    ($($arg:tt)*) => {{
        let mut s = String::with_capacity(32);
        // Writing into a String cannot fail.
        let _ = std::fmt::Write::write_fmt(&mut s, format_args!($($arg)*));
        s
    }};
}

/// A human duration from nanoseconds: `850 ns`, `12.5 µs`, `3.20 ms`, `1.234 s`.
pub fn fmt_ns(ns: u64) -> String {
    if ns < 1_000 {
        cell_text!("{ns} ns")
    } else if ns < 1_000_000 {
        cell_text!("{:.1} µs", ns as f64 / 1e3)
    } else if ns < 1_000_000_000 {
        cell_text!("{:.2} ms", ns as f64 / 1e6)
    } else {
        cell_text!("{:.3} s", ns as f64 / 1e9)
    }
}

fn fmt_bytes(b: u64) -> String {
    if b < 10_000 {
        cell_text!("{b} B")
    } else if b < 10_000_000 {
        cell_text!("{:.1} kB", b as f64 / 1e3)
    } else if b < 10_000_000_000 {
        cell_text!("{:.1} MB", b as f64 / 1e6)
    } else {
        cell_text!("{:.1} GB", b as f64 / 1e9)
    }
}

fn opt_stat(s: &Option<Stat>, f: impl Fn(&Stat) -> String) -> String {
    s.as_ref().map_or_else(|| "-".to_string(), f)
}

fn title(out: &mut dyn Write, s: &str, color: bool) -> io::Result<()> {
    if color {
        writeln!(out, "\n{}", s.bold())
    } else {
        writeln!(out, "\n{s}")
    }
}

fn problem(out: &mut dyn Write, s: &str, color: bool) -> io::Result<()> {
    if color {
        writeln!(out, "{}", s.red())
    } else {
        writeln!(out, "{s}")
    }
}

/// A message-kind cell: executed count / bytes, and the refused ones in red ("✗ n").
fn kind_cell(c: CountBytes) -> Cell {
    let text = match (c.count, c.failed) {
        (0, 0) => "-".to_string(),
        (_, 0) => cell_text!("{} / {}", c.count, fmt_bytes(c.bytes)),
        _ => cell_text!("{} / {} ✗ {}", c.count, fmt_bytes(c.bytes), c.failed),
    };
    let cell = right(text);
    if c.failed > 0 { cell.red() } else { cell }
}

fn msg_cells(f: &FlowReport) -> [Cell; 4] {
    let m = &f.messages;
    [m.send, m.write, m.read, m.atomic].map(kind_cell)
}

/// The congestion table's first cells for data flow `f`: id, addresses, ECN codepoint counts,
/// CE percentage (of `ce_fraction`), FECN.
fn ecn_cells(f: &FlowReport, ce_fraction: f64) -> Vec<Cell> {
    vec![
        right(f.id),
        Cell::new(flow_label(f)),
        right(f.ecn.ect0),
        right(f.ecn.ect1),
        right(f.ecn.not_ect),
        num(f.ecn.ce, true),
        right(cell_text!("{:.2}", ce_fraction * 100.0)),
        right(f.fecn),
    ]
}

fn flow_label(f: &FlowReport) -> String {
    match f.session {
        Some(s) => cell_text!("{} → {} (session {s})", f.src, f.dst),
        None => cell_text!("{} → {}", f.src, f.dst),
    }
}

/// Write the `--summary` report: the frame/ICRC line, the connections and flows table, the gap
/// and loss events, the congestion table, then ICRC failures and malformed frames.
pub fn write_summary(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    write_summary_fit(report, out, color, None)
}

/// Flow-table columns hidden first when the terminal is narrow (issue 14); the last two only
/// when long addresses (IPv6) leave no room (issue 39).
const FLOW_DROP_ORDER: [&str; 13] = [
    "ATOMIC",
    "SEND",
    "WRITE",
    "READ",
    "missing",
    "TO",
    "RNR",
    "tr",
    "conn",
    "ACK RTT p50",
    "CE %",
    "CNPs",
    "payload",
];

/// Congestion-table columns hidden first when the terminal is narrow (issue 39): the ECN
/// breakdown before the CE count and fraction, the reaction times before the rates.
const CONGESTION_DROP_ORDER: [&str; 7] = [
    "ECT1",
    "Not-ECT",
    "FECN",
    "ECT0",
    "CNP flow",
    "CNP gap min/med",
    "CE→CNP med",
];

/// Loss-table columns hidden first when the terminal is narrow (issue 39).
const LOSS_DROP_ORDER: [&str; 3] = [
    "timeout retx min/med/max",
    "gap→NAK min/med/max",
    "RNR retx",
];

/// Priority-table columns hidden first when the terminal is narrow (issue 39).
const PRIORITY_DROP_ORDER: [&str; 2] = ["CNP PCP", "PCP"];

/// [`write_summary`] fitted to a terminal `width` columns wide (`None`: full width): the flow
/// table hides its least important columns (and says so), other tables wrap. Called on a thread
/// of a `rayon` pool, the sections after the flow table are made by the pool's threads (up to
/// 1,024 flows); the text is the same.
///
/// # Errors
/// The writer's.
pub fn write_summary_fit(
    report: &Report,
    out: &mut dyn Write,
    color: bool,
    width: Option<u16>,
) -> io::Result<()> {
    write_frames_line(report, out, color)?;
    if rayon::current_thread_index().is_none() || report.flows.len() > PARALLEL_FLOWS {
        write_flows(report, out, color, width)?;
        return LATER
            .iter()
            .flat_map(|g| g.iter())
            .try_for_each(|w| w(report, out, color, width));
    }
    // On a thread of a pool (`read --threads N`), the sections after the flow table are
    // written into memory by the pool's threads while this one writes the table (the 500k-frame
    // mixed trace, 7,832 flows, 2 threads: 45 -> 26 ms in median).
    let mut later: [io::Result<Vec<u8>>; 2] = [Ok(Vec::new()), Ok(Vec::new())];
    rayon::in_place_scope(|s| {
        for (slot, group) in later.iter_mut().zip(LATER) {
            s.spawn(move |_| {
                let mut buf = Vec::new();
                let r = group
                    .iter()
                    .try_for_each(|w| w(report, &mut buf, color, width));
                *slot = r.map(|()| buf);
            });
        }
        write_flows(report, out, color, width)
    })?;
    for text in later {
        out.write_all(&text?)?;
    }
    Ok(())
}

/// Most flows whose report's later sections are written into memory in parallel: a larger
/// report, up to a full flow table (`--max-flows`, 16,384 by default), is written in order as
/// it is made, so that its text adds nothing to the peak memory (the report phase is the run's
/// peak; made on another thread, the text also sat in that thread's malloc arena, which the
/// calling thread cannot reuse: docs/perf.md).
const PARALLEL_FLOWS: usize = 1024;

/// A section of the summary: the report, where to write, colour, the terminal width.
type Section = fn(&Report, &mut dyn Write, bool, Option<u16>) -> io::Result<()>;

/// The sections after the flow table, in order, in two groups of about the same work (on the
/// 500k-frame mixed trace: the outcomes and the priority table; the gaps, losses, congestion
/// and bad frames).
const LATER: [&[Section]; 2] = [
    &[
        |r, out, color, _| write_outcomes(r, out, color),
        write_priority,
    ],
    &[write_loss, write_congestion, |r, out, color, _| {
        write_bad_frames(r, out, color)
    }],
];

/// The first line (frame and ICRC counts), then the warnings (the frames of flows beyond
/// `--max-flows` among them).
fn write_frames_line(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    let fr = &report.frames;
    let ic = &report.icrc;
    writeln!(
        out,
        "{} frames: {} RoCE, {} other, {} malformed, {} truncated; ICRC {} good, {} bad, {} unchecked; PMTU {}",
        fr.total,
        fr.roce,
        fr.other,
        fr.malformed,
        fr.truncated,
        ic.good,
        ic.bad,
        ic.unchecked,
        report.pmtu.map_or("unknown".to_string(), |m| m.to_string()),
    )?;
    for w in &report.warnings {
        problem(out, &format!("warning: {w}"), color)?;
    }
    Ok(())
}

/// The connections and flows table, then each connection's ACK RTT and MSN check, and the flows
/// whose messages disagree with their RETH DMA length.
fn write_flows(
    report: &Report,
    out: &mut dyn Write,
    color: bool,
    width: Option<u16>,
) -> io::Result<()> {
    title(out, "Connections and flows", color)?;
    if report.flows.is_empty() {
        writeln!(out, "no RoCE flows")?;
    } else {
        let header = [
            "conn",
            "flow",
            "src → dst",
            "QP",
            "tr",
            "pkts",
            "payload",
            "SEND",
            "WRITE",
            "READ",
            "ATOMIC",
            "gaps",
            "missing",
            "retx",
            "NAKs",
            "RNR",
            "TO",
            "CE %",
            "CNPs",
            "ACK RTT p50",
        ];
        // Paired flows first, connection by connection; then unpaired ones.
        let mut order: Vec<&FlowReport> = Vec::with_capacity(report.flows.len());
        for c in &report.connections {
            order.extend(c.flows.iter().map(|&i| &report.flows[i]));
        }
        order.extend(report.flows.iter().filter(|f| f.connection.is_none()));
        let row = |i: usize| {
            let f = order[i];
            let conn = match f.connection {
                Some(c) => cell_text!("{c} ({})", report.connections[c].paired_by.name()),
                None => "unpaired".to_string(),
            };
            let naks = f.naks.psn_seq_err
                + f.naks.invalid_request
                + f.naks.remote_access
                + f.naks.remote_op
                + f.naks.invalid_rd
                + f.naks.reserved;
            let [send, write, read, atomic] = msg_cells(f);
            let ce = if f.ecn.ce == 0 {
                right("0")
            } else {
                let c = right(cell_text!("{:.2}", f.ce_fraction * 100.0));
                c.yellow()
            };
            vec![
                Cell::new(conn),
                right(f.id),
                Cell::new(flow_label(f)),
                Cell::new(cell_text!("{:#08x}", f.dest_qp)),
                Cell::new(f.transport.name()),
                right(f.packets),
                right(fmt_bytes(f.payload_bytes)),
                send,
                write,
                read,
                atomic,
                num(f.psn.gap_events, true),
                num(f.psn.missing, true),
                num(f.psn.retransmitted, true),
                num(naks, true),
                num(f.rnr_naks, true),
                num(f.loss.timeouts, true),
                ce,
                num(f.cnps, false),
                right(opt_stat(&f.ack_rtt_ns, |s| fmt_ns(s.median))),
            ]
        };
        write_table(
            out,
            color,
            &header,
            order.len(),
            row,
            &FLOW_DROP_ORDER,
            width,
        )?;
    }
    for c in &report.connections {
        if let Some(s) = &c.ack_rtt_ns {
            writeln!(
                out,
                "conn {} {} QP 0x{:06x} ⇄ {} QP 0x{:06x}: ACK RTT min {} / median {} / p99 {} / max {} over {} ACKed requests",
                c.id,
                c.a.addr,
                c.a.qp,
                c.b.addr,
                c.b.qp,
                fmt_ns(s.min),
                fmt_ns(s.median),
                fmt_ns(s.p99),
                fmt_ns(s.max),
                s.count
            )?;
        }
        for m in &c.msn {
            if m.mismatch || m.mismatched_aeths > 0 {
                problem(
                    out,
                    &format!(
                        "conn {}: MSN advanced by {} in flow {} but {} messages were reassembled ({} of {} AETHs disagree)",
                        c.id,
                        m.msn_delta,
                        m.aeth_flow,
                        m.messages,
                        m.mismatched_aeths,
                        m.checked_aeths
                    ),
                    color,
                )?;
            }
        }
    }
    for f in report.flows.iter().filter(|f| f.dma_len_mismatches > 0) {
        problem(
            out,
            &format!(
                "flow {}: {} messages delivered a byte count different from their RETH DMA length",
                f.id, f.dma_len_mismatches
            ),
            color,
        )?;
    }
    Ok(())
}

/// Gap and loss events: the first gaps, the losses per flow, the NAKs no gap explains.
fn write_loss(
    report: &Report,
    out: &mut dyn Write,
    color: bool,
    width: Option<u16>,
) -> io::Result<()> {
    let total_gaps: u64 = report.flows.iter().map(|f| f.psn.gap_events).sum();
    title(out, &format!("Gap and loss events ({total_gaps})"), color)?;
    if total_gaps == 0 {
        writeln!(out, "no PSN gaps")?;
    } else {
        write_gap_table(
            report,
            &report.gaps[..report.gaps.len().min(SUMMARY_GAPS)],
            out,
            color,
            width,
        )?;
        if report.gaps.len() > SUMMARY_GAPS {
            writeln!(
                out,
                "… {} more (--gaps lists them all)",
                report.gaps.len() - SUMMARY_GAPS
            )?;
        }
        let mut t = Grid::new(
            color,
            &[
                "flow",
                "NAK retx",
                "RNR retx",
                "timeouts",
                "gap→NAK min/med/max",
                "NAK→retx min/med/max",
                "timeout retx min/med/max",
            ],
        )
        .hiding(&LOSS_DROP_ORDER);
        let trio = |s: &Option<Box<Stat>>| {
            opt_stat(&s.as_deref().copied(), |s| {
                format!(
                    "{} / {} / {}",
                    fmt_ns(s.min),
                    fmt_ns(s.median),
                    fmt_ns(s.max)
                )
            })
        };
        for f in report.flows.iter().filter(|f| {
            f.psn.gap_events
                + f.loss.nak_retransmissions
                + f.loss.timeouts
                + f.loss.rnr_retransmissions
                > 0
        }) {
            t.add_row(vec![
                right(f.id),
                num(f.loss.nak_retransmissions, false),
                num(f.loss.rnr_retransmissions, false),
                num(f.loss.timeouts, true),
                right(trio(&f.loss.nak_delay_ns)),
                right(trio(&f.loss.retx_delay_ns)),
                right(trio(&f.loss.timeout_delay_ns)),
            ]);
        }
        t.write(out, width)?;
    }
    write_unexplained(report, out, color)?;
    Ok(())
}

/// The congestion table (ECN, CNPs, reaction, rates) and CNPs that came with NAKs.
fn write_congestion(
    report: &Report,
    out: &mut dyn Write,
    color: bool,
    width: Option<u16>,
) -> io::Result<()> {
    title(out, "Congestion", color)?;
    let mut t = Grid::new(
        color,
        &[
            "data flow",
            "src → dst",
            "ECT0",
            "ECT1",
            "Not-ECT",
            "CE",
            "CE %",
            "FECN",
            "CNP flow",
            "CNPs",
            "CE→CNP med",
            "CNP gap min/med",
            "rate before/after (Gb/s)",
        ],
    )
    .hiding(&CONGESTION_DROP_ORDER);
    for c in &report.connections {
        for d in &c.congestion {
            let f = &report.flows[d.data_flow];
            let mut row = ecn_cells(f, d.ce_fraction);
            row.extend([
                right(d.cnp_flow),
                num(d.cnps, false),
                right(opt_stat(&d.ce_to_cnp_ns, |s| fmt_ns(s.median))),
                right(opt_stat(&d.cnp_interarrival_ns, |s| {
                    format!("{} / {}", fmt_ns(s.min), fmt_ns(s.median))
                })),
                right(
                    match (d.rate_before_gbps_median, d.rate_after_gbps_median) {
                        (Some(b), Some(a)) => format!("{b:.2} / {a:.2}"),
                        _ => "-".to_string(),
                    },
                ),
            ]);
            t.add_row(row);
        }
    }
    // Flows with CE marks or CNPs that no connection accounts for.
    for f in report.flows.iter().filter(|f| {
        (f.ecn.ce > 0 || f.cnps > 0)
            && f.connection.is_none_or(|c| {
                !report.connections[c]
                    .congestion
                    .iter()
                    .any(|d| d.data_flow == f.id || d.cnp_flow == f.id)
            })
    }) {
        let mut row = ecn_cells(f, f.ce_fraction);
        row.extend([
            Cell::new("unpaired"),
            num(f.cnps, false),
            right("-"),
            right("-"),
            right("-"),
        ]);
        t.add_row(row);
    }
    if t.is_empty() {
        writeln!(out, "no CE marks and no CNPs")?;
    } else {
        t.write(out, width)?;
    }
    for c in &report.connections {
        for d in c.congestion.iter().filter(|d| d.cnps_with_nak > 0) {
            problem(
                out,
                &format!(
                    "flow {}: {} of {} CNPs came within one RTT of a PSN-sequence NAK (loss and congestion at once)",
                    d.data_flow, d.cnps_with_nak, d.cnps
                ),
                color,
            )?;
        }
    }
    Ok(())
}

/// ICRC failures and malformed frames.
fn write_bad_frames(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    let fr = &report.frames;
    let ic = &report.icrc;
    title(out, "ICRC failures and malformed frames", color)?;
    if ic.bad == 0 && fr.malformed == 0 {
        writeln!(out, "none")?;
    } else {
        if ic.bad > 0 {
            let list: Vec<String> = ic.bad_frames.iter().map(u64::to_string).collect();
            problem(
                out,
                &format!(
                    "{} frames with a bad ICRC: {}{}",
                    ic.bad,
                    list.join(", "),
                    if ic.bad as usize > list.len() {
                        ", …"
                    } else {
                        ""
                    }
                ),
                color,
            )?;
        }
        for m in &fr.malformed_frames {
            problem(
                out,
                &format!("frame {}: malformed: {}", m.frame, m.reason),
                color,
            )?;
        }
        if fr.malformed as usize > fr.malformed_frames.len() {
            writeln!(
                out,
                "… {} more malformed frames",
                fr.malformed as usize - fr.malformed_frames.len()
            )?;
        }
    }
    Ok(())
}

/// Request outcomes: refused and incomplete messages, QP error states, FLUSH / ATOMIC WRITE
/// counts, responses without a captured request.
fn write_outcomes(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    for f in &report.flows {
        let m = &f.messages;
        let mut other = Vec::new();
        for (name, c) in [("FLUSH", m.flush), ("ATOMIC WRITE", m.atomic_write)] {
            if c.count + c.failed > 0 {
                other.push(format!("{name} {} / {}", c.count, fmt_bytes(c.bytes)));
            }
        }
        if !other.is_empty() {
            writeln!(out, "flow {}: {}", f.id, other.join(", "))?;
        }
        let failed: Vec<String> = [
            ("SEND", m.send),
            ("WRITE", m.write),
            ("READ", m.read),
            ("ATOMIC", m.atomic),
            ("FLUSH", m.flush),
            ("ATOMIC WRITE", m.atomic_write),
        ]
        .iter()
        .filter(|(_, c)| c.failed > 0)
        .map(|(n, c)| format!("{} {n}", c.failed))
        .collect();
        if !failed.is_empty() {
            problem(
                out,
                &format!(
                    "flow {}: refused by the responder: {}",
                    f.id,
                    failed.join(", ")
                ),
                color,
            )?;
        }
        if f.responses.unmatched + f.responses.duplicate > 0 {
            writeln!(
                out,
                "flow {}: {} responses to requests before the capture, {} duplicate responses",
                f.id, f.responses.unmatched, f.responses.duplicate
            )?;
        }
    }
    for c in &report.connections {
        let [a, b] = c.flows.map(|i| &report.flows[i]);
        if let Some(e) = &a.qp_error {
            let later = a.qp_error.map_or(0, |e| e.later_packets)
                + b.qp_error.map_or(0, |e| e.later_packets);
            problem(
                out,
                &format!(
                    "conn {}: QP pair in the error state after the {} NAK in frame {} (PSN {}){}",
                    c.id,
                    e.status.name(),
                    e.frame,
                    e.psn,
                    if later > 0 {
                        format!("; {later} later packets not analysed")
                    } else {
                        String::new()
                    }
                ),
                color,
            )?;
        }
    }
    let incomplete: u64 = report.flows.iter().map(|f| f.incomplete_messages).sum();
    if incomplete > 0 {
        problem(
            out,
            &format!(
                "{} incomplete (the capture ends first, no response seen, or flushed by a fatal NAK)",
                super::counted(incomplete, "message")
            ),
            color,
        )?;
    }
    Ok(())
}

/// "v (n), …" of a value → count map.
fn values(m: &crate::analyze::report::CountMap<u8>) -> String {
    let v: Vec<String> = m.iter().map(|(k, n)| format!("{k} ({n})")).collect();
    v.join(", ")
}

/// Priority per flow: DSCP and PCP values of data packets and of CNPs.
fn write_priority(
    report: &Report,
    out: &mut dyn Write,
    color: bool,
    width: Option<u16>,
) -> io::Result<()> {
    title(out, "Priority (DSCP / 802.1Q PCP)", color)?;
    if report.flows.is_empty() {
        return writeln!(out, "no RoCE flows");
    }
    let header = ["flow", "src → dst", "DSCP", "PCP", "CNP DSCP", "CNP PCP"];
    let dash = |s: String| if s.is_empty() { "-".to_string() } else { s };
    let row = |i: usize| {
        let f = &report.flows[i];
        let p = &f.priority;
        vec![
            right(f.id),
            Cell::new(flow_label(f)),
            Cell::new(dash(values(&p.dscp))),
            Cell::new(dash(values(&p.pcp))),
            Cell::new(dash(values(&p.cnp_dscp))),
            Cell::new(dash(values(&p.cnp_pcp))),
        ]
    };
    let n = report.flows.len();
    write_table(out, color, &header, n, row, &PRIORITY_DROP_ORDER, width).map(|_| ())
}

/// PSN-sequence NAKs that no captured gap explains.
fn write_unexplained(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    for n in &report.unexplained_naks {
        problem(
            out,
            &format!(
                "flow {}: NAK (PSN sequence error) in frame {} for PSN {}, which the capture shows was sent: lost after the capture point or dropped by the responder",
                n.flow, n.frame, n.psn
            ),
            color,
        )?;
    }
    Ok(())
}

/// A gap verdict, in red when nothing explains the gap.
fn verdict_cell(v: GapVerdict) -> Cell {
    if v == GapVerdict::Unresolved {
        Cell::new(v.name()).red()
    } else {
        Cell::new(v.name())
    }
}
/// Gap-table columns hidden first when the terminal is narrow (issue 14). The retransmission's
/// trigger (`after`) goes last: the verdict says NAK or timeout too, and without it the table
/// fits 80 columns (83 with it: `nak_retransmitted` is one word).
const GAP_DROP_ORDER: [&str; 8] = [
    "src → dst",
    "QP",
    "space",
    "received",
    "NAK frame",
    "retx frame",
    "time (s)",
    "after",
];

fn write_gap_table(
    report: &Report,
    gaps: &[GapReport],
    out: &mut dyn Write,
    color: bool,
    width: Option<u16>,
) -> io::Result<()> {
    let t0 = report.frames.first_ts_ns.unwrap_or(0);
    let header = [
        "flow",
        "src → dst",
        "QP",
        "frame",
        "time (s)",
        "space",
        "expected",
        "received",
        "missing",
        "NAK frame",
        "gap→NAK",
        "retx frame",
        "retx delay",
        "after",
        "verdict",
    ];
    let row = |i: usize| {
        let g = &gaps[i];
        let f = &report.flows[g.flow];
        let (nf, nd) = g.nak.map_or(("-".to_string(), "-".to_string()), |n| {
            (n.frame.to_string(), n.delay_ns.map_or("-".into(), fmt_ns))
        });
        let (rf, rd, rt) =
            g.retransmission
                .map_or(("-".to_string(), "-".to_string(), "-".to_string()), |r| {
                    (
                        r.frame.to_string(),
                        r.delay_ns.map_or("-".into(), fmt_ns),
                        r.trigger.name().to_string(),
                    )
                });
        let after = if g
            .retransmission
            .is_some_and(|r| r.trigger == RetxTrigger::Timeout)
        {
            Cell::new(rt).red()
        } else {
            Cell::new(rt)
        };
        vec![
            right(g.flow),
            Cell::new(flow_label(f)),
            Cell::new(format!("{:#08x}", f.dest_qp)),
            right(g.frame),
            right(format!("{:.6}", super::rel_secs(g.ts_ns, t0))),
            Cell::new(g.space.name()),
            right(g.expected_psn),
            right(g.received_psn),
            num(u64::from(g.missing), true),
            right(nf),
            right(nd),
            right(rf),
            right(rd),
            after,
            verdict_cell(g.verdict),
        ]
    };
    write_table(out, color, &header, gaps.len(), row, &GAP_DROP_ORDER, width).map(|_| ())
}

/// Write every stored gap event with its loss story (`--gaps`), every column.
pub fn write_gaps(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    write_gaps_fit(report, out, color, None)
}

/// [`write_gaps`] fitted to a terminal `width` columns wide (`None`: every column): the least
/// important columns (the addresses, the QP, the PSN space) are hidden first, and a note under
/// the table says which.
///
/// # Errors
/// The writer's.
pub fn write_gaps_fit(
    report: &Report,
    out: &mut dyn Write,
    color: bool,
    width: Option<u16>,
) -> io::Result<()> {
    if report.gaps.is_empty() {
        return writeln!(out, "no PSN gaps");
    }
    write_gap_table(report, &report.gaps, out, color, width)
}

/// Message-table columns hidden first when the terminal is narrow: what the flow number and
/// the QPN already say, then the details of one message kind, a READ's latency (a READ that
/// timed out shows there), and last the flow number (the id and QPN still tell the message).
const MESSAGE_DROP_ORDER: [&str; 9] = [
    "src → dst",
    "imm",
    "RETH va / rkey / len",
    "pkts",
    "last PSN",
    "start (s)",
    "duration",
    "READ latency",
    "flow",
];

/// Write the reassembled messages (`--messages`; needs `AnalyzeConfig::keep_messages`), every
/// column; the first, `id`, is the message's id, which its packets carry as
/// `analysis.message`.
pub fn write_messages(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    write_messages_fit(report, out, color, None)
}

/// [`write_messages`] fitted to a terminal `width` columns wide (`None`: every column): the
/// least important columns (the addresses, immediate data, RETH) are hidden first, and a note
/// under the table says which.
///
/// # Errors
/// The writer's.
pub fn write_messages_fit(
    report: &Report,
    out: &mut dyn Write,
    color: bool,
    width: Option<u16>,
) -> io::Result<()> {
    let Some(msgs) = &report.messages else {
        return writeln!(out, "messages were not kept");
    };
    let t0 = report.frames.first_ts_ns.unwrap_or(0);
    let header = [
        "id",
        "flow",
        "src → dst",
        "QP",
        "kind",
        "first PSN",
        "last PSN",
        "frames",
        "pkts",
        "bytes",
        "start (s)",
        "duration",
        "RETH va / rkey / len",
        "imm",
        "READ latency",
        "status",
    ];
    let row = |i: usize| {
        let m = &msgs[i];
        let f = &report.flows[m.flow];
        let kind = format!(
            "{}{}",
            m.kind.name().to_uppercase(),
            if m.immediate { "+IMM" } else { "" }
        );
        let reth = m.reth.map_or("-".to_string(), |r| {
            format!("{:#x} / 0x{:08x} / {}", r.va, r.rkey, r.dma_len)
        });
        let reth = if m.dma_len_mismatch {
            Cell::new(reth).red()
        } else {
            Cell::new(reth)
        };
        let state = match (m.status, m.dma_len_mismatch) {
            (MessageStatus::Ok, true) => "length ≠ RETH".to_string(),
            (MessageStatus::Ok, false) if m.reissues > 0 => {
                format!(
                    "ok, re-issued {}× (frame {})",
                    m.reissues,
                    m.reissue_frame.unwrap_or(0)
                )
            }
            (st, _) => st.name().to_string(),
        };
        let state = if !state.starts_with("ok") {
            Cell::new(state).red()
        } else {
            Cell::new(state)
        };
        vec![
            right(m.id),
            right(m.flow),
            Cell::new(flow_label(f)),
            Cell::new(format!("{:#08x}", f.dest_qp)),
            Cell::new(kind),
            right(m.first_psn),
            right(m.last_psn),
            right(if m.first_frame == m.last_frame {
                m.first_frame.to_string()
            } else {
                format!("{}–{}", m.first_frame, m.last_frame)
            }),
            right(m.packets),
            right(m.bytes),
            right(format!("{:.6}", super::rel_secs(m.start_ts_ns, t0))),
            right(fmt_ns(m.duration_ns)),
            reth,
            right(m.imm_data.map_or("-".to_string(), |v| format!("{v:#010x}"))),
            right(m.read_latency_ns.map_or("-".to_string(), fmt_ns)),
            state,
        ]
    };
    let n = msgs.len();
    write_table(out, color, &header, n, row, &MESSAGE_DROP_ORDER, width).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(fmt_ns(850), "850 ns");
        assert_eq!(fmt_ns(12_500), "12.5 µs");
        assert_eq!(fmt_ns(3_200_000), "3.20 ms");
        assert_eq!(fmt_bytes(15_000), "15.0 kB");
    }
}
