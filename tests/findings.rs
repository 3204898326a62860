//! Findings (issue 34) against the scenario writers' truth (`synth::scenario::faults`): the
//! kind, severity, QP, PSN, attempts, timeout exponent and evidence frames each fault must give,
//! from the writer's construction and the IBTA rules, never from the analyzer's output; and
//! that no sample or shared capture gets a finding its known story contradicts.

mod common;

use roce_inspect::analyze::findings::{Finding, FindingKind, Severity};
use roce_inspect::analyze::{AnalyzeConfig, Analyzer, Report};
use roce_inspect::decode::{DecodeConfig, LinkType, decode_frame};
use roce_inspect::synth::capfile::Record;
use roce_inspect::synth::scenario::faults::{self, Fault};

fn analyze(records: &[Record]) -> Report {
    let mut a = Analyzer::new(AnalyzeConfig::default());
    let d = DecodeConfig::default();
    for (n, r) in records.iter().enumerate() {
        let f = decode_frame(LinkType::ETHERNET, &r.data, r.orig_len, &d);
        a.push(n as u64 + 1, r.ts_ns, &f);
    }
    a.finish()
}

fn of_kind(r: &Report, k: FindingKind) -> Vec<&Finding> {
    r.findings.iter().filter(|x| x.kind == k).collect()
}

/// The one finding of kind `k`.
fn one(r: &Report, k: FindingKind) -> &Finding {
    let v = of_kind(r, k);
    assert_eq!(v.len(), 1, "one {k} finding expected: {:#?}", r.findings);
    v[0]
}

/// The kinds of the warning and error findings.
fn serious(r: &Report) -> Vec<FindingKind> {
    r.findings
        .iter()
        .filter(|x| x.severity != Severity::Info)
        .map(|x| x.kind)
        .collect()
}

fn sorted_by_severity(r: &Report) {
    assert!(
        r.findings
            .windows(2)
            .all(|w| w[0].severity <= w[1].severity),
        "{:#?}",
        r.findings
    );
}

#[test]
fn retry_exhaustion_gives_attempts_timeout_exponent_and_the_retries() {
    // Several local ACK timeouts (4.096 µs·2^e: 32.8 µs, 1.05 ms, 67.1 ms, 1.07 s) and retry
    // counts (3 bits).
    for (e, n) in [(3u8, 5u8), (8, 7), (14, 3), (18, 1)] {
        let Fault { records, truth } = faults::retry_exhausted(e, n);
        let r = analyze(&records);
        sorted_by_severity(&r);
        let x = one(&r, FindingKind::RetryExhausted);
        assert_eq!(x.severity, Severity::Error);
        assert_eq!(x.severity, r.findings[0].severity, "errors first");
        assert_eq!(x.dest_qp, Some(truth.dest_qp), "e={e} n={n}");
        assert_eq!(x.psn, truth.psn, "e={e} n={n}");
        assert_eq!(x.attempts, truth.attempts, "e={e} n={n}");
        assert_eq!(x.retry_cnt, Some(u32::from(n)), "e={e} n={n}");
        assert_eq!(x.timeout_exp, truth.timeout_exp, "e={e} n={n}");
        assert_eq!(x.frames, truth.frames, "e={e} n={n}");
        // The responder had answered before: the retry cause, not the silent-path one.
        assert!(
            x.cause.contains("never answered the retried request"),
            "{}",
            x.cause
        );
        // The retries are the exhaustion, not a separate timeout warning; nobody is silent.
        assert!(of_kind(&r, FindingKind::AckTimeout).is_empty());
        assert!(of_kind(&r, FindingKind::NoResponse).is_empty());
        let cfg = one(&r, FindingKind::InferredConfig);
        assert_eq!(
            (cfg.timeout_exp, cfg.retry_cnt),
            (Some(e), Some(u32::from(n)))
        );
    }
}

#[test]
fn retries_the_capture_does_not_follow_to_the_end_are_ack_timeouts() {
    // Cut the capture right after the last retry: another retry may have followed.
    let Fault { records, truth } = faults::retry_exhausted(14, 3);
    let last = *truth.frames.last().unwrap() as usize;
    let r = analyze(&records[..last]);
    assert!(of_kind(&r, FindingKind::RetryExhausted).is_empty());
    let x = one(&r, FindingKind::AckTimeout);
    assert_eq!(x.severity, Severity::Warning);
    assert_eq!((x.dest_qp, x.psn), (Some(truth.dest_qp), truth.psn));
    assert_eq!(x.count, Some(3));
    assert_eq!(x.timeout_exp, Some(14));
    assert_eq!(x.frames, truth.frames);
}

