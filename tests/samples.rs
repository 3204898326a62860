//! The bundled samples and the hostile-input captures are made by the project's own code:
//! rerunning the writers gives the committed bytes, and roce-inspect's analysis of each sample
//! agrees with the ground truth its scenario recorded (the model's own account of what it
//! sent, lost and marked — not roce-inspect's output).

use std::path::{Path, PathBuf};
use std::process::Command;

use roce_inspect::synth::scenario::{self, congestion, read_timeout, write_bw};
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn summary(file: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["read", "--summary", "--json", "-q", "--messages"])
        .arg(root().join("samples").join(file))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn flow<'a>(r: &'a Value, src: &str, dst: &str) -> &'a Value {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["src"] == src && f["dst"] == dst)
        .unwrap_or_else(|| panic!("no flow {src} → {dst}"))
}

#[test]
fn samples_are_rewritten_identically() {
    let made = scenario::samples();
    for s in &made {
        let committed = std::fs::read(root().join("samples").join(s.file))
            .unwrap_or_else(|e| panic!("samples/{}: {e}", s.file));
        assert!(
            committed == s.bytes(),
            "samples/{} differs from what make_samples writes",
            s.file
        );
        assert!(
            committed.len() <= 200_000,
            "samples/{} is over 200 kB",
            s.file
        );
    }
    // Every capture in samples/ comes from a scenario (allreduce_* from the correlation one).
    for e in std::fs::read_dir(root().join("samples")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".pcap") || name.ends_with(".pcapng") {
            assert!(
                made.iter().any(|s| s.file == name),
                "samples/{name} is not made by make_samples"
            );
        }
    }
}

/// `examples/make_hostile` rewrites `tests/hostile/` identically (cargo builds the examples
/// before the integration tests run).
#[test]
fn hostile_files_are_rewritten_identically() {
    let exe = std::env::current_exe().unwrap();
    let examples: PathBuf = exe.parent().unwrap().parent().unwrap().join("examples");
    let tmp = tempfile::tempdir().unwrap();
    let st = Command::new(examples.join("make_hostile"))
        .arg(tmp.path())
        .status()
        .unwrap();
    assert!(st.success());
    let mut n = 0;
    for e in std::fs::read_dir(root().join("tests/hostile")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_owned();
        if p.extension().is_some_and(|x| x == "pcap" || x == "pcapng") {
            let again = std::fs::read(tmp.path().join(&name)).unwrap();
            assert!(
                std::fs::read(&p).unwrap() == again,
                "{} differs",
                p.display()
            );
            n += 1;
        }
    }
    assert!(n >= 9, "only {n} hostile captures");
}

