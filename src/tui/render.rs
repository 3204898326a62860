//! Drawing the dashboard with ratatui: header, flow table, findings or detail pane, key line.
//! What is drawn comes from [`Screen`]; nothing here reads the capture.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row as TRow, Table, TableState};

use super::engine::Brief;
use super::model::{self, Column, Model};
use super::pane::{PaneLine, Severity};
use crate::analyze::Report;

/// Everything the screen shows besides the model.
#[derive(Clone, Debug, Default)]
pub struct Screen {
    /// What is captured: `capture on eth0`, `replay of trace.pcap (1x)`.
    pub source: String,
    /// Seconds since `top` started.
    pub elapsed_s: f64,
    /// libpcap's drops (buffer full, interface), when the source counts them.
    pub drops: Option<(u64, u64)>,
    /// Why the input ended, once it has.
    pub ended: Option<String>,
    /// The findings pane's lines.
    pub findings: Vec<PaneLine>,
    /// The selected flow's last packets (detail view).
    pub recent: Vec<Brief>,
    /// The first frame's time, ns: the zero of the detail view's times.
    pub first_ts_ns: Option<u64>,
    /// The latest report (the selected flow's gaps in the detail view).
    pub report: Option<std::sync::Arc<Report>>,
    /// Whether the detail view replaces the findings pane (`Enter`).
    pub detail: bool,
    /// The last status message (`w`).
    pub message: Option<String>,
    /// The `/` prompt, while it is open.
    pub prompt: Option<Prompt>,
}

/// The `/` prompt at the bottom: the display filter being typed, and why the last Enter was
/// refused.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prompt {
    /// The text typed.
    pub text: String,
    /// The compiler's error for it (`display filter: column N: …`), shown above it.
    pub error: Option<String>,
    /// Whether the text compiles as it stands (checked at each key: green when it does, red
    /// when not, as Wireshark colours its filter bar); `None` for an empty line.
    pub valid: Option<bool>,
}

impl Prompt {
    /// A prompt holding `text`, checked.
    pub fn new(text: String) -> Prompt {
        let mut p = Prompt {
            text,
            error: None,
            valid: None,
        };
        p.check();
        p
    }

    /// Check the text after an edit (and forget the last error).
    pub fn check(&mut self) {
        self.error = None;
        self.valid =
            (!self.text.trim().is_empty()).then(|| super::shown::compile(&self.text).is_ok());
    }
}

/// Draw the whole screen.
pub fn draw(f: &mut Frame<'_>, m: &Model, s: &Screen) {
    let area = f.area();
    // The bottom pane takes a third of what the header and key line leave, at least 4 rows.
    let pane = ((area.height.saturating_sub(4)) / 3).max(4);
    let error = s.prompt.as_ref().is_some_and(|p| p.error.is_some());
    let [head, table, bottom, keys] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Min(3),
        Constraint::Length(pane),
        Constraint::Length(1 + u16::from(error)),
    ])
    .areas(area);
    f.render_widget(header(m, s), head);
    draw_table(f, m, table);
    if s.detail {
        f.render_widget(detail(m, s, bottom.height), bottom);
    } else {
        f.render_widget(findings(s, bottom.height), bottom);
    }
    match &s.prompt {
        Some(p) => f.render_widget(prompt(p, keys.width), keys),
        None => f.render_widget(key_line(m, s), keys),
    }
}

/// The `/` prompt: its error (red) above `/TEXT` and a block cursor, the end of the text
/// shown when it is longer than the line.
fn prompt(p: &Prompt, width: u16) -> Paragraph<'static> {
    let room = usize::from(width).saturating_sub(2);
    let n = p.text.chars().count();
    let tail: String = p.text.chars().skip(n.saturating_sub(room)).collect();
    let mut lines = Vec::new();
    if let Some(e) = &p.error {
        lines.push(Line::from(Span::styled(
            model::clip(e, usize::from(width)),
            Style::default().fg(Color::Red),
        )));
    }
    let colour = match p.valid {
        Some(true) => Style::default().fg(Color::Green),
        Some(false) => Style::default().fg(Color::Red),
        None => Style::default(),
    };
    lines.push(Line::from(vec![
        Span::raw("/"),
        Span::styled(tail, colour),
        Span::styled(" ", Style::default().add_modifier(Modifier::REVERSED)),
    ]));
    Paragraph::new(lines)
}

