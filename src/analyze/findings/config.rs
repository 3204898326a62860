//! Frame and configuration rules: `icrc_errors`, `malformed`, `mtu`, `inferred_config` (IBTA
//! Vol 1 §7.8.1 ICRC, Annex A17 §A17.4.2 the RoCEv2 ICRC; §9.7.6.1.3 timeout and retry
//! count; Table 45 RNR timer codes).

use super::congestion::main_value;
use super::{Finding, FindingKind, Severity, dur, flow_label, peer};
use crate::analyze::report::{FlowReport, Report};

/// Every rule of this family.
pub(super) fn rules(r: &Report, out: &mut Vec<Finding>) {
    if let Some(x) = icrc(r) {
        out.push(x);
    }
    if let Some(x) = malformed(r) {
        out.push(x);
    }
    out.extend(mtu(r));
    if let Some(x) = inferred(r, out) {
        out.push(x);
    }
}

fn icrc(r: &Report) -> Option<Finding> {
    let i = &r.icrc;
    if i.bad == 0 {
        return None;
    }
    let mut x = Finding::new(
        Severity::Error,
        FindingKind::IcrcErrors,
        format!(
            "{} packet{} with a bad ICRC (of {} checked)",
            i.bad,
            if i.bad == 1 { "" } else { "s" },
            i.good + i.bad
        ),
        "the packet changed between the sender's NIC and the capture point in a field the ICRC \
         covers (a NAT or mirror rewriting addresses or ports, a faulty link or NIC), or the \
         capture tool wrote a wrong trailer",
        "a receiver drops such packets silently (they show up as loss); check that nothing \
         rewrites RoCE headers on the path, and the link's error counters",
    )
    .with_frames(i.bad_frames.iter().copied());
    x.count = Some(i.bad);
    Some(x)
}

fn malformed(r: &Report) -> Option<Finding> {
    let n = r.frames.malformed;
    if n == 0 {
        return None;
    }
    let first = r
        .frames
        .malformed_frames
        .first()
        .map_or(String::new(), |m| {
            format!(" (frame {}: {})", m.frame, m.reason)
        });
    let mut x = Finding::new(
        Severity::Error,
        FindingKind::Malformed,
        format!(
            "{n} RoCE frame{} that {} not a plausible IBA packet{first}",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" }
        ),
        "a sender building bad packets (a driver or firmware bug, a software RoCE stack), \
         traffic on UDP 4791 that is not RoCE, or frames damaged before the capture",
        "read the frames with -V to see which field is wrong; a receiving NIC drops such \
         packets",
    )
    .with_frames(r.frames.malformed_frames.iter().map(|m| m.frame));
    x.count = Some(n);
    Some(x)
}

/// `mtu`: the path MTU in use, and each connection whose two sides show different ones.
fn mtu(r: &Report) -> Vec<Finding> {
    let mut v = Vec::new();
    for c in &r.connections {
        let (Some(a), Some(b)) = (r.flows.get(c.flows[0]), r.flows.get(c.flows[1])) else {
            continue;
        };
        if let (Some(ma), Some(mb)) = (a.pmtu, b.pmtu)
            && ma != mb
        {
            let mut x = Finding::new(
                Severity::Info,
                FindingKind::Mtu,
                format!(
                    "connection {}: {} sends {ma}-byte packets, {} sends {mb}-byte ones: the \
                     two sides use different path MTUs",
                    c.id, a.src, b.src
                ),
                "the QP's path_mtu was set differently on the two hosts (or the netdev MTUs \
                 differ and RDMA-CM chose from each)",
                "set the same path MTU on both sides (ibv_modify_qp path_mtu, the interface \
                 MTU; NCCL_IB_... uses the port's active_mtu)",
            )
            .on_flow(a)
            .with_frames([a.evidence.first_frame, b.evidence.first_frame]);
            x.pmtu = Some(ma);
            v.push(x);
        }
    }
    if let Some(m) = r.pmtu {
        let f = r.flows.iter().find(|f| f.pmtu == Some(m));
        let mut x = Finding::new(
            Severity::Info,
            FindingKind::Mtu,
            format!("path MTU {m} bytes (the FIRST/MIDDLE payload size most packets carry)"),
            "the QPs' path_mtu attribute",
            "RoCE usually runs at 1024 (Soft-RoCE, 1500-byte Ethernet) or 4096 (9000-byte \
             jumbo frames); a smaller one costs headers and packets per message",
        )
        .with_frames(f.map(|f| f.evidence.first_frame));
        x.pmtu = Some(m);
        v.push(x);
    }
    v
}

