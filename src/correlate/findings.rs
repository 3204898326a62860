//! Findings of `correlate` (issue 34, point 4): a link that loses or corrupts packets, packets
//! an upstream capture missed, a clock offset that could not be bounded, and one direction
//! between two capture points much slower than the other. Kinds and severities are those of
//! [`crate::analyze::findings`]; derived once from the finished [`Report`].

use super::report::{LinkRow, PacketRow, Report};
use crate::analyze::findings::{Finding, FindingKind, Severity, dur};

/// An offset error bound past this (ns) makes one-way delays doubtful: 100 µs, several RoCE
/// hops.
pub const LOOSE_OFFSET_NS: i64 = 100_000;
/// One direction's median one-way delay at least this many times the other's, and at least
/// [`ASYMMETRY_MIN_NS`] more, is reported as asymmetric.
pub const ASYMMETRY_RATIO: i64 = 3;
/// The smallest difference of median one-way delays reported (ns): 10 µs.
pub const ASYMMETRY_MIN_NS: i64 = 10_000;

/// Every finding of `r`, errors first.
pub fn derive(r: &Report) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &r.links {
        out.extend(link_loss(r, l));
        out.extend(corrupted(r, l));
        out.extend(missed(r, l));
    }
    clocks(r, &mut out);
    asymmetry(r, &mut out);
    out.sort_by_key(|f| (f.severity, f.kind));
    out
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Frames (in `capture`) of the listed packets of link `l`.
fn frames<'a>(
    v: &'a [PacketRow],
    l: &'a LinkRow,
    capture: &'a str,
) -> impl Iterator<Item = u64> + 'a {
    v.iter()
        .filter(move |p| p.src == l.src && p.dst == l.dst && p.seen_in == capture)
        .map(|p| p.frame)
}

fn link_loss(r: &Report, l: &LinkRow) -> Option<Finding> {
    if l.lost == 0 {
        return None;
    }
    let sent = l.lost + l.matched;
    let mut x = Finding::new(
        Severity::Warning,
        FindingKind::LinkLoss,
        format!(
            "{} → {}: {} packet{} of {sent} ({:.2} %) seen in {} never reached {}: lost between \
             the two capture points (frames of {})",
            l.src,
            l.dst,
            l.lost,
            plural(l.lost),
            l.lost as f64 * 100.0 / sent as f64,
            l.upstream,
            l.downstream,
            l.upstream
        ),
        "drops on the path between the two capture points: a congested switch queue without \
         PFC, a lossy link (CRC / symbol errors), or a buffer overflow",
        "check the discard, PFC and error counters of the switch ports between these two \
         points; the requester recovers each loss by NAK or timeout (read each capture to see \
         the retransmissions)",
    )
    .with_frames(frames(&r.lost, l, &l.upstream));
    x.count = Some(l.lost);
    Some(x)
}

fn corrupted(r: &Report, l: &LinkRow) -> Option<Finding> {
    if l.corrupted == 0 {
        return None;
    }
    let mut x = Finding::new(
        Severity::Error,
        FindingKind::IcrcErrors,
        format!(
            "{} → {}: {} packet{} changed between {} and {} (same BTH, another ICRC): corrupted \
             on the link (frames of {})",
            l.src,
            l.dst,
            l.corrupted,
            plural(l.corrupted),
            l.upstream,
            l.downstream,
            l.downstream
        ),
        "a faulty link, cable, transceiver or switch port flipping bits, or a device on the \
         path rewriting fields the ICRC covers",
        "check the link's symbol / CRC error counters and replace the cable or optic; the \
         receiver drops these packets",
    )
    .with_frames(
        r.corrupted
            .iter()
            .filter(|c| c.src == l.src && c.dst == l.dst && c.downstream == l.downstream)
            .map(|c| c.frame_downstream),
    );
    x.count = Some(l.corrupted);
    Some(x)
}

fn missed(r: &Report, l: &LinkRow) -> Option<Finding> {
    if l.missed_by_upstream == 0 {
        return None;
    }
    let n = l.missed_by_upstream;
    let mut x = Finding::new(
        Severity::Info,
        FindingKind::CaptureLoss,
        format!(
            "{} → {}: {n} packet{} seen in {} that the upstream capture {} does not have: that \
             capture dropped them (frames of {})",
            l.src,
            l.dst,
            plural(n),
            l.downstream,
            l.upstream,
            l.downstream
        ),
        "the upstream capture tool dropped packets (ibdump and offload sniffers drop bursts, \
         a tcpdump buffer overflow), not the network",
        "raise the capture buffer (tcpdump -B) or capture on a less loaded point",
    )
    .with_frames(frames(&r.missed, l, &l.downstream));
    x.count = Some(n);
    Some(x)
}

/// `clock_unbounded`: a capture whose clock could not be aligned, or only loosely.
fn clocks(r: &Report, out: &mut Vec<Finding>) {
    for (i, o) in r.clock_offsets.iter().enumerate() {
        if i == r.clock_reference {
            continue;
        }
        let (sev, summary) = match (o.offset_ns, o.error_ns) {
            (None, _) => (
                Severity::Warning,
                format!(
                    "the clock of {} could not be aligned with the others: no packets cross \
                     between it and them in both directions, so its one-way delays are unknown",
                    o.file
                ),
            ),
            (Some(off), Some(e)) if e > LOOSE_OFFSET_NS => (
                Severity::Info,
                format!(
                    "the clock of {} is {} off the reference, known only to ± {}: one-way \
                     delays through it are that uncertain",
                    o.file,
                    dur(off.unsigned_abs()),
                    dur(e.unsigned_abs())
                ),
            ),
            _ => continue,
        };
        out.push(Finding::new(
            sev,
            FindingKind::ClockUnbounded,
            summary,
            "the offset is bounded by half the smallest round trip of packets seen by both \
             captures in both directions: with no or only slow two-way traffic between them it \
             cannot be bounded tightly",
            "capture traffic that crosses both ways between the capture points (any RC \
             connection does), or synchronise the hosts' clocks (PTP) and compare times as they \
             are",
        ));
    }
}

/// `asymmetric_delay`: the two directions between the same two capture points with very
/// different median one-way delays.
fn asymmetry(r: &Report, out: &mut Vec<Finding>) {
    for (i, a) in r.links.iter().enumerate() {
        for b in &r.links[i + 1..] {
            if a.upstream != b.downstream || a.downstream != b.upstream {
                continue;
            }
            let (Some(da), Some(db)) = (&a.one_way_delay_ns, &b.one_way_delay_ns) else {
                continue;
            };
            let (slow, ds, df) = if da.median >= db.median {
                (a, da.median, db.median)
            } else {
                (b, db.median, da.median)
            };
            if ds < ASYMMETRY_RATIO * df.max(1) || ds - df < ASYMMETRY_MIN_NS {
                continue;
            }
            out.push(Finding::new(
                Severity::Info,
                FindingKind::AsymmetricDelay,
                format!(
                    "{} → {} takes {} (median one-way delay) from {} to {}, the way back {}",
                    slow.src,
                    slow.dst,
                    dur(ds.unsigned_abs()),
                    slow.upstream,
                    slow.downstream,
                    dur(df.unsigned_abs())
                ),
                "queueing in one direction only (a congested egress port on that path, an \
                 incast towards its destination), or a clock offset estimate off by the \
                 asymmetry it cannot see",
                "look at the slow direction's switch queues and ECN / PFC counters; the delay \
                 over time (correlate's table) shows whether it builds up",
            ));
        }
    }
}