/// The three header lines: what is watched, elapsed time and drops; rates and frames; sort
/// column and state (paused, finished, the last `w` message).
fn header(m: &Model, s: &Screen) -> Paragraph<'static> {
    let t = m.totals();
    let drops = match s.drops {
        Some((d, i)) => format!("drops {d}/{i}"),
        None => "drops -".into(),
    };
    let first = format!("{}  {:.0}s  {drops}", s.source, s.elapsed_s);
    let second = format!(
        "{:.0} pkt/s  {} Gb/s  {} frames ({} RoCE)",
        t.pps,
        model::gbps(t.bps),
        t.frames,
        t.roce
    );
    let mut state = format!("sort: {}", m.sort().column().title());
    if m.paused() {
        state.push_str("  PAUSED");
    }
    if let Some(e) = &s.ended {
        state.push_str(&format!("  finished: {e}"));
    }
    if let Some(sh) = m.shown() {
        state.push_str(&format!("  filter: {} ({} frames", sh.expr, sh.frames));
        if let Some(n) = sh.from_frame {
            state.push_str(&format!(" from frame {n}"));
        }
        state.push(')');
    }
    if let Some(msg) = &s.message {
        state.push_str(&format!("  {msg}"));
    }
    let bold = Style::default().add_modifier(Modifier::BOLD);
    Paragraph::new(vec![
        Line::from(Span::styled(first, bold)),
        Line::from(Span::styled(second, bold)),
        Line::from(state),
    ])
}

/// The flow table, the selected row highlighted and kept in view.
fn draw_table(f: &mut Frame<'_>, m: &Model, area: Rect) {
    let cols = model::layout(area.width);
    let rows = m.rows();
    let sorted = m.sort().column();
    let head = TRow::new(cols.iter().map(|(c, w)| {
        let title = c.fit(c.title(), *w);
        let st = if *c == sorted {
            Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        } else {
            Style::default().add_modifier(Modifier::BOLD)
        };
        Cell::from(title).style(st)
    }));
    // Only the rows in view are formatted: the selected one and those above it.
    let visible = (area.height.saturating_sub(1) as usize).max(1);
    let sel = m.selected_index(&rows);
    let start = sel.map_or(0, |i| (i + 1).saturating_sub(visible));
    let body = rows.iter().skip(start).take(visible).map(|r| {
        TRow::new(cols.iter().map(|(c, w)| {
            let cell = Cell::from(r.cell(*c, *w));
            match c {
                Column::Spark => cell.style(Style::default().fg(Color::Green)),
                _ if r.flagged(*c) => cell.style(Style::default().fg(Color::Yellow)),
                _ => cell,
            }
        }))
    });
    let widths: Vec<Constraint> = cols.iter().map(|(_, w)| Constraint::Length(*w)).collect();
    let table = Table::new(body, widths)
        .header(head)
        .column_spacing(1)
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(sel.map(|i| i - start));
    f.render_stateful_widget(table, area, &mut state);
}

/// The findings pane.
fn findings(s: &Screen, height: u16) -> Paragraph<'static> {
    let inner = height.saturating_sub(1) as usize;
    let mut lines: Vec<Line<'static>> = s
        .findings
        .iter()
        .take(inner)
        .map(|l| {
            let (tag, color) = match l.severity {
                Severity::Error => ("error", Color::Red),
                Severity::Warning => ("warn ", Color::Yellow),
                Severity::Info => ("info ", Color::Cyan),
            };
            Line::from(vec![
                Span::styled(tag, Style::default().fg(color)),
                Span::raw(" "),
                Span::raw(l.text.clone()),
            ])
        })
        .collect();
    if s.findings.is_empty() {
        lines.push(Line::from("no problems found so far"));
    } else if s.findings.len() > inner {
        let more = s.findings.len() - inner + 1;
        lines.truncate(inner.saturating_sub(1));
        lines.push(Line::from(format!("… {more} more (--summary at the end)")));
    }
    Paragraph::new(lines).block(Block::default().borders(Borders::TOP).title(" findings "))
}

/// The detail view: the selected flow's gaps, then its last packets, newest last.
fn detail(m: &Model, s: &Screen, height: u16) -> Paragraph<'static> {
    let inner = height.saturating_sub(1) as usize;
    let mut lines = Vec::new();
    let title = match m.selected_flow() {
        Some(f) => format!(
            " {} QP {:#08x} ({}) ",
            model::flow_text(&f.key),
            f.key.dest_qp,
            f.transport.unwrap_or("CNP")
        ),
        None => " no flow selected ".into(),
    };
    if let (Some(r), Some(id)) = (&s.report, m.selected_flow_id()) {
        let gaps: Vec<_> = r.gaps.iter().filter(|g| g.flow == id).collect();
        // At most half the pane for gaps, the most recent.
        for g in gaps.iter().skip(gaps.len().saturating_sub(inner / 2)) {
            lines.push(Line::from(Span::styled(
                format!(
                    "gap at frame {}: expected PSN {:#08x}, got {:#08x}, {} missing, {}",
                    g.frame,
                    g.expected_psn,
                    g.received_psn,
                    g.missing,
                    g.verdict.name()
                ),
                Style::default().fg(Color::Yellow),
            )));
        }
    }
    let room = inner.saturating_sub(lines.len());
    for b in s.recent.iter().skip(s.recent.len().saturating_sub(room)) {
        lines.push(Line::from(format!(
            "{:>8} {:>11.6} {:<28} PSN {:#08x} {:>5} B{}{}",
            b.number,
            b.ts_ns.saturating_sub(s.first_ts_ns.unwrap_or(b.ts_ns)) as f64 / 1e9,
            b.opcode,
            b.psn,
            b.payload,
            if b.ack_req { " A" } else { "" },
            if b.ce { " CE" } else { "" }
        )));
    }
    if lines.is_empty() {
        lines.push(Line::from("no packets of this flow since it was selected"));
    }
    Paragraph::new(lines).block(Block::default().borders(Borders::TOP).title(title))
}

