//! `roce-inspect nccl`: expected values from independent sources — tshark's dissection of the
//! shared NCCL captures, counted here field by field, and the NCCL scenario writer's own truth.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .arg("nccl")
        .args(args)
        .output()
        .unwrap()
}

fn json(files: &[&str]) -> Value {
    let mut args = files.to_vec();
    args.push("--json");
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One RoCE packet as tshark dissects it.
#[derive(Debug)]
struct Row {
    src: String,
    dst: String,
    opcode: u8,
    qp: u32,
    dmalen: Option<u64>,
    /// Immediate data bytes as on the wire (tshark prints them as hex bytes).
    imm: Option<[u8; 4]>,
}

fn tshark(file: &str) -> Vec<Row> {
    let out = Command::new("tshark")
        .args(["-r", file, "-Y", "infiniband.bth", "-T", "fields"])
        .args([
            "-e",
            "ip.src",
            "-e",
            "ip.dst",
            "-e",
            "infiniband.bth.opcode",
        ])
        .args([
            "-e",
            "infiniband.bth.destqp",
            "-e",
            "infiniband.reth.dmalen",
        ])
        .args(["-e", "infiniband.immdt"])
        .output()
        .expect("tshark runs (make deps installs it)");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            // tshark 4.0 shows a field once per occurrence, joined by ','.
            let first = |s: &str| s.split(',').next().unwrap_or("").to_string();
            let imm = first(f[5]);
            Row {
                src: f[0].to_string(),
                dst: f[1].to_string(),
                opcode: first(f[2]).parse().unwrap(),
                qp: u32::from_str_radix(first(f[3]).trim_start_matches("0x"), 16).unwrap(),
                dmalen: first(f[4]).parse().ok(),
                imm: (imm.len() == 8).then(|| {
                    let b = common::hex(&imm);
                    [b[0], b[1], b[2], b[3]]
                }),
            }
        })
        .collect()
}

/// Per (sender, receiver), counted from tshark's fields: messages (RDMA WRITE LAST/ONLY with
/// immediate), bytes (DMA length of WRITE FIRST / ONLY with immediate), CTS writes (WRITE ONLY
/// from the receiver to the sender), and the messages whose immediate, read little-endian,
/// equals their DMA length.
#[derive(Debug, Default, PartialEq, Eq)]
struct Count {
    messages: u64,
    bytes: u64,
    cts: u64,
    imm_is_len: u64,
}

fn count(rows: &[Row]) -> BTreeMap<(String, String), Count> {
    let mut m: BTreeMap<(String, String), Count> = BTreeMap::new();
    let mut open: BTreeMap<(String, String, u32), u64> = BTreeMap::new();
    for r in rows {
        let key = (r.src.clone(), r.dst.clone());
        match r.opcode {
            6 => {
                open.insert((r.src.clone(), r.dst.clone(), r.qp), r.dmalen.unwrap());
                m.entry(key).or_default().bytes += r.dmalen.unwrap();
            }
            9 | 11 => {
                let len = if r.opcode == 11 {
                    m.entry(key.clone()).or_default().bytes += r.dmalen.unwrap();
                    r.dmalen.unwrap()
                } else {
                    open[&(r.src.clone(), r.dst.clone(), r.qp)]
                };
                let c = m.entry(key).or_default();
                c.messages += 1;
                let imm = u32::from_le_bytes(r.imm.unwrap());
                c.imm_is_len += u64::from(u64::from(imm) == len);
            }
            10 => m.entry((r.dst.clone(), r.src.clone())).or_default().cts += 1,
            _ => {}
        }
    }
    m
}

const NCCL_CAPTURES: [&str; 5] = [
    "nccl_nccl_node0.pcap",
    "nccl_nccl_node1.pcap",
    "nccl_nccl_node2.pcap",
    "nccl_ring2_node0.pcap",
    "nccl_tree2_node0.pcap",
];

