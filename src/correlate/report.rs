//! The correlation report: what `correlate --json` prints, and what the text tables show.

use std::collections::HashSet;

use serde::Serialize;

use super::clock::{Offset, PairEstimate, chain_offsets, ntp_estimate};
use super::matcher::{Event, Matcher};
use super::plan::Plan;
use super::stats::DelaySummary;
use super::survey::{DirId, Survey};

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
    /// Why the file ended early (a truncated or corrupt record: the frames before it were
    /// correlated), naming the last frame read; absent when it was read to its end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_error: Option<String>,
}

/// A capture's clock against the reference capture's ([`Report::clock_reference`]).
#[derive(Clone, Debug, Serialize)]
pub struct OffsetRow {
    /// File name.
    pub file: String,
    /// This capture's clock minus the reference capture's, ns; `null` when no chain of
    /// captures with packets crossing between them in both directions reaches it.
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
    /// Of `matched` and `corrupted`, the copies of a resent packet that had several
    /// candidates in the link's delay window: counted, left out of `one_way_delay_ns` and of
    /// the clock offset.
    pub ambiguous: u64,
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
    /// Time, ns since the epoch on the reference capture's clock.
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
    /// Index (in `captures`) of the capture whose clock the offsets and times are given
    /// against: the first capture, unless it shares no traffic with the others (then the first
    /// of the largest group of captures that do; see `clock::reference`).
    pub clock_reference: usize,
    /// Clock offsets against the reference capture.
    pub clock_offsets: Vec<OffsetRow>,
    /// Links and directions seen by two captures.
    pub links: Vec<LinkRow>,
    /// Packets of a direction that one capture alone saw: a direction only it sees, or one
    /// whose packets it sees and no other capture does (another job between the same hosts).
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
    /// What went wrong between the capture points, errors first ([`super::findings`]).
    pub findings: Vec<crate::analyze::findings::Finding>,
}

/// The final offsets: the pairwise estimate recomputed from the exact smallest deltas of every
/// matched packet (the survey only sampled them), chained from the plan's reference capture.
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
    chain_offsets(n, plan.reference, &pairs)
}

/// Names of captures and hosts for the rows.
struct Names<'a> {
    s: &'a Survey,
    plan: &'a Plan,
}

impl Names<'_> {
    fn file(&self, c: usize) -> String {
        self.s.captures[c].file.clone()
    }

    /// (source, destination) of a direction.
    fn hosts(&self, d: u32) -> (String, String) {
        let (a, b) = self.s.directions.list[d as usize];
        (a.to_string(), b.to_string())
    }

    fn packet(&self, e: &Event, seen: usize, missing: usize) -> PacketRow {
        let (src, dst) = self.hosts(self.plan.links[e.link as usize].dir);
        PacketRow {
            src,
            dst,
            dest_qp: e.dest_qp,
            psn: e.psn,
            opcode: e.opcode,
            seen_in: self.file(seen),
            missing_in: self.file(missing),
            frame: e.frame,
            time_ns: e.t,
        }
    }

    fn corrupt(&self, e: &Event) -> CorruptRow {
        let l = self.plan.links[e.link as usize];
        let (src, dst) = self.hosts(l.dir);
        CorruptRow {
            src,
            dst,
            dest_qp: e.dest_qp,
            psn: e.psn,
            opcode: e.opcode,
            upstream: self.file(l.up),
            downstream: self.file(l.down),
            frame_upstream: e.frame,
            frame_downstream: e.other_frame.unwrap_or(0),
        }
    }
}

/// Per link of the plan: whether the report leaves it out, its ends' samples sharing no packet
/// and the matching having crossed none over it (two captures that see different packets
/// between the same hosts: another job, another time). Their copies are then listed as seen by
/// one capture only, and neither lost nor missed.
fn dead_links(plan: &Plan, m: &Matcher<'_>) -> Vec<bool> {
    plan.links
        .iter()
        .zip(&m.tallies)
        .map(|(l, t)| !l.sampled && t.matched == 0)
        .collect()
}