#[test]
fn a_silent_responder_is_no_response_and_a_one_sided_capture_is_only_info() {
    let Fault { records, truth } = faults::silent_responder(false);
    let r = analyze(&records);
    let x = one(&r, FindingKind::NoResponse);
    assert_eq!(x.severity, Severity::Error);
    assert_eq!(x.dest_qp, Some(truth.dest_qp));
    assert_eq!(x.psn, truth.psn);
    assert_eq!(x.count, truth.count);
    assert_eq!(x.frames, truth.frames);
    assert_eq!(serious(&r), vec![FindingKind::NoResponse]);

    let Fault { records, .. } = faults::silent_responder(true);
    let r = analyze(&records);
    assert!(serious(&r).is_empty(), "{:#?}", r.findings);
    let x = one(&r, FindingKind::OneSidedCapture);
    assert_eq!(x.severity, Severity::Info);
    assert_eq!(x.count, Some(2), "two request flows, neither answered");
}

#[test]
fn rnr_naks_give_their_frames_timer_code_and_time_lost() {
    let Fault { records, truth } = faults::rnr();
    let r = analyze(&records);
    let x = one(&r, FindingKind::RnrNak);
    assert_eq!(x.severity, Severity::Warning);
    assert_eq!(x.dest_qp, Some(truth.dest_qp), "the requester's flow");
    assert_eq!(x.frames, truth.frames);
    assert_eq!(x.count, truth.count);
    assert_eq!(x.rnr_timer_codes, Some(vec![faults::RNR_CODE]));
    assert_eq!(x.time_lost_ns, truth.time_lost_ns);
    assert!(x.summary.contains("timer 1280 µs"), "{}", x.summary);
    assert_eq!(serious(&r), vec![FindingKind::RnrNak]);
}

#[test]
fn a_remote_access_nak_is_a_fatal_error_on_the_requester() {
    let Fault { records, truth } = faults::fatal_nak();
    let r = analyze(&records);
    let x = one(&r, FindingKind::FatalNak);
    assert_eq!(x.severity, Severity::Error);
    assert_eq!((x.dest_qp, x.psn), (Some(truth.dest_qp), truth.psn));
    assert_eq!(x.frames, truth.frames);
    assert!(x.summary.contains("remote access error"), "{}", x.summary);
}

#[test]
fn not_ect_data_is_ecn_not_enabled() {
    let Fault { records, truth } = faults::not_ect();
    let r = analyze(&records);
    let x = one(&r, FindingKind::EcnNotEnabled);
    assert_eq!(x.severity, Severity::Warning);
    assert_eq!(x.dest_qp, Some(truth.dest_qp));
    assert_eq!(x.frames, truth.frames);
    assert_eq!(x.count, Some(1), "the ACK flow sends no data");
    assert_eq!(serious(&r), vec![FindingKind::EcnNotEnabled]);
}

#[test]
fn acks_in_another_class_than_the_data_is_a_priority_warning() {
    let Fault { records, truth } = faults::priority_mix();
    let r = analyze(&records);
    let x = one(&r, FindingKind::Priority);
    assert_eq!(x.severity, Severity::Warning);
    assert_eq!(x.dest_qp, Some(truth.dest_qp));
    assert_eq!(x.dscp, Some(26));
    // The first WRITE and the first ACK (frame 2).
    assert_eq!(x.frames, vec![1, 2]);
    assert_eq!(serious(&r), vec![FindingKind::Priority]);
}

#[test]
fn data_on_two_dscp_values_in_one_flow_is_a_priority_warning() {
    let Fault { records, truth } = faults::dscp_change();
    let r = analyze(&records);
    let x = one(&r, FindingKind::Priority);
    assert_eq!(x.severity, Severity::Warning);
    assert_eq!(x.dest_qp, Some(truth.dest_qp));
    // Five packets on 26, three on 10: 26 is the flow's main value.
    assert_eq!(x.dscp, Some(26));
    assert!(
        x.summary.contains("data on DSCP 10, 26 within one flow"),
        "{}",
        x.summary
    );
    assert_eq!(x.frames, truth.frames);
    assert_eq!(serious(&r), vec![FindingKind::Priority]);
}

