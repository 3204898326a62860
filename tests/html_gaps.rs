//! The HTML report keeps the gap verdict (issue 39): the all-reduce scenario's node2 capture
//! misses two of its own outgoing packets (the scenario writer's ground truth, `missed`), which
//! the text report calls `capture_loss`; the HTML gap table says so too, and in words that do
//! not read as network loss.

use std::path::Path;

use assert_cmd::Command;
use roce_inspect::synth::scenario::allreduce;

#[test]
fn capture_loss_is_not_network_loss_in_the_html_report() {
    let truth = allreduce::scenario().truth;
    let missed: Vec<_> = truth
        .missed
        .iter()
        .filter(|p| p.missing_in == allreduce::SNIFFER_NODE)
        .collect();
    assert_eq!(missed.len(), 2);
    let dir = tempfile::tempdir().expect("tempdir");
    let html = dir.path().join("r.html");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/allreduce_node2.pcap");
    Command::cargo_bin("roce-inspect")
        .expect("binary")
        .arg("read")
        .arg(&sample)
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).expect("html written");
    let gaps = &page[page.find("id=\"gaps\"").expect("gap table")..];
    let gaps = &gaps[..gaps.find("</table>").expect("table end")];
    assert!(
        gaps.contains("<th>verdict</th>") || gaps.contains(">verdict<"),
        "{gaps}"
    );
    for p in &missed {
        let words = format!("not lost on the network: the capture missed PSN {}", p.psn);
        assert!(gaps.contains(&words), "PSN {}: {gaps}", p.psn);
    }
    assert_eq!(gaps.matches(">capture_loss<").count(), 2, "{gaps}");
    assert!(!gaps.contains("never retransmitted"), "{gaps}");
}