#[test]
fn write_bw_gap_nak_and_go_back_n() {
    let t = write_bw::scenario().truth;
    let r = summary("write_bw.pcap");
    let req = flow(&r, "10.0.0.1", "10.0.0.2");
    assert_eq!(req["packets"], t.write_packets);
    assert_eq!(req["psn"]["gap_events"], 1);
    assert_eq!(req["psn"]["missing"], 1);
    assert_eq!(req["messages"]["write"]["count"], write_bw::MESSAGES);
    assert_eq!(
        req["messages"]["write"]["bytes"],
        write_bw::MESSAGES as u64 * u64::from(write_bw::MESSAGE_BYTES)
    );
    assert_eq!(req["pmtu"], write_bw::PMTU);
    let gaps = r["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0]["expected_psn"], t.lost_psn);
    assert_eq!(gaps[0]["received_psn"], t.lost_psn + 1);
    assert_eq!(gaps[0]["retransmission"]["trigger"], "nak");
    let resp = flow(&r, "10.0.0.2", "10.0.0.1");
    assert_eq!(resp["packets"], t.acks + t.naks);
    assert_eq!(resp["opcodes"]["RC_ACKNOWLEDGE"], t.acks + t.naks);
    assert_eq!(t.naks, 1);
    // Retransmitted packets: the 13 PSNs seen twice, plus the lost PSN filling the gap late.
    assert_eq!(req["psn"]["retransmitted"], t.resent_psns + 1);
}

#[test]
fn read_timeout_requests_and_responses() {
    let t = read_timeout::scenario().truth;
    let r = summary("read_timeout.pcap");
    let req = flow(&r, "10.0.0.1", "10.0.0.2");
    assert_eq!(req["packets"], t.requests);
    assert_eq!(req["opcodes"]["RC_RDMA_READ_REQUEST"], t.requests);
    // Both re-issues (from the missing PSN, and whole) are one READ each, re-issued once.
    assert_eq!(req["loss"]["read_reissues"], t.reissued.len());
    // No response revealed either loss: both re-issues are the local ACK timeout, each sent
    // exactly the timeout after the flow's previous request.
    assert_eq!(req["loss"]["timeouts"], t.reissued.len());
    assert_eq!(
        req["loss"]["timeout_delay_ns"]["min"],
        read_timeout::TIMEOUT_NS
    );
    assert_eq!(
        req["loss"]["timeout_delay_ns"]["max"],
        read_timeout::TIMEOUT_NS
    );
    let resp = flow(&r, "10.0.0.2", "10.0.0.1");
    assert_eq!(resp["packets"], t.responses);
    assert_eq!(t.reissued.len(), 2);
    assert_eq!(t.requests, read_timeout::READS + 2);
    // Every READ delivered all its bytes: the responses carry 12 × 3000 bytes in all, and
    // each READ is one message of 3000 bytes, complete.
    assert_eq!(resp["payload_bytes"], t.bytes);
    assert_eq!(resp["messages"]["read"]["count"], read_timeout::READS);
    assert_eq!(resp["messages"]["read"]["bytes"], t.bytes);
    assert_eq!(resp["messages"]["read"]["failed"], 0);
    let msgs = r["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), read_timeout::READS);
    assert!(msgs.iter().all(|m| m["status"] == "ok"), "{msgs:?}");
}

#[test]
fn congestion_ce_marks_and_cnps_per_sender() {
    let t = congestion::scenario().truth;
    let r = summary("congestion.pcap");
    for s in 0..2 {
        let ip = format!("10.0.0.{}", s + 1);
        let data = flow(&r, &ip, "10.0.0.3");
        assert_eq!(data["packets"], t.packets[s]);
        assert_eq!(data["ecn"]["ce"], t.ce[s], "{ip}");
        assert_eq!(data["ecn"]["ect0"], t.packets[s] - t.ce[s], "{ip}");
        let back = flow(&r, "10.0.0.3", &ip);
        assert_eq!(back["cnps"], t.cnps[s], "{ip}");
        assert_eq!(back["becn"], t.cnps[s], "{ip}");
        assert_eq!(back["opcodes"]["RC_ACKNOWLEDGE"], t.acks[s], "{ip}");
        assert!(
            t.cnps[s] >= 3,
            "the sample should show several CNPs per sender"
        );
        assert!(
            t.min_rate_gbps[s] < congestion::LINE_GBPS / 2.0,
            "rate cut {s}"
        );
    }
}

/// The mixed-framing sample: every frame is RoCE with a good ICRC, and tshark (an independent
/// dissector) finds the same BTH opcodes and PSNs on IPv6, RoCEv1 (`eth.type 0x8915`) and the
/// tagged frames.
#[test]
fn framings_sample_decodes_everywhere() {
    let r = summary("rocev1_ipv6_vlan.pcapng");
    assert_eq!(r["frames"]["total"], 14);
    assert_eq!(r["frames"]["roce"], 14);
    assert_eq!(r["icrc"]["good"], 14);
    let path = root().join("samples/rocev1_ipv6_vlan.pcapng");
    let out = Command::new("tshark")
        .args(["-r"])
        .arg(&path)
        .args([
            "-Y",
            "infiniband",
            "-T",
            "fields",
            "-e",
            "infiniband.bth.opcode",
            "-e",
            "infiniband.bth.psn",
            "-e",
            "vlan.id",
        ])
        .output()
        .expect("tshark (make deps)");
    let text = String::from_utf8(out.stdout).unwrap();
    // opcode, PSN, C-tag VLAN ID (tshark files the 802.1ad S-tag under another protocol).
    let expected = [
        "4\t655360\t",
        "17\t655360\t",
        "4\t655361\t",
        "17\t655361\t",
        "6\t720896\t",
        "8\t720897\t",
        "17\t720897\t",
        "12\t786432\t100",
        "13\t786432\t100",
        "15\t786433\t100",
        "100\t851968\t100",
        "100\t851968\t100",
        "10\t917504\t0",
        "17\t917504\t0",
    ];
    assert_eq!(text.lines().collect::<Vec<_>>(), expected, "{text}");
}
