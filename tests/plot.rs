//! `roce-inspect plot`: the SVG of each kind parses, the markers it draws match the counts of
//! `read --summary --json` for the same selection and the scenario writers' ground truth, and
//! the axes span the data (issue 14).

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, pcap_bytes};
use roce_inspect::synth::scenario::{self, SNAPLEN, Trace, host, op};
use serde_json::Value;

fn bin() -> Command {
    Command::cargo_bin("roce-inspect").expect("binary")
}

fn sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
        .display()
        .to_string()
}

/// Run `plot` into a temporary SVG and return its text.
fn plot(file: &str, args: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("p.svg");
    bin()
        .arg("plot")
        .arg(file)
        .args(args)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    std::fs::read_to_string(out).expect("svg written")
}

fn summary(file: &str) -> Value {
    let out = bin()
        .args(["read", file, "-q", "--summary", "--json"])
        .output()
        .expect("run");
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).expect("json")
}

/// Elements with `class` in the parsed SVG.
fn count(svg: &str, class: &str) -> usize {
    let doc = roxmltree::Document::parse(svg).expect("SVG parses as XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .count()
}

/// Sum of a numeric JSON field over the flows `keep` selects.
fn sum(v: &Value, keep: impl Fn(&Value) -> bool, field: impl Fn(&Value) -> u64) -> u64 {
    v["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .filter(|f| keep(f))
        .map(field)
        .sum()
}

fn naks(f: &Value) -> u64 {
    f["naks"]
        .as_object()
        .expect("naks")
        .values()
        .map(|v| v.as_u64().expect("count"))
        .sum()
}

fn u(v: &Value) -> u64 {
    v.as_u64().expect("number")
}

#[test]
fn write_bw_psn_markers_match_summary_and_truth() {
    let f = sample("write_bw.pcap");
    let svg = plot(&f, &["--kind", "psn"]);
    let s = summary(&f);
    let truth = scenario::write_bw::scenario().truth;
    let retx = sum(&s, |_| true, |f| u(&f["psn"]["retransmitted"]));
    assert!(retx > 0, "the sample has a go-back-N");
    assert_eq!(count(&svg, "m-retx") as u64, retx);
    assert_eq!(count(&svg, "m-nak") as u64, sum(&s, |_| true, naks));
    assert_eq!(count(&svg, "m-nak"), truth.naks, "ground truth NAKs");
    assert_eq!(
        count(&svg, "m-gap") as u64,
        sum(&s, |_| true, |f| u(&f["psn"]["gap_events"]))
    );
    assert_eq!(count(&svg, "m-cnp"), 0);
}

#[test]
fn congestion_cnp_and_ce_markers_match_summary_and_truth() {
    let f = sample("congestion.pcap");
    let s = summary(&f);
    let truth = scenario::congestion::scenario().truth;
    let cnps = sum(&s, |_| true, |f| u(&f["cnps"]));
    assert_eq!(cnps as usize, truth.cnps.iter().sum::<usize>());
    let ce = sum(&s, |_| true, |f| u(&f["ecn"]["ce"]));
    for kind in ["psn", "rate"] {
        let svg = plot(&f, &["--kind", kind]);
        assert_eq!(count(&svg, "m-cnp") as u64, cnps, "{kind}");
    }
    let svg = plot(&f, &["--kind", "psn"]);
    assert_eq!(count(&svg, "m-ce") as u64, ce);
    assert_eq!(count(&svg, "m-ce"), truth.ce.iter().sum::<usize>());
}

#[test]
fn qp_selection_counts_only_that_flow() {
    let f = sample("congestion.pcap");
    let s = summary(&f);
    // CNPs go to the sender's QP; the data flows carry the receivers' QPNs. A data flow's
    // CNP markers are those of the connection direction whose data flow it is.
    for qp in scenario::congestion::RECEIVER_QPNS {
        let svg = plot(&f, &["--kind", "psn", "--qp", &qp.to_string()]);
        let data = s["flows"]
            .as_array()
            .expect("flows")
            .iter()
            .find(|f| u(&f["dest_qp"]) == u64::from(qp))
            .expect("data flow");
        let id = u(&data["id"]);
        let want: u64 = s["connections"]
            .as_array()
            .expect("connections")
            .iter()
            .flat_map(|c| c["congestion"].as_array().expect("dirs").iter())
            .filter(|d| u(&d["data_flow"]) == id)
            .map(|d| u(&d["cnps"]))
            .sum();
        assert!(want > 0);
        assert_eq!(count(&svg, "m-cnp") as u64, want, "QP {qp:#x}");
        assert_eq!(
            count(&svg, "m-ce") as u64,
            u(&data["ecn"]["ce"]),
            "QP {qp:#x}"
        );
    }
}

#[test]
fn read_timeout_retransmissions_and_windows() {
    let f = sample("read_timeout.pcap");
    let s = summary(&f);
    let retx = sum(&s, |_| true, |f| u(&f["psn"]["retransmitted"]));
    // Both losses end in the requester's timeout and a re-issued READ (samples/README.md).
    let reissues = sum(&s, |_| true, |f| u(&f["loss"]["read_reissues"]));
    assert_eq!(reissues, 2, "the sample re-issues two READs after timeouts");
    let svg = plot(&f, &["--kind", "psn"]);
    assert_eq!(count(&svg, "m-retx") as u64, retx);
    // Windows before and after an instant split the markers between them.
    let span = u(&s["frames"]["last_ts_ns"]) - u(&s["frames"]["first_ts_ns"]);
    for frac in [0.3, 0.5, 0.7] {
        let at = format!("{:.9}", span as f64 / 1e9 * frac + 0.5e-9);
        let before = count(&plot(&f, &["--kind", "psn", "--to", &at]), "m-retx");
        let after = count(&plot(&f, &["--kind", "psn", "--from", &at]), "m-retx");
        assert_eq!((before + after) as u64, retx, "split at {at} s");
    }
    for kind in ["latency", "messages", "rate"] {
        let svg = plot(&f, &["--kind", kind]);
        roxmltree::Document::parse(&svg).expect("parses");
    }
    // The latency axis runs to the decade above the 67 ms READ re-issues, whose label
    // "100000" (µs) must lie wholly inside the canvas (its right half was cut off).
    let svg = plot(&f, &["--kind", "latency"]);
    let doc = roxmltree::Document::parse(&svg).expect("parses");
    let width: f64 = doc
        .root_element()
        .attribute("width")
        .unwrap()
        .parse()
        .unwrap();
    let last = doc
        .descendants()
        .rfind(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some("100000"))
        .expect("a 100000 µs tick label");
    let x: f64 = last.attribute("x").unwrap().parse().unwrap();
    let size: f64 = last.attribute("font-size").unwrap().parse().unwrap();
    assert_eq!(last.attribute("text-anchor"), Some("middle"));
    // Digits are at most 0.6 em wide in any sans-serif font: 6 of them, half on each side.
    assert!(
        x + 3.0 * 0.6 * size <= width,
        "label centred at {x} of {width}"
    );
    let svg = plot(&f, &["--kind", "messages"]);
    let msgs = sum(
        &s,
        |_| true,
        |f| {
            ["send", "write", "read", "atomic"]
                .iter()
                .map(|k| u(&f["messages"][k]["count"]))
                .sum()
        },
    );
    // Complete messages without a DMA length mismatch are drawn as complete; the others, and
    // messages still open at the end, as failed.
    let mism = sum(&s, |_| true, |f| u(&f["dma_len_mismatches"]));
    let incomplete = sum(&s, |_| true, |f| u(&f["incomplete_messages"]));
    assert!(msgs > 0);
    assert_eq!(count(&svg, "m-msg-ok") as u64, msgs - mism);
    assert!(count(&svg, "m-msg-failed") as u64 <= mism + incomplete);
}

/// A generated capture: `flows` WRITE ONLY flows of 200 packets each, flow k with a payload
/// of 64·(k+1) bytes, PSNs starting 96 below 2^24 so they wrap; flow 0 goes back N: after
/// PSN index 120 the responder NAKs index 100 and the requester resends 100..=120.
fn generated(flows: u32) -> (tempfile::TempDir, PathBuf, u32) {
    let mut t = Trace::default();
    let resent = 21u32;
    for k in 0..flows {
        let fwd = scenario::Path {
            from: host(1),
            to: host(2),
            dest_qp: 0x100 + k,
            udp_src: 0xc000 + k as u16,
            tos: 0x02,
        };
        let back = scenario::Path {
            from: host(2),
            to: host(1),
            dest_qp: 0x200 + k,
            udp_src: 0xc000 + k as u16,
            tos: 0x02,
        };
        let first = 0xff_ffa0u32;
        let mut ts = 1_000 + u64::from(k) * 100;
        let send = |t: &mut Trace, i: u32, ts: u64| {
            let mut p = fwd.packet(op::WRITE_ONLY, scenario::psn_add(first, i));
            p.payload_len = 64 * (k as usize + 1);
            t.push(ts, &p);
        };
        for i in 0..200u32 {
            send(&mut t, i, ts);
            ts += 1_000;
            if k == 0 && i == 120 {
                t.push(ts, &back.ack(scenario::psn_add(first, 100), 0x60, 0));
                ts += 1_000;
                for j in 100..=120 {
                    send(&mut t, j, ts);
                    ts += 1_000;
                }
            }
        }
        t.push(ts, &back.ack(scenario::psn_add(first, 199), 0x1f, 200));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gen.pcap");
    std::fs::write(&path, pcap_bytes(LINKTYPE_ETHERNET, SNAPLEN, &t.records())).expect("write");
    (dir, path, resent)
}

/// The `<text>` contents of an SVG.
fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("parses");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

#[test]
fn generated_trace_top_n_wrap_and_counts() {
    let (_d, path, resent) = generated(12);
    let f = path.display().to_string();
    let s = summary(&f);
    assert_eq!(
        sum(&s, |_| true, |f| u(&f["psn"]["retransmitted"])),
        u64::from(resent)
    );
    // All flows: every retransmission and the NAK drawn.
    let svg = plot(&f, &["--kind", "psn", "--top", "64"]);
    assert_eq!(count(&svg, "m-retx") as u32, resent);
    assert_eq!(count(&svg, "m-nak"), 1);
    // Top 3 by payload bytes: flows to QPs 0x10b, 0x10a, 0x109; nine more left out, and flow 0
    // (QP 0x100, with the go-back-N) not drawn.
    let svg = plot(&f, &["--kind", "psn", "--top", "3"]);
    let tx = texts(&svg);
    assert!(
        tx.iter().any(|t| t.contains("9 more flows not drawn")),
        "{tx:?}"
    );
    for qp in ["0x10b", "0x10a", "0x109"] {
        assert!(
            tx.iter().any(|t| t.contains(&format!("QP {qp}"))),
            "{qp} in {tx:?}"
        );
    }
    assert!(!tx.iter().any(|t| t.contains("QP 0x100 ")));
    assert_eq!(count(&svg, "m-retx"), 0);
    // Axes span the data: PSNs are unwrapped past 2^24, so the y axis reaches beyond it, and the
    // first transmissions spread across the plot's width.
    let svg = plot(&f, &["--kind", "psn", "--qp", "0x100"]);
    let ymax = texts(&svg)
        .iter()
        .filter_map(|t| t.parse::<f64>().ok())
        .fold(0.0f64, f64::max);
    assert!(ymax > f64::from(1u32 << 24), "y labels reach {ymax}");
    let doc = roxmltree::Document::parse(&svg).expect("parses");
    let xs: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("fill") == Some("#0072B3"))
        .filter_map(|n| n.attribute("cx")?.parse().ok())
        .collect();
    let width: f64 = doc
        .root_element()
        .attribute("width")
        .expect("width")
        .parse()
        .expect("n");
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    assert!(lo > 0.0 && hi < width, "inside the picture: {lo}..{hi}");
    assert!(
        hi - lo > 0.75 * width,
        "spread across the width: {lo}..{hi} of {width}"
    );
}

#[test]
fn png_and_errors() {
    let f = sample("write_bw.pcap");
    let dir = tempfile::tempdir().expect("tempdir");
    let png = dir.path().join("p.png");
    bin()
        .args(["plot", &f, "--kind", "rate", "-o"])
        .arg(&png)
        .assert()
        .success();
    let b = std::fs::read(&png).expect("png");
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
    // A window after the end: one line, exit 1.
    let out = bin()
        .args(["plot", &f, "--from", "100", "-o"])
        .arg(dir.path().join("x.svg"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--from"), "{err}");
    // --to not after --from (before it, or the same instant) contradicts itself: a usage
    // error, one line, exit 2.
    for (to, what) in [
        ("1", "--to (1) must be after --from (5)"),
        ("5", "--to (5)"),
    ] {
        let out = bin()
            .args(["plot", &f, "--from", "5", "--to", to, "-o"])
            .arg(dir.path().join("x.svg"))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "--to {to}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(what), "{err}");
    }
    // A bad kind is a usage error.
    bin()
        .args(["plot", &f, "--kind", "pie", "-o", "x.svg"])
        .assert()
        .code(2);
}

/// A UD sender's PSNs 0 1 2 5 6 6 7 (built by hand with the project's frame builder): one gap
/// of 2 PSNs this capture did not see and one duplicate. The PSN plot marks the gap, as
/// `--summary --json` counts it, and no retransmission (UD never retransmits).
#[test]
fn ud_gap_is_marked_and_a_duplicate_is_not_a_retransmission() {
    use common::frames::V2;
    use roce_inspect::decode::Deth;
    let recs: Vec<_> = [0u32, 1, 2, 5, 6, 6, 7]
        .iter()
        .enumerate()
        .map(|(k, &psn)| {
            let mut p = V2 {
                opcode: 0x64, // UD SEND ONLY
                dest_qp: 0x21,
                psn,
                payload: 32,
                ..V2::default()
            };
            p.ext.deth = Deth {
                qkey: 0x1111_1111,
                src_qp: 0x42,
            };
            let data = p.build();
            roce_inspect::synth::capfile::Record {
                ts_ns: 1_700_000_000_000_000_000 + k as u64 * 1_000,
                orig_len: data.len() as u32,
                data,
            }
        })
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("ud.pcap");
    std::fs::write(&f, pcap_bytes(LINKTYPE_ETHERNET, 65535, &recs)).unwrap();
    let f = f.display().to_string();
    let s = summary(&f);
    let psn = &s["flows"][0]["psn"];
    assert_eq!((u(&psn["gap_events"]), u(&psn["missing"])), (1, 2), "{psn}");
    assert_eq!(u(&psn["duplicates"]), 1, "{psn}");
    let svg = plot(&f, &["--kind", "psn"]);
    assert_eq!(count(&svg, "m-gap"), 1);
    assert_eq!(count(&svg, "m-retx"), 0);
}