#[test]
fn cnps_without_ce_and_data_in_class_zero() {
    let Fault { records, truth } = faults::cnp_without_ce();
    let r = analyze(&records);
    let x = one(&r, FindingKind::CnpWithoutCe);
    assert_eq!(x.severity, Severity::Warning);
    assert_eq!(x.dest_qp, Some(truth.dest_qp));
    assert_eq!(x.cnps, truth.count);
    assert_eq!(x.cnp_interval_ns, Some(faults::CNP_SPACING_NS));
    assert_eq!(x.frames, truth.frames);
    let p = one(&r, FindingKind::Priority);
    assert_eq!((p.dscp, p.cnp_dscp), (Some(0), Some(48)));
    assert!(
        p.frames.contains(&truth.frames[0]),
        "the first CNP: {:?}",
        p.frames
    );
    assert!(of_kind(&r, FindingKind::Congestion).is_empty());
}

#[test]
fn clean_traffic_has_no_warning_or_error() {
    let Fault { records, .. } = faults::clean();
    let r = analyze(&records);
    assert!(serious(&r).is_empty(), "{:#?}", r.findings);
    let cfg = one(&r, FindingKind::InferredConfig);
    assert_eq!((cfg.dscp, cfg.ecn), (Some(26), Some("ect0")));
}

/// Every sample: the kinds its scenario's story allows (samples/README.md), and nothing else
/// of severity warning or error.
#[test]
fn samples_get_only_the_findings_their_story_allows() {
    use FindingKind::*;
    let allowed: &[(&str, &[FindingKind])] = &[
        // One loss, NAK, go-back-N.
        ("write_bw.pcap", &[PacketLoss]),
        // READs recovered by the local ACK timeout.
        ("read_timeout.pcap", &[AckTimeout]),
        // Incast: CE marks and CNPs.
        ("congestion.pcap", &[Congestion]),
        ("rocev1_ipv6_vlan.pcapng", &[]),
        ("allreduce_node0.pcap", &[]),
        // Losses on the ring, seen before (node 2) or after (node 1) the capture point.
        ("allreduce_node1.pcap", &[PacketLoss]),
        ("allreduce_node2.pcap", &[PacketLoss]),
    ];
    for (file, ok) in allowed {
        let path = format!("{}/samples/{file}", env!("CARGO_MANIFEST_DIR"));
        let r = common::analyze_file(&path, AnalyzeConfig::default());
        sorted_by_severity(&r);
        for k in serious(&r) {
            assert!(ok.contains(&k), "{file}: unexpected {k}: {:#?}", r.findings);
        }
        for k in *ok {
            assert!(!of_kind(&r, *k).is_empty(), "{file}: {k} expected");
        }
        for x in &r.findings {
            assert!(
                !x.frames.is_empty() || x.kind == InferredConfig,
                "{file}: {x:?}"
            );
        }
    }
}

/// The shared captures: real/ has no NAK, CE mark or retransmission and valid ICRCs (only
/// Soft-RoCE's Not-ECT data may be reported); the synthetic one has losses recovered by NAK,
/// RNR NAKs and CE marks with CNPs, and nothing else.
#[test]
fn shared_captures_get_no_finding_their_story_contradicts() {
    need_shared!();
    use FindingKind::*;
    let dir = common::captures_dir().unwrap();
    let mut seen = 0;
    for sub in ["real", "derived"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = e.unwrap().path();
            let r = common::analyze_file(path.to_str().unwrap(), AnalyzeConfig::default());
            for k in serious(&r) {
                assert_eq!(k, EcnNotEnabled, "{}: {:#?}", path.display(), r.findings);
            }
            seen += 1;
        }
    }
    assert!(seen >= 16);
    let r = common::analyze_file(
        dir.join("synthetic/loss_ce_read.pcap").to_str().unwrap(),
        AnalyzeConfig::default(),
    );
    for k in serious(&r) {
        assert!([PacketLoss, RnrNak, Congestion].contains(&k), "{k}");
    }
    for k in [PacketLoss, RnrNak, Congestion] {
        assert!(!of_kind(&r, k).is_empty(), "{k} expected");
    }
}