/// One value per key, `key value` joined by `, `, for the configuration summary.
fn listing(items: &[(&str, Option<String>)]) -> String {
    items
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The data flow that carries most packets, and its main DSCP / PCP / ECN codepoint.
fn busiest(r: &Report) -> Option<&FlowReport> {
    r.flows
        .iter()
        .filter(|f| f.evidence.requests > 0)
        .max_by_key(|f| f.packets)
}

fn ecn_name(f: &FlowReport) -> Option<&'static str> {
    let e = f.ecn;
    [
        (e.not_ect, "not_ect"),
        (e.ect0, "ect0"),
        (e.ect1, "ect1"),
        (e.ce, "ect (ce-marked)"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .max_by_key(|(n, _)| *n)
    .map(|(_, s)| s)
}

/// `inferred_config`: what the wire reveals of the configuration, from the report and the
/// findings already made (timeout exponent and retry count of a retry run).
fn inferred(r: &Report, found: &[Finding]) -> Option<Finding> {
    let f = busiest(r)?;
    let ex = found.iter().find(|x| x.kind == FindingKind::RetryExhausted);
    let te = ex
        .or_else(|| found.iter().find(|x| x.kind == FindingKind::AckTimeout))
        .and_then(|x| x.timeout_exp);
    let rnr = r
        .flows
        .iter()
        .find_map(|g| g.loss.rnr_timer_us.as_ref().map(|s| s.min));
    let cnp_gap = r
        .connections
        .iter()
        .flat_map(|c| &c.congestion)
        .filter_map(|d| d.cnp_interarrival_ns.as_ref().map(|s| s.min))
        .min();
    let back = peer(r, f);
    let cnp_dscp = r
        .flows
        .iter()
        .find_map(|g| main_value(&g.priority.cnp_dscp));
    let cnp_pcp = r.flows.iter().find_map(|g| main_value(&g.priority.cnp_pcp));
    let (dscp, pcp) = (main_value(&f.priority.dscp), main_value(&f.priority.pcp));
    let text = listing(&[
        ("PMTU", r.pmtu.map(|m| m.to_string())),
        ("local ACK timeout exponent ≥", te.map(|e| e.to_string())),
        (
            "retry_cnt",
            ex.and_then(|x| x.retry_cnt).map(|n| n.to_string()),
        ),
        ("RNR timer", rnr.map(|t| format!("{t} µs"))),
        ("data DSCP", dscp.map(|v| v.to_string())),
        ("data PCP", pcp.map(|v| v.to_string())),
        (
            "ACK DSCP",
            back.and_then(|b| main_value(&b.priority.dscp))
                .map(|v| v.to_string()),
        ),
        ("CNP DSCP", cnp_dscp.map(|v| v.to_string())),
        ("CNP PCP", cnp_pcp.map(|v| v.to_string())),
        ("ECN", ecn_name(f).map(str::to_string)),
        ("CNP interval ≥", cnp_gap.map(dur)),
    ]);
    let mut x = Finding::new(
        Severity::Info,
        FindingKind::InferredConfig,
        format!(
            "configuration seen on the wire (busiest flow {}): {text}",
            flow_label(f)
        ),
        "read off the packets: values the capture does not show are left out",
        "compare with what the job was meant to run with (ibv_query_qp, NCCL_IB_TC / \
         NCCL_IB_TIMEOUT / NCCL_IB_RETRY_CNT, mlnx_qos, /sys/class/net/<if>/ecn/)",
    )
    .on_flow(f)
    .with_frames([f.evidence.first_frame]);
    x.pmtu = r.pmtu;
    x.timeout_exp = te;
    x.retry_cnt = ex.and_then(|x| x.retry_cnt);
    x.dscp = dscp;
    x.pcp = pcp;
    x.cnp_dscp = cnp_dscp;
    x.cnp_pcp = cnp_pcp;
    x.ecn = ecn_name(f);
    x.cnp_interval_ns = cnp_gap;
    Some(x)
}
