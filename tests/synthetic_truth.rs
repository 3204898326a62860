//! The synthetic capture's ground truth (`../shared/captures/synthetic/loss_ce_read.truth.json`,
//! written by an independent traffic model) against `roce-inspect read --json --all`.
//!
//! Only the per-packet facts are checked here — what `read` itself decodes, summed per flow
//! (src, dst, DestQP): packet count, payload bytes (after all transport headers, without pad
//! and ICRC), opcode counts, ACK / NAK (by code) / RNR NAK syndromes of ACKNOWLEDGE packets,
//! CE-marked packets, CNPs; and globally the RoCE / non-RoCE split and that no ICRC is bad.
//! PSN gaps, retransmissions and messages belong to the analysis issue.

mod common;

use std::collections::BTreeMap;

use serde_json::Value;

#[derive(Debug, Default, PartialEq)]
struct Flow {
    packets: u64,
    payload_bytes: u64,
    opcodes: BTreeMap<String, u64>,
    acks: u64,
    naks: BTreeMap<String, u64>,
    rnr_naks: u64,
    ce_marked: u64,
    cnps: u64,
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

fn counts(v: &Value) -> BTreeMap<String, u64> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, n)| (k.clone(), u(n)))
        .collect()
}

#[test]
fn per_packet_facts_match_the_truth_file() {
    need_shared!();
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(
            common::captures_root()
                .join("synthetic")
                .join("loss_ce_read.truth.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .arg("read")
        .arg(
            common::captures_root()
                .join("synthetic")
                .join("loss_ce_read.pcap"),
        )
        .args(["--json", "--all"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();

    let g = &truth["global"];
    assert_eq!(lines.len() as u64, u(&g["total_frames"]));
    let (roce, other): (Vec<&Value>, Vec<&Value>) =
        lines.iter().partition(|v| !v["roce"].is_null());
    assert_eq!(roce.len() as u64, u(&g["roce_frames"]));
    assert_eq!(other.len() as u64, u(&g["non_roce_frames"]));
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    for v in &other {
        *kinds
            .entry(v["proto"].as_str().unwrap_or("?").to_string())
            .or_default() += 1;
    }
    assert_eq!(kinds, counts(&g["non_roce_breakdown"]));
    assert!(g["icrc_bad_frames"].as_array().unwrap().is_empty());
    assert!(roce.iter().all(|v| v["icrc"]["status"] == "good"));
    assert!(
        roce.iter()
            .all(|v| v.get("truncated").is_none() && v.get("malformed").is_none())
    );

    let mut flows: BTreeMap<(String, String, u64), Flow> = BTreeMap::new();
    let mut global_ops: BTreeMap<String, u64> = BTreeMap::new();
    for v in &roce {
        let bth = &v["bth"];
        let op = u(&bth["opcode"]);
        let key = (
            v["src"].as_str().unwrap().to_string(),
            v["dst"].as_str().unwrap().to_string(),
            u(&bth["dest_qp"]),
        );
        let f = flows.entry(key).or_default();
        f.packets += 1;
        f.payload_bytes += u(&v["payload_len"]);
        *f.opcodes.entry(op.to_string()).or_default() += 1;
        *global_ops.entry(op.to_string()).or_default() += 1;
        // ACKNOWLEDGE (operation 0x11) of RC/UC/RD/XRC: the syndrome's kind.
        if op & 0x1f == 0x11 && op < 0xc0 && op >> 5 != 3 && op >> 5 != 4 {
            let a = &v["aeth"];
            match a["kind"].as_str().unwrap() {
                "ack" => f.acks += 1,
                "nak" => *f.naks.entry(u(&a["value"]).to_string()).or_default() += 1,
                "rnr_nak" => f.rnr_naks += 1,
                k => panic!("AETH kind {k}"),
            }
        }
        if v["ecn"] == "ce" {
            f.ce_marked += 1;
        }
        if op == 0x81 {
            f.cnps += 1;
        }
    }
    assert_eq!(global_ops, counts(&g["opcodes"]));

    let tflows = truth["flows"].as_array().unwrap();
    assert_eq!(flows.len(), tflows.len(), "flows: {:?}", flows.keys());
    for tf in tflows {
        let key = (
            tf["src"].as_str().unwrap().to_string(),
            tf["dst"].as_str().unwrap().to_string(),
            u(&tf["dst_qpn"]),
        );
        let want = Flow {
            packets: u(&tf["packets"]),
            payload_bytes: u(&tf["payload_bytes"]),
            opcodes: counts(&tf["opcodes"]),
            acks: u(&tf["acks"]),
            naks: counts(&tf["naks"]),
            rnr_naks: u(&tf["rnr_naks"]),
            ce_marked: u(&tf["ce_marked"]),
            cnps: u(&tf["cnps"]),
        };
        let got = flows.get(&key).unwrap_or_else(|| panic!("no flow {key:?}"));
        assert_eq!(got, &want, "flow {key:?}");
    }
    // The totals the truth states globally.
    let sum = |f: fn(&Flow) -> u64| flows.values().map(f).sum::<u64>();
    assert_eq!(sum(|f| f.ce_marked), u(&g["ce_marked"]));
    assert_eq!(sum(|f| f.cnps), u(&g["cnps"]));
    assert_eq!(sum(|f| f.naks.values().sum()), u(&g["naks"]));
    assert_eq!(sum(|f| f.rnr_naks), u(&g["rnr_naks"]));
}
