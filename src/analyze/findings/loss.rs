//! Loss and NAK rules: `packet_loss`, `capture_loss`, `rnr_nak`, `fatal_nak` (IBTA Vol 1
//! §9.7.5.2 AETH syndromes, §9.9.2 the responder's NAKs and the error state they cause).

use super::{Finding, FindingKind, Severity, dur, flow_label, peer};
use crate::analyze::message::MessageStatus;
use crate::analyze::report::{FlowReport, GapReport, GapVerdict, Report};

/// Every rule of this family.
pub(super) fn rules(r: &Report, out: &mut Vec<Finding>) {
    // The gaps and unexplained NAKs of each flow, gathered once (not scanned per flow).
    let mut by_flow: Vec<Vec<&GapReport>> = vec![Vec::new(); r.flows.len()];
    for g in &r.gaps {
        if let Some(v) = by_flow.get_mut(g.flow) {
            v.push(g);
        }
    }
    let mut naks: Vec<Vec<u64>> = vec![Vec::new(); r.flows.len()];
    for n in &r.unexplained_naks {
        if let Some(v) = naks.get_mut(n.flow) {
            v.push(n.frame);
        }
    }
    for f in &r.flows {
        let (gaps, naks) = (&by_flow[f.id], &naks[f.id]);
        if let Some(x) = fatal_nak(r, f) {
            out.push(x);
        }
        if let Some(x) = rnr(r, f) {
            out.push(x);
        }
        if let Some(x) = packet_loss(f, gaps, naks) {
            out.push(x);
        }
        if let Some(x) = capture_loss(r, f, gaps) {
            out.push(x);
        }
    }
}

/// `fatal_nak`, reported on the flow that sent the refused request.
fn fatal_nak(r: &Report, f: &FlowReport) -> Option<Finding> {
    let e = f.qp_error?;
    if f.evidence.requests == 0 && peer(r, f).is_some_and(|g| g.qp_error.is_some()) {
        return None;
    }
    let (what, cause, advice) = match e.status {
        MessageStatus::NakRemoteAccess => (
            "remote access error",
            "the responder refused the RETH or atomic address: an rkey that is not (or no longer) \
             registered, an address outside the memory region, or access rights missing",
            "check the rkey / address the requester uses against the responder's ibv_reg_mr \
             (IBV_ACCESS_REMOTE_WRITE / READ / ATOMIC) and that the region was not deregistered",
        ),
        MessageStatus::NakInvalidRequest => (
            "invalid request",
            "the responder cannot execute the request: an opcode its QP does not allow, a \
             message longer than its receive buffer or the port's max message size",
            "check the QP's access flags (ibv_modify_qp qp_access_flags), receive buffer sizes \
             and max_rd_atomic / max_dest_rd_atomic",
        ),
        MessageStatus::NakRemoteOp => (
            "remote operational error",
            "the responder hit an error executing the request (a local protection or DMA error \
             on its side)",
            "look at the responder host's kernel log and NIC error counters",
        ),
        _ => (
            "invalid RD request",
            "an RD request the responder rejected",
            "check the RD domain and EE context",
        ),
    };
    let mut x = Finding::new(
        Severity::Error,
        FindingKind::FatalNak,
        format!(
            "{}: NAK {what} at PSN {}; the QP pair is in the error state after it{}",
            flow_label(f),
            e.psn,
            match e.later_packets {
                0 => String::new(),
                1 => " (1 later packet, not analysed)".to_string(),
                n => format!(" ({n} later packets, not analysed)"),
            }
        ),
        cause,
        advice,
    )
    .on_flow(f)
    .with_frames([e.frame]);
    x.psn = Some(e.psn);
    Some(x)
}

/// `rnr_nak`, reported on the requester's flow (the flow the NAKs answer), from the NAKs the
/// responder's flow carries.
fn rnr(r: &Report, f: &FlowReport) -> Option<Finding> {
    if f.rnr_naks == 0 {
        return None;
    }
    let req = peer(r, f);
    let codes: Vec<u8> = (0..32u8)
        .filter(|c| f.evidence.rnr_codes & (1 << c) != 0)
        .collect();
    let lost = req
        .and_then(|g| g.loss.rnr_delay_ns.as_ref())
        .map(|s| (s.mean * s.count as f64).round() as u64);
    let timers = f
        .loss
        .rnr_timer_us
        .as_ref()
        .map_or(String::new(), |s| format!(", timer {} µs", s.min));
    let mut x = Finding::new(
        Severity::Warning,
        FindingKind::RnrNak,
        format!(
            "{}: {} RNR NAK{} back from {} (receiver not ready{timers}){}",
            req.map_or_else(
                || format!("{} → {} QP {:#08x}", f.dst, f.src, f.dest_qp),
                flow_label
            ),
            f.rnr_naks,
            if f.rnr_naks == 1 { "" } else { "s" },
            f.src,
            lost.map_or(String::new(), |l| format!(
                ", {} spent waiting to retry",
                dur(l)
            )),
        ),
        "a SEND or WRITE WITH IMMEDIATE arrived while the responder had no receive work request \
         posted: the application posts receives too late or too few",
        "post receives earlier and deeper (a larger receive queue / SRQ, NCCL_IB_* buffers), and \
         set min_rnr_timer and rnr_retry (7 = retry for ever) so that RNR does not end in \
         IBV_WC_RNR_RETRY_EXC_ERR",
    )
    .on_flow(req.unwrap_or(f))
    .with_frames(f.evidence.rnr_frames.iter().copied());
    x.count = Some(f.rnr_naks);
    x.rnr_timer_codes = Some(codes);
    x.time_lost_ns = lost;
    Some(x)
}

