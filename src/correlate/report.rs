//! The correlation report: what `correlate --json` prints, and what the text tables show.

use serde::Serialize;

use super::clock::{Offset, PairEstimate, chain_offsets, ntp_estimate};
use super::matcher::{Event, Matcher};
use super::plan::Plan;
use super::stats::DelaySummary;
use super::survey::Survey;

/// One capture file.
#[derive(Clone, Debug, Serialize)]
pub struct CaptureRow {
    /// File name as given.
    pub file: String,
    /// Frames read (after `-f`).
    pub frames: u64,
    /// RoCE frames.
    pub roce: u64,
    /// First RoCE packet's time, ns since the epoch on this capture's clock.
    pub first_ns: Option<u64>,
    /// Last RoCE packet's time, ns since the epoch on this capture's clock.
    pub last_ns: Option<u64>,
}

/// A capture's clock against the first capture's.
#[derive(Clone, Debug, Serialize)]
pub struct OffsetRow {
    /// File name.
    pub file: String,
    /// This capture's clock minus the first capture's, ns; `null` when no packet crosses
    /// between it and the others in both directions.
    pub offset_ns: Option<i64>,
    /// Error bound of `offset_ns`, ns.
    pub error_ns: Option<i64>,
}

/// One link direction seen by two captures.
#[derive(Clone, Debug, Serialize)]
pub struct LinkRow {
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// The capture that sees the packets first.
    pub upstream: String,
    /// The capture that sees them after the link.
    pub downstream: String,
    /// Packets matched in both (identical content).
    pub matched: u64,
    /// Seen upstream, never downstream.
    pub lost: u64,
    /// Seen downstream, not in the upstream capture.
    pub missed_by_upstream: u64,
    /// Matched copies whose ICRC differs (corrupted on the link).
    pub corrupted: u64,
    /// Unmatched copies from when the other capture was not recording (neither lost nor
    /// missed).
    pub unmatched_at_edges: u64,
    /// One-way delay (ns), `null` without a clock offset for both ends.
    pub one_way_delay_ns: Option<DelaySummary>,
}

/// A direction only one capture sees.
#[derive(Clone, Debug, Serialize)]
pub struct SingleRow {
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// The capture.
    pub file: String,
    /// Packets.
    pub packets: u64,
}

/// A lost or missed packet copy.
#[derive(Clone, Debug, Serialize)]
pub struct PacketRow {
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// BTH DestQP.
    pub dest_qp: u32,
    /// BTH PSN.
    pub psn: u32,
    /// BTH OpCode number.
    pub opcode: u8,
    /// The capture that holds the copy.
    pub seen_in: String,
    /// The capture that does not.
    pub missing_in: String,
    /// Frame number in `seen_in`.
    pub frame: u64,
    /// Time, ns since the epoch on the first capture's clock.
    pub time_ns: i64,
}

/// A copy corrupted on a link.
#[derive(Clone, Debug, Serialize)]
pub struct CorruptRow {
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// BTH DestQP.
    pub dest_qp: u32,
    /// BTH PSN.
    pub psn: u32,
    /// BTH OpCode number.
    pub opcode: u8,
    /// Upstream capture.
    pub upstream: String,
    /// Downstream capture.
    pub downstream: String,
    /// Frame number upstream.
    pub frame_upstream: u64,
    /// Frame number downstream.
    pub frame_downstream: u64,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Matching window, ns.
    pub window_ns: i64,
    /// The captures.
    pub captures: Vec<CaptureRow>,
    /// Clock offsets against the first capture.
    pub clock_offsets: Vec<OffsetRow>,
    /// Links and directions seen by two captures.
    pub links: Vec<LinkRow>,
    /// Directions seen by one capture only.
    pub single_capture: Vec<SingleRow>,
    /// Packets lost on a link.
    pub lost: Vec<PacketRow>,
    /// Packets missed by an upstream capture.
    pub missed: Vec<PacketRow>,
    /// Copies corrupted on a link.
    pub corrupted: Vec<CorruptRow>,
    /// Whether a list was cut at 10 000 entries (the counts in `links` are complete).
    pub lists_truncated: bool,
    /// Most packet copies waiting in the window at once.
    pub peak_waiting: usize,
}

