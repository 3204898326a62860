//! Turning the analyzer's state into a [`Report`] at the end of the capture.

use super::flow::{Flow, PairedBy};
use super::message::MessageStatus;
use super::report::*;
use super::stats::Samples;
use super::{Analyzer, outcome, two_mut};
use crate::decode::Transport;

/// A flow's transport, else its peer's (`peer`): a flow of CNPs only has none of its own.
fn transport_of(f: &Flow, peer: Option<Transport>) -> Transport {
    f.transport.or(peer).unwrap_or(Transport::Cnp)
}

fn ce_fraction(f: &Flow) -> f64 {
    let with_ecn: u64 = f.cong.ecn.iter().sum();
    if with_ecn == 0 {
        0.0
    } else {
        f.cong.ecn[3] as f64 / with_ecn as f64
    }
}

fn psn_report(f: &Flow) -> PsnReport {
    let t = if f.req_psn.first.is_some() {
        &f.req_psn
    } else {
        &f.cold().resp_psn
    };
    PsnReport {
        first: t.first,
        last: t.first.map(|_| t.last),
        gap_events: f.req_psn.gap_events + f.cold().resp_psn.gap_events + f.cold().ud_unseen.0,
        missing: f.req_psn.missing + f.cold().resp_psn.missing + f.cold().ud_unseen.1,
        retransmitted: f.req_psn.retransmitted + f.cold().resp_psn.retransmitted,
        duplicates: f.cold().ud_duplicates,
    }
}

/// Close what is still open at the end of the capture: rate windows, messages being
/// assembled, requests waiting for a response; then give every gap its verdict.
fn close(a: &mut Analyzer) {
    for i in 0..a.flows.len() {
        let f = &mut a.flows[i];
        f.cong.rate.finish();
        super::capture_gap::finish(f, &mut a.sink);
        f.incomplete += f.req_asm.abandoned;
        if let Some(mut m) = f.req_asm.open.take()
            && !m.complete
        {
            f.incomplete += 1;
            m.status = MessageStatus::Incomplete;
            a.sink.message(*m);
        }
        match f.peer.map(|j| j as usize) {
            Some(j) => {
                let (g, f) = two_mut(&mut a.flows, i, j);
                outcome::finish(f, j, g, &mut a.sink);
            }
            None => outcome::finish_alone(&mut a.flows[i], i, &mut a.sink),
        }
    }
    for g in &mut a.sink.gaps {
        g.verdict = verdict(g);
    }
}

/// A gap's verdict from its story (see [`GapReport::verdict`]).
fn verdict(g: &GapReport) -> GapVerdict {
    if g.space == PsnSpace::Ud {
        return GapVerdict::UdUnseen;
    }
    match (g.retransmission.map(|r| r.trigger), g.nak, g.ack_frame) {
        (Some(RetxTrigger::Timeout), _, _) => GapVerdict::TimeoutRetransmitted,
        (Some(_), _, _) => GapVerdict::NakRetransmitted,
        (None, None, Some(_)) => GapVerdict::CaptureLoss,
        _ => GapVerdict::Unresolved,
    }
}

/// MSN cross-checks of the two flows `f` (index `i`) and `g` (index `j`) of a connection.
fn msn_checks(f: &Flow, i: usize, g: &Flow, j: usize) -> Vec<MsnCheck> {
    let mut msn = Vec::new();
    for (x, xi) in [(f, i), (g, j)] {
        if x.msn_checked > 0 {
            msn.push(MsnCheck {
                aeth_flow: xi,
                msn_delta: x.msn_delta,
                messages: x.msn_units,
                checked_aeths: x.msn_checked,
                mismatched_aeths: x.msn_mismatches,
                mismatch: x.msn_delta != x.msn_units,
            });
        }
    }
    msn
}