/// `correlate` of the three all-reduce samples: one `link_loss` per link direction the
/// scenario lost packets on, with those packets' frames in the upstream capture, and one
/// `capture_loss` per direction an upstream capture missed packets of, with their frames
/// downstream (the scenario's truth lists both).
#[test]
fn correlate_findings_follow_the_allreduce_truth() {
    use roce_inspect::synth::scenario::allreduce;
    use std::collections::BTreeMap;
    let files: Vec<String> = (0..3)
        .map(|n| {
            format!(
                "{}/samples/allreduce_node{n}.pcap",
                env!("CARGO_MANIFEST_DIR")
            )
        })
        .collect();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .arg("correlate")
        .args(&files)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let truth = allreduce::scenario().truth;
    let by_link = |ps: &[allreduce::TruthPacket]| {
        let mut m: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for p in ps {
            let k = format!(
                "{} → {}",
                std::net::Ipv4Addr::from(p.src),
                std::net::Ipv4Addr::from(p.dst)
            );
            m.entry(k).or_default().push(p.frame);
        }
        m.values_mut().for_each(|v| v.sort_unstable());
        m
    };
    let found = |kind: &str| {
        let mut m: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for x in v["findings"].as_array().unwrap() {
            if x["kind"] == kind {
                let s = x["summary"].as_str().unwrap();
                let link = s.split(':').next().unwrap().to_string();
                let frames = x["frames"].as_array().unwrap();
                assert_eq!(x["count"].as_u64().unwrap(), frames.len() as u64, "{x}");
                m.insert(link, frames.iter().map(|f| f.as_u64().unwrap()).collect());
            }
        }
        m
    };
    assert!(!truth.lost.is_empty() && !truth.missed.is_empty());
    assert_eq!(found("link_loss"), by_link(&truth.lost));
    assert_eq!(found("capture_loss"), by_link(&truth.missed));
    let first = &v["findings"][0];
    assert_eq!(first["severity"], "warning", "link loss first: {first}");
}

fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
}

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The text report: the findings first; `--findings all` gives every cause and advice; a bad
/// value is one clear line and status 2.
#[test]
fn text_report_puts_the_findings_first() {
    let out = bin()
        .args(["read", &sample("write_bw.pcap"), "-q", "--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // One gap (PSN 3841846), its NAK in frame 50, its resend in frame 62 (README, samples/).
    assert!(
        text.starts_with("Findings (1 warning, 2 info)\nwarning packet_loss: "),
        "{text}"
    );
    assert!(text.contains("[frames 48, 50, 62]"), "{text}");
    assert!(text.find("Findings").unwrap() < text.find("Connections and flows").unwrap());
    let all = bin()
        .args(["read", &sample("write_bw.pcap"), "-q", "--findings", "all"])
        .output()
        .unwrap();
    let all = String::from_utf8(all.stdout).unwrap();
    assert_eq!(all.matches("        cause: ").count(), 3, "{all}");
    assert_eq!(all.matches("        advice: ").count(), 3, "{all}");
    let bad = bin()
        .args(["read", &sample("write_bw.pcap"), "-q", "--findings", "some"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(
        err.contains("invalid value 'some' for '--findings"),
        "{err}"
    );
}

/// The HTML report opens with the findings table; the Parquet export has one `findings` row
/// per finding of `--summary --json`.
#[test]
fn html_and_parquet_carry_the_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("r.html");
    let ok = bin()
        .args(["read", &sample("congestion.pcap"), "--html"])
        .arg(&html)
        .status()
        .unwrap();
    assert!(ok.success());
    let h = std::fs::read_to_string(&html).unwrap();
    let at = h
        .find("<table class=\"sortable\" id=\"findings\">")
        .expect("findings table");
    assert!(
        at < h.find("id=\"totals\"").unwrap(),
        "findings before the totals"
    );
    // Two senders' incast: a congestion finding for each (samples/README.md).
    assert_eq!(h.matches("<td>congestion</td>").count(), 2);

    let json = bin()
        .args(["read", &sample("congestion.pcap"), "--summary", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let n = v["findings"].as_array().unwrap().len() as i64;
    let dir = tmp.path().join("pq");
    let ok = bin()
        .args(["export", &sample("congestion.pcap"), "--parquet"])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(ok.success());
    use parquet::file::reader::FileReader;
    let f =
        std::fs::File::open(dir.join("findings/capture=congestion.pcap/part-0.parquet")).unwrap();
    let r = parquet::file::reader::SerializedFileReader::new(f).unwrap();
    assert_eq!(r.metadata().file_metadata().num_rows(), n);
    let cols: Vec<String> = r
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    for c in [
        "severity", "kind", "summary", "cause", "advice", "frames", "cnps",
    ] {
        assert!(cols.iter().any(|x| x == c), "{c} in {cols:?}");
    }
}
