//! `roce-inspect correlate`: expected values from independent sources — the allreduce
//! scenario's own ground truth (offsets, per-packet delays, lost and missed packets), tshark's
//! dissection of the real NCCL captures (matched another way here), a capture against itself
//! shifted by a known offset, and frames corrupted by hand.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use roce_inspect::synth::scenario::allreduce;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn sample(n: usize) -> String {
    root()
        .join(format!("samples/allreduce_node{n}.pcap"))
        .display()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .arg("correlate")
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

fn ip(a: [u8; 4]) -> String {
    std::net::Ipv4Addr::from(a).to_string()
}

fn link<'a>(r: &'a Value, src: &str, dst: &str) -> &'a Value {
    r["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["src"] == src && l["dst"] == dst)
        .unwrap_or_else(|| panic!("no link {src} → {dst}"))
}

/// Nearest-rank quantile of sorted values.
fn rank(v: &[u64], q: f64) -> u64 {
    let r = ((q * v.len() as f64).ceil() as usize).max(1);
    v[r - 1]
}

fn allreduce_report() -> Value {
    let files: Vec<String> = (0..3).map(sample).collect();
    let f: Vec<&str> = files.iter().map(String::as_str).collect();
    json(&f)
}

#[test]
fn allreduce_offsets_are_the_scenarios_clocks() {
    let t = allreduce::scenario().truth;
    let r = allreduce_report();
    let offs = r["clock_offsets"].as_array().unwrap();
    assert_eq!(offs.len(), 3);
    for (n, o) in offs.iter().enumerate() {
        assert_eq!(o["offset_ns"], t.offsets_ns[n], "node{n}");
        assert!(
            o["file"]
                .as_str()
                .unwrap()
                .ends_with(&format!("node{n}.pcap"))
        );
    }
    // Error bound: half the sum of the smallest true delays each way between node0 and the
    // node (the direct pair gives the smallest bound in this ring).
    let min_delay = |a: usize, b: usize| {
        let (src, dst) = (ip([10, 0, 0, a as u8 + 1]), ip([10, 0, 0, b as u8 + 1]));
        let l = t
            .links
            .iter()
            .find(|l| ip(l.src) == src && ip(l.dst) == dst)
            .unwrap();
        *l.delays_ns.iter().min().unwrap() as i64
    };
    assert_eq!(offs[0]["error_ns"], 0);
    for (n, o) in offs.iter().enumerate().skip(1) {
        assert_eq!(
            o["error_ns"],
            (min_delay(0, n) + min_delay(n, 0)) / 2,
            "node{n}"
        );
    }
}

#[test]
fn allreduce_links_delays_and_counts_follow_the_truth() {
    let t = allreduce::scenario().truth;
    let r = allreduce_report();
    assert_eq!(r["links"].as_array().unwrap().len(), t.links.len());
    for tl in &t.links {
        let (src, dst) = (ip(tl.src), ip(tl.dst));
        let l = link(&r, &src, &dst);
        let up = tl.upstream;
        assert!(
            l["upstream"]
                .as_str()
                .unwrap()
                .ends_with(&format!("node{up}.pcap")),
            "{src} → {dst}"
        );
        let mut d = tl.delays_ns.clone();
        d.sort_unstable();
        assert_eq!(l["matched"], d.len(), "{src} → {dst}");
        let owd = &l["one_way_delay_ns"];
        assert_eq!(owd["min"], d[0], "{src} → {dst}");
        assert_eq!(owd["median"], rank(&d, 0.5), "{src} → {dst}");
        assert_eq!(owd["p99"], rank(&d, 0.99), "{src} → {dst}");
        assert_eq!(owd["max"], d[d.len() - 1], "{src} → {dst}");
        let count = |v: &[allreduce::TruthPacket]| {
            v.iter()
                .filter(|p| p.src == tl.src && p.dst == tl.dst)
                .count()
        };
        assert_eq!(l["lost"], count(&t.lost), "{src} → {dst}");
        assert_eq!(l["missed_by_upstream"], count(&t.missed), "{src} → {dst}");
        assert_eq!(l["corrupted"], 0);
        let over: u64 = owd["over_time"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["packets"].as_u64().unwrap())
            .sum();
        assert_eq!(over as usize, d.len());
    }
}

