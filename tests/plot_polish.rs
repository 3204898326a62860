//! Plots that do not mislead a new user (issue 39): the default time axis covers the RoCE
//! activity, not a long non-RoCE prelude; flows of ACKs only are not in the rate legend; the
//! congestion panel shows only with CE marks or CNPs, its CNP rows named per flow; PSN labels
//! never repeat.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, pcap_bytes};
use roce_inspect::synth::scenario::{self, SNAPLEN, Trace, host, op};

fn sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
        .display()
        .to_string()
}

/// `plot` of `file` as SVG, with `args`.
fn svg(file: &str, args: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("p.svg");
    Command::cargo_bin("roce-inspect")
        .expect("binary")
        .arg("plot")
        .arg(file)
        .args(args)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    std::fs::read_to_string(out).expect("svg")
}

/// The `<text>` contents of an SVG.
fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("parses");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

/// A capture whose first frame is a UDP datagram to port 53 (not RoCE) at time 0, then 50
/// RoCE WRITE ONLY packets 1 µs apart from 5 s on, each ACKed.
fn late_roce() -> (tempfile::TempDir, PathBuf) {
    let fwd = scenario::Path {
        from: host(1),
        to: host(2),
        dest_qp: 0x100,
        udp_src: 0xc000,
        tos: 0x02,
    };
    let back = scenario::Path {
        from: host(2),
        to: host(1),
        dest_qp: 0x200,
        udp_src: 0xc000,
        tos: 0x02,
    };
    let mut t = Trace::default();
    let mut dns = fwd.packet(op::SEND_ONLY, 0);
    dns.udp_dst = 53;
    t.push(0, &dns);
    for i in 0..50u32 {
        let ts = 5_000_000_000 + u64::from(i) * 1_000;
        let mut p = fwd.packet(op::WRITE_ONLY, i);
        p.payload_len = 256;
        t.push(ts, &p);
        t.push(ts + 500, &back.ack(i, 0, i + 1));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("late.pcap");
    std::fs::write(&path, pcap_bytes(LINKTYPE_ETHERNET, SNAPLEN, &t.records())).expect("write");
    (dir, path)
}

#[test]
fn the_time_axis_covers_the_roce_activity() {
    let (_dir, path) = late_roce();
    let file = path.display().to_string();
    for kind in ["psn", "rate", "messages"] {
        let t = texts(&svg(&file, &["--kind", kind]));
        // 50 µs of RoCE: a µs axis, every tick at or after the 5 s of the prelude.
        assert!(
            t.iter().any(|s| s == "time since first frame (µs)"),
            "{kind}: {t:?}"
        );
        // Time ticks are the numbers above 1000 (the PSNs are 0..50).
        let ticks: Vec<f64> = t
            .iter()
            .filter_map(|s| s.parse().ok())
            .filter(|&v: &f64| v > 1000.0)
            .collect();
        assert!(ticks.len() >= 3, "{kind}: {t:?}");
        assert!(ticks.iter().all(|&v| v >= 4_999_990.0), "{kind}: {ticks:?}");
    }
    // --from 0 asks for the whole capture: seconds.
    let t = texts(&svg(&file, &["--from", "0"]));
    assert!(t.iter().any(|s| s == "time since first frame (s)"), "{t:?}");
}

#[test]
fn rate_legend_has_data_flows_and_cnp_rows_are_named() {
    // congestion.pcap: data flows #0 and #2, their ACK/CNP flows #1 and #3 (the report's flow
    // numbers, read from --summary --json by tests/plot.rs; here from the labels).
    let t = texts(&svg(&sample("congestion.pcap"), &["--kind", "rate"]));
    let legend: Vec<&String> = t
        .iter()
        .filter(|s| s.starts_with('#') && s.contains("QP"))
        .collect();
    assert_eq!(legend.len(), 2, "{legend:?}");
    assert!(
        legend
            .iter()
            .all(|s| s.starts_with("#0 ") || s.starts_with("#2 ")),
        "{legend:?}"
    );
    assert!(t.iter().any(|s| s == "#0 CNPs"), "{t:?}");
    assert!(t.iter().any(|s| s == "#2 CNPs"), "{t:?}");
    assert!(t.iter().any(|s| s == "CE-marked fraction"));
    // write_bw.pcap has neither CE marks nor CNPs: no congestion panel.
    let t = texts(&svg(&sample("write_bw.pcap"), &["--kind", "rate"]));
    assert!(!t.iter().any(|s| s == "CE-marked fraction"), "{t:?}");
    assert!(!t.iter().any(|s| s.contains("CNP")), "{t:?}");
}

#[test]
fn psn_labels_do_not_repeat() {
    // Three PSNs of one flow (a window of 2 µs), an axis of a few units where fractional
    // ticks would print one number twice: whole-number labels, each once.
    let (_dir, path) = late_roce();
    let t = texts(&svg(
        &path.display().to_string(),
        &["--from", "5", "--to", "5.000002"],
    ));
    let psn: Vec<&String> = t
        .iter()
        .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '-'))
        .collect();
    assert!(psn.len() >= 3, "{t:?}");
    let mut unique = psn.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), psn.len(), "{psn:?}");
}
