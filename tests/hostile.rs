//! Hostile-input captures (issue 7, point 3), kept as files under `tests/hostile/` (written by
//! `cargo run --example make_hostile`; each described in `tests/hostile/README.md`). Every file
//! goes through the CLI, `read F --summary --json` and plain `read F`, and the report's `frames`
//! and `icrc` objects must hold the exact counts designed into the file.

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::{Value, json};

fn file(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hostile")
        .join(name);
    assert!(p.is_file(), "{} missing", p.display());
    p.to_string_lossy().into_owned()
}

/// Run roce-inspect with the default (mapped) reader and with libpcap's
/// (`ROCE_INSPECT_READER=libpcap`): both must give the same status, output and errors.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let go = |reader: &str| {
        let out = Command::cargo_bin("roce-inspect")
            .unwrap()
            .env("NO_COLOR", "1")
            .env("ROCE_INSPECT_READER", reader)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let mapped = go("");
    assert_eq!(mapped, go("libpcap"), "the two readers differ on {args:?}");
    mapped
}

/// `read F --summary --json [extra]`: the report document; exit status 0 and nothing on stderr.
fn report(name: &str, extra: &[&str]) -> Value {
    let f = file(name);
    let mut args = vec!["read", f.as_str(), "--summary", "--json"];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    assert_eq!(code, Some(0), "{name}: stderr {err:?}");
    assert!(err.is_empty(), "{name}: stderr {err:?}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{name}: one JSON document: {out}");
    serde_json::from_str(lines[0]).unwrap()
}

/// Plain `read F`: exit 0, nothing on stderr, one line per RoCE frame.
fn plain(name: &str, roce_lines: usize) -> Vec<String> {
    let (code, out, err) = run(&["read", &file(name)]);
    assert_eq!(code, Some(0), "{name}: stderr {err:?}");
    assert!(err.is_empty(), "{name}: stderr {err:?}");
    let lines: Vec<String> = out.lines().map(str::to_string).collect();
    assert_eq!(lines.len(), roce_lines, "{name}: {out}");
    lines
}

/// The `frames` counts (total, roce, other, malformed, truncated, untracked).
fn frames(r: &Value) -> [u64; 6] {
    let f = &r["frames"];
    [
        "total",
        "roce",
        "other",
        "malformed",
        "truncated",
        "untracked",
    ]
    .map(|k| f[k].as_u64().unwrap_or_else(|| panic!("frames.{k}: {f}")))
}

/// The `icrc` counts (good, bad, unchecked).
fn icrc(r: &Value) -> [u64; 3] {
    ["good", "bad", "unchecked"].map(|k| r["icrc"][k].as_u64().unwrap())
}

fn psn(r: &Value, flow: usize) -> [Value; 5] {
    let p = &r["flows"][flow]["psn"];
    ["first", "last", "gap_events", "missing", "retransmitted"].map(|k| p[k].clone())
}

#[test]
fn rxe_opcode_ff_is_manufacturer_specific_not_malformed() {
    let r = report("rxe_opcode_ff.pcap", &[]);
    assert_eq!(frames(&r), [2, 2, 0, 0, 0, 0]);
    assert_eq!(icrc(&r), [0, 0, 2]);
    assert_eq!(r["flows"][0]["packets"], 2);
    let lines = plain("rxe_opcode_ff.pcap", 2);
    for l in &lines {
        assert!(l.contains("manufacturer-specific 0xFF"), "{l}");
        assert!(!l.contains("MALFORMED") && !l.contains("ICRC"), "{l}");
    }
    // NDJSON: shown, ICRC unchecked, no malformed key.
    let (code, out, _) = run(&["read", &file("rxe_opcode_ff.pcap"), "--json"]);
    assert_eq!(code, Some(0));
    for l in out.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["bth"]["opcode"], 0xff);
        assert_eq!(v["icrc"]["status"], "unchecked");
        assert!(
            v.get("malformed").is_none_or(|m| m.is_null() || m == false),
            "{l}"
        );
    }
}

#[test]
fn pad_count_larger_than_payload_is_malformed() {
    let r = report("pad_exceeds_payload.pcap", &[]);
    assert_eq!(frames(&r), [2, 2, 0, 2, 0, 0]);
    assert_eq!(icrc(&r), [0, 0, 2]);
    let why: Vec<&str> = r["frames"]["malformed_frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        why,
        [
            "pad count 3 is larger than the 2-byte payload",
            "pad count 3 is larger than the 0-byte payload"
        ]
    );
    for l in plain("pad_exceeds_payload.pcap", 2) {
        assert!(l.contains("[MALFORMED]"), "{l}");
    }
}

