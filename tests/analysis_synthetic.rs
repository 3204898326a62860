//! The independent generator's capture against its ground truth
//! (`../shared/captures/synthetic/loss_ce_read.truth.json`): every per-flow counter must match.

mod common;

use roce_inspect::analyze::AnalyzeConfig;
use serde_json::Value;
use std::collections::BTreeMap;

#[test]
fn every_flow_counter_equals_the_truth() {
    need_shared!();
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(common::capture("synthetic/loss_ce_read.truth.json")).unwrap(),
    )
    .unwrap();
    let report = common::analyze_file(
        &common::capture("synthetic/loss_ce_read.pcap"),
        AnalyzeConfig::default(),
    );
    let g = &truth["global"];
    assert_eq!(report.frames.total, g["total_frames"].as_u64().unwrap());
    assert_eq!(report.frames.roce, g["roce_frames"].as_u64().unwrap());
    assert_eq!(report.frames.other, g["non_roce_frames"].as_u64().unwrap());
    assert_eq!(
        report.frames.truncated,
        g["truncated_frames"].as_u64().unwrap()
    );
    assert_eq!(report.icrc.bad, 0);
    assert_eq!(report.flows.len() as u64, g["flows"].as_u64().unwrap());
    assert_eq!(
        report.pmtu,
        truth["capture"]["pmtu"].as_u64().map(|v| v as u32)
    );

    let names = truth["opcode_names"].as_object().unwrap();
    let mut checked = 0;
    let mut totals = [0u64; 6];
    for tf in truth["flows"].as_array().unwrap() {
        let (src, dst, qp) = (
            tf["src"].as_str().unwrap(),
            tf["dst"].as_str().unwrap(),
            tf["dst_qpn"].as_u64().unwrap() as u32,
        );
        let f = report
            .flows
            .iter()
            .find(|f| f.src.to_string() == src && f.dst.to_string() == dst && f.dest_qp == qp)
            .unwrap_or_else(|| panic!("flow {src} -> {dst} QP {qp} missing"));
        let id = format!("{src}->{dst} qp {qp:#x}");
        let u = |k: &str| tf[k].as_u64().unwrap();
        assert_eq!(f.packets, u("packets"), "{id} packets");
        assert_eq!(f.payload_bytes, u("payload_bytes"), "{id} payload_bytes");
        let want_ops: BTreeMap<&str, u64> = tf["opcodes"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (names[k].as_str().unwrap(), v.as_u64().unwrap()))
            .collect();
        let got_ops: BTreeMap<&str, u64> = f.opcodes.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(got_ops, want_ops, "{id} opcodes");
        assert_eq!(f.acks, u("acks"), "{id} acks");
        let nak = |code: &str| tf["naks"].get(code).and_then(Value::as_u64).unwrap_or(0);
        assert_eq!(f.naks.psn_seq_err, nak("0"), "{id} naks 0");
        assert_eq!(f.naks.invalid_request, nak("1"), "{id} naks 1");
        assert_eq!(f.naks.remote_access, nak("2"), "{id} naks 2");
        assert_eq!(f.naks.remote_op, nak("3"), "{id} naks 3");
        assert_eq!(f.naks.invalid_rd, nak("4"), "{id} naks 4");
        assert_eq!(f.rnr_naks, u("rnr_naks"), "{id} rnr_naks");
        assert_eq!(f.ecn.ce, u("ce_marked"), "{id} ce_marked");
        assert_eq!(f.cnps, u("cnps"), "{id} cnps");
        let opt = |k: &str| tf[k].as_u64().map(|v| v as u32);
        assert_eq!(f.psn.first, opt("psn_first"), "{id} psn_first");
        assert_eq!(f.psn.last, opt("psn_last"), "{id} psn_last");
        assert_eq!(f.psn.gap_events, u("gap_events"), "{id} gap_events");
        assert_eq!(f.psn.missing, u("missing_psns"), "{id} missing_psns");
        assert_eq!(
            f.psn.retransmitted,
            u("retransmitted_packets"),
            "{id} retransmitted"
        );
        let m = &tf["messages"];
        let cb = |k: &str| {
            (
                m[k]["count"].as_u64().unwrap(),
                m[k]["bytes"].as_u64().unwrap(),
            )
        };
        assert_eq!(
            (f.messages.write.count, f.messages.write.bytes),
            cb("write"),
            "{id} write"
        );
        assert_eq!(
            (f.messages.read.count, f.messages.read.bytes),
            cb("read"),
            "{id} read"
        );
        assert_eq!(
            (f.messages.send.count, f.messages.send.bytes),
            cb("send"),
            "{id} send"
        );
        assert_eq!(f.messages.atomic.count, 0, "{id} atomic");
        totals[0] += f.psn.gap_events;
        totals[1] += f.psn.retransmitted;
        totals[2] += f.ecn.ce;
        totals[3] += f.cnps;
        totals[4] += f.naks.psn_seq_err;
        totals[5] += f.rnr_naks;
        checked += 1;
    }
    assert_eq!(checked, 10);
    let gu = |k: &str| g[k].as_u64().unwrap();
    assert_eq!(
        totals,
        [
            gu("gap_events"),
            gu("retransmitted_packets"),
            gu("ce_marked"),
            gu("cnps"),
            gu("naks"),
            gu("rnr_naks")
        ]
    );
}