/// The key line.
fn key_line(m: &Model, s: &Screen) -> Paragraph<'static> {
    let enter = if s.detail {
        "Enter findings"
    } else {
        "Enter detail"
    };
    let pause = if m.paused() { "p resume" } else { "p pause" };
    Paragraph::new(format!(
        "q quit  ↑↓/jk select  {enter}  s sort  {pause}  / filter  w write pcapng"
    ))
    .style(Style::default().add_modifier(Modifier::REVERSED))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::flow::FlowKey;
    use crate::analyze::live::LiveFlow;
    use crate::decode::Address;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn screen_text(t: &Terminal<TestBackend>) -> Vec<String> {
        let b = t.backend().buffer();
        (0..b.area.height)
            .map(|y| {
                (0..b.area.width)
                    .map(|x| b[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn fits_80x24() {
        let mut m = Model::default();
        let flows: Vec<LiveFlow> = (0..30u32)
            .map(|i| LiveFlow {
                key: FlowKey {
                    src: Address::V4([192, 168, 100, 101]),
                    dst: Address::V4([192, 168, 100, 102]),
                    dest_qp: 0x100 + i,
                    session: None,
                },
                transport: Some("RC"),
                packets: 1000 + u64::from(i),
                transport_bytes: 0,
                payload_bytes: 0,
                retransmitted: 0,
                gap_events: 0,
                missing: 0,
                naks: 0,
                rnr_naks: 0,
                ecn_packets: 0,
                ce: 0,
                cnps: 0,
                ack_rtt_mean_ns: None,
                last_ts_ns: 0,
            })
            .collect();
        m.update(1, &flows, 30_000, 30_000, 0);
        let s = Screen {
            source: "capture on eth0".into(),
            findings: vec![PaneLine {
                severity: Severity::Warning,
                text: "x".repeat(200),
            }],
            ..Screen::default()
        };
        let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
        t.draw(|f| draw(f, &m, &s)).unwrap();
        let lines = screen_text(&t);
        assert!(lines[0].starts_with("capture on eth0"), "{lines:#?}");
        assert!(lines[1].contains("30000 frames (30000 RoCE)"), "{lines:#?}");
        assert!(lines[2].starts_with("sort: Gb/s"), "{lines:#?}");
        assert!(
            lines[3].contains("src → dst") && lines[3].contains("CNPs"),
            "{lines:#?}"
        );
        // Sorted by rate (all 0), then packets: QP 0x11d (1029 packets) first, selected.
        assert!(lines[4].starts_with("192.168.100.101 → 19… "), "{lines:#?}");
        assert!(
            lines[4].contains("0x00011d") && lines[4].contains("1029"),
            "{lines:#?}"
        );
        assert!(lines[23].starts_with("q quit"), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("findings")));
        // 13 of the 30 rows fit (24 lines: 3 header, 1 table header, 6 pane, 1 keys); selecting
        // the last scrolls it into view (QP 0x100, the fewest packets) at the bottom, QP 0x10c
        // on top.
        assert!(!lines.iter().any(|l| l.contains("0x000100")));
        m.move_selection(100);
        t.draw(|f| draw(f, &m, &s)).unwrap();
        let lines = screen_text(&t);
        assert!(lines[16].contains("0x000100"), "{lines:#?}");
        assert!(lines[4].contains("0x00010c"), "{lines:#?}");
    }

    #[test]
    fn prompt_and_its_error_at_the_bottom() {
        let m = Model::default();
        let mut s = Screen {
            prompt: Some(Prompt::new("bth.dest_qp == ".into())),
            ..Screen::default()
        };
        let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
        t.draw(|f| draw(f, &m, &s)).unwrap();
        let lines = screen_text(&t);
        assert_eq!(lines[23].trim_end(), "/bth.dest_qp ==", "{lines:#?}");
        // Red while it does not compile, green once it does.
        let b = t.backend().buffer();
        assert_eq!(b[(1, 23)].fg, Color::Red);
        s.prompt = Some(Prompt::new("bth.dest_qp == 0x11".into()));
        t.draw(|f| draw(f, &m, &s)).unwrap();
        assert_eq!(t.backend().buffer()[(1, 23)].fg, Color::Green);
        s.prompt = Some(Prompt {
            text: "x".repeat(100),
            error: Some("display filter: column 1: no field 'xxx…'".into()),
            valid: Some(false),
        });
        t.draw(|f| draw(f, &m, &s)).unwrap();
        let lines = screen_text(&t);
        assert!(
            lines[22].starts_with("display filter: column 1:"),
            "{lines:#?}"
        );
        // The end of a text longer than the line, and the cursor cell.
        assert_eq!(lines[23], format!("/{} ", "x".repeat(78)), "{lines:#?}");
    }
}