/// The gaps (of one flow) whose verdict is one of `verdicts`.
fn with_verdict<'r>(gaps: &[&'r GapReport], verdicts: &[GapVerdict]) -> Vec<&'r GapReport> {
    gaps.iter()
        .copied()
        .filter(|g| verdicts.contains(&g.verdict))
        .collect()
}

/// `packet_loss`: gaps the requester recovered by NAK / go-back-N or a timeout, plus the
/// PSN-sequence NAKs no captured gap explains (lost after the capture point).
fn packet_loss(f: &FlowReport, gaps: &[&GapReport], after: &[u64]) -> Option<Finding> {
    let g = with_verdict(
        gaps,
        &[
            GapVerdict::NakRetransmitted,
            GapVerdict::TimeoutRetransmitted,
            GapVerdict::Unresolved,
        ],
    );
    if g.is_empty() && after.is_empty() {
        return None;
    }
    let missing: u64 = g.iter().map(|g| u64::from(g.missing)).sum();
    let lost: u64 = g
        .iter()
        .filter_map(|g| g.retransmission.map(|x| x.ts_ns.saturating_sub(g.ts_ns)))
        .sum();
    let mut where_ = Vec::new();
    if !g.is_empty() {
        where_.push(format!(
            "{} gap{} ({missing} PSN{}) lost before the capture point",
            g.len(),
            if g.len() == 1 { "" } else { "s" },
            if missing == 1 { "" } else { "s" }
        ));
    }
    if !after.is_empty() {
        where_.push(format!(
            "{} NAK{} for packets captured here, so lost after the capture point",
            after.len(),
            if after.len() == 1 { "" } else { "s" }
        ));
    }
    let frames = g
        .iter()
        .take(2)
        .flat_map(|g| {
            [
                Some(g.frame),
                g.nak.map(|n| n.frame),
                g.retransmission.map(|x| x.frame),
            ]
        })
        .flatten()
        .chain(after.iter().take(2).copied());
    let mut x = Finding::new(
        Severity::Warning,
        FindingKind::PacketLoss,
        format!(
            "{}: {}{}",
            flow_label(f),
            where_.join("; "),
            if lost > 0 {
                format!(
                    "; {} recovering (gap → retransmission, go-back-N)",
                    dur(lost)
                )
            } else {
                String::new()
            }
        ),
        "packets dropped in the network: a congested switch queue without PFC, a lossy link \
         (CRC / symbol errors), or a buffer overflow at a NIC",
        "check switch discard and PFC pause counters and port error counters on the path, NIC \
         counters out_of_sequence / packet_seq_err / rx_discards_phy; on a lossless fabric \
         enable PFC on the RoCE priority, else rely on ECN/DCQCN",
    )
    .on_flow(f)
    .with_frames(frames);
    x.psn = g.first().map(|g| g.expected_psn);
    x.count = Some((g.len() + after.len()) as u64);
    x.missing = Some(missing);
    x.time_lost_ns = Some(lost);
    Some(x)
}

/// `capture_loss`: gaps that a later ACK covers with no NAK or retransmission in between.
fn capture_loss(r: &Report, f: &FlowReport, gaps: &[&GapReport]) -> Option<Finding> {
    let g = with_verdict(gaps, &[GapVerdict::CaptureLoss]);
    let first = g.first()?;
    let missing: u64 = g.iter().map(|g| u64::from(g.missing)).sum();
    let cut = r.frames.headers_cut;
    let (cause, advice) = if cut > 0 {
        (
            "the capture cut frames before the end of the headers the analysis needs (snap \
             length too short), so their PSNs count as missing here",
            "capture with a snap length of at least 128 bytes (tcpdump -s 128) to analyse \
             every packet",
        )
    } else {
        (
            "the capture dropped packets (tcpdump / ibdump buffer, mirror port \
             oversubscribed, sampling on the switch)",
            "raise the capture buffer (tcpdump -B), capture on a less loaded mirror port or \
             with NIC offload (ibdump); check the capture tool's dropped-packet count",
        )
    };
    let mut x = Finding::new(
        Severity::Info,
        FindingKind::CaptureLoss,
        format!(
            "{}: {} gap{} ({missing} PSN{}) that the responder ACKed without a NAK or \
             retransmission: the capture {}, not the network",
            flow_label(f),
            g.len(),
            if g.len() == 1 { "" } else { "s" },
            if missing == 1 { "" } else { "s" },
            if cut > 0 {
                format!(
                    "cut {cut} frame{} before the end of their headers (snap length)",
                    if cut == 1 { "" } else { "s" }
                )
            } else {
                "missed them".to_string()
            }
        ),
        cause,
        advice,
    )
    .on_flow(f)
    .with_frames(
        g.iter()
            .take(3)
            .flat_map(|g| [Some(g.frame), g.ack_frame])
            .flatten(),
    );
    x.psn = Some(first.expected_psn);
    x.count = Some(g.len() as u64);
    x.missing = Some(missing);
    Some(x)
}
