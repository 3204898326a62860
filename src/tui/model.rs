//! The dashboard's view model: the latest per-flow counters, rates over a sliding window,
//! sort order, selection and the table's rows formatted for a terminal width. Pure: no
//! terminal, no clock (times come with each [`Model::update`]), so it is unit-tested as is.

use std::collections::{HashMap, VecDeque};

use super::shown::Shown;
use crate::analyze::flow::FlowKey;
use crate::analyze::live::LiveFlow;

/// Default width of the rate window, ns (1 s, as `iftop`'s shortest average is 2 s and
/// `ibdump`-era tools print per second).
pub const DEFAULT_WINDOW_NS: u64 = 1_000_000_000;

/// Rate samples kept per flow for its sparkline (one per update).
pub const SPARK_LEN: usize = 16;

/// What the table is sorted by (`s` cycles through them in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    /// Current rate, highest first (the default).
    Rate,
    /// Packets, most first.
    Packets,
    /// Retransmitted packets, most first.
    Retransmitted,
    /// PSN gap events, most first.
    Gaps,
    /// NAKs + RNR NAKs, most first.
    Naks,
    /// CE fraction, highest first.
    Ce,
    /// CNPs, most first.
    Cnps,
}

impl SortBy {
    /// The next sort column.
    pub fn next(self) -> SortBy {
        match self {
            SortBy::Rate => SortBy::Packets,
            SortBy::Packets => SortBy::Retransmitted,
            SortBy::Retransmitted => SortBy::Gaps,
            SortBy::Gaps => SortBy::Naks,
            SortBy::Naks => SortBy::Ce,
            SortBy::Ce => SortBy::Cnps,
            SortBy::Cnps => SortBy::Rate,
        }
    }

    /// The column's header text, as the table shows it.
    pub fn column(self) -> Column {
        match self {
            SortBy::Rate => Column::Rate,
            SortBy::Packets => Column::Packets,
            SortBy::Retransmitted => Column::Retx,
            SortBy::Gaps => Column::Gaps,
            SortBy::Naks => Column::Naks,
            SortBy::Ce => Column::Ce,
            SortBy::Cnps => Column::Cnps,
        }
    }
}

/// A column of the flow table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// `src → dst`.
    Flow,
    /// BTH DestQP (hex).
    Qp,
    /// Transport bytes per second over the window, Gb/s.
    Rate,
    /// Packets so far.
    Packets,
    /// Retransmitted packets so far.
    Retx,
    /// PSN gap events so far.
    Gaps,
    /// NAKs so far (every code).
    Naks,
    /// RNR NAKs so far.
    Rnr,
    /// CE-marked share of the packets with an ECN field, %.
    Ce,
    /// CNPs so far.
    Cnps,
    /// Mean ACK RTT, µs.
    Rtt,
    /// Rate over the last updates, as block characters.
    Spark,
}

impl Column {
    /// Header text.
    pub fn title(self) -> &'static str {
        match self {
            Column::Flow => "src → dst",
            Column::Qp => "QP",
            Column::Rate => "Gb/s",
            Column::Packets => "packets",
            Column::Retx => "retx",
            Column::Gaps => "gaps",
            Column::Naks => "NAKs",
            Column::Rnr => "RNR",
            Column::Ce => "CE%",
            Column::Cnps => "CNPs",
            Column::Rtt => "RTT µs",
            Column::Spark => "rate",
        }
    }

    /// Width in terminal cells (the flow column's is its least: it takes what is left).
    pub fn width(self) -> u16 {
        match self {
            Column::Flow => 17,
            Column::Qp => 8,
            Column::Rate => 6,
            Column::Packets => 7,
            Column::Retx | Column::Gaps => 5,
            Column::Naks | Column::Cnps => 5,
            Column::Rnr => 4,
            Column::Ce => 5,
            Column::Rtt => 6,
            Column::Spark => 10,
        }
    }

    /// `text` as this column shows it in `width` cells: cut to fit (`…`), and numbers
    /// right-aligned as `top` and `iftop` show them. The one formatting of every cell, the
    /// header's titles included.
    pub fn fit(self, text: &str, width: u16) -> String {
        let text = clip(text, width as usize);
        match self {
            Column::Flow | Column::Qp | Column::Spark => text,
            _ => format!("{text:>w$}", w = width as usize),
        }
    }
}

