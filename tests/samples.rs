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

/// The frames of the mirrored samples' exchange as the scenario's module doc describes it
/// (4 WRITEs of FIRST + LAST, a SEND ONLY, each message ACKed with the last PSN of the
/// message): (BTH opcode, PSN) in the order sent.
fn mirrored_exchange() -> Vec<(u64, u64)> {
    use scenario::mirrored::{FIRST_PSN, WRITES};
    let p = u64::from(FIRST_PSN);
    let mut v = Vec::new();
    for m in 0..WRITES as u64 {
        v.extend([(6, p + 2 * m), (8, p + 2 * m + 1), (17, p + 2 * m + 1)]);
    }
    let send = p + 2 * WRITES as u64;
    v.extend([(4, send), (17, send)]);
    v
}

/// tshark's fields of every frame of a sample (tab-separated), with `decode_as` if given.
fn tshark_sample(file: &str, decode_as: Option<&str>, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(root().join("samples").join(file));
    if let Some(d) = decode_as {
        cmd.args(["-d", d]);
    }
    cmd.args(["-T", "fields"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark (make deps)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// The mirrored samples as tshark dissects them: ERSPAN II sessions 5 and 6, ERSPAN III
/// session 7 with the switch's ns, VXLAN VNI 4242 on UDP 8472 (decoded as VXLAN when told),
/// each around InfiniBand (RRoCE) packets with the scenario's opcodes and PSNs.
#[test]
fn mirrored_samples_as_tshark_dissects_them() {
    use scenario::mirrored::{ERSPAN2_SESSIONS, ERSPAN3_SESSION, VNI, erspan3_switch_times};
    let sent = mirrored_exchange();
    let bth = |rows: &[Vec<String>], from: usize| -> Vec<(u64, u64)> {
        rows.iter()
            .map(|r| (r[from].parse().unwrap(), r[from + 1].parse().unwrap()))
            .collect()
    };
    let f = [
        "erspan.version",
        "erspan.spanid",
        "infiniband.bth.opcode",
        "infiniband.bth.psn",
    ];
    let rows = tshark_sample("erspan.pcap", None, &f);
    for &s in &ERSPAN2_SESSIONS {
        let of: Vec<_> = rows
            .iter()
            .filter(|r| r[1] == s.to_string())
            .cloned()
            .collect();
        assert!(of.iter().all(|r| r[0] == "1"), "{of:?}");
        assert_eq!(bth(&of, 2), sent, "session {s}");
    }
    assert_eq!(rows.len(), 2 * sent.len());

    let f = [
        "erspan.version",
        "erspan.spanid",
        "erspan.timestamp",
        "infiniband.bth.opcode",
        "infiniband.bth.psn",
    ];
    let rows = tshark_sample("erspan3.pcap", None, &f);
    assert_eq!(bth(&rows, 3), sent);
    let ns: Vec<String> = erspan3_switch_times()
        .iter()
        .map(|t| (t % 1_000_000_000).to_string())
        .collect();
    for (r, want) in rows.iter().zip(&ns) {
        assert_eq!(
            (&r[0][..], &r[1], &r[2]),
            ("2", &ERSPAN3_SESSION.to_string(), want)
        );
    }

    let f = ["vxlan.vni", "infiniband.bth.opcode", "infiniband.bth.psn"];
    let rows = tshark_sample("vxlan.pcap", Some("udp.port==8472,vxlan"), &f);
    assert!(rows.iter().all(|r| r[0] == VNI.to_string()), "{rows:?}");
    assert_eq!(bth(&rows, 1), sent);
    // Not told, tshark leaves UDP 8472 undecoded: no InfiniBand.
    let rows = tshark_sample("vxlan.pcap", None, &["infiniband.bth.opcode"]);
    assert!(rows.iter().all(|r| r[0].is_empty()), "{rows:?}");
}

/// roce-inspect's analysis of the mirrored samples is the exchange's: 9 request packets
/// (4 WRITEs of 2048 bytes, a SEND of 256) and 5 ACKs per capture point, every ICRC good;
/// with --encap-session one set of flows per ERSPAN session; --mirror-time gives the switch's
/// times.
#[test]
fn mirrored_samples_analyse_like_the_exchange() {
    use scenario::mirrored::{SEND_BYTES, WRITE_BYTES, WRITES, erspan3_switch_times};
    let run = |args: &[&str]| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .arg("read")
            .args(args)
            .current_dir(root())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let n = mirrored_exchange().len();
    let check = |r: &Value, copies: usize, session: Option<u64>| {
        assert_eq!(r["frames"]["roce"], n * copies);
        assert_eq!(r["icrc"]["good"], n * copies);
        let flows: Vec<&Value> = r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| session.is_none_or(|s| f["session"] == s))
            .collect();
        let req = flows.iter().find(|f| f["src"] == "10.0.0.1").unwrap();
        let ack = flows.iter().find(|f| f["src"] == "10.0.0.2").unwrap();
        assert_eq!(req["packets"], 2 * WRITES + 1);
        assert_eq!(ack["packets"], WRITES + 1);
        let m = &req["messages"];
        assert_eq!(m["write"]["count"], WRITES);
        assert_eq!(m["write"]["bytes"], WRITES as u64 * u64::from(WRITE_BYTES));
        assert_eq!(
            (&m["send"]["count"], &m["send"]["bytes"]),
            (&1.into(), &SEND_BYTES.into())
        );
    };
    let s = ["--summary", "--json", "-q"];
    let r = run(&[&["samples/erspan.pcap", "--encap-session"], &s[..]].concat());
    assert_eq!(r["flows"].as_array().unwrap().len(), 4);
    check(&r, 2, Some(5));
    check(&r, 2, Some(6));
    check(&run(&[&["samples/erspan3.pcap"], &s[..]].concat()), 1, None);
    check(
        &run(&[&["samples/vxlan.pcap", "--vxlan-port", "8472"], &s[..]].concat()),
        1,
        None,
    );

    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["read", "samples/erspan3.pcap", "--mirror-time", "--json"])
        .current_dir(root())
        .output()
        .unwrap();
    let times: Vec<u64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["ts_ns"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(times, erspan3_switch_times());
}

/// `rxe_write.pcap`, the README walk-through's capture: the server's QP gets every WRITE of the
/// scenario (12 × 8192 bytes, 8 packets each, consecutive PSNs from the client's first PSN),
/// one ACK per message, no gap; `--qp 0x000012` keeps exactly the WRITE packets.
#[test]
fn rxe_write_is_the_walk_through_run() {
    use scenario::rxe_write::{FIRST_PSN, PMTU, SERVER_QPN, WRITE_BYTES, WRITES};
    let per_msg = (WRITE_BYTES / PMTU) as usize;
    let r = summary("rxe_write.pcap");
    let req = flow(&r, "192.168.1.3", "192.168.1.2");
    assert_eq!(req["packets"], WRITES * per_msg);
    assert_eq!(req["messages"]["write"]["count"], WRITES);
    assert_eq!(
        req["messages"]["write"]["bytes"],
        WRITES as u64 * u64::from(WRITE_BYTES)
    );
    assert_eq!(flow(&r, "192.168.1.2", "192.168.1.3")["packets"], WRITES);
    assert_eq!(r["gaps"].as_array().map_or(0, Vec::len), 0);
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["read", "samples/rxe_write.pcap", "--json", "--qp"])
        .arg(format!("{SERVER_QPN:#08x}"))
        .current_dir(root())
        .output()
        .unwrap();
    let psns: Vec<u64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["bth"]["psn"]
                .as_u64()
                .unwrap()
        })
        .collect();
    let want: Vec<u64> = (0..(WRITES * per_msg) as u64)
        .map(|i| (u64::from(FIRST_PSN) + i) & 0xff_ffff)
        .collect();
    assert_eq!(psns, want);
}