#[test]
fn shared_captures_match_tshark_counts() {
    need_shared!();
    for name in NCCL_CAPTURES {
        let file = common::capture(&format!("real/{name}"));
        let expected = count(&tshark(&file));
        let r = json(&[&file]);
        let conns = r["connections"].as_array().unwrap();
        let mut got = BTreeMap::new();
        for c in conns {
            let key = (
                c["sender"].as_str().unwrap().to_string(),
                c["receiver"].as_str().unwrap().to_string(),
            );
            assert_eq!(c["recognised"], "cts", "{name}");
            assert_eq!(c["cts_layout"], "entry64_size32", "{name}");
            assert_eq!(c["immediate"], "little-endian", "{name}");
            assert_eq!(c["messages"], c["imm_equals_length"], "{name}");
            assert_eq!(c["messages"], c["steps"], "{name}: one message per step");
            let prev = got.insert(
                key,
                Count {
                    messages: c["messages"].as_u64().unwrap(),
                    bytes: c["bytes"].as_u64().unwrap(),
                    cts: c["cts"].as_u64().unwrap(),
                    imm_is_len: c["imm_equals_length"].as_u64().unwrap(),
                },
            );
            assert!(prev.is_none(), "{name}: one connection per host pair");
        }
        // Every message's immediate is its length, in tshark's bytes too.
        for (k, c) in &expected {
            assert_eq!(c.messages, c.imm_is_len, "{name} {k:?}");
        }
        assert_eq!(got, expected, "{name}");
        assert_eq!(r["nccl_version"], "2.19-2.25");
    }
}

/// The ring of the three nccl_nccl_node captures, from tshark's data directions: every host
/// sends WRITEs with immediate to one other; the ring is walked from the lowest address.
#[test]
fn three_captures_give_the_ring() {
    need_shared!();
    let files: Vec<String> = (0..3)
        .map(|n| common::capture(&format!("real/nccl_nccl_node{n}.pcap")))
        .collect();
    let mut next: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        for r in tshark(f).iter().filter(|r| matches!(r.opcode, 9 | 11)) {
            next.entry(r.src.clone()).or_default().insert(r.dst.clone());
        }
    }
    assert!(next.values().all(|s| s.len() == 1), "{next:?}");
    let start = next.keys().next().unwrap().clone();
    let mut ring = vec![start.clone()];
    loop {
        let n = next[ring.last().unwrap()].iter().next().unwrap().clone();
        if n == start {
            break;
        }
        ring.push(n);
    }
    assert_eq!(ring.len(), 3);
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let r = json(&refs);
    let rings = r["rings"].as_array().unwrap();
    assert_eq!(rings.len(), 1, "{rings:?}");
    assert_eq!(rings[0]["closed"], true);
    let got: Vec<String> = rings[0]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, ring);
    // One capture alone misses a link: the ring stays open, placed from what it saw.
    let one = json(&[&files[0]]);
    assert_eq!(one["rings"][0]["closed"], false);
    // Each connection is seen by its two hosts' captures.
    for c in r["connections"].as_array().unwrap() {
        assert_eq!(c["captures"].as_array().unwrap().len(), 2, "{c}");
    }
}

#[test]
fn stdin_and_filter_and_text() {
    need_shared!();
    let file = common::capture("real/nccl_nccl_node0.pcap");
    let child = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["nccl", "-", "--json"])
        .stdin(std::fs::File::open(&file).unwrap())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let strip = |mut v: Value| {
        for c in v["connections"].as_array_mut().unwrap() {
            c.as_object_mut().unwrap().remove("captures");
        }
        v["connections"].clone()
    };
    let piped: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(piped["captures"][0]["file"], "<stdin>");
    assert_eq!(strip(piped), strip(json(&[&file])));
    // A filter that keeps one host pair keeps one connection.
    let r = json(&[&file, "-f", "host 172.30.0.11"]);
    assert_eq!(r["connections"].as_array().unwrap().len(), 1);
    let text = run(&[&file]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("172.30.0.25 → 172.30.0.11"), "{text}");
    // Every line but the file's own fits 80 columns.
    assert!(
        text.lines()
            .filter(|l| !l.contains(&file))
            .all(|l| l.chars().count() <= 80),
        "{text}"
    );
}

#[test]
fn no_nccl_is_one_line_and_status_1() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/write_bw.pcap");
    let out = run(&[sample.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no NCCL connection"), "{err}");
    assert!(out.stdout.is_empty());
    let out = run(&["/nonexistent.pcap"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
    let out = run(&[sample.to_str().unwrap(), "--collective", "allreduce"]);
    assert_eq!(out.status.code(), Some(2));
}