/// The lost and missed lists, as (src, dst, dest_qp, psn, opcode, seen_in node, missing_in
/// node, frame), sorted.
type Row = (String, String, u64, u64, u64, String, String, u64);

fn rows(v: &Value) -> Vec<Row> {
    let node = |s: &Value| {
        let s = s.as_str().unwrap();
        s[s.len() - 10..].to_string()
    };
    let mut out: Vec<Row> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["src"].as_str().unwrap().to_string(),
                p["dst"].as_str().unwrap().to_string(),
                p["dest_qp"].as_u64().unwrap(),
                p["psn"].as_u64().unwrap(),
                p["opcode"].as_u64().unwrap(),
                node(&p["seen_in"]),
                node(&p["missing_in"]),
                p["frame"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn truth_rows(v: &[allreduce::TruthPacket]) -> Vec<Row> {
    let mut out: Vec<Row> = v
        .iter()
        .map(|p| {
            (
                ip(p.src),
                ip(p.dst),
                u64::from(p.dest_qp),
                u64::from(p.psn),
                u64::from(p.opcode),
                format!("node{}.pcap", p.seen_in),
                format!("node{}.pcap", p.missing_in),
                p.frame,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn allreduce_lost_and_missed_lists_are_exact() {
    let t = allreduce::scenario().truth;
    assert_eq!(t.lost.len(), 2);
    assert_eq!(t.missed.len(), 2);
    let r = allreduce_report();
    assert_eq!(rows(&r["lost"]), truth_rows(&t.lost));
    assert_eq!(rows(&r["missed"]), truth_rows(&t.missed));
    assert_eq!(r["corrupted"].as_array().unwrap().len(), 0);
}

/// The order of the files does not decide what is correlated: with a capture of another job
/// between the same hosts (`write_bw`, 10.0.0.1 ⇄ 10.0.0.2) given first, last or between two
/// nodes, node0 and node1 still get the scenario's clocks (against node0, the reference, when
/// the other capture comes first) and the same links, and the other capture's packets are
/// listed as seen by it alone, not as a link nothing crosses. Before, given first it made the
/// reference (every offset unknown), and given between the two nodes it was chained between
/// them: nothing was matched.
#[test]
fn file_order_does_not_change_the_links_or_clocks() {
    let t = allreduce::scenario().truth;
    let other = root().join("samples/write_bw.pcap").display().to_string();
    let (n0, n1) = (sample(0), sample(1));
    let want_rel = t.offsets_ns[1] - t.offsets_ns[0];
    let mut seen_links = Vec::new();
    for files in [
        [other.as_str(), &n0, &n1],
        [&n0, other.as_str(), &n1],
        [&n0, &n1, other.as_str()],
    ] {
        let r = json(&files);
        let k = |f: &str| files.iter().position(|x| *x == f).unwrap();
        let offs = r["clock_offsets"].as_array().unwrap();
        let ns = |f: &str| offs[k(f)]["offset_ns"].as_i64();
        let (o0, o1) = (ns(&n0).expect("node0"), ns(&n1).expect("node1"));
        assert_eq!(o1 - o0, want_rel, "{files:?}");
        assert_eq!(ns(&other), None, "{files:?}");
        // The reference is node0 (the first capture of the pair), offset 0.
        assert_eq!(r["clock_reference"], k(&n0), "{files:?}");
        assert_eq!(o0, 0, "{files:?}");
        let name = |v: &Value| {
            let f = v.as_str().unwrap();
            Path::new(f)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_string()
        };
        let mut links: Vec<(String, String, String, String, u64)> = r["links"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["src"].as_str().unwrap().to_string(),
                    l["dst"].as_str().unwrap().to_string(),
                    name(&l["upstream"]),
                    name(&l["downstream"]),
                    l["matched"].as_u64().unwrap(),
                )
            })
            .collect();
        links.sort();
        assert_eq!(links.len(), 2, "{links:?}");
        assert!(links.iter().all(|l| l.4 > 0), "{links:?}");
        assert!(
            links
                .iter()
                .all(|l| !l.2.contains("write_bw") && !l.3.contains("write_bw")),
            "{links:?}"
        );
        let alone: Vec<String> = r["single_capture"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| name(&s["file"]) == "write_bw.pcap")
            .map(|s| format!("{} → {}", s["src"], s["dst"]))
            .collect();
        assert_eq!(alone.len(), 2, "{alone:?}");
        seen_links.push(links);
    }
    assert!(
        seen_links.windows(2).all(|w| w[0] == w[1]),
        "{seen_links:?}"
    );
}

#[test]
fn json_has_the_documented_keys() {
    let r = allreduce_report();
    let has = |v: &Value, keys: &[&str]| {
        for k in keys {
            assert!(v.get(k).is_some(), "missing key {k} in {v}");
        }
    };
    has(
        &r,
        &[
            "captures",
            "clock_reference",
            "clock_offsets",
            "links",
            "lost",
            "missed",
            "corrupted",
            "single_capture",
        ],
    );
    has(
        &r["captures"][0],
        &["file", "frames", "roce", "first_ns", "last_ns"],
    );
    has(&r["clock_offsets"][0], &["file", "offset_ns", "error_ns"]);
    let l = &r["links"][0];
    has(
        l,
        &[
            "src",
            "dst",
            "upstream",
            "downstream",
            "matched",
            "lost",
            "missed_by_upstream",
            "one_way_delay_ns",
        ],
    );
    has(
        &l["one_way_delay_ns"],
        &["min", "median", "p99", "max", "over_time"],
    );
    for list in ["lost", "missed"] {
        has(
            &r[list][0],
            &[
                "src",
                "dst",
                "dest_qp",
                "psn",
                "opcode",
                "seen_in",
                "missing_in",
                "frame",
            ],
        );
    }
    assert_eq!(r["captures"][0]["frames"], 96);
}

/// Copy a classic pcap file (µs or ns, either byte order) with every timestamp moved by
/// `shift_ns` (a multiple of 1000 for µs files). libpcap's record layout:
/// https://www.tcpdump.org/manpages/pcap-savefile.5.html
fn shifted_copy(src: &str, dst: &Path, shift_ns: i64) {
    let mut b = std::fs::read(src).unwrap();
    let magic = u32::from_le_bytes(b[0..4].try_into().unwrap());
    let (le, ns) = match magic {
        0xa1b2c3d4 => (true, false),
        0xa1b23c4d => (true, true),
        0xd4c3b2a1 => (false, false),
        0x4d3cb2a1 => (false, true),
        m => panic!("not a classic pcap: {m:#x}"),
    };
    let rd = |b: &[u8]| {
        let a: [u8; 4] = b.try_into().unwrap();
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let wr = |v: u32| if le { v.to_le_bytes() } else { v.to_be_bytes() };
    let unit: i64 = if ns { 1 } else { 1000 };
    assert_eq!(shift_ns % unit, 0);
    let per_s = 1_000_000_000 / unit;
    let mut at = 24;
    while at + 16 <= b.len() {
        let t = i64::from(rd(&b[at..at + 4])) * per_s + i64::from(rd(&b[at + 4..at + 8]));
        let t = t + shift_ns / unit;
        b[at..at + 4].copy_from_slice(&wr((t / per_s) as u32));
        b[at + 4..at + 8].copy_from_slice(&wr((t % per_s) as u32));
        at += 16 + rd(&b[at + 8..at + 12]) as usize;
    }
    std::fs::write(dst, b).unwrap();
}

fn check_shifted(file: &str, shift_ns: i64) {
    let tmp = tempfile::tempdir().unwrap();
    let copy: PathBuf = tmp.path().join("shifted.pcap");
    shifted_copy(file, &copy, shift_ns);
    let r = json(&[file, copy.to_str().unwrap()]);
    assert_eq!(r["clock_offsets"][1]["offset_ns"], shift_ns, "{file}");
    assert_eq!(r["clock_offsets"][1]["error_ns"], 0, "{file}");
    let roce = r["captures"][0]["roce"].as_u64().unwrap();
    let mut matched = 0;
    for l in r["links"].as_array().unwrap() {
        matched += l["matched"].as_u64().unwrap();
        for k in [
            "lost",
            "missed_by_upstream",
            "corrupted",
            "unmatched_at_edges",
        ] {
            assert_eq!(l[k], 0, "{file}: {k}");
        }
        for k in ["min", "median", "p99", "max"] {
            assert_eq!(l["one_way_delay_ns"][k], 0, "{file}: delay {k}");
        }
    }
    assert_eq!(matched, roce, "{file}: every RoCE packet matched");
}

#[test]
fn capture_against_itself_shifted() {
    check_shifted(&sample(1), 2_500_123_457);
    check_shifted(&sample(2), -987_654_321);
}

#[test]
fn real_capture_against_itself_shifted() {
    need_shared!();
    check_shifted(&common::capture("real/nccl_nccl_node0.pcap"), 1_234_567_000);
}

/// (src, dst) → multiset of (dest QP, PSN, opcode).
type Packets = HashMap<(String, String), HashMap<(u64, u64, u64), usize>>;

/// tshark's view of one file.
fn tshark_packets(path: &str) -> Packets {
    let rows = common::tshark(
        path,
        &[
            "ip.src",
            "ip.dst",
            "infiniband.bth.destqp",
            "infiniband.bth.psn",
            "infiniband.bth.opcode",
        ],
    );
    let num = common::tshark_num;
    let mut m: HashMap<_, HashMap<_, usize>> = HashMap::new();
    for r in rows {
        let key = (num(&r[2]), num(&r[3]), num(&r[4]));
        *m.entry((r[0].clone(), r[1].clone()))
            .or_default()
            .entry(key)
            .or_default() += 1;
    }
    m
}

#[test]
fn real_nccl_every_packet_of_each_link_matched() {
    need_shared!();
    let files: Vec<String> = (0..3)
        .map(|n| common::capture(&format!("real/nccl_nccl_node{n}.pcap")))
        .collect();
    let seen: Vec<_> = files.iter().map(|f| tshark_packets(f)).collect();
    let f: Vec<&str> = files.iter().map(String::as_str).collect();
    let r = json(&f);
    let mut checked = 0;
    for (i, a) in seen.iter().enumerate() {
        for (j, b) in seen.iter().enumerate().skip(i + 1) {
            for (dir, pa) in a {
                let Some(pb) = b.get(dir) else { continue };
                // Matched another way: the same multiset of packets at both ends.
                assert_eq!(pa, pb, "{dir:?} differs between node{i} and node{j}");
                let n: usize = pa.values().sum();
                let l = link(&r, &dir.0, &dir.1);
                assert_eq!(l["matched"], n, "{dir:?}");
                assert_eq!(l["lost"], 0);
                assert_eq!(l["missed_by_upstream"], 0);
                let ends = [
                    l["upstream"].as_str().unwrap(),
                    l["downstream"].as_str().unwrap(),
                ];
                assert!(
                    ends.contains(&f[i]) && ends.contains(&f[j]),
                    "{dir:?}: {ends:?}"
                );
                let d = &l["one_way_delay_ns"];
                let (min, max) = (d["min"].as_i64().unwrap(), d["max"].as_i64().unwrap());
                assert!((0..1_000_000).contains(&min) && min <= max, "{dir:?}: {d}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 6, "three hosts, three links, two directions each");
    assert_eq!(r["links"].as_array().unwrap().len(), 6);
    for o in r["clock_offsets"].as_array().unwrap() {
        let (off, err) = (
            o["offset_ns"].as_i64().unwrap(),
            o["error_ns"].as_i64().unwrap(),
        );
        assert!(
            off.abs() < 10_000_000 && (0..1_000_000).contains(&err),
            "{o}"
        );
    }
}

#[test]
fn corrupted_copy_is_located_to_the_link() {
    // Flip one payload byte of the first frame node1 received from node0, ICRC unchanged.
    let b = std::fs::read(sample(1)).unwrap();
    let mut out = b.clone();
    let mut at = 24;
    let (qp, psn) = loop {
        let len = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        let f = &b[at + 16..at + 16 + len];
        // Ethernet (14) + IPv4 (20): source address at 26..30; BTH after UDP at 42.
        if f[26..30] == [10, 0, 0, 1] && len > 200 {
            out[at + 16 + len - 10] ^= 0x40;
            let bth = &f[42..54];
            break (
                u32::from_be_bytes([0, bth[5], bth[6], bth[7]]),
                u32::from_be_bytes([0, bth[9], bth[10], bth[11]]),
            );
        }
        at += 16 + len;
    };
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("node1_corrupt.pcap");
    std::fs::write(&bad, out).unwrap();
    let r = json(&[&sample(0), bad.to_str().unwrap()]);
    let c = r["corrupted"].as_array().unwrap();
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(
        (c[0]["dest_qp"].as_u64(), c[0]["psn"].as_u64()),
        (Some(qp.into()), Some(psn.into()))
    );
    assert_eq!(c[0]["src"], "10.0.0.1");
    let l = link(&r, "10.0.0.1", "10.0.0.2");
    assert_eq!(l["corrupted"], 1);
    assert_eq!(l["lost"], 0);
}

#[test]
fn captures_without_common_traffic_fail_with_one_line() {
    let s = |f: &str| root().join("samples").join(f).display().to_string();
    let out = run(&[&s("write_bw.pcap"), &s("congestion.pcap")]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("roce-inspect: ") && err.contains("share no"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_arguments_and_files() {
    let one = run(&[&sample(0)]);
    assert_eq!(one.status.code(), Some(2));
    let missing = run(&[&sample(0), "/nonexistent.pcap"]);
    assert_eq!(missing.status.code(), Some(1));
    let err = String::from_utf8(missing.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent.pcap"), "{err}");
    let window = run(&[&sample(0), &sample(1), "--window", "0"]);
    assert_eq!(window.status.code(), Some(2));
}

#[test]
fn text_report_names_links_and_lists() {
    let out = run(&[&sample(0), &sample(1), &sample(2), "--color", "never"]);
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("+1234.567"), "{s}");
    assert!(s.contains("-750.000"), "{s}");
    assert!(s.contains("Lost on the link: 2"), "{s}");
    assert!(s.contains("Missed by the upstream capture: 2"), "{s}");
}

#[test]
fn directions_seen_by_one_capture_are_listed_not_lost() {
    // node0 and node1 only: node0's traffic with 10.0.0.3 has no other end here.
    let r = json(&[&sample(0), &sample(1)]);
    let single: Vec<(String, String, String)> = r["single_capture"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f = s["file"].as_str().unwrap();
            (
                s["src"].as_str().unwrap().to_string(),
                s["dst"].as_str().unwrap().to_string(),
                f[f.len() - 10..].to_string(),
            )
        })
        .collect();
    for (src, dst, file) in [
        ("10.0.0.1", "10.0.0.3", "node0.pcap"),
        ("10.0.0.3", "10.0.0.1", "node0.pcap"),
        ("10.0.0.2", "10.0.0.3", "node1.pcap"),
        ("10.0.0.3", "10.0.0.2", "node1.pcap"),
    ] {
        assert!(
            single.contains(&(src.into(), dst.into(), file.into())),
            "{src} → {dst} in {file}: {single:?}"
        );
    }
    assert_eq!(r["links"].as_array().unwrap().len(), 2);
    assert_eq!(r["lost"].as_array().unwrap().len(), 0);
    assert_eq!(r["missed"].as_array().unwrap().len(), 0);
}

/// A short capture holding a few of a long capture's packets is still linked to it and its
/// packets matched, although the long capture's sample (4096 packets per direction) holds none
/// of them: a link is left out only when the matching crossed nothing over it.
#[test]
fn a_short_capture_of_a_few_packets_is_matched() {
    use roce_inspect::correlate::packet::Observation;
    use roce_inspect::correlate::survey::SAMPLE_PER_DIRECTION;
    use roce_inspect::decode::Opcode;
    use roce_inspect::decode::{DecodeConfig, LinkType, decode_frame};
    use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, Record, pcap_bytes};
    use roce_inspect::synth::frame::{Bth, Packet};
    // 20,000 RC SEND ONLY packets 10.0.0.1 → 10.0.0.2, 1 µs apart; the short capture holds 30
    // of them from the middle that are not in the long one's sample, seen 2 µs later.
    let frames: Vec<(u64, Vec<u8>)> = (0..20_000u32)
        .map(|i| {
            let bth = Bth {
                opcode: Opcode(0x04),
                dest_qp: 0x11,
                psn: i,
                ..Bth::default()
            };
            let p = Packet::v4([10, 0, 0, 1], [10, 0, 0, 2], bth);
            (1_700_000_000_000_000_000 + u64::from(i) * 1000, p.build())
        })
        .collect();
    let hash = |f: &[u8]| {
        let frame = decode_frame(
            LinkType::ETHERNET,
            f,
            f.len() as u32,
            &DecodeConfig::default(),
        );
        Observation::of(&frame, 1, 0).unwrap().sample_hash()
    };
    let mut hashes: Vec<u64> = frames.iter().map(|(_, f)| hash(f)).collect();
    hashes.sort_unstable();
    let sampled_below = hashes[SAMPLE_PER_DIRECTION - 1];
    let long: Vec<Record> = frames
        .iter()
        .map(|(t, f)| Record::new(*t, f.clone()))
        .collect();
    let short: Vec<Record> = frames[10_000..]
        .iter()
        .filter(|(_, f)| hash(f) > sampled_below)
        .take(30)
        .map(|(t, f)| Record::new(t + 2000, f.clone()))
        .collect();
    assert_eq!(short.len(), 30);
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("long.pcap"), tmp.path().join("short.pcap"));
    std::fs::write(&a, pcap_bytes(LINKTYPE_ETHERNET, 65535, &long)).unwrap();
    std::fs::write(&b, pcap_bytes(LINKTYPE_ETHERNET, 65535, &short)).unwrap();
    for files in [[&a, &b], [&b, &a]] {
        let f: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
        let r = json(&f);
        let links = r["links"].as_array().unwrap();
        assert_eq!(links.len(), 1, "{f:?}: {r}");
        assert_eq!(links[0]["matched"], 30, "{f:?}: {r}");
        assert_eq!(links[0]["lost"], 0, "{f:?}");
        assert_eq!(links[0]["missed_by_upstream"], 0, "{f:?}");
    }
}

/// The first `keep` records of a classic little-endian pcap file.
fn first_records(src: &str, dst: &Path, keep: usize) {
    let b = std::fs::read(src).unwrap();
    let mut at = 24;
    for _ in 0..keep {
        at += 16 + u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    std::fs::write(dst, &b[..at]).unwrap();
}

#[test]
fn a_capture_that_stops_early_loses_nothing() {
    // node1's capture stops halfway: what node0 sent it afterwards is not lost, nor is what
    // node0 saw from it after that missed.
    let tmp = tempfile::tempdir().unwrap();
    let short = tmp.path().join("node1_half.pcap");
    first_records(&sample(1), &short, 50);
    let r = json(&[&sample(0), short.to_str().unwrap()]);
    let mut edges = 0;
    for l in r["links"].as_array().unwrap() {
        assert_eq!(l["lost"], 0, "{l}");
        assert_eq!(l["missed_by_upstream"], 0, "{l}");
        edges += l["unmatched_at_edges"].as_u64().unwrap();
    }
    assert!(edges > 0);
    // The clocks are still found exactly.
    assert_eq!(r["clock_offsets"][1]["offset_ns"], allreduce::OFFSETS_NS[1]);
}

/// A classic little-endian pcap file with every record cut to `snaplen` bytes (the wire length
/// kept), as `tcpdump -s` writes it.
fn cut_copy(src: &str, dst: &Path, snaplen: usize) {
    let b = std::fs::read(src).unwrap();
    let mut out = b[..24].to_vec();
    out[16..20].copy_from_slice(&(snaplen as u32).to_le_bytes());
    let mut at = 24;
    while at + 16 <= b.len() {
        let len = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        let keep = len.min(snaplen);
        out.extend_from_slice(&b[at..at + 8]);
        out.extend_from_slice(&(keep as u32).to_le_bytes());
        out.extend_from_slice(&b[at + 12..at + 16]);
        out.extend_from_slice(&b[at + 16..at + 16 + keep]);
        at += 16 + len;
    }
    std::fs::write(dst, out).unwrap();
}

#[test]
fn snap_length_cut_copies_match_on_headers() {
    let t = allreduce::scenario().truth;
    let tmp = tempfile::tempdir().unwrap();
    let cut = tmp.path().join("allreduce_node1.pcap");
    // Ethernet + IPv4 + UDP + BTH + RETH = 70 bytes: no payload, no ICRC.
    cut_copy(&sample(1), &cut, 80);
    let r = json(&[&sample(0), cut.to_str().unwrap(), &sample(2)]);
    assert_eq!(r["clock_offsets"][1]["offset_ns"], t.offsets_ns[1]);
    for tl in &t.links {
        let l = link(&r, &ip(tl.src), &ip(tl.dst));
        assert_eq!(l["matched"], tl.delays_ns.len(), "{l}");
        assert_eq!(l["corrupted"], 0, "{l}");
    }
    assert_eq!(rows(&r["lost"]), truth_rows(&t.lost));
    assert_eq!(rows(&r["missed"]), truth_rows(&t.missed));
}

/// Offsets of the ends of the records of a little-endian pcap file (after the 24-byte file
/// header: a 16-byte record header whose bytes 8..12 are the captured length, then the data).
fn record_ends(bytes: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let caplen = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + caplen;
        ends.push(at);
    }
    ends
}

/// One capture cut inside a record (a capture killed while writing): the frames before the
/// damage are correlated exactly as a file that ends cleanly after them, the report is printed
/// with the damage named, and the run ends with one line on stderr and status 1 (everything was
/// lost before).
#[test]
fn a_capture_cut_short_is_correlated_up_to_the_damage() {
    let bytes = std::fs::read(sample(1)).unwrap();
    let ends = record_ends(&bytes);
    let keep = 40;
    assert!(
        ends.len() > keep + 1,
        "the sample has {} records",
        ends.len()
    );
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    // The same name in two folders: a clean file of the first `keep` records, and one cut
    // in the middle of the next record's data.
    std::fs::write(dirs[0].path().join("node1.pcap"), &bytes[..ends[keep - 1]]).unwrap();
    std::fs::write(dirs[1].path().join("node1.pcap"), &bytes[..ends[keep] - 10]).unwrap();
    let correlate = |dir: &Path| {
        Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .current_dir(dir)
            .args(["correlate", &sample(0), "node1.pcap", &sample(2), "--json"])
            .output()
            .unwrap()
    };
    let clean = correlate(dirs[0].path());
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    let cut = correlate(dirs[1].path());
    assert_eq!(cut.status.code(), Some(1));
    let err = String::from_utf8_lossy(&cut.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("node1.pcap: after frame {keep}")),
        "{err}"
    );
    let mut got: Value = serde_json::from_slice(&cut.stdout).expect("the report is printed");
    let want: Value = serde_json::from_slice(&clean.stdout).unwrap();
    assert_eq!(got["captures"][1]["frames"], keep as u64);
    let named = got["captures"][1]["read_error"]
        .as_str()
        .unwrap_or_default();
    assert!(named.contains(&format!("after frame {keep}")), "{named}");
    got["captures"][1]
        .as_object_mut()
        .unwrap()
        .remove("read_error");
    assert_eq!(got, want);
    assert!(
        want["links"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["matched"].as_u64() > Some(0))
    );
    // The text report names the damage under the captures table.
    let text = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .current_dir(dirs[1].path())
        .args(["correlate", &sample(0), "node1.pcap"])
        .output()
        .unwrap();
    assert_eq!(text.status.code(), Some(1));
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(
        out.contains("cut short: node1.pcap: after frame 40"),
        "{out}"
    );
}
