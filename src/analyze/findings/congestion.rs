//! Congestion and QoS rules: `congestion`, `cnp_without_ce`, `ecn_not_enabled`, `priority`
//! (RFC 3168 ECN codepoints; IBTA Annex A17 §A17.9 RoCEv2 congestion management and the CNP;
//! DCQCN as digested in `spec/roce.md` §6).

use super::{Finding, FindingKind, Severity, dur, flow_label};
use crate::analyze::report::{ConnectionReport, CountMap, DirCongestion, FlowReport, Report};

/// Every rule of this family.
pub(super) fn rules(r: &Report, out: &mut Vec<Finding>) {
    for c in &r.connections {
        for d in &c.congestion {
            if let (Some(data), Some(cnp)) = (r.flows.get(d.data_flow), r.flows.get(d.cnp_flow)) {
                out.push(if d.ce_marked > 0 {
                    congestion(data, cnp, d)
                } else {
                    cnp_without_ce(data, cnp, d)
                });
            }
        }
        priority_mix(r, c, out);
    }
    for f in r.flows.iter().filter(|f| f.connection.is_none()) {
        if f.ecn.ce > 0 {
            out.push(unpaired_ce(f));
        }
    }
    for f in &r.flows {
        if let Some(x) = several_values(f) {
            out.push(x);
        }
    }
    if let Some(x) = not_ect(r) {
        out.push(x);
    }
}

const CONGESTION_CAUSE: &str = "a switch queue on the path filled past its ECN threshold (incast, a hot link, \
more traffic than the bottleneck carries); the receiver NIC answered with CNPs and the sender's DCQCN cut its rate";
const CONGESTION_ADVICE: &str = "usually DCQCN working as meant; if throughput suffers, spread the traffic (NCCL \
channel / QP counts, ECMP entropy), tune the switch's ECN thresholds (Kmin/Kmax) and the NIC's DCQCN parameters \
(roce_np min_time_between_cnps, roce_rp rate reduction)";

fn congestion_numbers(x: &mut Finding, d: &DirCongestion) {
    x.cnps = Some(d.cnps);
    x.cnp_interval_ns = d.cnp_interarrival_ns.as_ref().map(|s| s.min);
    x.rate_before_gbps = d.rate_before_gbps_median;
    x.rate_after_gbps = d.rate_after_gbps_median;
}

fn reaction(d: &DirCongestion) -> String {
    let pacing = d.cnp_interarrival_ns.as_ref().map_or(String::new(), |s| {
        format!(", CNPs at least {} apart", dur(s.min))
    });
    let rate = match (d.rate_before_gbps_median, d.rate_after_gbps_median) {
        (Some(b), Some(a)) => {
            format!(", sender {b:.1} → {a:.1} Gb/s around its CNP trains (medians)")
        }
        _ => String::new(),
    };
    format!("{pacing}{rate}")
}

/// `congestion`: CE-marked data in one direction of a connection, and its CNPs.
fn congestion(data: &FlowReport, cnp: &FlowReport, d: &DirCongestion) -> Finding {
    let mut x = Finding::new(
        Severity::Warning,
        FindingKind::Congestion,
        format!(
            "{}: {} CE-marked packet{} ({:.1} %), {} CNP{} back{}",
            flow_label(data),
            d.ce_marked,
            if d.ce_marked == 1 { "" } else { "s" },
            d.ce_fraction * 100.0,
            d.cnps,
            if d.cnps == 1 { "" } else { "s" },
            reaction(d)
        ),
        CONGESTION_CAUSE,
        CONGESTION_ADVICE,
    )
    .on_flow(data)
    .with_frames(
        [data.evidence.first_ce_frame, cnp.evidence.first_cnp_frame]
            .into_iter()
            .flatten(),
    );
    x.count = Some(d.ce_marked);
    x.ce_fraction = Some(d.ce_fraction);
    congestion_numbers(&mut x, d);
    x
}