/// One row per link kept, delays moved from the survey's offsets onto the final ones.
fn link_rows(
    n: &Names<'_>,
    m: &Matcher<'_>,
    offsets: &[Option<Offset>],
    dead: &[bool],
) -> Vec<LinkRow> {
    let plan = n.plan;
    plan.links
        .iter()
        .zip(&m.tallies)
        .zip(dead)
        .filter(|(_, dead)| !**dead)
        .map(|((l, t), _)| {
            let ends = (offsets[l.up], offsets[l.down]);
            let first = (plan.offsets[l.up], plan.offsets[l.down]);
            let delay = match (ends, first) {
                ((Some(u), Some(d)), (Some(su), Some(sd))) => {
                    t.delay.summary((d.ns - u.ns) - (sd.ns - su.ns))
                }
                _ => None,
            };
            let (src, dst) = n.hosts(l.dir);
            LinkRow {
                src,
                dst,
                upstream: n.file(l.up),
                downstream: n.file(l.down),
                matched: t.matched,
                lost: t.lost,
                missed_by_upstream: t.missed,
                corrupted: t.corrupted,
                ambiguous: t.ambiguous,
                unmatched_at_edges: t.at_edges,
                one_way_delay_ns: delay,
            }
        })
        .collect()
}

fn capture_rows(s: &Survey) -> Vec<CaptureRow> {
    s.captures
        .iter()
        .map(|c| CaptureRow {
            file: c.file.clone(),
            frames: c.frames,
            roce: c.roce,
            first_ns: c.first_ns,
            last_ns: c.last_ns,
            read_error: c.read_error.clone(),
        })
        .collect()
}

/// The directions one capture sees alone, then the ends of links left out ([`dead_links`]) that
/// no kept link of the direction reaches.
fn single_rows(n: &Names<'_>, dead: &[bool]) -> Vec<SingleRow> {
    let links = &n.plan.links;
    // The (direction, capture) ends of the kept links, and those listed: sets, so that many
    // directions and links stay linear.
    let mut listed: HashSet<(DirId, usize)> = links
        .iter()
        .zip(dead)
        .filter(|(_, dead)| !**dead)
        .flat_map(|(l, _)| [(l.dir, l.up), (l.dir, l.down)])
        .collect();
    listed.extend(n.plan.single.iter().copied());
    let mut alone: Vec<(DirId, usize)> = n.plan.single.clone();
    for l in links
        .iter()
        .zip(dead)
        .filter(|(_, dead)| **dead)
        .map(|(l, _)| l)
    {
        for c in [l.up, l.down] {
            if listed.insert((l.dir, c)) {
                alone.push((l.dir, c));
            }
        }
    }
    alone
        .iter()
        .map(|&(d, c)| {
            let (src, dst) = n.hosts(d);
            SingleRow {
                src,
                dst,
                file: n.file(c),
                packets: n.s.captures[c].dirs.get(&d).map_or(0, |x| x.packets),
            }
        })
        .collect()
}

/// Assemble the report, its findings left empty (`correlate::findings::derive` reads the rest).
pub fn build(s: &Survey, plan: &Plan, m: &Matcher<'_>, window_ns: i64) -> Report {
    let offsets = final_offsets(s.captures.len(), plan, m);
    let n = Names { s, plan };
    let lists = &m.lists;
    let link = |e: &Event| plan.links[e.link as usize];
    let dead = dead_links(plan, m);
    let live = |e: &&Event| !dead[e.link as usize];
    Report {
        window_ns,
        captures: capture_rows(s),
        clock_reference: plan.reference,
        clock_offsets: offsets
            .iter()
            .enumerate()
            .map(|(c, o)| OffsetRow {
                file: n.file(c),
                offset_ns: o.map(|o| o.ns),
                error_ns: o.map(|o| o.err),
            })
            .collect(),
        links: link_rows(&n, m, &offsets, &dead),
        single_capture: single_rows(&n, &dead),
        lost: lists
            .lost
            .iter()
            .filter(live)
            .map(|e| n.packet(e, link(e).up, link(e).down))
            .collect(),
        missed: lists
            .missed
            .iter()
            .filter(live)
            .map(|e| n.packet(e, link(e).down, link(e).up))
            .collect(),
        corrupted: lists
            .corrupted
            .iter()
            .filter(live)
            .map(|e| n.corrupt(e))
            .collect(),
        lists_truncated: [&lists.lost, &lists.missed, &lists.corrupted]
            .iter()
            .any(|v| v.len() >= super::matcher::MAX_LISTED),
        peak_waiting: m.peak_pending,
        findings: Vec::new(),
    }
}
