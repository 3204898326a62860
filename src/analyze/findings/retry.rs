//! Retry rules: `retry_exhausted`, `ack_timeout`, `no_response` and `one_sided_capture`
//! (IBTA Vol 1 §9.7.6.1.3 local ACK timeout and retry counter, §10.8.3.2 completion with
//! `IBV_WC_RETRY_EXC_ERR`).

use super::{Finding, FindingKind, Severity, flow_label, peer, reliable, timeout_exp};
use crate::analyze::evidence::RetryRun;
use crate::analyze::report::{FlowReport, Report};
use crate::decode::Address;
use std::collections::{HashMap, HashSet};

/// A capture must go on this long after a flow's first request before its silence counts
/// (ns): far more than any RoCE round trip, and more than the smallest local ACK timeouts.
pub const SILENCE_NS: u64 = 1_000_000;

const RETRY_CAUSE: &str = "the responder never answered the retried request: the path to it lost every copy (link \
down, routing or ACL change), or the remote QP or host went away (process killed, QP destroyed, port down)";
const RETRY_ADVICE: &str = "the requester completes this work request with IBV_WC_RETRY_EXC_ERR (12) and its QP goes \
to error: check the responder host and the link (ibv_devinfo port state, switch port counters, PFC pause storms); \
timeout_exp is the QP's timeout attribute (NCCL_IB_TIMEOUT), retry_cnt its retry_cnt (NCCL_IB_RETRY_CNT)";
const TIMEOUT_CAUSE: &str = "requests, their ACKs or READ responses were lost where the capture cannot see (no NAK \
reported a gap), \
so the requester waited for its local ACK timeout before resending";
const TIMEOUT_ADVICE: &str = "each timeout stalls the QP for the whole timeout: look for drops on the path (switch \
discard and PFC counters, NIC out_of_sequence / local_ack_timeout_err counters); a timeout exponent above 14-18 \
makes every loss cost long (NCCL_IB_TIMEOUT, ibv_modify_qp timeout)";
const SILENT_CAUSE: &str = "not a single packet came back on this connection: the responder is unreachable or \
drops the requests — routing, a GID index / RoCE version mismatch (RoCEv1 against RoCEv2), firewall or ACL on UDP \
4791, or a wrong remote QPN";
const SILENT_ADVICE: &str = "check the GID index both sides use (show_gids; NCCL_IB_GID_INDEX), that both run the \
same RoCE version, IP reachability of the remote address, and that UDP port 4791 is allowed";

/// The flows by host pair, looked up once per flow instead of scanning every flow (a table
/// of 16 384 flows).
struct Hosts {
    /// Host pairs (source, destination) with any flow.
    any: HashSet<(Address, Address)>,
    /// Latest packet time of the unpaired flows of each host pair, ns.
    unpaired_last: HashMap<(Address, Address), u64>,
}

impl Hosts {
    fn new(r: &Report) -> Hosts {
        let mut h = Hosts {
            any: HashSet::with_capacity(r.flows.len()),
            unpaired_last: HashMap::new(),
        };
        for g in &r.flows {
            h.any.insert((g.src, g.dst));
            if g.connection.is_none() {
                let t = h.unpaired_last.entry((g.src, g.dst)).or_default();
                *t = (*t).max(g.last_ts_ns);
            }
        }
        h
    }
}

/// Every rule of this family.
pub(super) fn rules(r: &Report, out: &mut Vec<Finding>) {
    let hosts = Hosts::new(r);
    let mut exhausted = Vec::new();
    for f in r.flows.iter().filter(|f| reliable(f)) {
        if let Some(run) = &f.evidence.retry {
            match exhaustion(r, &hosts, f, run) {
                Some(x) => {
                    exhausted.push(f.id);
                    out.push(x);
                }
                None => out.push(ack_timeout(f, run)),
            }
        }
    }
    silent(r, &hosts, &exhausted, out);
}

/// Whether anything came back on `f`'s connection at or after `ts` (ns).
fn answered_after(r: &Report, h: &Hosts, f: &FlowReport, ts: u64) -> bool {
    peer(r, f).is_some_and(|g| g.last_ts_ns >= ts)
        || h.unpaired_last
            .get(&(f.dst, f.src))
            .is_some_and(|&t| t >= ts)
}

/// The shortest interval between sends of the run's PSN, or, with one retry and the original
/// not timed, the flow's shortest packet → timeout retransmission delay.
fn spacing(f: &FlowReport, run: &RetryRun) -> Option<u64> {
    run.min_spacing_ns
        .or_else(|| f.loss.timeout_delay_ns.as_ref().map(|s| s.min))
        .filter(|&s| s > 0)
}