/// Every column, in display order.
pub const COLUMNS: [Column; 12] = [
    Column::Flow,
    Column::Qp,
    Column::Rate,
    Column::Packets,
    Column::Retx,
    Column::Gaps,
    Column::Naks,
    Column::Rnr,
    Column::Ce,
    Column::Cnps,
    Column::Rtt,
    Column::Spark,
];

/// Columns hidden first when the terminal is narrow, in that order.
const DROP_ORDER: [Column; 3] = [Column::Spark, Column::Rtt, Column::Rnr];

/// The columns that fit `width` cells (one cell between columns) and their widths: the flow
/// column takes the room left over; the sparkline, then ACK RTT, then RNR are hidden when the
/// flow column would be narrower than its least width. Every other column always shows (they
/// fit 80 cells).
pub fn layout(width: u16) -> Vec<(Column, u16)> {
    let mut cols: Vec<Column> = COLUMNS.to_vec();
    let fixed = |cols: &[Column]| -> u16 {
        cols.iter()
            .filter(|c| **c != Column::Flow)
            .map(|c| c.width() + 1)
            .sum()
    };
    for d in DROP_ORDER {
        if width.saturating_sub(fixed(&cols)) >= Column::Flow.width() {
            break;
        }
        cols.retain(|c| *c != d);
    }
    let flow = width.saturating_sub(fixed(&cols)).max(Column::Flow.width());
    cols.into_iter()
        .map(|c| (c, if c == Column::Flow { flow } else { c.width() }))
        .collect()
}

/// One flow's rate history: cumulative (time ns, transport bytes) samples inside the window,
/// and the rate of each update for the sparkline.
#[derive(Clone, Debug, Default)]
struct History {
    samples: VecDeque<(u64, u64)>,
    rates: VecDeque<f64>,
    /// Rate over the window at the last update, bits per second.
    bps: f64,
}

impl History {
    /// Add the flow's cumulative `bytes` at `now` and drop samples older than the window
    /// (keeping one at or before its start, so the rate spans the whole window).
    fn add(&mut self, now: u64, bytes: u64, window: u64) {
        self.samples.push_back((now, bytes));
        let start = now.saturating_sub(window);
        while self.samples.len() > 2 && self.samples[1].0 <= start {
            self.samples.pop_front();
        }
        self.bps = match (self.samples.front(), self.samples.back()) {
            (Some(&(t0, b0)), Some(&(t1, b1))) if t1 > t0 => {
                (b1.saturating_sub(b0)) as f64 * 8e9 / (t1 - t0) as f64
            }
            _ => 0.0,
        };
        self.rates.push_back(self.bps);
        if self.rates.len() > SPARK_LEN {
            self.rates.pop_front();
        }
    }
}

/// A row of the table: the flow's counters and its current rate.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The flow's counters.
    pub flow: LiveFlow,
    /// Transport bytes per second over the window, in bits per second.
    pub bps: f64,
    /// The rate at each of the last updates (oldest first), bits per second.
    pub spark: Vec<f64>,
}

impl Row {
    /// CE-marked share of the packets with an ECN field, 0–100 (0 without ECN).
    pub fn ce_percent(&self) -> f64 {
        if self.flow.ecn_packets == 0 {
            0.0
        } else {
            self.flow.ce as f64 * 100.0 / self.flow.ecn_packets as f64
        }
    }

