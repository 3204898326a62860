//! `read FILE --html REPORT.html`: one self-contained HTML file — the summary tables, the gap
//! stories, the congestion section and the plots of [`crate::output::plot`] as inline SVG, with
//! a few lines of inline JavaScript to sort tables. Nothing is fetched: no external scripts,
//! styles, fonts or images. Tables are capped at [`MAX_ROWS`] rows with a note; plots are
//! decimated by the plot module, so a 1M-packet capture makes a file of a few MB at most.

pub mod findings;
pub mod table;

use std::fmt::Write as _;

use anyhow::Result;

use crate::analyze::Report;
use crate::analyze::report::{FlowReport, GapVerdict, RetxTrigger};
use crate::analyze::stats::Stat;
use crate::output::plot::{self, Kind, Options, Trace};
use crate::output::summary::fmt_ns;
use table::{HtmlTable, Td, esc, flagged, keyed, num, text};

/// Most rows per table.
pub const MAX_ROWS: usize = 1000;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#111}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}\
th,td{border:1px solid #ccc;padding:2px 6px;white-space:nowrap}\
th{background:#f0f0f0;cursor:pointer;position:sticky;top:0}\
th.asc::after{content:' \\25B2'}th.desc::after{content:' \\25BC'}\
td.n{text-align:right;font-variant-numeric:tabular-nums}td.bad{color:#b00;font-weight:600}\
.note{color:#555;font-style:italic}.warn{color:#b00}\
figure{margin:1em 0}svg{max-width:100%;height:auto}\
#findings td{white-space:normal;min-width:8em;vertical-align:top}";

/// Sorts a table by the clicked column: numbers by `data-v`, text otherwise; a second click
/// reverses.
const SCRIPT: &str = "document.querySelectorAll('table.sortable th').forEach(function(th){\
th.addEventListener('click',function(){var t=th.closest('table'),b=t.tBodies[0],\
i=Array.prototype.indexOf.call(th.parentNode.children,th),asc=!th.classList.contains('asc');\
t.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc')});\
th.classList.add(asc?'asc':'desc');\
var rows=Array.prototype.slice.call(b.rows);rows.sort(function(x,y){\
var a=x.cells[i],c=y.cells[i],va=a.getAttribute('data-v'),vc=c.getAttribute('data-v'),r;\
if(va!==null&&vc!==null){r=parseFloat(va)-parseFloat(vc)}else{r=a.textContent.localeCompare(c.textContent)}\
return asc?r:-r});rows.forEach(function(r){b.appendChild(r)})})});";

fn stat_cell(s: &Option<Stat>, f: impl Fn(&Stat) -> u64) -> Td {
    match s {
        Some(s) => keyed(fmt_ns(f(s)), Some(f(s) as f64)),
        None => keyed("-", None),
    }
}

fn naks(f: &FlowReport) -> u64 {
    let n = &f.naks;
    n.psn_seq_err + n.invalid_request + n.remote_access + n.remote_op + n.invalid_rd + n.reserved
}

fn flows_table(report: &Report) -> HtmlTable {
    let mut t = HtmlTable::new(
        "flows",
        vec![
            "flow",
            "conn",
            "src",
            "dst",
            "QP",
            "tr",
            "packets",
            "payload bytes",
            "messages",
            "gaps",
            "missing",
            "retx",
            "NAKs",
            "RNR",
            "timeouts",
            "CE %",
            "CNPs",
            "ACK RTT p50",
        ],
        MAX_ROWS,
        "largest payload first; `read --summary --json` lists every flow",
    );
    let mut order: Vec<&FlowReport> = report.flows.iter().collect();
    order.sort_by_key(|f| (std::cmp::Reverse(f.payload_bytes), f.id));
    for f in order {
        let m = &f.messages;
        let msgs = m.send.count + m.write.count + m.read.count + m.atomic.count;
        t.row(vec![
            num(f.id as u64, false),
            match f.connection {
                Some(c) => num(c as u64, false),
                None => keyed("unpaired", None),
            },
            text(f.src.to_string()),
            text(f.dst.to_string()),
            keyed(format!("{:#08x}", f.dest_qp), Some(f64::from(f.dest_qp))),
            text(f.transport.name()),
            num(f.packets, false),
            num(f.payload_bytes, false),
            num(msgs, false),
            num(f.psn.gap_events, true),
            num(f.psn.missing, true),
            num(f.psn.retransmitted, true),
            num(naks(f), true),
            num(f.rnr_naks, true),
            num(f.loss.timeouts, true),
            keyed(format!("{:.2}", f.ce_fraction * 100.0), Some(f.ce_fraction)),
            num(f.cnps, false),
            stat_cell(&f.ack_rtt_ns, |s| s.median),
        ]);
    }
    t
}

fn connections_table(report: &Report) -> HtmlTable {
    let mut t = HtmlTable::new(
        "connections",
        vec![
            "conn",
            "a",
            "QP a",
            "b",
            "QP b",
            "tr",
            "paired by",
            "packets",
            "ACK RTT min",
            "ACK RTT p50",
            "ACK RTT p99",
            "MSN mismatches",
        ],
        MAX_ROWS,
        "`read --summary --json` lists every connection",
    );
    for c in &report.connections {
        let mism: u64 = c.msn.iter().map(|m| m.mismatched_aeths).sum();
        t.row(vec![
            num(c.id as u64, false),
            text(c.a.addr.to_string()),
            keyed(format!("{:#08x}", c.a.qp), Some(f64::from(c.a.qp))),
            text(c.b.addr.to_string()),
            keyed(format!("{:#08x}", c.b.qp), Some(f64::from(c.b.qp))),
            text(c.transport.name()),
            text(c.paired_by.name()),
            num(c.packets, false),
            stat_cell(&c.ack_rtt_ns, |s| s.min),
            stat_cell(&c.ack_rtt_ns, |s| s.median),
            stat_cell(&c.ack_rtt_ns, |s| s.p99),
            num(mism, true),
        ]);
    }
    t
}

fn gaps_table(report: &Report) -> HtmlTable {
    let mut t = HtmlTable::new(
        "gaps",
        vec![
            "flow",
            "frame",
            "time",
            "space",
            "expected PSN",
            "received PSN",
            "missing",
            "verdict",
            "story",
        ],
        MAX_ROWS,
        "`read --gaps` lists them all",
    );
    let base = report.frames.first_ts_ns.unwrap_or(0);
    for g in &report.gaps {
        let mut story = match (g.verdict, g.ack_frame) {
            // The text report's verdict, in words: a capture loss is no network loss.
            (GapVerdict::CaptureLoss, Some(a)) => format!(
                "not lost on the network: the capture missed PSN {} (the ACK in frame {a} covers it)",
                g.expected_psn
            ),
            (GapVerdict::UdUnseen, _) => format!(
                "PSN {} not seen here (UD does not retransmit; it may have gone to a host outside the capture)",
                g.expected_psn
            ),
            _ => format!("PSN {} missing", g.expected_psn),
        };
        if g.verdict != GapVerdict::CaptureLoss {
            loss_story(&mut story, g);
        }
        let rel = crate::output::rel_secs(g.ts_ns, base);
        t.row(vec![
            num(g.flow as u64, false),
            num(g.frame, false),
            keyed(format!("{rel:.6} s"), Some(rel)),
            text(g.space.name()),
            num(u64::from(g.expected_psn), false),
            num(u64::from(g.received_psn), false),
            num(u64::from(g.missing), true),
            flagged(g.verdict.name(), g.verdict == GapVerdict::Unresolved),
            text(story),
        ]);
    }
    t
}

/// The NAK and retransmission part of a gap's story, appended to `story`.
fn loss_story(story: &mut String, g: &crate::analyze::report::GapReport) {
    match g.nak {
        Some(n) => {
            let _ = write!(
                story,
                "; NAK (frame {}) {}",
                n.frame,
                n.delay_ns
                    .map_or("stamped before the gap".into(), |d| format!(
                        "after {}",
                        fmt_ns(d)
                    ))
            );
        }
        None => story.push_str("; no NAK seen"),
    }
    match g.retransmission {
        Some(r) => {
            let _ = write!(
                story,
                "; retransmitted (frame {}) {} the {}",
                r.frame,
                r.delay_ns
                    .map_or("stamped before".into(), |d| format!("{} after", fmt_ns(d))),
                if r.trigger == RetxTrigger::Nak {
                    "NAK"
                } else {
                    "previous packet (timeout)"
                }
            );
        }
        None => story.push_str("; never retransmitted in the capture"),
    }
}

fn congestion_table(report: &Report) -> HtmlTable {
    let mut t = HtmlTable::new(
        "congestion",
        vec![
            "data flow",
            "src → dst",
            "CE",
            "CE %",
            "CNP flow",
            "CNPs",
            "CE→CNP p50",
            "CNP gap min",
            "rate before (Gb/s)",
            "rate after (Gb/s)",
        ],
        MAX_ROWS,
        "`read --summary --json` lists every direction",
    );
    let gb = |v: Option<f64>| keyed(v.map_or("-".into(), |v| format!("{v:.2}")), v);
    for c in &report.connections {
        for d in &c.congestion {
            let f = &report.flows[d.data_flow];
            t.row(vec![
                num(d.data_flow as u64, false),
                text(format!("{} → {}", f.src, f.dst)),
                num(d.ce_marked, true),
                keyed(format!("{:.2}", d.ce_fraction * 100.0), Some(d.ce_fraction)),
                num(d.cnp_flow as u64, false),
                num(d.cnps, false),
                stat_cell(&d.ce_to_cnp_ns, |s| s.median),
                stat_cell(&d.cnp_interarrival_ns, |s| s.min),
                gb(d.rate_before_gbps_median),
                gb(d.rate_after_gbps_median),
            ]);
        }
    }
    t
}

fn section(out: &mut String, title: &str, t: &HtmlTable, empty: &str) {
    let _ = writeln!(out, "<h2>{} ({})</h2>", esc(title), t.len());
    if t.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", esc(empty));
    } else {
        out.push_str(&t.render());
    }
}

/// The whole report as one HTML document. `name` is the capture's name for the title.
///
/// # Errors
/// A plot that cannot be drawn (e.g. no font in this build).
pub fn render(report: &Report, trace: &Trace, name: &str) -> Result<String> {
    let fr = &report.frames;
    let ic = &report.icrc;
    let mut o = String::with_capacity(1 << 20);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
         <title>roce-inspect: {n}</title><style>{STYLE}</style></head><body>\n\
         <h1>roce-inspect report: {n}</h1>\n",
        n = esc(name)
    );
    section(&mut o, "Findings", &findings::table(report), "No findings.");
    let dur = fr
        .first_ts_ns
        .zip(fr.last_ts_ns)
        .map_or(0, |(a, b)| b.saturating_sub(a));
    let _ = writeln!(
        o,
        "<p id=\"totals\">{} frames over {}: {} RoCE, {} other, {} malformed, {} truncated; ICRC {} good, {} bad, {} unchecked; PMTU {}.</p>",
        fr.total,
        fmt_ns(dur),
        fr.roce,
        fr.other,
        fr.malformed,
        fr.truncated,
        ic.good,
        ic.bad,
        ic.unchecked,
        report.pmtu.map_or("unknown".into(), |m| m.to_string())
    );
    for w in &report.warnings {
        let _ = writeln!(o, "<p class=\"warn\">warning: {}</p>", esc(&w.to_string()));
    }
    section(&mut o, "Flows", &flows_table(report), "No RoCE flows.");
    section(
        &mut o,
        "Connections",
        &connections_table(report),
        "No paired connections.",
    );
    section(
        &mut o,
        "Gap and loss stories",
        &gaps_table(report),
        "No PSN gaps.",
    );
    section(
        &mut o,
        "Congestion",
        &congestion_table(report),
        "No CE marks and no CNPs.",
    );
    o.push_str("<h2>Plots</h2>\n");
    for kind in Kind::ALL {
        let svg = plot::svg(report, trace, &Options::new(kind))?;
        let _ = writeln!(
            o,
            "<figure id=\"plot-{k}\"><figcaption>{k} (same as <code>roce-inspect plot FILE --kind {k}</code>)</figcaption>\n{svg}</figure>",
            k = kind.name()
        );
    }
    let _ = write!(
        o,
        "<p class=\"note\">Generated by roce-inspect {}.</p>\n<script>{SCRIPT}</script>\n</body></html>\n",
        env!("CARGO_PKG_VERSION")
    );
    Ok(o)
}
