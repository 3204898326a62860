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
    // The allreduce samples write with immediate too, but carry the step in it and have no
    // CTS: not NCCL's pattern.
    let allreduce = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/allreduce_node0.pcap");
    let out = run(&[allreduce.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let out = run(&["/nonexistent.pcap"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
    let out = run(&[sample.to_str().unwrap(), "--collective", "allreduce"]);
    assert_eq!(out.status.code(), Some(2));
}

// ---- The NCCL scenario writer's truth ----

use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, pcap_bytes};
use roce_inspect::synth::scenario::SNAPLEN;
use roce_inspect::synth::scenario::nccl::{Algo, Mode, Params, Scenario, Truth, scenario};

fn ip(a: [u8; 4]) -> String {
    std::net::Ipv4Addr::from(a).to_string()
}

fn params(algo: Algo, hosts: usize, channels: usize, qps: usize, mode: Mode) -> Params {
    Params {
        hosts,
        algo,
        channels,
        qps,
        mode,
        imm_big_endian: false,
        size64: false,
        steps: 9,
        step_bytes: 8192,
        slow: None,
        lossy: None,
    }
}

/// Each host's capture written to `dir` (cut to `snaplen` bytes a frame when given).
fn files(dir: &Path, s: &Scenario, snaplen: Option<usize>) -> Vec<String> {
    s.captures
        .iter()
        .enumerate()
        .map(|(i, recs)| {
            let recs: Vec<_> = match snaplen {
                Some(n) => recs.iter().map(|r| r.cut(n)).collect(),
                None => recs.clone(),
            };
            let f = dir.join(format!("node{i}.pcap"));
            std::fs::write(&f, pcap_bytes(LINKTYPE_ETHERNET, SNAPLEN, &recs)).unwrap();
            f.display().to_string()
        })
        .collect()
}

/// The report's connection for truth connection `t` (by sender, receiver and CTS QP, or by
/// the first data QP when recognised by immediate).
fn find<'a>(r: &'a Value, t: &roce_inspect::synth::scenario::nccl::TruthConn) -> &'a Value {
    r["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["sender"] == ip(t.sender)
                && c["receiver"] == ip(t.receiver)
                && (c["cts_qp"] == t.cts_qp || c["data_qp"] == t.data_qps[0])
        })
        .unwrap_or_else(|| panic!("no connection for {t:?}"))
}