    /// The cell text of column `c`, at most `width` cells wide.
    pub fn cell(&self, c: Column, width: u16) -> String {
        let f = &self.flow;
        let text = match c {
            Column::Flow => flow_text(&f.key),
            Column::Qp => format!("{:#08x}", f.key.dest_qp),
            Column::Rate => gbps(self.bps),
            Column::Packets => count(f.packets, width),
            Column::Retx => count(f.retransmitted, width),
            Column::Gaps => count(f.gap_events, width),
            Column::Naks => count(f.naks, width),
            Column::Rnr => count(f.rnr_naks, width),
            Column::Ce => ce_text(f.ecn_packets, self.ce_percent()),
            Column::Cnps => count(f.cnps, width),
            Column::Rtt => f.ack_rtt_mean_ns.map_or("-".into(), rtt_us),
            Column::Spark => sparkline(&self.spark, width as usize),
        };
        c.fit(&text, width)
    }

    /// Whether column `c` shows a sign of trouble (retransmissions, gaps, NAKs, RNR NAKs),
    /// for highlighting.
    pub fn flagged(&self, c: Column) -> bool {
        let f = &self.flow;
        match c {
            Column::Retx => f.retransmitted > 0,
            Column::Gaps => f.gap_events > 0,
            Column::Naks => f.naks > 0,
            Column::Rnr => f.rnr_naks > 0,
            _ => false,
        }
    }
}

/// `src → dst` of a flow key (the mirror session appended under `--encap-session`).
pub fn flow_text(k: &FlowKey) -> String {
    match k.session {
        Some(s) => format!("{} → {} s{s}", k.src, k.dst),
        None => format!("{} → {}", k.src, k.dst),
    }
}

/// Bits per second as Gb/s with two decimals; `<0.01` for a flow that moves less than
/// 10 Mb/s but moves (`0.00` is idle).
pub fn gbps(bps: f64) -> String {
    if bps > 0.0 && bps < 0.005e9 {
        "<0.01".into()
    } else {
        format!("{:.2}", bps / 1e9)
    }
}

/// A count in `width` cells: exact while it fits, else with a k / M / G suffix (powers of
/// 1000, as `iftop` and `top` abbreviate).
pub fn count(n: u64, width: u16) -> String {
    let exact = n.to_string();
    if exact.len() <= width as usize {
        return exact;
    }
    for (div, suf) in [(1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")] {
        let v = n as f64 / div;
        let t = if v < 9.95 {
            format!("{v:.1}{suf}")
        } else {
            format!("{v:.0}{suf}")
        };
        if t.len() <= width as usize {
            return t;
        }
    }
    exact
}

/// CE %: `-` when no packet had an ECN field, else one decimal below 10 % and none above.
fn ce_text(ecn_packets: u64, pct: f64) -> String {
    if ecn_packets == 0 {
        "-".into()
    } else if pct < 10.0 {
        format!("{pct:.1}")
    } else {
        format!("{pct:.0}")
    }
}

/// An RTT in ns as µs (one decimal below 100 µs).
fn rtt_us(ns: u64) -> String {
    let us = ns as f64 / 1e3;
    if us < 100.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.0}")
    }
}

/// The last `width` rates as block characters, scaled to their own maximum (a space for 0).
pub fn sparkline(rates: &[f64], width: usize) -> String {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let shown = &rates[rates.len().saturating_sub(width)..];
    let max = shown.iter().copied().fold(0.0, f64::max);
    shown
        .iter()
        .map(|&r| {
            if r <= 0.0 || max <= 0.0 {
                ' '
            } else {
                let i = ((r / max) * 7.0).round() as usize;
                BLOCKS[i.min(7)]
            }
        })
        .collect()
}

/// `s` cut to `width` characters, the last one `…` when cut.
pub fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// Header figures: the whole capture's rates and counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// Frames per second over the window.
    pub pps: f64,
    /// Wire bits per second over the window (frame lengths on the wire).
    pub bps: f64,
    /// Frames so far.
    pub frames: u64,
    /// RoCE frames so far.
    pub roce: u64,
}