/// What the truth implies beyond the per-flow counters: every RC flow pairs with the flow named
/// as its peer, the UD sender pairs with its CNP flow, and each gap is reported by a NAK and
/// filled by a NAK-triggered retransmission (the generator never times out: `sim.timeouts` 0).
#[test]
fn pairing_and_loss_stories() {
    need_shared!();
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(common::capture("synthetic/loss_ce_read.truth.json")).unwrap(),
    )
    .unwrap();
    let report = common::analyze_file(
        &common::capture("synthetic/loss_ce_read.pcap"),
        AnalyzeConfig::default(),
    );
    let find = |src: &str, dst: &str, qp: u64| {
        report
            .flows
            .iter()
            .find(|f| {
                f.src.to_string() == src && f.dst.to_string() == dst && u64::from(f.dest_qp) == qp
            })
            .unwrap()
    };
    for tf in truth["flows"].as_array().unwrap() {
        let f = find(
            tf["src"].as_str().unwrap(),
            tf["dst"].as_str().unwrap(),
            tf["dst_qpn"].as_u64().unwrap(),
        );
        if let Some(peer) = tf["peer"].as_object() {
            let p = find(
                peer["src"].as_str().unwrap(),
                peer["dst"].as_str().unwrap(),
                peer["dst_qpn"].as_u64().unwrap(),
            );
            let c = f.connection.expect("paired");
            assert_eq!(p.connection, Some(c));
        }
        if tf["role"] == "request" && tf["transport"] == "RC" {
            let sim = &tf["sim"];
            assert_eq!(f.loss.timeouts, sim["timeouts"].as_u64().unwrap());
        }
    }
    // The UD sender and its CNP-only flow form one connection paired by the CNP.
    let ud = find("10.0.0.1", "10.0.1.2", 2218650);
    let cnp = find("10.0.1.2", "10.0.0.1", 2125677);
    assert!(ud.connection.is_some() && ud.connection == cnp.connection);
    // RC gaps: each gets its NAK and a NAK-triggered retransmission.
    let rc_gaps: Vec<_> = report
        .gaps
        .iter()
        .filter(|g| report.flows[g.flow].transport.name() == "RC")
        .collect();
    assert_eq!(rc_gaps.len(), 10);
    for g in rc_gaps {
        let nak = g
            .nak
            .unwrap_or_else(|| panic!("gap at frame {} has no NAK", g.frame));
        assert!(nak.frame > g.frame);
        match g.retransmission {
            Some(r) => {
                assert_eq!(r.trigger.name(), "nak");
                assert!(r.frame > nak.frame);
                assert_eq!(r.delay_ns, Some(r.ts_ns - nak.ts_ns));
            }
            // Only a loss at the very end of the 3000-frame capture may miss its resend.
            None => assert!(nak.frame > 2990, "gap at frame {} never resent", g.frame),
        }
    }
}

/// Cross-checks against facts the generator states: its MSN (written by its responder model)
/// agrees with our go-back-N reassembly at every ACK, and its NP paces CNPs at ≥ 50 µs per QP.
#[test]
fn msn_and_cnp_pacing_agree_with_the_generator() {
    need_shared!();
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(common::capture("synthetic/loss_ce_read.truth.json")).unwrap(),
    )
    .unwrap();
    let pacing_ns = (truth["params"]["cnp_interval_us"].as_f64().unwrap() * 1000.0) as u64;
    let report = common::analyze_file(
        &common::capture("synthetic/loss_ce_read.pcap"),
        AnalyzeConfig::default(),
    );
    let mut checked = 0;
    let mut cnp_dirs = 0;
    for c in &report.connections {
        for m in &c.msn {
            assert!(m.checked_aeths > 50, "{m:?}");
            assert_eq!(m.mismatched_aeths, 0, "connection {}: {m:?}", c.id);
            assert!(!m.mismatch);
            checked += 1;
        }
        for d in &c.congestion {
            if let Some(s) = d.cnp_interarrival_ns {
                assert!(s.min >= pacing_ns, "{s:?}");
            }
            assert!(d.ce_to_cnp_ns.is_some());
            assert_eq!(d.ce_marked, report.flows[d.data_flow].ecn.ce);
            cnp_dirs += 1;
        }
    }
    assert_eq!(checked, 4);
    // 4 RC pairs and the UD sender each got CE marks answered by CNPs.
    assert_eq!(cnp_dirs, 5);
}