/// Connections, steps, rings or trees and stragglers equal the truth.
fn check(r: &Value, truth: &Truth, by_cts: bool) {
    let conns = r["connections"].as_array().unwrap();
    assert_eq!(conns.len(), truth.conns.len(), "{r}");
    for t in &truth.conns {
        let c = find(r, t);
        let what = format!("{t:?}: {c}");
        assert_eq!(c["bytes"], t.bytes, "{what}");
        assert_eq!(c["messages"], t.messages, "{what}");
        assert_eq!(c["steps"], t.steps, "{what}");
        assert_eq!(c["incomplete_steps"], 0, "{what}");
        if by_cts {
            assert_eq!(c["cts"], t.cts, "{what}");
            let mut qps: Vec<u64> = c["qps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| q.as_u64().unwrap())
                .collect();
            qps.sort_unstable();
            let want: Vec<u64> = t.data_qps.iter().map(|&q| u64::from(q)).collect();
            assert_eq!(qps, want, "{what}");
            assert_eq!(c["channel"], t.channel, "{what}");
        }
    }
    let rings: Vec<(u64, Vec<String>)> = r["rings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            assert_eq!(g["closed"], true, "{g}");
            let hosts = g["hosts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h.as_str().unwrap().to_string())
                .collect();
            (g["channel"].as_u64().unwrap(), hosts)
        })
        .collect();
    let want: Vec<(u64, Vec<String>)> = truth
        .rings
        .iter()
        .enumerate()
        .map(|(c, ring)| (c as u64, ring.iter().map(|&h| ip(h)).collect()))
        .collect();
    assert_eq!(rings, want, "{}", r["rings"]);
    let trees: Vec<(String, BTreeSet<(String, String)>)> = r["trees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let edges = t["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        e[0].as_str().unwrap().to_string(),
                        e[1].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            (t["root"].as_str().unwrap().to_string(), edges)
        })
        .collect();
    let want: Vec<(String, BTreeSet<(String, String)>)> = truth
        .trees
        .iter()
        .map(|(root, edges)| {
            (
                ip(*root),
                edges.iter().map(|&(p, c)| (ip(p), ip(c))).collect(),
            )
        })
        .collect();
    assert_eq!(trees, want, "{}", r["trees"]);
    for (round, cands, receiver) in &truth.stragglers {
        let s = r["stragglers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["round"] == *round)
            .unwrap_or_else(|| panic!("no straggler for round {round}"));
        let c = &conns[s["connection"].as_u64().unwrap() as usize];
        let ok = cands.iter().any(|&i| {
            let t = &truth.conns[i];
            c["sender"] == ip(t.sender)
                && c["receiver"] == ip(t.receiver)
                && c["channel"] == t.channel
        });
        assert!(ok, "round {round}: {s} on {c}, expected one of {cands:?}");
        assert_eq!(
            s["cause"],
            if *receiver { "receiver" } else { "wire" },
            "round {round}: {s}"
        );
        if !receiver {
            assert!(s["retransmitted"].as_u64().unwrap() > 0, "{s}");
        }
    }
}

fn run_scenario(p: &Params, snaplen: Option<usize>) -> (Value, Truth) {
    let s = scenario(p);
    let dir = tempfile::tempdir().unwrap();
    let f = files(dir.path(), &s, snaplen);
    let refs: Vec<&str> = f.iter().map(String::as_str).collect();
    (json(&refs), s.truth)
}

#[test]
fn scenario_ring_slow_receiver_and_lossy_link() {
    let mut p = params(Algo::Ring, 4, 2, 2, Mode::RoundRobin);
    p.slow = Some((2, vec![1, 5]));
    p.lossy = Some((0, 1, 0, vec![3, 7]));
    let (r, truth) = run_scenario(&p, None);
    assert_eq!(truth.stragglers.len(), 4);
    check(&r, &truth, true);
    for c in r["connections"].as_array().unwrap() {
        assert_eq!(c["immediate"], "little-endian");
        assert_eq!(c["cts_layout"], "entry64_size32");
        assert_eq!(c["protocol"], "SIMPLE");
        assert_eq!(c["sizes"], serde_json::json!([[8192, 9]]));
    }
    assert_eq!(r["nccl_version"], "2.19-2.25");
}

#[test]
fn scenario_trees_big_endian_64_bit_size() {
    for channels in [1, 2] {
        let mut p = params(Algo::Tree, 5, channels, 1, Mode::RoundRobin);
        p.imm_big_endian = true;
        p.size64 = true;
        let (r, truth) = run_scenario(&p, None);
        check(&r, &truth, true);
        assert_eq!(r["nccl_version"], ">= 2.29");
    }
}

#[test]
fn scenario_split_on_qps_adaptive_routing_and_multi_recv() {
    for (mode, qps, channels, be) in [
        (Mode::SplitOnQps, 3, 3, false),
        (Mode::SplitOnQps, 4, 4, true),
        (Mode::AdaptiveRouting, 2, 1, true),
        (Mode::AdaptiveRouting, 1, 2, false),
        (Mode::MultiRecv(2), 1, 1, false),
        (Mode::MultiRecv(3), 2, 2, true),
    ] {
        let mut p = params(Algo::Ring, 3, channels, qps, mode);
        p.imm_big_endian = be;
        // Chunks of 5 packets or more: the lossy link loses the third.
        p.step_bytes = 32768;
        p.lossy = Some((1, 2, 0, vec![4]));
        let (r, truth) = run_scenario(&p, None);
        check(&r, &truth, true);
        // Several receives: the immediate (the first receive's size) goes with a write of the
        // sizes, never equal to its length, so its byte order is not known.
        let order: Value = match (mode, be) {
            (Mode::MultiRecv(_), _) => Value::Null,
            (_, true) => "big-endian".into(),
            (_, false) => "little-endian".into(),
        };
        for c in r["connections"].as_array().unwrap() {
            assert_eq!(c["immediate"], order, "{mode:?}");
        }
    }
}

#[test]
fn scenario_without_cts_payload_falls_back_to_the_immediate() {
    // 80 bytes a frame: every header is kept, a CTS entry's payload is not.
    let p = params(Algo::Ring, 3, 1, 1, Mode::RoundRobin);
    let (r, truth) = run_scenario(&p, Some(80));
    check(&r, &truth, false);
    for c in r["connections"].as_array().unwrap() {
        assert_eq!(c["recognised"], "immediate");
        assert_eq!(c["cts"], 0);
    }
}

#[test]
fn time_going_backwards_and_cut_frames_do_not_panic() {
    let p = params(Algo::Ring, 3, 2, 2, Mode::RoundRobin);
    let s = scenario(&p);
    let dir = tempfile::tempdir().unwrap();
    for (n, recs) in s.captures.iter().enumerate() {
        // Every frame stamped earlier than the one before, and some cut inside their headers.
        let t0 = recs[0].ts_ns + 1_000_000_000;
        let recs: Vec<_> = recs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut r = if i % 7 == 3 {
                    r.cut(40 + i % 30)
                } else {
                    r.clone()
                };
                r.ts_ns = t0 - i as u64 * 1_000;
                r
            })
            .collect();
        let f = dir.path().join(format!("back{n}.pcap"));
        std::fs::write(&f, pcap_bytes(LINKTYPE_ETHERNET, SNAPLEN, &recs)).unwrap();
        let out = run(&[f.to_str().unwrap(), "--json"]);
        let code = out.status.code();
        assert!(code == Some(0) || code == Some(1), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).lines().count() <= 1,
            "{out:?}"
        );
    }
}