/// The view model.
#[derive(Clone, Debug)]
pub struct Model {
    window_ns: u64,
    /// Every flow's counters, in the analysis's order (the report's flow ids).
    flows: Vec<LiveFlow>,
    /// The flows the table shows: every flow, or under a display filter those with packets it
    /// passed, counted as [`Shown::restrict`] says.
    table: Vec<LiveFlow>,
    /// What the display filter passed, while one is applied.
    shown: Option<Shown>,
    /// A flow new at the next update had its bytes then already (a filter was just applied
    /// and counted the frames kept): no zero sample before them.
    rebase: bool,
    hist: HashMap<FlowKey, History>,
    /// Cumulative (time, frames, wire bytes) samples inside the window, for the header.
    total_hist: VecDeque<(u64, u64, u64)>,
    totals: Totals,
    last_update: Option<u64>,
    /// The first frame's time, ns: the start of the first rates.
    origin: Option<u64>,
    sort: SortBy,
    selected: Option<FlowKey>,
    paused: bool,
}

impl Default for Model {
    fn default() -> Self {
        Model::new(DEFAULT_WINDOW_NS)
    }
}

impl Model {
    /// An empty model whose rates are averaged over `window_ns` ns.
    pub fn new(window_ns: u64) -> Model {
        Model {
            window_ns: window_ns.max(1),
            flows: Vec::new(),
            table: Vec::new(),
            shown: None,
            rebase: false,
            hist: HashMap::new(),
            total_hist: VecDeque::new(),
            totals: Totals::default(),
            last_update: None,
            origin: None,
            sort: SortBy::Rate,
            selected: None,
            paused: false,
        }
    }

    /// Set the capture's first frame time, ns: the bytes of the first update count from then
    /// (a capture shorter than an update still gets its rate).
    pub fn set_origin(&mut self, first_ts_ns: u64) {
        self.origin = Some(first_ts_ns);
    }

    /// When counters new in an update at `now` were 0: the last update's time, else the
    /// first frame's.
    fn previous(&self, now: u64) -> Option<u64> {
        self.last_update
            .filter(|&p| p < now)
            .or(self.origin.filter(|&o| o < now))
    }

    /// Take the counters of an update at `now_ns` (the capture's clock): every flow's
    /// cumulative counters, and the capture's frames and wire bytes so far. Ignored while
    /// paused (the screen stays as it was); at time 0 (a replay before its first frame) no
    /// rate is counted.
    pub fn update(&mut self, now_ns: u64, flows: &[LiveFlow], frames: u64, roce: u64, bytes: u64) {
        if self.paused {
            return;
        }
        self.set_flows(flows);
        if now_ns == 0 {
            // Before any frame: nothing to count rates from.
            self.totals.frames = frames;
            self.totals.roce = roce;
            self.select_first();
            return;
        }
        let prev = self.previous(now_ns).filter(|_| !self.rebase);
        self.rebase = false;
        for f in &self.table {
            let h = self.hist.entry(f.key).or_default();
            if h.samples.is_empty()
                && let Some(prev) = prev
            {
                // A flow new since the last update had none of its bytes then.
                h.samples.push_back((prev, 0));
            }
            h.add(now_ns, f.transport_bytes, self.window_ns);
        }
        self.update_totals(now_ns, frames, roce, bytes);
        self.last_update = Some(now_ns);
        self.select_first();
    }

    /// Take every flow's counters, and the table's flows from them.
    fn set_flows(&mut self, flows: &[LiveFlow]) {
        self.flows.clear();
        self.flows.extend_from_slice(flows);
        self.table.clear();
        match &self.shown {
            Some(s) => self
                .table
                .extend(flows.iter().filter_map(|f| s.restrict(f))),
            None => self.table.extend_from_slice(flows),
        }
    }

