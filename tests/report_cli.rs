//! The analysis reports through the command line: `--summary`, `-q`, `--messages`, `--gaps`,
//! with and without `--json`. Expected values come from the independent generator's truth file
//! for `captures/synthetic/loss_ce_read.pcap` (its `global` section).

mod common;

use assert_cmd::Command;
use serde_json::Value;

fn synth() -> String {
    common::capture("synthetic/loss_ce_read.pcap")
}

fn run(args: &[&str]) -> String {
    let out = Command::cargo_bin("roce-inspect")
        .unwrap()
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn truth() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(common::capture("synthetic/loss_ce_read.truth.json")).unwrap(),
    )
    .unwrap()
}

#[test]
fn summary_json_is_one_document_matching_the_truth() {
    need_shared!();
    let out = run(&["read", &synth(), "--summary", "--json"]);
    assert_eq!(out.lines().count(), 1, "one JSON document, no packet lines");
    let r: Value = serde_json::from_str(&out).unwrap();
    let g = &truth()["global"];
    assert_eq!(r["frames"]["total"], g["total_frames"]);
    assert_eq!(r["frames"]["roce"], g["roce_frames"]);
    assert_eq!(r["frames"]["other"], g["non_roce_frames"]);
    assert_eq!(r["icrc"]["bad"], 0);
    let flows = r["flows"].as_array().unwrap();
    assert_eq!(flows.len() as u64, g["flows"].as_u64().unwrap());
    let sum =
        |k: &str, sub: &str| -> u64 { flows.iter().map(|f| f[k][sub].as_u64().unwrap()).sum() };
    assert_eq!(sum("psn", "gap_events"), g["gap_events"].as_u64().unwrap());
    assert_eq!(sum("psn", "missing"), g["missing_psns"].as_u64().unwrap());
    assert_eq!(
        sum("psn", "retransmitted"),
        g["retransmitted_packets"].as_u64().unwrap()
    );
    assert_eq!(sum("ecn", "ce"), g["ce_marked"].as_u64().unwrap());
    let cnps: u64 = flows.iter().map(|f| f["cnps"].as_u64().unwrap()).sum();
    assert_eq!(cnps, g["cnps"].as_u64().unwrap());
    for kind in ["write", "read", "send"] {
        let count: u64 = flows
            .iter()
            .map(|f| f["messages"][kind]["count"].as_u64().unwrap())
            .sum();
        let bytes: u64 = flows
            .iter()
            .map(|f| f["messages"][kind]["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(
            count,
            g["messages"][kind]["count"].as_u64().unwrap(),
            "{kind}"
        );
        assert_eq!(
            bytes,
            g["messages"][kind]["bytes"].as_u64().unwrap(),
            "{kind}"
        );
    }
}

#[test]
fn gaps_and_messages_as_ndjson() {
    need_shared!();
    let g = &truth()["global"];
    let gaps = run(&["read", &synth(), "--gaps", "--json"]);
    let lines: Vec<Value> = gaps
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len() as u64, g["gap_events"].as_u64().unwrap());
    assert!(
        lines
            .iter()
            .all(|v| v["expected_psn"].is_u64() && v["missing"] == 1)
    );

    let msgs = run(&["read", &synth(), "--messages", "--json"]);
    let lines: Vec<Value> = msgs
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let complete = |k: &str| {
        lines
            .iter()
            .filter(|v| v["kind"] == k && v["complete"] == true)
            .count() as u64
    };
    assert_eq!(
        complete("write"),
        g["messages"]["write"]["count"].as_u64().unwrap()
    );
    assert_eq!(
        complete("read"),
        g["messages"]["read"]["count"].as_u64().unwrap()
    );
    assert_eq!(
        complete("send"),
        g["messages"]["send"]["count"].as_u64().unwrap()
    );
}

#[test]
fn quiet_prints_only_the_report_and_summary_follows_the_packets() {
    need_shared!();
    let q = run(&["read", &synth(), "-q"]);
    // The findings come first (issue 34), then the frame line and the tables.
    assert!(q.starts_with("Findings ("), "{q}");
    assert!(q.contains("\n3000 frames: 2989 RoCE, 11 other"), "{q}");
    assert!(!q.contains("RDMA_WRITE_FIRST"), "no packet lines with -q");
    assert!(q.contains("Gap and loss events (14)"));
    let s = run(&["read", &synth(), "--summary", "-c", "50"]);
    let report_at = s.find("50 frames:").expect("report after 50 frames");
    let first_packet = s.find(" QP 0x").expect("packet lines");
    assert!(first_packet < report_at, "{s}");
}

/// The synthetic capture's FIRST/MIDDLE packets carry 1024 bytes (its README: path MTU 1024),
/// so `--mtu 256` is contradicted and says so; `--mtu 1024` is not.
#[test]
fn contradicted_mtu_is_a_warning() {
    need_shared!();
    let bad: Value =
        serde_json::from_str(&run(&["read", &synth(), "-q", "--json", "--mtu", "256"])).unwrap();
    let w = bad["warnings"].as_array().unwrap();
    // The wrong MTU also misplaces READ PSN reservations, so the MSN cross-check disagrees
    // (warnings of their own); one warning names the MTU.
    let (mtu, other): (Vec<_>, Vec<_>) = w
        .iter()
        .map(|w| w.as_str().unwrap())
        .partition(|w| w.contains("--mtu"));
    assert_eq!(mtu.len(), 1, "{w:?}");
    assert!(mtu[0].contains("1024 bytes"), "{w:?}");
    assert!(other.iter().all(|w| w.contains("MSNs advance")), "{w:?}");
    let ok: Value =
        serde_json::from_str(&run(&["read", &synth(), "-q", "--json", "--mtu", "1024"])).unwrap();
    assert_eq!(ok["warnings"].as_array().unwrap().len(), 0);
}