/// `cnp_without_ce`: CNPs to a sender whose data shows no CE mark here.
fn cnp_without_ce(data: &FlowReport, cnp: &FlowReport, d: &DirCongestion) -> Finding {
    let mut x = Finding::new(
        Severity::Warning,
        FindingKind::CnpWithoutCe,
        format!(
            "{}: {} CNP{} came back but none of the {} data packets captured is CE-marked{}",
            flow_label(data),
            d.cnps,
            if d.cnps == 1 { "" } else { "s" },
            data.packets,
            reaction(d)
        ),
        "the marking switch is after the capture point (a capture at the sender sees the data \
         before it is marked), or the receiver NIC sends CNPs for another reason (marks on \
         packets of other flows to the same QP, a NIC-internal congestion point)",
        "capture nearer the receiver to see the CE marks; the sender's rate is cut all the \
         same: check the switch's ECN marking counters on the path",
    )
    .on_flow(data)
    .with_frames(cnp.evidence.first_cnp_frame);
    x.count = Some(d.cnps);
    congestion_numbers(&mut x, d);
    x
}

/// `congestion` on a flow whose reverse direction was not paired (no CNP can be tied to it).
fn unpaired_ce(f: &FlowReport) -> Finding {
    let mut x = Finding::new(
        Severity::Warning,
        FindingKind::Congestion,
        format!(
            "{}: {} CE-marked packet{} ({:.1} %); no reverse flow was paired, so the CNPs (if \
             any) are not tied to it",
            flow_label(f),
            f.ecn.ce,
            if f.ecn.ce == 1 { "" } else { "s" },
            f.ce_fraction * 100.0
        ),
        CONGESTION_CAUSE,
        CONGESTION_ADVICE,
    )
    .on_flow(f)
    .with_frames(f.evidence.first_ce_frame);
    x.count = Some(f.ecn.ce);
    x.ce_fraction = Some(f.ce_fraction);
    x
}