    /// Take what the display filter passed (`None`: no filter), before the [`Model::update`]
    /// of the same tick. Another filter than the last one starts the rates again: its counts
    /// are not the previous one's. Ignored while paused.
    pub fn set_shown(&mut self, shown: Option<Shown>) {
        if self.paused {
            return;
        }
        let expr = |s: &Option<Shown>| s.as_ref().map(|s| s.expr.clone());
        if expr(&shown) != expr(&self.shown) {
            self.hist.clear();
            self.rebase = self.last_update.is_some();
        }
        self.shown = shown;
    }

    /// What the display filter passed, while one is applied.
    pub fn shown(&self) -> Option<&Shown> {
        self.shown.as_ref()
    }

    /// Select the first row when none is selected, or the selected flow has no row (a display
    /// filter hides it).
    fn select_first(&mut self) {
        let shown = |k: &FlowKey| self.table.iter().any(|f| f.key == *k);
        if self.selected.is_none_or(|k| !shown(&k)) {
            self.selected = self.rows().first().map(|r| r.flow.key);
        }
    }

    fn update_totals(&mut self, now: u64, frames: u64, roce: u64, bytes: u64) {
        let prev = self.previous(now);
        let h = &mut self.total_hist;
        if h.is_empty()
            && let Some(prev) = prev
        {
            h.push_back((prev, 0, 0));
        }
        h.push_back((now, frames, bytes));
        let start = now.saturating_sub(self.window_ns);
        while h.len() > 2 && h[1].0 <= start {
            h.pop_front();
        }
        let (t0, f0, b0) = h[0];
        let dt = now.saturating_sub(t0);
        self.totals = Totals {
            pps: if dt > 0 {
                frames.saturating_sub(f0) as f64 * 1e9 / dt as f64
            } else {
                0.0
            },
            bps: if dt > 0 {
                bytes.saturating_sub(b0) as f64 * 8e9 / dt as f64
            } else {
                0.0
            },
            frames,
            roce,
        };
    }

    /// The header figures.
    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// The rows, sorted by the current sort column (ties: more packets, then the flow's
    /// order of appearance).
    pub fn rows(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = self
            .table
            .iter()
            .map(|f| {
                let h = self.hist.get(&f.key);
                Row {
                    flow: *f,
                    bps: h.map_or(0.0, |h| h.bps),
                    spark: h.map_or_else(Vec::new, |h| h.rates.iter().copied().collect()),
                }
            })
            .collect();
        let key = |r: &Row| -> f64 {
            let f = &r.flow;
            match self.sort {
                SortBy::Rate => r.bps,
                SortBy::Packets => f.packets as f64,
                SortBy::Retransmitted => f.retransmitted as f64,
                SortBy::Gaps => f.gap_events as f64,
                SortBy::Naks => (f.naks + f.rnr_naks) as f64,
                SortBy::Ce => r.ce_percent(),
                SortBy::Cnps => f.cnps as f64,
            }
        };
        // Stable: equal keys keep the flows' order of appearance.
        rows.sort_by(|a, b| {
            key(b)
                .total_cmp(&key(a))
                .then(b.flow.packets.cmp(&a.flow.packets))
        });
        rows
    }

    /// The sort column.
    pub fn sort(&self) -> SortBy {
        self.sort
    }

    /// Sort by the next column (`s`).
    pub fn cycle_sort(&mut self) {
        self.sort = self.sort.next();
    }

    /// Pause or resume (`p`): while paused, updates are ignored.
    pub fn toggle_pause(&mut self) {
        self.paused = !self.paused;
    }

    /// Whether the view is paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The selected flow's key, if any row is selected.
    pub fn selected(&self) -> Option<FlowKey> {
        self.selected
    }

    /// The selected row's position in [`Model::rows`] (the selection follows its flow when the
    /// order changes).
    pub fn selected_index(&self, rows: &[Row]) -> Option<usize> {
        let k = self.selected?;
        rows.iter().position(|r| r.flow.key == k)
    }