/// Congestion per direction of the connection of `f` (index `i`) and `g` (index `j`).
fn congestion(f: &Flow, i: usize, g: &Flow, j: usize) -> Vec<DirCongestion> {
    let mut congestion = Vec::new();
    for (d, c, di, ci) in [(f, g, i, j), (g, f, j, i)] {
        if d.cong.ecn[3] == 0 && c.cong.cnps == 0 {
            continue;
        }
        let r = &d.cong.rate;
        congestion.push(DirCongestion {
            data_flow: di,
            cnp_flow: ci,
            ce_marked: d.cong.ecn[3],
            ce_fraction: ce_fraction(d),
            cnps: c.cong.cnps,
            ce_to_cnp_ns: d.cong.reaction().ce_to_cnp.stat(),
            cnp_interarrival_ns: c.cong.reaction().cnp_gap.stat(),
            cnps_with_nak: d.cong.reaction().cnps_with_nak,
            rate_window_ns: r.windows_ns().stat().map_or(0, |s| s.median),
            rate_before_gbps_median: r.before_mbps().stat().map(|s| s.median as f64 / 1000.0),
            rate_after_gbps_median: r.after_mbps().stat().map(|s| s.median as f64 / 1000.0),
            rate_samples: r.samples().to_vec(),
        });
    }
    congestion
}

/// A flow's peer (index) and how the two were paired: `pairing` sets both at once.
fn paired(f: &Flow) -> Option<(usize, PairedBy)> {
    f.peer.map(|j| j as usize).zip(f.paired_by)
}

/// Connections, one per pair numbered by the lower flow index, and each flow's connection.
/// Connection ids: each connection numbered in the order of its lower flow index; the
/// connection of every flow.
fn connection_ids(flows: &[Flow]) -> Vec<Option<usize>> {
    let mut conn_of = vec![None; flows.len()];
    let mut next = 0;
    for (i, f) in flows.iter().enumerate() {
        if let Some((j, _)) = paired(f)
            && j > i
        {
            conn_of[i] = Some(next);
            conn_of[j] = Some(next);
            next += 1;
        }
    }
    conn_of
}

/// The report of connection `id` between flows `f` (index `i`) and `g` (index `j > i`), paired
/// `by`.
fn connection(
    id: usize,
    (f, i): (&Flow, usize),
    (g, j): (&Flow, usize),
    by: PairedBy,
) -> ConnectionReport {
    let mut rtt = Samples::default();
    rtt.merge(&f.ack_rtt);
    rtt.merge(&g.ack_rtt);
    ConnectionReport {
        id,
        flows: [i, j],
        a: Endpoint {
            addr: f.key.src,
            qp: g.key.dest_qp,
        },
        b: Endpoint {
            addr: f.key.dst,
            qp: f.key.dest_qp,
        },
        transport: transport_of(f, g.transport),
        paired_by: by,
        packets: f.packets + g.packets,
        ack_rtt_ns: rtt.stat(),
        msn: msn_checks(f, i, g, j),
        congestion: congestion(f, i, g, j),
    }
}

/// The report of flow `f` (index `i`, connection `conn`, its peer's transport `peer`).
fn flow_report(i: usize, f: &Flow, conn: Option<usize>, peer: Option<Transport>) -> FlowReport {
    let opcodes: CountMap<&'static str> = f
        .opcodes
        .iter()
        .map(|(op, n)| (crate::decode::Opcode(op).token(), n))
        .collect();
    FlowReport {
        id: i,
        src: f.key.src,
        dst: f.key.dst,
        dest_qp: f.key.dest_qp,
        session: f.key.session,
        transport: transport_of(f, peer),
        udp_src_port: f.udp_sport,
        connection: conn,
        packets: f.packets,
        payload_bytes: f.payload_bytes,
        opcodes,
        acks: f.acks,
        naks: NakCounts {
            psn_seq_err: f.cold().naks[0],
            invalid_request: f.cold().naks[1],
            remote_access: f.cold().naks[2],
            remote_op: f.cold().naks[3],
            invalid_rd: f.cold().naks[4],
            reserved: f.cold().naks_reserved,
        },
        rnr_naks: f.cold().rnr_naks,
        psn: psn_report(f),
        messages: MessageCounts {
            send: f.messages(0),
            write: f.messages(1),
            read: f.messages(2),
            atomic: f.messages(3),
            flush: f.messages(4),
            atomic_write: f.messages(5),
        },
        incomplete_messages: f.incomplete,
        responses: ResponseCounts {
            unmatched: f.cold().responses_unmatched,
            duplicate: f.cold().responses_duplicate,
        },
        qp_error: f.cold().error.map(|e| QpErrorReport {
            frame: e.frame,
            psn: e.psn,
            status: e.status,
            later_packets: f.cold().after_error,
        }),
        priority: f.prio.report(),
        dma_len_mismatches: f.cold().dma_len_mismatches,
        ecn: EcnCounts {
            not_ect: f.cong.ecn[0],
            ect1: f.cong.ecn[1],
            ect0: f.cong.ecn[2],
            ce: f.cong.ecn[3],
        },
        ce_fraction: ce_fraction(f),
        cnps: f.cong.cnps,
        fecn: f.cong.reaction().fecn,
        becn: f.cong.reaction().becn,
        loss: LossReport {
            nak_retransmissions: f.cold().nak_retransmissions,
            rnr_retransmissions: f.cold().rnr_retransmissions,
            timeouts: f.cold().timeouts,
            read_reissues: f.cold().read_reissues,
            unexplained_naks: f.cold().unexplained_naks,
            nak_delay_ns: f.cold().nak_delay.stat().map(Box::new),
            retx_delay_ns: f.cold().retx_delay.stat().map(Box::new),
            timeout_delay_ns: f.cold().timeout_delay.stat().map(Box::new),
            rnr_delay_ns: f.cold().rnr_delay.stat().map(Box::new),
            rnr_timer_us: f.cold().rnr_timer_us.stat().map(Box::new),
        },
        ack_rtt_ns: f.ack_rtt.stat(),
        pmtu: f.pmtu,
        first_ts_ns: f.first_ts,
        last_ts_ns: f.last_ts,
        evidence: super::evidence::FlowEvidence {
            first_frame: f.first_frame,
            requests: f.req_psn.packets,
            first_ce_frame: f.cong.reaction().first_ce_frame,
            first_cnp_frame: f.cong.reaction().first_cnp_frame,
            ..f.cold().evidence.clone()
        },
    }
}