#[test]
fn html_timeline_has_a_bar_per_step() {
    let mut p = params(Algo::Ring, 3, 1, 1, Mode::RoundRobin);
    p.slow = Some((1, vec![2]));
    let s = scenario(&p);
    let dir = tempfile::tempdir().unwrap();
    let f = files(dir.path(), &s, None);
    let html = dir.path().join("t.html");
    let out = run(&[&f[0], &f[1], &f[2], "--html", html.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    let steps: u64 = s.truth.conns.iter().map(|c| c.steps).sum();
    assert_eq!(page.matches("<title>step ").count() as u64, steps);
    // One red bar a round: the straggler.
    assert_eq!(page.matches("#d33").count(), p.steps);
    assert!(page.ends_with("</body></html>\n"));
    let bad = run(&[&f[0], "--html", "/nonexistent/dir/t.html"]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&bad.stderr).lines().count(), 1);
}

#[test]
fn nccl_2_26_and_2_29_eras_are_reported_and_joined() {
    // NCCL >= 2.26 writes 64-byte CTS entries with a 64-bit size; 2.29 made the immediate
    // big-endian. Every data write must be joined to its CTS entry (recognised by CTS, every
    // step complete, every immediate equal to its length), and the era named.
    for (be, version) in [(false, "2.26-2.28"), (true, ">= 2.29")] {
        let mut p = params(Algo::Ring, 4, 2, 2, Mode::RoundRobin);
        p.size64 = true;
        p.imm_big_endian = be;
        p.slow = Some((1, vec![2]));
        // Channel 1 runs the ring backwards: 10.0.0.4 → 10.0.0.3.
        p.lossy = Some((3, 2, 1, vec![5]));
        let (r, truth) = run_scenario(&p, None);
        check(&r, &truth, true);
        assert_eq!(r["nccl_version"], version);
        for c in r["connections"].as_array().unwrap() {
            assert_eq!(c["cts_layout"], "size64", "{c}");
            assert_eq!(
                c["immediate"],
                if be { "big-endian" } else { "little-endian" }
            );
            assert_eq!(c["nccl_version"], version, "{c}");
            assert_eq!(c["recognised"], "cts", "{c}");
            assert_eq!(c["imm_equals_length"], c["messages"], "{c}");
            assert_eq!(c["cts_entries"], p.steps, "{c}");
        }
        // The text names the era on its first line.
        let s = scenario(&p);
        let dir = tempfile::tempdir().unwrap();
        let f = files(dir.path(), &s, None);
        let out = run(&[&f[0]]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with(&format!("NCCL {version} ·")), "{text}");
    }
}

// ---- The bundled NCCL sample, and `plot --kind nccl` ----

use roce_inspect::synth::scenario::nccl::sample_params;

fn sample(i: usize) -> String {
    format!("{}/samples/nccl_node{i}.pcap", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn bundled_sample_is_its_scenario() {
    let p = sample_params();
    let truth = scenario(&p).truth;
    let f: Vec<String> = (0..p.hosts).map(sample).collect();
    let refs: Vec<&str> = f.iter().map(String::as_str).collect();
    let r = json(&refs);
    // Its slow receiver's round and its lossy link's round.
    assert_eq!(truth.stragglers.len(), 2);
    check(&r, &truth, true);
    assert_eq!(r["nccl_version"], ">= 2.29");
    assert_eq!(r["rings"].as_array().unwrap().len(), 1);
    // Each host's capture alone sees its two connections (to and from its ring neighbours).
    for (i, file) in f.iter().enumerate() {
        let one = json(&[file]);
        let host = format!("10.0.0.{}", i + 1);
        let conns = one["connections"].as_array().unwrap();
        assert_eq!(conns.len(), 2, "{file}");
        assert!(conns.iter().any(|c| c["sender"] == host.as_str()));
        assert!(conns.iter().any(|c| c["receiver"] == host.as_str()));
    }
}

/// `plot --kind nccl` of `files` (extra `args`) as an SVG document.
fn plot_svg(files: &[String], args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("n.svg");
    let st = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .arg("plot")
        .args(files)
        .args(["--kind", "nccl", "-o"])
        .arg(&out)
        .args(args)
        .output()
        .unwrap();
    assert!(st.status.success(), "{st:?}");
    std::fs::read_to_string(out).unwrap()
}

/// Elements of the SVG with `class`.
fn classes(svg: &str, class: &str) -> usize {
    let doc = roxmltree::Document::parse(svg).expect("SVG parses");
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .count()
}

#[test]
fn plot_kind_nccl_draws_a_bar_per_step() {
    let mut p = params(Algo::Ring, 3, 2, 1, Mode::RoundRobin);
    p.slow = Some((1, vec![2]));
    let s = scenario(&p);
    let dir = tempfile::tempdir().unwrap();
    let f = files(dir.path(), &s, None);
    let svg = plot_svg(&f, &[]);
    let steps: u64 = s.truth.conns.iter().map(|c| c.steps).sum();
    let data = classes(&svg, "m-nccl-data") + classes(&svg, "m-nccl-straggler");
    assert_eq!(data as u64, steps);
    // Every CTS comes before its data in the scenario: one wait bar a step.
    assert_eq!(classes(&svg, "m-nccl-wait") as u64, steps);
    // One straggler a round.
    assert_eq!(classes(&svg, "m-nccl-straggler"), p.steps);
    // One row a connection, named by its hosts and channel.
    for t in &s.truth.conns {
        let name = format!(" {} → {} ch {}", ip(t.sender), ip(t.receiver), t.channel);
        assert_eq!(svg.matches(&name).count(), 1, "{name}");
    }
    // --qp keeps the connection whose CTS QP it is.
    let t = &s.truth.conns[1];
    let one = plot_svg(&f, &["--qp", &t.cts_qp.to_string()]);
    let data = classes(&one, "m-nccl-data") + classes(&one, "m-nccl-straggler");
    assert_eq!(data as u64, t.steps);
}

/// (time ns since the epoch, source, destination, BTH opcode, destination QP) of every RoCE
/// packet of `file`, as tshark dissects it.
fn tshark_times(file: &str) -> Vec<(u64, String, String, u8, u32)> {
    let fields = [
        "frame.time_epoch",
        "ip.src",
        "ip.dst",
        "infiniband.bth.opcode",
        "infiniband.bth.destqp",
    ];
    common::tshark(file, &fields)
        .into_iter()
        .map(|f| {
            let (s, ns) = f[0].split_once('.').unwrap();
            let ns = s.parse::<u64>().unwrap() * 1_000_000_000
                + format!("{ns:0<9}")[..9].parse::<u64>().unwrap();
            let qp = u32::from_str_radix(f[4].trim_start_matches("0x"), 16).unwrap();
            (ns, f[1].clone(), f[2].clone(), f[3].parse().unwrap(), qp)
        })
        .collect()
}

#[test]
fn busbw_is_the_steps_bytes_over_first_cts_to_last_data_packet() {
    let p = sample_params();
    let truth = scenario(&p).truth;
    let f: Vec<String> = (0..p.hosts).map(sample).collect();
    let refs: Vec<&str> = f.iter().map(String::as_str).collect();
    let r = json(&refs);
    for t in &truth.conns {
        let c = find(&r, t);
        // The span on the clock of the capture whose counts are kept, from tshark: the first
        // CTS (a WRITE ONLY to the sender's CTS QP) to the last data packet (a WRITE to a data
        // QP of the receiver), the go-back-N resend included.
        let rows = tshark_times(c["captures"][0].as_str().unwrap());
        let (s, d) = (ip(t.sender), ip(t.receiver));
        let cts = rows
            .iter()
            .filter(|r| r.1 == d && r.2 == s && r.3 == 0x0a && r.4 == t.cts_qp)
            .map(|r| r.0)
            .min()
            .unwrap();
        let last = rows
            .iter()
            .filter(|r| r.1 == s && r.2 == d && (6..=11).contains(&r.3))
            .filter(|r| t.data_qps.contains(&r.4))
            .map(|r| r.0)
            .max()
            .unwrap();
        let want = t.bytes as f64 / (last - cts) as f64;
        let got = c["busbw_gbs"].as_f64().unwrap();
        assert!(
            (got - want).abs() <= want * 1e-9,
            "{s} → {d}: {got} vs {want}"
        );
        // One sending connection per host in this ring: the host's busbw is its.
        let h = r["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["host"] == s.as_str())
            .unwrap();
        assert_eq!(h["busbw_gbs"], c["busbw_gbs"], "{h}");
    }
}