/// `ecn_not_enabled`: request flows whose every ECN-carrying packet is Not-ECT, in one finding.
fn not_ect(r: &Report) -> Option<Finding> {
    let mut flows: Vec<&FlowReport> = r
        .flows
        .iter()
        .filter(|f| {
            let e = f.ecn;
            // QP0 / QP1 carry management datagrams (SMPs, CM MADs), not RoCE data.
            f.evidence.requests > 0 && f.dest_qp > 1 && e.not_ect > 0 && e.ect0 + e.ect1 + e.ce == 0
        })
        .collect();
    // The busiest first: the one the summary names.
    flows.sort_by_key(|f| std::cmp::Reverse(f.packets));
    let f = *flows.first()?;
    let more = if flows.len() > 1 {
        format!(
            " and {} more request flow{}",
            flows.len() - 1,
            if flows.len() == 2 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    let mut x = Finding::new(
        Severity::Warning,
        FindingKind::EcnNotEnabled,
        format!(
            "{}{more}: RoCE data sent Not-ECT, so switches cannot mark it and DCQCN never acts",
            flow_label(f)
        ),
        "ECN is off for RoCE on the sending NIC (or a host/switch rewrites the ECN bits), so \
         congestion shows up only as drops or PFC pauses",
        "enable it on the NIC (mlx5: /sys/class/net/<if>/ecn/roce_rp/enable/<prio> and \
         roce_np/enable/<prio>, or mlnx_qos / the traffic class with ECN bits set) and ECN \
         marking on the switch queues of the RoCE class; Soft-RoCE (rxe) never sets ECT",
    )
    .on_flow(f)
    .with_frames(flows.iter().map(|f| f.evidence.first_frame));
    x.count = Some(flows.len() as u64);
    x.ecn = Some("not_ect");
    Some(x)
}

/// The value most packets carry.
pub fn main_value(m: &CountMap<u8>) -> Option<u8> {
    m.iter().max_by_key(|(_, n)| **n).map(|(k, _)| *k)
}

fn values(m: &CountMap<u8>) -> String {
    m.iter()
        .map(|(k, _)| k.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `priority`: a flow whose data carries more than one DSCP or PCP.
fn several_values(f: &FlowReport) -> Option<Finding> {
    let p = &f.priority;
    let (what, m) = if p.dscp.len() > 1 {
        ("DSCP", &p.dscp)
    } else if p.pcp.len() > 1 {
        ("PCP", &p.pcp)
    } else {
        return None;
    };
    let mut x = Finding::new(
        Severity::Warning,
        FindingKind::Priority,
        format!(
            "{}: data on {what} {} within one flow",
            flow_label(f),
            values(m)
        ),
        "part of one QP's traffic is classified differently: a host or switch rewriting the \
         DSCP/PCP, or a QP whose traffic class (ibv_modify_qp ah_attr.grh.traffic_class) or \
         the interface's default changed during the capture",
        "give all RoCE traffic of the job one traffic class (NCCL_IB_TC, rdma_set_option \
         RDMA_OPTION_ID_TOS, cma_roce_tos) and check the switch's trust mode (DSCP vs PCP) and \
         rewrite rules",
    )
    .on_flow(f)
    .with_frames([f.evidence.first_frame]);
    x.dscp = main_value(&p.dscp);
    x.pcp = main_value(&p.pcp);
    Some(x)
}

/// `priority` across the two directions of a connection: data and ACKs in different classes,
/// or data in class 0 while the CNPs use another.
fn priority_mix(r: &Report, c: &ConnectionReport, out: &mut Vec<Finding>) {
    let (Some(a), Some(b)) = (r.flows.get(c.flows[0]), r.flows.get(c.flows[1])) else {
        return;
    };
    let (da, db) = (main_value(&a.priority.dscp), main_value(&b.priority.dscp));
    let (pa, pb) = (main_value(&a.priority.pcp), main_value(&b.priority.pcp));
    if (da.is_some() && db.is_some() && da != db) || (pa.is_some() && pb.is_some() && pa != pb) {
        let mut x = Finding::new(
            Severity::Warning,
            FindingKind::Priority,
            format!(
                "connection {}: {} → {} on {}, the way back on {}",
                c.id,
                a.src,
                a.dst,
                class(da, pa),
                class(db, pb)
            ),
            "the two hosts put this QP pair in different traffic classes, so its ACKs / \
             responses travel in another switch queue (possibly lossy or unpaced) than its data",
            "configure the same traffic class on both sides (NCCL_IB_TC, the RDMA-CM ToS, \
             the interface's default RoCE ToS) and the same trust mode on the switch ports",
        )
        .on_flow(a)
        .with_frames([a.evidence.first_frame, b.evidence.first_frame]);
        x.dscp = da;
        x.pcp = pa;
        out.push(x);
    }
    for (data, back) in [(a, b), (b, a)] {
        if let Some(x) = cnp_class(data, back) {
            out.push(x);
        }
    }
}

/// `DSCP d PCP p`, the PCP left out of untagged traffic.
fn class(dscp: Option<u8>, pcp: Option<u8>) -> String {
    let p = pcp.map_or(String::new(), |p| format!(" PCP {p}"));
    format!("DSCP {}{p}", opt(dscp))
}

fn opt(v: Option<u8>) -> String {
    v.map_or("-".to_string(), |v| v.to_string())
}

/// Data (of `data`) in class 0 while the CNPs that `back` carries to its sender use another.
fn cnp_class(data: &FlowReport, back: &FlowReport) -> Option<Finding> {
    if data.evidence.requests == 0 {
        return None;
    }
    let (d, p) = (
        main_value(&data.priority.dscp),
        main_value(&data.priority.pcp),
    );
    let (cd, cp) = (
        main_value(&back.priority.cnp_dscp),
        main_value(&back.priority.cnp_pcp),
    );
    let dscp_off = d == Some(0) && cd.is_some_and(|v| v != 0);
    let pcp_off = p.unwrap_or(0) == 0 && cp.is_some_and(|v| v != 0);
    if !(dscp_off && (pcp_off || cp.is_none())) {
        return None;
    }
    let mut x = Finding::new(
        Severity::Warning,
        FindingKind::Priority,
        format!(
            "{}: data on DSCP 0{} while its CNPs use DSCP {}{}: the data is in the default \
             (usually lossy) class",
            flow_label(data),
            p.map_or(String::new(), |p| format!(" PCP {p}")),
            opt(cd),
            cp.map_or(String::new(), |p| format!(" PCP {p}"))
        ),
        "the NIC's CNP priority is configured but the RoCE traffic class is not: the data goes \
         out in class 0, where PFC is usually off and ECN marking may not be configured",
        "set the RoCE traffic class (NCCL_IB_TC, cma_roce_tos, mlnx_qos --trust dscp with the \
         RoCE DSCP mapped to the PFC-enabled priority) so that data uses the lossless class",
    )
    .on_flow(data)
    .with_frames(
        [
            Some(data.evidence.first_frame),
            back.evidence.first_cnp_frame,
        ]
        .into_iter()
        .flatten(),
    );
    x.dscp = d;
    x.pcp = p;
    x.cnp_dscp = cd;
    x.cnp_pcp = cp;
    Some(x)
}