#[test]
fn udp_length_larger_than_the_frame_is_malformed_not_truncated() {
    let r = report("udp_len_exceeds_frame.pcap", &[]);
    // Both frames were captured whole: the length fields lie, nothing was cut.
    assert_eq!(frames(&r), [2, 2, 0, 2, 0, 0]);
    assert_eq!(icrc(&r), [0, 0, 2]);
    // No message is built from bytes that were never on the wire. Both BTHs were on the wire
    // (tshark shows their QP too): the flow has both packets, and as payload the bytes there:
    // 52 in the first (its 76-byte IP payload − 8 UDP − 12 BTH − 4 ICRC: tshark's "Length:
    // 52"), 56 after the BTH in the second (114 − 14 Ethernet − 20 IPv4 − 8 UDP − 12 BTH),
    // not the 1000 − 8 − 12 the UDP length claims.
    let flows = r["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 1);
    assert_eq!(
        (
            &flows[0]["dest_qp"],
            &flows[0]["packets"],
            &flows[0]["payload_bytes"]
        ),
        (&json!(0x11), &json!(2), &json!(52 + 56))
    );
    assert_eq!(flows[0]["messages"]["send"]["count"], 0);
    let why: Vec<&str> = r["frames"]["malformed_frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        why,
        [
            "UDP length 1000 does not fit the IP payload of 76 bytes",
            "length field claims 1000 bytes but the frame had 76 on the wire"
        ]
    );
    plain("udp_len_exceeds_frame.pcap", 2);
}

#[test]
fn ipv4_header_length_below_20_is_not_roce() {
    let r = report("ipv4_ihl_short.pcap", &[]);
    assert_eq!(frames(&r), [2, 0, 2, 0, 0, 0]);
    assert_eq!(icrc(&r), [0, 0, 0]);
    // The report says why it is empty among its warnings (nothing on stderr, see `report`).
    let w = r["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w.as_str().unwrap().contains("no RoCE packets in 2 frames")),
        "{w:?}"
    );
    // Undecodable frames are shown (marked) even without --all; with no RoCE at all, stderr
    // says so (exit 0).
    let (code, out, err) = run(&["read", &file("ipv4_ihl_short.pcap")]);
    assert_eq!(code, Some(0));
    assert!(err.contains("no RoCE packets in 2 frames"), "{err}");
    assert_eq!(out.lines().count(), 2);
    assert!(
        out.lines()
            .all(|l| l.contains("[MALFORMED]") && l.contains("invalid IPv4 header")),
        "{out}"
    );
}

#[test]
fn nested_vlan_tags_to_the_frame_end() {
    let r = report("nested_vlan.pcap", &[]);
    // Tags to the end of a jumbo frame and tags ending on the last byte: other; 300 tags then
    // RoCEv2: decoded, ICRC good (tags are not covered).
    assert_eq!(frames(&r), [3, 1, 2, 0, 0, 0]);
    assert_eq!(icrc(&r), [1, 0, 0]);
    // The two frames whose tags run to the end are shown malformed (nothing was cut: they
    // were that short on the wire; tshark: "Malformed Packet" for the third, and for the
    // first it stops at "Too many nested VLAN tags"); the RoCE frame decodes.
    let lines = plain("nested_vlan.pcap", 3);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("RC RDMA_WRITE_ONLY"))
            .count(),
        1,
        "{lines:?}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("[MALFORMED]") && l.contains("802.1Q header on the wire"))
            .count(),
        2,
        "{lines:?}"
    );
    let (_, out, _) = run(&["read", &file("nested_vlan.pcap"), "--json", "--all"]);
    let v: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v.len(), 3);
}

#[test]
fn read_request_with_dma_length_2_pow_32_minus_1() {
    // PMTU unknown (no FIRST/MIDDLE): the READ surely reserves 1 PSN; the WRITE at 101 is in
    // order, the WRITE at 100 + 2^20 is then a gap of 2^20 − 2 PSNs.
    let r = report("read_dma_len_max.pcap", &[]);
    assert_eq!(frames(&r), [5, 5, 0, 0, 0, 0]);
    assert_eq!(icrc(&r), [5, 0, 0]);
    assert_eq!(
        psn(&r, 0),
        [
            json!(100),
            json!(1_048_676),
            json!(1),
            json!(1_048_574),
            json!(0)
        ]
    );
    // --mtu 4096: the READ reserves ceil((2^32 − 1) / 4096) = 2^20 PSNs; the WRITE at 101 is
    // behind (one retransmission), the WRITE at 100 + 2^20 in order: no gap, and nothing grows
    // with the reservation.
    let r = report("read_dma_len_max.pcap", &["--mtu", "4096"]);
    assert_eq!(frames(&r), [5, 5, 0, 0, 0, 0]);
    assert_eq!(
        psn(&r, 0),
        [json!(100), json!(1_048_676), json!(0), json!(0), json!(1)]
    );
    // --mtu 256: 2^24 PSNs would wrap the space; the reservation saturates at 2^23 − 1, so the
    // expected PSN never moves backwards: both WRITEs are behind.
    let r = report("read_dma_len_max.pcap", &["--mtu", "256"]);
    assert_eq!(
        psn(&r, 0),
        [json!(100), json!(1_048_676), json!(0), json!(0), json!(2)]
    );
    // The READ RESPONSE ONLY is one READ message of 16 bytes, whatever the RETH claimed.
    assert_eq!(r["flows"][1]["messages"]["read"]["count"], 1);
    assert_eq!(r["flows"][1]["messages"]["read"]["bytes"], 16);
    plain("read_dma_len_max.pcap", 5);
}

