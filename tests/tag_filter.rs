//! `-f` filters that miss VLAN-tagged frames (issue 13 point 3): libpcap reads `udp port 4791`
//! at untagged offsets, so tagged RoCE frames (the priority tag, VLAN 0 with PCP 3, that
//! PFC-enabled NICs send included) do not match; one stderr line says how many there were and
//! suggests a filter that matches them too.

mod common;

use std::process::Command;

use common::frames::V2;
use common::mirror::{Rec, pcap};

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

fn run(args: &[&str]) -> (String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The users' case: two untagged and two priority-tagged RoCE frames (cases/README.md).
#[test]
fn priority_tag_case_reports_two_missed_frames() {
    need_shared!();
    let f = common::case("priority_tag_vid0.pcap");
    let (out, err) = run(&["read", &f, "-f", "udp port 4791"]);
    assert_eq!(out.lines().count(), 2, "{out}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("2 tagged RoCE frames were not matched"),
        "{err}"
    );
    assert!(
        lines[0].ends_with("-f 'udp port 4791 or (vlan and udp port 4791)'"),
        "{err}"
    );
    // The suggested filter matches all four, and says nothing.
    let (out, err) = run(&[
        "read",
        &f,
        "-f",
        "udp port 4791 or (vlan and udp port 4791)",
    ]);
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(err.is_empty(), "{err}");
}

/// A project-built capture: 2 untagged RoCE frames, 3 priority-tagged ones (VLAN 0, PCP 3), a
/// QinQ-tagged one, and a tagged DNS frame that no filter variant should count.
#[test]
fn built_capture_counts_only_tagged_roce_the_filter_misses() {
    let mut frames = Vec::new();
    for (i, vlan) in [None, Some(0), None, Some(0), Some(0)]
        .into_iter()
        .enumerate()
    {
        let mut f = V2 {
            vlan,
            psn: i as u32,
            opcode: 0x04,
            payload: 16,
            ..V2::default()
        }
        .build();
        if vlan.is_some() {
            f[14] |= 0x60; // PCP 3
        }
        frames.push(f);
    }
    // QinQ: an 802.1ad tag in front of a tagged frame.
    let mut qinq = V2 {
        vlan: Some(20),
        psn: 9,
        opcode: 0x04,
        ..V2::default()
    }
    .build();
    qinq.splice(12..12, [0x88, 0xa8, 0x00, 0x0a]);
    frames.push(qinq);
    let mut dns = V2 {
        vlan: Some(0),
        dport: 53,
        ..V2::default()
    }
    .build();
    dns[14] |= 0x60;
    frames.push(dns);
    let recs: Vec<Rec> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| (1_000_000_000 + i as u64, f.clone(), f.len() as u32))
        .collect();
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("tags.pcap");
    std::fs::write(&p, pcap(&recs)).unwrap();
    let p = p.to_str().unwrap();

    let (out, err) = run(&["read", p, "-f", "udp port 4791"]);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        err.contains("4 tagged RoCE frames were not matched"),
        "{err}"
    );
    // libpcap's reader (instead of the mapped file) counts the same.
    let libpcap = Command::new(BIN)
        .args(["read", p, "-f", "udp port 4791"])
        .env("ROCE_INSPECT_READER", "libpcap")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&libpcap.stderr), err);
    assert_eq!(String::from_utf8_lossy(&libpcap.stdout), out);
    // Two tags seen: the suggestion nests a second `vlan`.
    let want = "udp port 4791 or (vlan and (udp port 4791 or (vlan and udp port 4791)))";
    assert!(err.trim_end().ends_with(&format!("-f '{want}'")), "{err}");
    let (out, err) = run(&["read", p, "-f", want]);
    assert_eq!(out.lines().count(), 6, "{out}");
    assert!(err.is_empty(), "{err}");
    // A compound filter is parenthesised; one that matches nothing untagged counts nothing.
    let (_, err) = run(&["read", p, "-f", "udp port 4791 and host 10.0.0.1"]);
    assert!(
        err.contains("-f '(udp port 4791 and host 10.0.0.1) or (vlan and"),
        "{err}"
    );
    let (out, err) = run(&["read", p, "-f", "udp port 9999"]);
    assert!(out.is_empty() && err.is_empty(), "{out}{err}");
    // Without -f every frame is read and nothing is said.
    let (out, err) = run(&["read", p]);
    assert_eq!(out.lines().count(), 6);
    assert!(err.is_empty(), "{err}");
}
