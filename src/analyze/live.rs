//! Reading the analysis while it runs (issue 36, `top`): per-flow counters in O(flows) without
//! touching the per-packet path, and the report the capture would give if it ended now.
//!
//! Nothing here is called by `read` or `capture`: the analyzer's hot path is unchanged.

use super::flow::FlowKey;
use super::report::{FrameCounts, Report};
use super::{Analyzer, Sink};

/// One flow's running counters, as [`Analyzer::live_flows`] reads them. Every count is
/// cumulative since the flow's first packet and equals the field of the same name in the
/// final report's `FlowReport` at the same point of the capture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiveFlow {
    /// (source, destination, BTH DestQP) and the mirror session under `--encap-session`.
    pub key: FlowKey,
    /// Transport of the flow's requests (`RC`, `UC`, `UD`, …), `None` for a flow of CNPs only.
    pub transport: Option<&'static str>,
    /// Packets (every opcode, CNPs included).
    pub packets: u64,
    /// Transport bytes (BTH through ICRC) of every packet, bytes.
    pub transport_bytes: u64,
    /// Payload bytes (after every transport header, without pad and ICRC).
    pub payload_bytes: u64,
    /// Packets retransmitted (PSN behind the expected one: `psn.retransmitted`).
    pub retransmitted: u64,
    /// PSN gap events (`psn.gap_events`).
    pub gap_events: u64,
    /// PSNs missing in those gaps (`psn.missing`).
    pub missing: u64,
    /// NAKs of every code (IBTA Vol 1 Table 43: NAK codes 0–4 and reserved) carried by this
    /// flow.
    pub naks: u64,
    /// RNR NAKs carried by this flow.
    pub rnr_naks: u64,
    /// Packets with an ECN field (IPv4/IPv6; RFC 3168).
    pub ecn_packets: u64,
    /// CE-marked packets (ECN `11`).
    pub ce: u64,
    /// CNPs in this flow (RoCEv2 Annex A17.9.2; addressed to this flow's destination QP).
    pub cnps: u64,
    /// Mean ACK RTT of this flow's AckReq requests so far, ns (O(1) to read; the report gives
    /// the median).
    pub ack_rtt_mean_ns: Option<u64>,
    /// Capture time of the flow's last packet, ns since the Unix epoch.
    pub last_ts_ns: u64,
}

impl Analyzer {
    /// Every tracked flow's running counters, written into `out` (cleared first) in flow
    /// order (the report's flow ids). O(flows); allocation-free once `out` has grown.
    pub fn live_flows(&self, out: &mut Vec<LiveFlow>) {
        out.clear();
        out.extend(self.flows.iter().map(|f| {
            let c = f.cold();
            LiveFlow {
                key: f.key,
                transport: f.transport.map(|t| t.name()),
                packets: f.packets,
                transport_bytes: f.transport_bytes,
                payload_bytes: f.payload_bytes,
                retransmitted: f.req_psn.retransmitted + c.resp_psn.retransmitted,
                gap_events: f.req_psn.gap_events + c.resp_psn.gap_events + c.ud_unseen.0,
                missing: f.req_psn.missing + c.resp_psn.missing + c.ud_unseen.1,
                naks: c.naks.iter().sum::<u64>() + c.naks_reserved,
                rnr_naks: c.rnr_naks,
                ecn_packets: f.cong.ecn.iter().sum(),
                ce: f.cong.ecn[3],
                cnps: f.cong.cnps,
                ack_rtt_mean_ns: f.rtt(),
                last_ts_ns: f.last_ts,
            }
        }));
    }

    /// Frame counts so far (total, RoCE, malformed, …); the lists in it are those of the
    /// report.
    pub fn frame_counts(&self) -> &FrameCounts {
        &self.frames
    }

    /// The report the capture would give if it ended now (gap verdicts, warnings, connections),
    /// built from a copy of the analysis state ([`Analyzer::snapshot`]), which goes on
    /// unchanged. Call it about once a second, not per packet.
    pub fn report_so_far(&self) -> Report {
        self.snapshot().finish()
    }