#[test]
fn records_claiming_4_gb_lengths() {
    let f = file("record_len_4gb.pcap");
    for args in [
        vec!["read", f.as_str()],
        vec!["read", f.as_str(), "--summary", "--json"],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, Some(1), "{args:?}");
        let e: Vec<&str> = err.lines().collect();
        assert_eq!(e.len(), 1, "one line: {err:?}");
        assert!(
            e[0].starts_with("roce-inspect: ") && e[0].contains(&f),
            "{err}"
        );
        assert!(e[0].contains("after frame 2"), "{err}");
        assert!(e[0].contains("4294967280"), "{err}");
        if args.len() == 2 {
            // The frames before the bad record are printed.
            assert_eq!(out.lines().count(), 2, "{out}");
        } else {
            let r: Value = serde_json::from_str(out.trim()).unwrap();
            assert_eq!(frames(&r), [2, 2, 0, 0, 0, 0]);
            assert_eq!(icrc(&r), [2, 0, 0]);
        }
    }
}

#[test]
fn pcapng_unknown_block_is_skipped() {
    let r = report("pcapng_unknown_block.pcapng", &[]);
    assert_eq!(frames(&r), [2, 2, 0, 0, 0, 0]);
    assert_eq!(icrc(&r), [2, 0, 0]);
    assert_eq!(
        psn(&r, 0),
        [json!(0), json!(1), json!(0), json!(0), json!(0)]
    );
    plain("pcapng_unknown_block.pcapng", 2);
}

#[test]
fn timestamps_going_backwards() {
    let r = report("ts_backwards.pcap", &[]);
    assert_eq!(frames(&r), [6, 6, 0, 0, 0, 0]);
    assert_eq!(
        r["frames"]["first_ts_ns"],
        json!(1_700_000_010_000_000_000u64)
    );
    assert_eq!(
        r["frames"]["last_ts_ns"],
        json!(1_700_000_000_000_000_000u64)
    );
    // Gap at PSN 1 (frame 2), its NAK (frame 3) and the retransmission (frame 4) all stamped
    // earlier than what they follow: the delays are null (no interval), never 0, negative or
    // wrapped.
    assert_eq!(
        psn(&r, 0),
        [json!(0), json!(3), json!(1), json!(1), json!(2)]
    );
    let g = &r["gaps"][0];
    assert_eq!(g["frame"], 2);
    assert_eq!(g["nak"]["frame"], 3);
    assert!(g["nak"]["delay_ns"].is_null(), "{g}");
    assert_eq!(g["retransmission"]["frame"], 4);
    assert!(g["retransmission"]["delay_ns"].is_null(), "{g}");
    assert_eq!(g["retransmission"]["trigger"], "nak");
    assert_eq!(r["flows"][0]["messages"]["write"]["count"], 4);
    // Two intervals are negative (gap → NAK: −1 s; NAK → retransmission: −1 s): left out of
    // the latency statistics, with a warning, not counted as 0 ns samples.
    let w = r["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w.as_str().unwrap().starts_with("2 time intervals")),
        "{w:?}"
    );
    // Every duration in the report is a sane non-negative number (no u64 wrap-around).
    fn walk(v: &Value, path: &str) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, v)| walk(v, &format!("{path}.{k}"))),
            Value::Array(a) => a.iter().for_each(|v| walk(v, path)),
            Value::Number(n) if path.ends_with("_ns") && !path.ends_with("ts_ns") => {
                let x = n.as_u64().unwrap_or_else(|| panic!("{path} = {n}"));
                assert!(x <= 20_000_000_000, "{path} = {x}");
            }
            _ => {}
        }
    }
    walk(&r, "");
    // Relative times in the per-packet listing are tshark's `frame.time_relative`: signed,
    // negative for the frames stamped before the first (the last is 10 s before it), never a
    // wrapped u64.
    let rels: Vec<f64> = plain("ts_backwards.pcap", 6)
        .iter()
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(rels[0], 0.0);
    assert_eq!(rels[5], -10.0, "{rels:?}");
    assert!(rels.iter().all(|r| (-10.0..=1.0).contains(r)), "{rels:?}");
    // The text report does not panic either.
    let (code, _, err) = run(&[
        "read",
        &file("ts_backwards.pcap"),
        "-q",
        "--gaps",
        "--messages",
    ]);
    assert_eq!(code, Some(0), "{err}");
}
