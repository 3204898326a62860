//! Turning the analyzer's state into a [`Report`] at the end of the capture.

use super::Analyzer;
use super::flow::Flow;
use super::report::*;
use super::stats::Samples;
use std::collections::BTreeMap;

fn transport_name(flows: &[Flow], f: &Flow) -> String {
    match f.transport {
        Some(t) => t.name().to_string(),
        None => f
            .peer
            .and_then(|p| flows[p as usize].transport)
            .map_or("CNP", |t| t.name())
            .to_string(),
    }
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
        &f.resp_psn
    };
    PsnReport {
        first: t.first,
        last: t.first.map(|_| t.last),
        gap_events: f.req_psn.gap_events + f.resp_psn.gap_events,
        missing: f.req_psn.missing + f.resp_psn.missing,
        retransmitted: f.req_psn.retransmitted + f.resp_psn.retransmitted,
    }
}

fn cb((count, bytes): (u64, u64)) -> CountBytes {
    CountBytes { count, bytes }
}

pub(super) fn build(mut a: Analyzer) -> Report {
    let window = a.cfg.rate_window_ns;
    // Close open windows and messages.
    for f in &mut a.flows {
        f.cong.rate.finish(window);
        for asm in [&mut f.req_asm, &mut f.resp_asm] {
            f.incomplete += asm.abandoned;
            if let Some(m) = asm.open.take() {
                // READ requests and other PSN-only pieces are never "open" messages.
                if !m.complete {
                    f.incomplete += 1;
                    if a.cfg.keep_messages {
                        a.messages.push(m);
                    }
                }
            }
        }
    }
    let flows = &a.flows;
    // Connections: one per pair, numbered by the lower flow index.
    let mut conn_of = vec![None; flows.len()];
    let mut connections = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let Some(j) = f.peer.map(|j| j as usize) else {
            continue;
        };
        if j < i {
            continue;
        }
        let g = &flows[j];
        let id = connections.len();
        conn_of[i] = Some(id);
        conn_of[j] = Some(id);
        let mut rtt = Samples::default();
        rtt.merge(&f.ack_rtt);
        rtt.merge(&g.ack_rtt);
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
                ce_to_cnp_ns: d.cong.ce_to_cnp.stat(),
                cnp_interarrival_ns: c.cong.cnp_gap.stat(),
                rate_window_ns: window,
                rate_before_gbps_median: r.before_mbps.stat().map(|s| s.median as f64 / 1000.0),
                rate_after_gbps_median: r.after_mbps.stat().map(|s| s.median as f64 / 1000.0),
                rate_samples: r.samples.clone(),
            });
        }
        let t = transport_name(flows, f);
        connections.push(ConnectionReport {
            id,
            flows: [i, j],
            a: Endpoint {
                addr: f.key.src.to_string(),
                qp: g.key.dest_qp,
            },
            b: Endpoint {
                addr: f.key.dst.to_string(),
                qp: f.key.dest_qp,
            },
            transport: t,
            paired_by: f.paired_by.map_or("", |p| p.name()).to_string(),
            packets: f.packets + g.packets,
            ack_rtt_ns: rtt.stat(),
            msn,
            congestion,
        });
    }
    let flow_reports = flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let opcodes: BTreeMap<String, u64> = f
                .opcodes
                .iter()
                .map(|&(op, n)| (crate::decode::Opcode(op).token().to_string(), n))
                .collect();
            FlowReport {
                id: i,
                src: f.key.src.to_string(),
                dst: f.key.dst.to_string(),
                dest_qp: f.key.dest_qp,
                session: f.key.session,
                transport: transport_name(flows, f),
                udp_src_port: f.udp_sport,
                connection: conn_of[i],
                packets: f.packets,
                payload_bytes: f.payload_bytes,
                opcodes,
                acks: f.acks,
                naks: NakCounts {
                    psn_seq_err: f.naks[0],
                    invalid_request: f.naks[1],
                    remote_access: f.naks[2],
                    remote_op: f.naks[3],
                    invalid_rd: f.naks[4],
                    reserved: f.naks_reserved,
                },
                rnr_naks: f.rnr_naks,
                psn: psn_report(f),
                messages: MessageCounts {
                    send: cb(f.msgs[0]),
                    write: cb(f.msgs[1]),
                    read: cb(f.msgs[2]),
                    atomic: cb(f.msgs[3]),
                },
                incomplete_messages: f.incomplete,
                dma_len_mismatches: f.dma_len_mismatches,
                ecn: EcnCounts {
                    not_ect: f.cong.ecn[0],
                    ect1: f.cong.ecn[1],
                    ect0: f.cong.ecn[2],
                    ce: f.cong.ecn[3],
                },
                ce_fraction: ce_fraction(f),
                cnps: f.cong.cnps,
                fecn: f.cong.fecn,
                becn: f.cong.becn,
                loss: LossReport {
                    nak_retransmissions: f.nak_retransmissions,
                    rnr_retransmissions: f.rnr_retransmissions,
                    timeouts: f.timeouts,
                    nak_delay_ns: f.nak_delay.stat(),
                    retx_delay_ns: f.retx_delay.stat(),
                    timeout_delay_ns: f.timeout_delay.stat(),
                    rnr_delay_ns: f.rnr_delay.stat(),
                    rnr_timer_us: f.rnr_timer_us.stat(),
                },
                ack_rtt_ns: f.ack_rtt.stat(),
                pmtu: f.pmtu,
                first_ts_ns: f.first_ts,
                last_ts_ns: f.last_ts,
            }
        })
        .collect();
    let pmtu = a.cfg.mtu.or_else(|| a.global_pmtu());
    let mut warnings = Vec::new();
    if let Some(m) = a.cfg.mtu {
        // FIRST and MIDDLE packets carry exactly one PMTU of payload (IBTA 9.7.1), so a larger
        // one proves the given MTU wrong, and READ PSN reservation with it is wrong too.
        if a.max_first_middle > m {
            warnings.push(format!(
                "--mtu {m} contradicts the capture: FIRST/MIDDLE packets carry {} bytes of payload, so READ PSN reservation (and the gaps and retransmissions it implies) is wrong",
                a.max_first_middle
            ));
        } else if let Some(seen) = a.global_pmtu().filter(|s| *s != m) {
            warnings.push(format!(
                "--mtu {m} differs from the path MTU the capture shows ({seen} bytes in FIRST/MIDDLE packets)"
            ));
        }
    }
    Report {
        warnings,
        frames: a.frames,
        icrc: a.icrc,
        pmtu,
        flows: flow_reports,
        connections,
        gaps: a.gaps,
        messages: a.cfg.keep_messages.then_some(a.messages),
    }
}