/// The text summary names every section, counts the truth's 14 gap events, and colours only
/// when asked.
#[test]
fn text_summary_sections_and_colour() {
    need_shared!();
    let report = common::analyze_file(
        &common::capture("synthetic/loss_ce_read.pcap"),
        AnalyzeConfig {
            keep_messages: true,
            ..Default::default()
        },
    );
    let mut plain = Vec::new();
    roce_inspect::output::summary::write_summary(&report, &mut plain, false).unwrap();
    let plain = String::from_utf8(plain).unwrap();
    for s in [
        "3000 frames: 2989 RoCE, 11 other",
        "Connections and flows",
        "Gap and loss events (14)",
        "Congestion",
        "ICRC failures and malformed frames",
        "0x4164e9",
    ] {
        assert!(plain.contains(s), "missing {s:?} in\n{plain}");
    }
    assert!(!plain.contains('\u{1b}'));
    let mut col = Vec::new();
    roce_inspect::output::summary::write_summary(&report, &mut col, true).unwrap();
    assert!(String::from_utf8(col).unwrap().contains("\u{1b}["));
    let mut gaps = Vec::new();
    roce_inspect::output::summary::write_gaps(&report, &mut gaps, false).unwrap();
    // 14 rows, one line each.
    let gaps = String::from_utf8(gaps).unwrap();
    assert_eq!(gaps.lines().filter(|l| l.contains("10.0.")).count(), 14);
    let mut msgs = Vec::new();
    roce_inspect::output::summary::write_messages(&report, &mut msgs, false).unwrap();
    let n = report.messages.as_ref().unwrap().len();
    let total: u64 = report
        .flows
        .iter()
        .map(|f| {
            f.messages.send.count
                + f.messages.write.count
                + f.messages.read.count
                + f.messages.atomic.count
                + f.incomplete_messages
        })
        .sum();
    assert_eq!(n as u64, total);
    let msgs = String::from_utf8(msgs).unwrap();
    assert_eq!(msgs.lines().filter(|l| l.contains("10.0.")).count(), n);
    // On an 80-, 100- or 120-column terminal the standalone tables (`--messages`, `--gaps`)
    // hide columns to fit, as the report's do, and say which; each row still starts on a line
    // of its own. The full tables are wider than that.
    use roce_inspect::output::fit::rendered_width;
    use roce_inspect::output::summary::{write_gaps_fit, write_messages_fit};
    assert!(rendered_width(&msgs) > 120 && rendered_width(&gaps) > 120);
    for width in [80u16, 100, 120] {
        let mut m = Vec::new();
        write_messages_fit(&report, &mut m, false, Some(width)).unwrap();
        let m = String::from_utf8(m).unwrap();
        let mut g = Vec::new();
        write_gaps_fit(&report, &mut g, false, Some(width)).unwrap();
        let g = String::from_utf8(g).unwrap();
        for (text, rows, kept) in [(&m, n, "status"), (&g, 14, "missing")] {
            assert!(
                text.lines()
                    .all(|l| rendered_width(l) <= usize::from(width)),
                "{width}: {text}"
            );
            assert!(
                text.contains("hidden to fit the terminal: src → dst"),
                "{text}"
            );
            assert!(text.contains(kept), "{text}");
            // Rows are told apart by their first PSN (messages) or expected PSN (gaps).
            let psn_rows = text
                .lines()
                .filter(|l| l.starts_with('│') && l.chars().any(|c| c.is_ascii_digit()))
                .count();
            assert_eq!(psn_rows, rows, "{width}: {text}");
        }
    }
    let mut m = Vec::new();
    write_messages_fit(&report, &mut m, false, None).unwrap();
    assert_eq!(
        String::from_utf8(m).unwrap(),
        msgs,
        "no width: every column"
    );
}