/// The incast sample's DCQCN cut, as the receiver's capture shows it. The model cut each
/// sender to under half its rate (α starts at 1, so the first CNP halves it); behind the
/// bottleneck's queue the capture sees the cut late and softened (queued packets drain at line
/// rate, and the sender recovers every 20 µs without a CNP), so the test asks for its direction
/// and size: the median rate after the CNP train under half the rate before it. (The windows of
/// a fixed 50 µs around each CNP gave 4.96 → 3.83 and 2.87 → 2.87 Gb/s here.)
#[test]
fn congestion_rate_falls_by_half_across_the_cnp_train() {
    let t = congestion::scenario().truth;
    let r = summary("congestion.pcap");
    for s in 0..2 {
        let ip = format!("10.0.0.{}", s + 1);
        assert!(
            t.rate_after_last_cnp_gbps[s] < t.rate_at_first_cnp_gbps[s] / 2.0,
            "the model's cut {s}: {t:?}"
        );
        let data = flow(&r, &ip, "10.0.0.3");
        let conn = &r["connections"][data["connection"].as_u64().unwrap() as usize];
        let d = conn["congestion"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["data_flow"] == data["id"])
            .expect("congestion of the data direction");
        let before = d["rate_before_gbps_median"].as_f64().unwrap();
        let after = d["rate_after_gbps_median"].as_f64().unwrap();
        assert!(after < before / 2.0, "{ip}: {before} -> {after} Gb/s");
        // One train: the CNPs to each sender come less than 1 ms apart.
        assert_eq!(d["rate_samples"].as_array().unwrap().len(), 1, "{ip}");
        assert_eq!(d["rate_samples"][0]["cnps"], t.cnps[s], "{ip}");
    }
}