    /// A copy of the analysis state whose `finish()` gives the report of the frames pushed so
    /// far (on another thread, say), while this analysis goes on. Costs a copy of every flow
    /// (its bounded queues included: at most about 70 KB for a flow with every queue full,
    /// usually a few hundred bytes); kept messages and the tap are not copied (the report has
    /// no `messages`), nor what only later packets need (the flow index, UD senders, pairing
    /// candidates by host).
    pub fn snapshot(&self) -> Analyzer {
        let mut cfg = self.cfg.clone();
        cfg.keep_messages = false;
        Analyzer {
            cfg,
            frames: self.frames.clone(),
            icrc: self.icrc.clone(),
            flows: self.flows.clone(),
            // The report reads neither the index nor the UD senders.
            index: Default::default(),
            last_flow: None,
            hosts: Default::default(),
            pmtu_seen: self.pmtu_seen,
            max_first_middle: self.max_first_middle,
            sink: Sink {
                tap: None,
                gaps: self.sink.gaps.clone(),
                messages: Default::default(),
                messages_taken: 0,
                late_statuses: self.sink.late_statuses,
                unexplained: self.sink.unexplained.clone(),
                keep_gaps: self.sink.keep_gaps,
                keep_messages: false,
            },
            ud: Default::default(),
            cm_reqs: self.cm_reqs.clone(),
            cm_pairs: self.cm_pairs.clone(),
            dropped: self.dropped.clone(),
            unpaired: self.unpaired.clone(),
            unpaired_ud: self.unpaired_ud.clone(),
            multi_session: self.multi_session,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::AnalyzeConfig;
    use crate::decode::Opcode;
    use crate::decode::{Address, Aeth, DecodeConfig, LinkType, Reth, decode_frame};
    use crate::synth::frame::{Bth, Packet};

    /// Push SEND ONLY packets of QP 0x11 (10.0.0.1 → 10.0.0.2) with `psns`, every other one
    /// CE-marked, 1 µs apart.
    fn push(a: &mut Analyzer, psns: &[u32]) {
        let cfg = DecodeConfig::default();
        for (i, &psn) in psns.iter().enumerate() {
            let mut p = Packet::v4(
                [10, 0, 0, 1],
                [10, 0, 0, 2],
                Bth {
                    opcode: Opcode(0x04),
                    dest_qp: 0x11,
                    psn,
                    ..Bth::default()
                },
            );
            p.payload_len = 100;
            p.set_ecn(if i % 2 == 0 { 3 } else { 2 });
            let data = p.build();
            let f = decode_frame(LinkType::ETHERNET, &data, data.len() as u32, &cfg);
            a.push(i as u64 + 1, 1_000 * i as u64, &f);
        }
    }

    #[test]
    fn live_counters_are_the_reports() {
        let mut a = Analyzer::new(AnalyzeConfig::default());
        // PSN 3 lost, PSN 1 sent twice: one gap of one PSN, one retransmission.
        push(&mut a, &[0, 1, 2, 4, 5, 1]);
        let mut live = Vec::new();
        a.live_flows(&mut live);
        let so_far = a.report_so_far();
        // The analysis goes on after the copy and ends with the same report.
        let r = a.finish();
        assert_eq!(live.len(), 1);
        let (l, f) = (&live[0], &r.flows[0]);
        assert_eq!(l.key.src, Address::V4([10, 0, 0, 1]));
        assert_eq!(l.key.dest_qp, 0x11);
        assert_eq!(l.transport, Some("RC"));
        // Hand-counted: six packets of 100 payload bytes, each BTH 12 + 100 + ICRC 4.
        assert_eq!(l.packets, 6);
        assert_eq!(l.payload_bytes, 600);
        assert_eq!(l.transport_bytes, 6 * 116);
        assert_eq!((l.gap_events, l.missing, l.retransmitted), (1, 1, 1));
        assert_eq!((l.ce, l.ecn_packets), (3, 6));
        // And the report's fields agree.
        assert_eq!(f.packets, l.packets);
        assert_eq!(f.psn.gap_events, l.gap_events);
        assert_eq!(f.psn.retransmitted, l.retransmitted);
        assert_eq!(f.ecn.ce, l.ce);
        assert_eq!(
            serde_json::to_value(&so_far).unwrap(),
            serde_json::to_value(&r).unwrap()
        );
    }

    /// One packet of a random exchange between 10.0.0.1 (requester, QP 0x11 at the peer)
    /// and 10.0.0.2 (responder, QP 0x22 at the peer): (opcode, PSN, AETH syndrome, CE).
    type Step = (u8, u32, u8, bool);

    /// Feed `steps`, the first one as frame `first + 1` at `first` µs.
    fn feed(a: &mut Analyzer, steps: &[Step], first: usize) {
        let cfg = DecodeConfig::default();
        for (i, &(opcode, psn, syndrome, ce)) in (first..).zip(steps) {
            // Requests go from .1 to QP 0x22; ACKs, READ responses and CNPs come back.
            let back = matches!(opcode, 0x0d..=0x11 | 0x81);
            let (src, dst, qp) = if back {
                ([10, 0, 0, 2], [10, 0, 0, 1], 0x11)
            } else {
                ([10, 0, 0, 1], [10, 0, 0, 2], 0x22)
            };
            let mut p = Packet::v4(
                src,
                dst,
                Bth {
                    opcode: Opcode(opcode),
                    dest_qp: qp,
                    psn,
                    ack_req: true,
                    ..Bth::default()
                },
            );
            p.udp_src = 0xc011;
            p.ext.aeth = Aeth {
                syndrome,
                msn: i as u32,
            };
            p.ext.reth = Reth {
                va: 0x1000,
                rkey: 0x1234,
                dma_len: 1024,
            };
            p.payload_len = match opcode {
                0x06 | 0x07 | 0x0d | 0x0e => 1024,
                0x04 | 0x08 | 0x0a | 0x0f | 0x10 => 100,
                _ => 0,
            };
            if ce {
                p.set_ecn(3);
            }
            let data = p.build();
            let f = decode_frame(LinkType::ETHERNET, &data, data.len() as u32, &cfg);
            a.push(i as u64 + 1, 1_000 * i as u64, &f);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// The report of a copy taken after any prefix of an exchange is the report of an
        /// analysis of that prefix alone, and the analysis goes on unchanged after the copy.
        #[test]
        fn report_so_far_is_the_prefix_s_report(
            steps in proptest::collection::vec(
                (
                    proptest::sample::select(vec![
                        0x04u8, 0x06, 0x07, 0x08, 0x0a, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x81,
                    ]),
                    0u32..24,
                    proptest::sample::select(vec![0x1fu8, 0x60, 0x61, 0x20, 0x63]),
                    proptest::bool::ANY,
                ),
                0..60,
            ),
            cut in 0usize..60,
        ) {
            let cut = cut.min(steps.len());
            let mut whole = Analyzer::new(AnalyzeConfig::default());
            feed(&mut whole, &steps[..cut], 0);
            let so_far = serde_json::to_value(whole.report_so_far()).unwrap();
            let mut live = Vec::new();
            whole.live_flows(&mut live);
            let mut prefix = Analyzer::new(AnalyzeConfig::default());
            feed(&mut prefix, &steps[..cut], 0);
            let prefix_report = prefix.finish();
            proptest::prop_assert_eq!(&so_far, &serde_json::to_value(&prefix_report).unwrap());
            // The live counters are the report's fields.
            proptest::prop_assert_eq!(live.len(), prefix_report.flows.len());
            for (l, f) in live.iter().zip(&prefix_report.flows) {
                proptest::prop_assert_eq!(l.packets, f.packets);
                proptest::prop_assert_eq!(l.retransmitted, f.psn.retransmitted);
                proptest::prop_assert_eq!(l.gap_events, f.psn.gap_events);
                proptest::prop_assert_eq!(l.rnr_naks, f.rnr_naks);
                proptest::prop_assert_eq!(l.cnps, f.cnps);
                proptest::prop_assert_eq!(l.ce, f.ecn.ce);
            }
            // Going on after the copy ends as an analysis that never made one.
            feed(&mut whole, &steps[cut..], cut);
            let mut fresh = Analyzer::new(AnalyzeConfig::default());
            feed(&mut fresh, &steps, 0);
            proptest::prop_assert_eq!(
                serde_json::to_value(whole.finish()).unwrap(),
                serde_json::to_value(fresh.finish()).unwrap()
            );
        }
    }
}