/// The final offsets: the pairwise estimate recomputed from the exact smallest deltas of every
/// matched packet (the survey only sampled them), chained from the first capture.
pub fn final_offsets(n: usize, plan: &Plan, m: &Matcher<'_>) -> Vec<Option<Offset>> {
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let min_of = |up: usize, down: usize| {
                plan.links
                    .iter()
                    .zip(&m.tallies)
                    .filter(|(l, _)| l.up == up && l.down == down)
                    .filter_map(|(_, t)| t.min_raw)
                    .min()
            };
            if let (Some(f), Some(r)) = (min_of(i, j), min_of(j, i)) {
                pairs.push(PairEstimate {
                    i,
                    j,
                    offset: ntp_estimate(f, r),
                });
            }
        }
    }
    chain_offsets(n, &pairs)
}

/// Assemble the report.
pub fn build(s: &Survey, plan: &Plan, m: &Matcher<'_>, window_ns: i64) -> Report {
    let n = s.captures.len();
    let offsets = final_offsets(n, plan, m);
    let file = |c: usize| s.captures[c].file.clone();
    let host = |d: u32, which: usize| {
        let (a, b) = s.directions.list[d as usize];
        if which == 0 { a } else { b }.to_string()
    };
    let links = plan
        .links
        .iter()
        .zip(&m.tallies)
        .map(|(l, t)| {
            let delay = match (
                offsets[l.up],
                offsets[l.down],
                plan.offsets[l.up],
                plan.offsets[l.down],
            ) {
                (Some(u), Some(d), Some(su), Some(sd)) => {
                    t.delay.summary((d.ns - u.ns) - (sd.ns - su.ns))
                }
                _ => None,
            };
            LinkRow {
                src: host(l.dir, 0),
                dst: host(l.dir, 1),
                upstream: file(l.up),
                downstream: file(l.down),
                matched: t.matched,
                lost: t.lost,
                missed_by_upstream: t.missed,
                corrupted: t.corrupted,
                unmatched_at_edges: t.at_edges,
                one_way_delay_ns: delay,
            }
        })
        .collect();
    let row = |e: &Event, seen: usize, missing: usize| {
        let l = plan.links[e.link as usize];
        PacketRow {
            src: host(l.dir, 0),
            dst: host(l.dir, 1),
            dest_qp: e.dest_qp,
            psn: e.psn,
            opcode: e.opcode,
            seen_in: file(seen),
            missing_in: file(missing),
            frame: e.frame,
            time_ns: e.t,
        }
    };
    let lists = &m.lists;
    Report {
        window_ns,
        captures: s
            .captures
            .iter()
            .map(|c| CaptureRow {
                file: c.file.clone(),
                frames: c.frames,
                roce: c.roce,
                first_ns: c.first_ns,
                last_ns: c.last_ns,
            })
            .collect(),
        clock_offsets: (0..n)
            .map(|c| OffsetRow {
                file: file(c),
                offset_ns: offsets[c].map(|o| o.ns),
                error_ns: offsets[c].map(|o| o.err),
            })
            .collect(),
        links,
        single_capture: plan
            .single
            .iter()
            .map(|&(d, c)| SingleRow {
                src: host(d, 0),
                dst: host(d, 1),
                file: file(c),
                packets: s.captures[c].dirs.get(&d).map_or(0, |x| x.packets),
            })
            .collect(),
        lost: lists
            .lost
            .iter()
            .map(|e| {
                let l = plan.links[e.link as usize];
                row(e, l.up, l.down)
            })
            .collect(),
        missed: lists
            .missed
            .iter()
            .map(|e| {
                let l = plan.links[e.link as usize];
                row(e, l.down, l.up)
            })
            .collect(),
        corrupted: lists
            .corrupted
            .iter()
            .map(|e| {
                let l = plan.links[e.link as usize];
                CorruptRow {
                    src: host(l.dir, 0),
                    dst: host(l.dir, 1),
                    dest_qp: e.dest_qp,
                    psn: e.psn,
                    opcode: e.opcode,
                    upstream: file(l.up),
                    downstream: file(l.down),
                    frame_upstream: e.frame,
                    frame_downstream: e.other_frame.unwrap_or(0),
                }
            })
            .collect(),
        lists_truncated: [&lists.lost, &lists.missed, &lists.corrupted]
            .iter()
            .any(|v| v.len() >= super::matcher::MAX_LISTED),
        peak_waiting: m.peak_pending,
    }
}