    /// Move the selection `delta` rows (negative: up), clamped to the table.
    pub fn move_selection(&mut self, delta: isize) {
        let rows = self.rows();
        if rows.is_empty() {
            self.selected = None;
            return;
        }
        let at = self.selected_index(&rows).unwrap_or(0) as isize;
        let to = (at + delta).clamp(0, rows.len() as isize - 1) as usize;
        self.selected = Some(rows[to].flow.key);
    }

    /// The selected flow's counters.
    pub fn selected_flow(&self) -> Option<&LiveFlow> {
        let k = self.selected?;
        self.flows.iter().find(|f| f.key == k)
    }

    /// Index of the selected flow in the analyzer's flow order (the report's flow id).
    pub fn selected_flow_id(&self) -> Option<usize> {
        let k = self.selected?;
        self.flows.iter().position(|f| f.key == k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Address;

    fn key(qp: u32) -> FlowKey {
        FlowKey {
            src: Address::V4([10, 0, 0, 1]),
            dst: Address::V4([10, 0, 0, 2]),
            dest_qp: qp,
            session: None,
        }
    }

    fn flow(qp: u32, packets: u64, bytes: u64) -> LiveFlow {
        LiveFlow {
            key: key(qp),
            transport: Some("RC"),
            packets,
            transport_bytes: bytes,
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
        }
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn rate_over_the_window() {
        // 1 s window, updates every 250 ms; flow A sends 125 MB/s (1 Gb/s) for 2 s.
        let mut m = Model::new(S);
        for i in 0..=8u64 {
            let bytes = i * 125_000_000 / 4;
            m.update(i * S / 4, &[flow(0x11, i, bytes)], i, i, bytes);
        }
        let rows = m.rows();
        assert!((rows[0].bps - 1e9).abs() < 1.0, "{}", rows[0].bps);
        assert_eq!(rows[0].cell(Column::Rate, 6), "  1.00");
        // It stops: after 1 s more with no bytes the window holds none of them.
        let bytes = 8 * 125_000_000 / 4;
        m.update(2 * S + S / 2, &[flow(0x11, 8, bytes)], 8, 8, bytes);
        assert!((m.rows()[0].bps - 0.5e9).abs() < 1.0, "half a window idle");
        m.update(3 * S, &[flow(0x11, 8, bytes)], 8, 8, bytes);
        assert_eq!(m.rows()[0].bps, 0.0);
        // Header: 4 frames/s during the first two seconds, 0 now.
        assert_eq!(m.totals().pps, 0.0);
        assert_eq!(m.totals().frames, 8);
    }

    #[test]
    fn new_flow_rate_counts_from_the_previous_update() {
        let mut m = Model::new(S);
        m.update(S, &[], 0, 0, 0);
        // 1,000 bytes in the 0.5 s since the last update: 16 kb/s.
        m.update(S + S / 2, &[flow(1, 1, 1000)], 1, 1, 1000);
        assert!((m.rows()[0].bps - 16_000.0).abs() < 1e-6);
        assert!((m.totals().bps - 16_000.0).abs() < 1e-6);
        assert!((m.totals().pps - 2.0).abs() < 1e-9);
    }

    #[test]
    fn first_rates_count_from_the_first_frame() {
        // A 100 µs capture seen in one update: 1,250 bytes since its first frame, 100 Gb/s.
        let mut m = Model::new(S);
        m.update(0, &[], 0, 0, 0);
        m.set_origin(5 * S);
        m.update(
            5 * S + 100_000,
            &[flow(1, 10, 1_250_000)],
            10,
            10,
            1_250_000,
        );
        assert!((m.rows()[0].bps - 100e9).abs() < 1.0, "{}", m.rows()[0].bps);
        assert!((m.totals().pps - 100_000.0).abs() < 1e-6);
    }

    #[test]
    fn sort_and_selection() {
        let mut m = Model::new(S);
        let mut a = flow(1, 10, 0);
        let mut b = flow(2, 5, 0);
        let c = flow(3, 7, 0);
        m.update(S, &[a, b, c], 0, 0, 0);
        a.transport_bytes = 100;
        b.transport_bytes = 900;
        b.retransmitted = 4;
        m.update(2 * S, &[a, b, c], 0, 0, 0);
        let qps = |m: &Model| {
            m.rows()
                .iter()
                .map(|r| r.flow.key.dest_qp)
                .collect::<Vec<_>>()
        };
        // Rate: b (900 B), a (100 B), c (0).
        assert_eq!(qps(&m), [2, 1, 3]);
        // The first row was selected at the first update (all idle: most packets, a).
        assert_eq!(m.selected().map(|k| k.dest_qp), Some(1));
        m.cycle_sort();
        assert_eq!(m.sort(), SortBy::Packets);
        assert_eq!(qps(&m), [1, 3, 2]);
        m.cycle_sort();
        assert_eq!(qps(&m), [2, 1, 3], "retransmitted, then packets");
        // Selection moves by rows of the current order and stays on its flow.
        m.move_selection(1);
        assert_eq!(m.selected().map(|k| k.dest_qp), Some(3));
        m.move_selection(5);
        assert_eq!(
            m.selected().map(|k| k.dest_qp),
            Some(3),
            "clamped at the end"
        );
        m.move_selection(-10);
        assert_eq!(m.selected().map(|k| k.dest_qp), Some(2));
        assert_eq!(m.selected_flow_id(), Some(1));
        for _ in 0..5 {
            m.cycle_sort();
        }
        assert_eq!(m.sort(), SortBy::Rate, "seven columns, back to rate");
    }

    #[test]
    fn a_display_filter_restricts_rows_and_packet_counts() {
        use crate::tui::shown::Counts;
        let shown = |packets: u64, bytes: u64| Shown {
            expr: "bth.dest_qp == 2".into(),
            frames: packets + 1,
            from_frame: None,
            flows: [(
                key(2),
                Counts {
                    packets,
                    transport_bytes: bytes,
                    payload_bytes: 0,
                },
            )]
            .into(),
        };
        let mut m = Model::new(S);
        let a = flow(1, 10, 1000);
        let mut b = flow(2, 5, 500);
        b.retransmitted = 2;
        m.update(S, &[a, b], 15, 15, 1500);
        assert_eq!(m.rows().len(), 2);
        assert_eq!(m.selected().map(|k| k.dest_qp), Some(1));
        // QP 2's 3 packets of 300 bytes pass: one row; its retx stays the analysis's; the
        // selection moves off the hidden flow; no rate from bytes counted before the filter.
        m.set_shown(Some(shown(3, 300)));
        m.update(2 * S, &[a, b], 15, 15, 1500);
        let rows = m.rows();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].flow.key.dest_qp, rows[0].flow.packets), (2, 3));
        assert_eq!(rows[0].flow.retransmitted, 2);
        assert_eq!(rows[0].bps, 0.0);
        assert_eq!(m.selected().map(|k| k.dest_qp), Some(2));
        assert_eq!(m.selected_flow_id(), Some(1), "the report's flow id");
        // 100 more bytes passed in the next second: 800 b/s.
        m.set_shown(Some(shown(4, 400)));
        m.update(3 * S, &[a, b], 16, 16, 1600);
        assert!(
            (m.rows()[0].bps - 800.0).abs() < 1e-9,
            "{}",
            m.rows()[0].bps
        );
        assert_eq!(m.shown().map(|s| s.frames), Some(5));
        // The header's totals are the whole capture's.
        assert_eq!(m.totals().frames, 16);
        // Cleared: every flow with every packet.
        m.set_shown(None);
        m.update(4 * S, &[a, b], 16, 16, 1600);
        let packets: Vec<u64> = m.rows().iter().map(|r| r.flow.packets).collect();
        assert_eq!(packets, [10, 5]);
    }