/// Warnings: numbers below that the capture or the options make doubtful.
fn warnings(a: &Analyzer) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if let Some(m) = a.cfg.mtu {
        // FIRST and MIDDLE packets carry exactly one PMTU of payload (IBTA 9.7.1), so a larger
        // one proves the given MTU wrong, and READ PSN reservation with it is wrong too.
        if a.max_first_middle > m {
            warnings.push(Warning::MtuContradicted {
                mtu: m,
                payload: a.max_first_middle,
            });
        } else if let Some(seen) = a.global_pmtu().filter(|s| *s != m) {
            warnings.push(Warning::MtuDiffers { mtu: m, seen });
        }
    }
    snap_warnings(a, &mut warnings);
    let negative: u64 = a.flows.iter().map(|f| f.cold().negative_intervals).sum();
    if negative > 0 {
        warnings.push(Warning::NegativeIntervals {
            intervals: negative,
        });
    }
    if let (n @ 1.., sessions) = a.multi_session {
        warnings.push(Warning::MultiSession { flows: n, sessions });
    }
    let fr = &a.frames;
    if fr.untracked > 0 {
        warnings.push(Warning::Untracked {
            frames: fr.untracked,
            flows: fr.flows_dropped,
            exact: fr.flows_dropped_exact,
        });
    }
    let late = a.sink.late_statuses;
    if late > 0 {
        warnings.push(Warning::LateStatuses {
            messages: late,
            held: super::HELD_MESSAGES,
        });
    }
    for (i, f) in a.flows.iter().enumerate() {
        let cnps = f.peer.map(|j| &a.flows[j as usize].prio);
        super::priority::Priority::warnings(i, &f.prio, cnps, &mut warnings);
        msn_warning(i, f, &mut warnings);
        if let Some(e) = f.cold().error
            && f.cold().after_error > 0
        {
            warnings.push(Warning::AfterFatalNak {
                flow: i,
                packets: f.cold().after_error,
                frame: e.frame,
                status: e.status,
            });
        }
    }
    warnings
}

/// The MSN cross-check of the AETHs flow `f` (index `i`) carries, when it disagrees: the
/// responder counted another number of request messages than the capture shows (a request the
/// capture missed whole, or the message a capture-loss gap falls in).
fn msn_warning(i: usize, f: &Flow, warnings: &mut Vec<Warning>) {
    if f.msn_checked == 0 || f.msn_delta == f.msn_units {
        return;
    }
    warnings.push(Warning::MsnMismatch {
        flow: i,
        requester: f.peer.map(|j| j as usize),
        msn_delta: f.msn_delta,
        messages: f.msn_units,
        mismatched: f.msn_mismatches,
        checked: f.msn_checked,
    });
}