/// `retry_exhausted` when the flow's last retry run got no answer, the QP then fell silent
/// and the capture went on for at least one more timeout.
fn exhaustion(r: &Report, h: &Hosts, f: &FlowReport, run: &RetryRun) -> Option<Finding> {
    let sp = spacing(f, run)?;
    let end = r.frames.last_ts_ns?;
    let silent = f.last_ts_ns <= run.last_ts_ns + sp / 2;
    let watched = end >= run.last_ts_ns.saturating_add(sp);
    if !silent || !watched || answered_after(r, h, f, run.first_ts_ns) {
        return None;
    }
    let nothing_back = !answered_after(r, h, f, 0);
    let e = timeout_exp(sp);
    let mut x = Finding::new(
        Severity::Error,
        FindingKind::RetryExhausted,
        format!(
            "{}: PSN {} sent {} times, at least {} apart, with no answer, then the QP fell \
             silent: retry exhausted (IBV_WC_RETRY_EXC_ERR), local ACK timeout exponent {e}, \
             retry_cnt {}",
            flow_label(f),
            run.psn,
            run.attempts(),
            super::dur(sp),
            run.retries,
        ),
        if nothing_back {
            SILENT_CAUSE
        } else {
            RETRY_CAUSE
        },
        if nothing_back {
            SILENT_ADVICE
        } else {
            RETRY_ADVICE
        },
    )
    .on_flow(f)
    .with_frames(run.frames.iter().copied());
    x.psn = Some(run.psn);
    x.attempts = Some(run.attempts());
    x.retry_cnt = Some(run.retries);
    x.timeout_exp = Some(e);
    x.spacing_ns = Some(sp);
    Some(x)
}

/// `ack_timeout`: requests re-sent after the local ACK timeout that the QP survived (or that
/// the capture does not follow to the end).
fn ack_timeout(f: &FlowReport, run: &RetryRun) -> Finding {
    let sp = spacing(f, run);
    let n = f.loss.timeouts;
    let mut x = Finding::new(
        Severity::Warning,
        FindingKind::AckTimeout,
        format!(
            "{}: {n} retransmission{} after the local ACK timeout (no NAK before){}",
            flow_label(f),
            if n == 1 { "" } else { "s" },
            sp.map_or(String::new(), |s| format!(
                ", shortest wait {} (timeout exponent ≥ {})",
                super::dur(s),
                timeout_exp(s)
            )),
        ),
        TIMEOUT_CAUSE,
        TIMEOUT_ADVICE,
    )
    .on_flow(f)
    .with_frames(f.evidence.timeout_frames.iter().copied());
    x.psn = Some(run.psn);
    x.count = Some(n);
    x.spacing_ns = sp;
    x.timeout_exp = sp.map(timeout_exp);
    x
}

/// `no_response` for reliable request flows with nothing at all coming back from their
/// destination host while others in the capture are answered; `one_sided_capture` when no
/// request flow of the capture has anything coming back.
fn silent(r: &Report, h: &Hosts, exhausted: &[usize], out: &mut Vec<Finding>) {
    let end = r.frames.last_ts_ns.unwrap_or(0);
    let requesters: Vec<&FlowReport> = r
        .flows
        .iter()
        .filter(|f| reliable(f) && f.evidence.requests > 0)
        .collect();
    let unanswered: Vec<&FlowReport> = requesters
        .iter()
        .copied()
        .filter(|f| !h.any.contains(&(f.dst, f.src)))
        .collect();
    if unanswered.is_empty() {
        return;
    }
    if unanswered.len() == requesters.len() {
        let f = unanswered[0];
        let mut x = Finding::new(
            Severity::Info,
            FindingKind::OneSidedCapture,
            format!(
                "only one direction was captured: none of the {} request flow{} has a packet \
                 coming back, so whether the responders answered cannot be told",
                requesters.len(),
                if requesters.len() == 1 { "" } else { "s" }
            ),
            "a capture on one side of a mirror or a filter that keeps one direction (-f 'src \
             host …'); or every responder is unreachable",
            "capture both directions (a port mirror of both, or tcpdump/ibdump on both hosts \
             with roce-inspect correlate) to tell a silent responder from a one-sided capture",
        )
        .on_flow(f)
        .with_frames(unanswered.iter().map(|f| f.evidence.first_frame));
        x.count = Some(requesters.len() as u64);
        out.push(x);
        return;
    }
    for f in unanswered {
        if exhausted.contains(&f.id) || end < f.first_ts_ns.saturating_add(SILENCE_NS) {
            continue;
        }
        let mut x = Finding::new(
            Severity::Error,
            FindingKind::NoResponse,
            format!(
                "{}: {} request packet{} and not a single packet back from {} while other \
                 connections in the capture are answered",
                flow_label(f),
                f.evidence.requests,
                if f.evidence.requests == 1 { "" } else { "s" },
                f.dst
            ),
            SILENT_CAUSE,
            SILENT_ADVICE,
        )
        .on_flow(f)
        .with_frames(
            std::iter::once(f.evidence.first_frame)
                .chain(f.evidence.timeout_frames.iter().copied()),
        );
        x.count = Some(f.evidence.requests);
        x.psn = f.psn.first;
        out.push(x);
    }
}