    #[test]
    fn pause_freezes() {
        let mut m = Model::new(S);
        m.update(0, &[flow(1, 1, 0)], 1, 1, 0);
        m.toggle_pause();
        m.update(S, &[flow(1, 9, 0)], 9, 9, 0);
        assert_eq!(m.rows()[0].flow.packets, 1);
        m.toggle_pause();
        m.update(2 * S, &[flow(1, 9, 0)], 9, 9, 0);
        assert_eq!(m.rows()[0].flow.packets, 9);
    }

    #[test]
    fn columns_fit_80_and_100() {
        let sum = |l: &[(Column, u16)]| l.iter().map(|(_, w)| w + 1).sum::<u16>() - 1;
        let l80 = layout(80);
        assert!(sum(&l80) <= 80, "{l80:?}");
        let names: Vec<Column> = l80.iter().map(|(c, _)| *c).collect();
        assert!(!names.contains(&Column::Spark));
        for c in [
            Column::Flow,
            Column::Qp,
            Column::Rate,
            Column::Packets,
            Column::Retx,
            Column::Gaps,
            Column::Naks,
            Column::Ce,
            Column::Cnps,
        ] {
            assert!(names.contains(&c), "{c:?} at 80 columns");
        }
        let l100 = layout(100);
        assert_eq!(sum(&l100), 100, "{l100:?}");
        assert!(l100.iter().any(|(c, _)| *c == Column::Spark));
        assert!(l100.iter().any(|(c, _)| *c == Column::Rtt));
        // An IPv4 pair fits whole at 80 and 100 columns.
        assert!(l80[0].1 >= 19 && l100[0].1 >= 19, "{l80:?} {l100:?}");
        // Where each column drops out (as the README says).
        let has = |w: u16, c: Column| layout(w).iter().any(|(x, _)| *x == c);
        for (c, least) in [(Column::Spark, 94), (Column::Rtt, 83), (Column::Rnr, 76)] {
            assert!(
                has(least, c) && !has(least - 1, c),
                "{c:?} from {least} columns"
            );
        }
        let l200 = layout(200);
        assert_eq!(l200.len(), COLUMNS.len());
        assert_eq!(sum(&l200), 200, "the flow column takes the rest");
    }