/// Warnings for captures cut by a snap length, and READs whose PSN reservation needed a PMTU
/// that could not be inferred.
fn snap_warnings(a: &Analyzer, warnings: &mut Vec<Warning>) {
    if a.frames.headers_cut > 0 {
        warnings.push(Warning::HeadersCut {
            frames: a.frames.headers_cut,
        });
    }
    let reads: u64 = a.flows.iter().map(|f| f.cold().reads_without_pmtu).sum();
    if reads > 0 && a.cfg.mtu.is_none() && a.global_pmtu().is_none() {
        warnings.push(Warning::PmtuUnknown { reads });
    }
}

/// Flows whose reports are built at a time (by the threads of the pool the build runs in, if
/// any) before their state is given back to the allocator. While a stretch is built, its flows,
/// its reports as collected and their copies in the report are all held: small enough that the
/// build stays below the analysis' own peak under QPN spraying (docs/perf.md).
const FLOWS_RELEASED: usize = 256;

/// The flows' and the connections' reports, in flow and connection order. The flow table is
/// consumed from its end, [`FLOWS_RELEASED`] flows at a time, and shrunk as it goes (a
/// connection's report is made with its higher flow, while the lower one is still there), so
/// that the reports (about 1 kB per flow) replace the flows' state instead of adding to it:
/// with 16 384 flows the two together would be the peak memory of a run. When the build runs
/// on a thread of a `rayon` pool (the parallel reader's, for `--threads N`), the reports of
/// each stretch are built by the pool's threads; the result is the same.
fn reports(mut flows: Vec<Flow>) -> (Vec<FlowReport>, Vec<ConnectionReport>) {
    use rayon::prelude::*;
    let conn_of = connection_ids(&flows);
    let peer: Vec<_> = flows
        .iter()
        .map(|f| f.peer.and_then(|p| flows[p as usize].transport))
        .collect();
    let parallel = rayon::current_thread_index().is_some();
    let mut reports = Vec::with_capacity(flows.len());
    let mut connections = Vec::new();
    while !flows.is_empty() {
        let lo = (flows.len() - 1) / FLOWS_RELEASED * FLOWS_RELEASED;
        // The stretch is built where it is and then truncated away: split off, it was copied
        // into a block of its own (220 kB, mapped and unmapped again for each stretch).
        let all = &flows[..];
        let build = |j: usize| {
            let g = &all[j];
            let conn = match (conn_of[j], paired(g)) {
                (Some(id), Some((i, by))) if i < j => {
                    Some(connection(id, (&all[i], i), (g, j), by))
                }
                _ => None,
            };
            (flow_report(j, g, conn_of[j], peer[j]), conn)
        };
        let range = lo..all.len();
        let built: Vec<_> = if parallel {
            range.into_par_iter().rev().map(build).collect()
        } else {
            range.rev().map(build).collect()
        };
        for (report, conn) in built {
            reports.push(report);
            connections.extend(conn);
        }
        flows.truncate(lo);
        flows.shrink_to_fit();
    }
    reports.reverse();
    connections.sort_by_key(|c| c.id);
    (reports, connections)
}

/// Give back the lookup tables that only the packets needed (flow index, host pairs, the
/// pairing candidates, CM pairs, UD senders, dropped flows) before the reports are built: the
/// build is the run's peak, and on the 500k-frame mixed trace (7,832 flows) they hold about
/// 2 MB (issue 38, point 5).
fn release_lookups(a: &mut Analyzer) {
    a.index = Default::default();
    a.hosts = Default::default();
    a.unpaired = Default::default();
    a.unpaired_ud = Default::default();
    a.cm_pairs = Default::default();
    a.cm_reqs = Default::default();
    a.dropped = Default::default();
    a.ud = Default::default();
}

pub(super) fn build(mut a: Analyzer) -> Report {
    close(&mut a);
    let pmtu = a.cfg.mtu.or_else(|| a.global_pmtu());
    let warnings = warnings(&a);
    release_lookups(&mut a);
    let (flow_reports, connections) = reports(std::mem::take(&mut a.flows));
    let mut report = Report {
        warnings,
        frames: a.frames,
        icrc: a.icrc,
        pmtu,
        flows: flow_reports,
        connections,
        gaps: a.sink.gaps,
        unexplained_naks: a.sink.unexplained,
        messages: a.cfg.keep_messages.then(|| a.sink.messages.into()),
        findings: Vec::new(),
    };
    report.findings = super::findings::derive(&report);
    report
}