    #[test]
    fn cells() {
        let mut f = flow(0x11, 1_234_567, 0);
        f.ecn_packets = 200;
        f.ce = 3;
        f.ack_rtt_mean_ns = Some(12_345);
        let r = Row {
            flow: f,
            bps: 0.0,
            spark: vec![0.0, 1.0, 2.0, 8.0],
        };
        assert_eq!(r.cell(Column::Qp, 8), "0x000011");
        assert_eq!(r.cell(Column::Packets, 7), "1234567");
        assert_eq!(r.cell(Column::Packets, 5), "1235k");
        assert_eq!(r.cell(Column::Packets, 4), "1.2M");
        assert_eq!(r.cell(Column::Ce, 5), "  1.5");
        assert_eq!(r.cell(Column::Rtt, 6), "  12.3");
        assert_eq!(r.cell(Column::Spark, 4), " ▂▃█");
        assert_eq!(r.cell(Column::Flow, 30), "10.0.0.1 → 10.0.0.2");
        assert_eq!(r.cell(Column::Flow, 10), "10.0.0.1 …");
        // Titles go through the same formatting: numbers' right-aligned, cut with `…`.
        assert_eq!(Column::Packets.fit(Column::Packets.title(), 9), "  packets");
        assert_eq!(Column::Rtt.fit(Column::Rtt.title(), 4), "RTT…");
        assert_eq!(Column::Flow.fit("src → dst", 12), "src → dst");
        assert!(!r.flagged(Column::Retx) && !r.flagged(Column::Packets));
        assert_eq!(gbps(0.0), "0.00");
        assert_eq!(gbps(1e6), "<0.01");
        assert_eq!(gbps(25.004e9), "25.00");
        assert_eq!(count(99_999, 5), "99999");
        assert_eq!(count(123_456, 5), "123k");
        assert_eq!(count(9_990_000_000, 4), "10G");
    }
}
