//! Mirror decapsulation (issue 13): RoCEv2 frames from the project's frame builder, wrapped in
//! hand-built ERSPAN II, ERSPAN III, GRE TEB and VXLAN tunnels (tests/common/mirror.rs) over
//! IPv4 and IPv6, with and without VLAN tags inside and outside.
//!
//! Oracles: tshark's GRE / ERSPAN / VXLAN / InfiniBand dissectors for every per-frame field;
//! the same frames captured directly (their `--summary --json` must be identical); the values
//! the tunnels were built with (sessions, timestamps).

mod common;

use std::path::Path;
use std::process::Command;

use common::frames::{Ext, V2};
use common::mirror::{Carrier, OUTER_V6, Rec, Tunnel, pcap, wrap};
use roce_inspect::decode::{Aeth, ImmDt, Reth};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");
const T0: u64 = 1_700_000_000_000_000_000;

/// An RC exchange A→B (WRITE of 2560 bytes, SEND with immediate, READ) with B's ACKs, READ
/// response and a CNP; `vlan` tags every inner frame.
fn inner_frames(vlan: Option<u16>) -> Vec<Vec<u8>> {
    let a = [10, 0, 0, 1];
    let b = [10, 0, 0, 2];
    let req = |opcode: u8, psn: u32, payload: usize| V2 {
        src: a,
        dst: b,
        sport: 0xc123,
        vlan,
        opcode,
        dest_qp: 0x22,
        psn,
        payload,
        ext: Ext {
            reth: Reth {
                va: 0x7f00_0000_1000,
                rkey: 0x1234,
                dma_len: 2560,
            },
            imm: ImmDt { data: 0xdead_beef },
            ..Ext::default()
        },
        ..V2::default()
    };
    let resp = |opcode: u8, psn: u32, msn: u32, payload: usize| V2 {
        src: b,
        dst: a,
        sport: 0xc123,
        vlan,
        opcode,
        dest_qp: 0x11,
        psn,
        payload,
        ext: Ext {
            aeth: Aeth {
                syndrome: 0x1f,
                msn,
            },
            ..Ext::default()
        },
        ..V2::default()
    };
    let mut read = req(0x0c, 104, 0);
    read.ext.reth.dma_len = 100;
    let mut last = req(0x08, 102, 512);
    last.ack_req = true;
    let cnp = V2 {
        src: b,
        dst: a,
        sport: 0,
        vlan,
        opcode: 0x81,
        becn: true,
        dest_qp: 0x11,
        tos: 0xc2,
        ..V2::default()
    };
    [
        req(0x06, 100, 1024),
        req(0x07, 101, 1024),
        last,
        resp(0x11, 102, 1, 0),
        req(0x05, 103, 60),
        resp(0x11, 103, 2, 0),
        read,
        resp(0x10, 104, 3, 100),
        cnp,
    ]
    .iter()
    .map(V2::build)
    .collect()
}

fn write(dir: &Path, name: &str, recs: &[Rec]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, pcap(recs)).unwrap();
    p.display().to_string()
}

fn plain(frames: &[Vec<u8>]) -> Vec<Rec> {
    frames
        .iter()
        .enumerate()
        .map(|(i, f)| (T0 + i as u64 * 1000, f.clone(), f.len() as u32))
        .collect()
}

fn wrapped(frames: &[Vec<u8>], t: &Tunnel, c: &Carrier) -> Vec<Rec> {
    frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let w = wrap(f, t, c, i as u32 + 1);
            let n = w.len() as u32;
            (T0 + i as u64 * 1000, w, n)
        })
        .collect()
}

fn ours(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json_lines(path: &str) -> Vec<Value> {
    ours(&["read", path, "--json", "--all"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// tshark fields compared, with every occurrence (`;`-separated).
const FIELDS: &[&str] = &[
    "erspan.version",
    "erspan.spanid",
    "erspan.vlan",
    "erspan.cos",
    "erspan.truncated",
    "erspan.index",
    "erspan.timestamp",
    "erspan.gra",
    "erspan.hw",
    "erspan.sgt",
    "erspan.platid",
    "erspan.pid5.timestamp",
    "gre.proto",
    "gre.key",
    "gre.sequence_number",
    "gre.checksum",
    "vxlan.vni",
    "ip.src",
    "ip.dst",
    "ipv6.src",
    "vlan.id",
    "infiniband.bth.opcode",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
    "infiniband.reth.dmalen",
    "infiniband.aeth.msn",
    "infiniband.invariant.crc",
];

/// Our values for the tshark fields of one frame, in the same form (`;`-joined decimal).
fn expected_from_ours(v: &Value) -> Vec<String> {
    let layer = &v["encap"][0];
    let t = layer["type"].as_str().unwrap();
    let u = |x: &Value| x.as_u64().map(|n| n.to_string()).unwrap_or_default();
    let is_erspan = t == "erspan2" || t == "erspan3";
    let e3 = t == "erspan3";
    let f = |k: &str| {
        if is_erspan {
            u(&layer[k])
        } else {
            String::new()
        }
    };
    let f3 = |k: &str| if e3 { u(&layer[k]) } else { String::new() };
    let outer_v4 = layer["src"].as_str().unwrap().contains('.');
    let mut ip_src = vec![];
    let mut ip_dst = vec![];
    if outer_v4 {
        ip_src.push(layer["src"].as_str().unwrap().to_string());
        ip_dst.push(layer["dst"].as_str().unwrap().to_string());
    }
    ip_src.push(v["src"].as_str().unwrap().to_string());
    ip_dst.push(v["dst"].as_str().unwrap().to_string());
    let mut vlans = vec![];
    if let Some(c) = layer["carrier_vlan"].as_u64() {
        vlans.push(c.to_string());
    }
    if let Some(c) = v["vlan"].as_u64() {
        vlans.push(c.to_string());
    }
    let bth = &v["bth"];
    let opt = |x: &Value| x.as_u64().map(|n| n.to_string()).unwrap_or_default();
    vec![
        if is_erspan {
            (if e3 { "2" } else { "1" }).to_string()
        } else {
            String::new()
        },
        f("session"),
        f("vlan"),
        f("cos"),
        if is_erspan {
            (layer["truncated"].as_bool().unwrap() as u8).to_string()
        } else {
            String::new()
        },
        if t == "erspan2" {
            u(&layer["index"])
        } else {
            String::new()
        },
        f3("timestamp"),
        f3("granularity"),
        f3("hw_id"),
        f3("sgt"),
        f3("platform_id"),
        f3("timestamp_upper"),
        u(&layer["gre_proto"]),
        u(&layer["gre_key"]),
        u(&layer["gre_seq"]),
        u(&layer["gre_checksum"]),
        u(&layer["vni"]),
        ip_src.join(";"),
        ip_dst.join(";"),
        if outer_v4 {
            String::new()
        } else {
            layer["src"].as_str().unwrap().to_string()
        },
        vlans.join(";"),
        u(&bth["opcode"]),
        u(&bth["dest_qp"]),
        u(&bth["psn"]),
        opt(&v["reth"]["dma_len"]),
        opt(&v["aeth"]["msn"]),
        // tshark 4.0 does not know the RoCEv2 CNP layout and shows no ICRC for it
        // (tests/tshark_diff.rs); its wire bytes are read big-endian, ours as the CRC value.
        if bth["opcode"] == 0x81 {
            String::new()
        } else {
            v["icrc"]["value"]
                .as_u64()
                .map(|c| (c as u32).swap_bytes().to_string())
                .unwrap_or_default()
        },
    ]
}

/// tshark's row, normalised: numbers to decimal, booleans and empty fields as they are.
fn normalise(row: &[String]) -> Vec<String> {
    row.iter()
        .enumerate()
        .map(|(i, c)| {
            let name = FIELDS[i];
            if c.is_empty() || name.starts_with("ip") || name == "ipv6.src" {
                return c.clone();
            }
            c.split(';')
                .map(|x| common::tshark_num(x).to_string())
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect()
}

fn cases() -> Vec<(&'static str, Tunnel, Carrier, Option<u16>)> {
    let v4 = Carrier {
        v6: false,
        vlan: None,
    };
    let v6 = Carrier {
        v6: true,
        vlan: None,
    };
    let v4t = Carrier {
        v6: false,
        vlan: Some(300),
    };
    let v6t = Carrier {
        v6: true,
        vlan: Some(301),
    };
    let e2 = |session, truncated| Tunnel::Erspan2 {
        session,
        vlan: 5,
        cos: 3,
        truncated,
        index: 0x12345,
    };
    let e3 = |platform| Tunnel::Erspan3 {
        session: 77,
        vlan: 0,
        cos: 3,
        truncated: false,
        timestamp: 123_456_789,
        gra: 2,
        hw: 9,
        platform,
    };
    vec![
        ("erspan2_v4", e2(5, false), v4, None),
        ("erspan2_v6_tagged", e2(1023, false), v6t, Some(5)),
        (
            "erspan3_v4_platform5",
            e3(Some((5, 1_700_000_123))),
            v4t,
            None,
        ),
        ("erspan3_v6_inner_tag", e3(None), v6, Some(7)),
        (
            "teb_v4_all_options",
            Tunnel::Teb {
                checksum: true,
                key: Some(0xabcdef),
                seq: true,
            },
            v4,
            Some(9),
        ),
        (
            "teb_v6_plain",
            Tunnel::Teb {
                checksum: false,
                key: None,
                seq: false,
            },
            v6t,
            None,
        ),
        (
            "vxlan_v4",
            Tunnel::Vxlan {
                vni: 4242,
                port: 4789,
            },
            v4t,
            Some(3),
        ),
        (
            "vxlan_v6",
            Tunnel::Vxlan {
                vni: 0xabcdef,
                port: 4789,
            },
            v6,
            None,
        ),
        ("erspan1_v4_tagged", Tunnel::Erspan1, v4t, Some(11)),
        ("gre_ip_v6_key", Tunnel::GreIp { key: Some(77) }, v6, None),
    ]
}

/// Every field tshark and we both decode is equal, frame by frame, for every tunnel.
#[test]
fn fields_equal_tshark() {
    let d = tempfile::tempdir().unwrap();
    for (name, t, c, inner_vlan) in cases() {
        let frames = inner_frames(inner_vlan);
        let path = write(d.path(), &format!("{name}.pcap"), &wrapped(&frames, &t, &c));
        let ours = json_lines(&path);
        let theirs = common::tshark_all(Path::new(&path), FIELDS);
        assert_eq!(ours.len(), frames.len(), "{name}");
        assert_eq!(theirs.len(), frames.len(), "{name}");
        for (o, t) in ours.iter().zip(&theirs) {
            assert!(o["roce"] == "v2", "{name}: {o}");
            assert_eq!(
                expected_from_ours(o),
                normalise(t),
                "{name} frame {}",
                o["frame"]
            );
        }
    }
}

/// The wrapped capture analyses exactly like the same frames captured directly.
#[test]
fn summary_equals_the_unwrapped_capture() {
    let d = tempfile::tempdir().unwrap();
    for (name, t, c, inner_vlan) in cases() {
        let frames = inner_frames(inner_vlan);
        let direct = write(d.path(), &format!("{name}_direct.pcap"), &plain(&frames));
        let mirrored = write(d.path(), &format!("{name}.pcap"), &wrapped(&frames, &t, &c));
        let a: Value =
            serde_json::from_str(&ours(&["read", &direct, "--summary", "--json"])).unwrap();
        let b: Value =
            serde_json::from_str(&ours(&["read", &mirrored, "--summary", "--json"])).unwrap();
        assert_eq!(a["frames"]["roce"], 9, "{name}");
        assert_eq!(a["icrc"]["good"], 9, "{name}");
        assert_eq!(a["connections"].as_array().unwrap().len(), 1, "{name}");
        assert_eq!(a, b, "{name}");
    }
}

/// Header-only mirror copies (ERSPAN T bit, each copy cut to 66 bytes of the original frame)
/// analyse as the same frames cut by a 66-byte snap length: truncated, ICRC unchecked, lengths
/// from the headers.
#[test]
fn truncated_copies_analyse_like_a_snap_length_cut() {
    const CUT: usize = 66;
    let d = tempfile::tempdir().unwrap();
    let frames = inner_frames(None);
    let snapped: Vec<Rec> = plain(&frames)
        .into_iter()
        .map(|(ts, f, len)| (ts, f[..CUT.min(f.len())].to_vec(), len))
        .collect();
    let t = Tunnel::Erspan2 {
        session: 2,
        vlan: 0,
        cos: 0,
        truncated: true,
        index: 1,
    };
    let c = Carrier {
        v6: false,
        vlan: None,
    };
    let cut: Vec<Vec<u8>> = frames
        .iter()
        .map(|f| f[..CUT.min(f.len())].to_vec())
        .collect();
    let direct = write(d.path(), "snap.pcap", &snapped);
    let mirrored = write(d.path(), "trunc.pcap", &wrapped(&cut, &t, &c));
    let a: Value = serde_json::from_str(&ours(&["read", &direct, "--summary", "--json"])).unwrap();
    let b: Value =
        serde_json::from_str(&ours(&["read", &mirrored, "--summary", "--json"])).unwrap();
    // Frames longer than the cut: all but the two ACKs (14 + 20 + 8 + 12 + 4 + 4 = 62 bytes).
    let long = frames.iter().filter(|f| f.len() > CUT).count() as u64;
    assert_eq!(a["frames"]["truncated"], long);
    assert_eq!(a["frames"]["malformed"], 0);
    assert_eq!(a, b);
    let text = ours(&["read", &mirrored]);
    let first = text.lines().next().unwrap();
    assert!(first.contains("[TRUNCATED]"), "{first}");
    assert!(first.contains("[mirrored erspan2 session 2 T]"), "{first}");
    // The same cut copies with the T bit clear: the switch says they are whole, so length
    // fields claiming more are malformed, not truncated.
    let whole = Tunnel::Erspan2 {
        session: 2,
        vlan: 0,
        cos: 0,
        truncated: false,
        index: 1,
    };
    let lying = write(d.path(), "lying.pcap", &wrapped(&cut, &whole, &c));
    let s: Value = serde_json::from_str(&ours(&["read", &lying, "--summary", "--json"])).unwrap();
    assert_eq!(s["frames"]["malformed"], long);
    assert_eq!(s["frames"]["truncated"], 0);
}

/// One job mirrored from two ports (sessions 1 and 2, every packet seen twice): by default the
/// second copies look like retransmissions of one flow per direction; `--encap-session` gives
/// each session its own clean flows.
#[test]
fn encap_session_splits_flows() {
    let d = tempfile::tempdir().unwrap();
    let frames = inner_frames(None);
    let c = Carrier {
        v6: false,
        vlan: None,
    };
    let mut recs = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        for s in [1u16, 2] {
            let t = Tunnel::Erspan2 {
                session: s,
                vlan: 0,
                cos: 0,
                truncated: false,
                index: 0,
            };
            let w = wrap(f, &t, &c, 2 * i as u32 + u32::from(s));
            let n = w.len() as u32;
            recs.push((T0 + (2 * i as u64 + u64::from(s)) * 100, w, n));
        }
    }
    let p = write(d.path(), "two_sessions.pcap", &recs);
    let merged: Value = serde_json::from_str(&ours(&["read", &p, "--summary", "--json"])).unwrap();
    let flows = merged["flows"].as_array().unwrap();
    // A→B requests (QP 0x22), B→A responses (QP 0x11; the CNP to QP 0x11 joins them).
    assert_eq!(flows.len(), 2);
    assert!(flows.iter().all(|f| f.get("session").is_none()));
    let retx: u64 = flows
        .iter()
        .map(|f| f["psn"]["retransmitted"].as_u64().unwrap())
        .sum();
    assert!(
        retx > 0,
        "duplicate copies count as retransmissions: {merged}"
    );
    // … which the report warns about, naming the sessions and --encap-session.
    let warned = |v: &Value| {
        v["warnings"].as_array().unwrap().iter().any(|w| {
            let w = w.as_str().unwrap();
            w.contains("two or more mirror sessions") && w.contains("e.g. 1 and 2")
        })
    };
    assert!(warned(&merged), "{}", merged["warnings"]);

    let split: Value = serde_json::from_str(&ours(&[
        "read",
        &p,
        "--summary",
        "--json",
        "--encap-session",
    ]))
    .unwrap();
    assert!(!warned(&split), "{}", split["warnings"]);
    let flows = split["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 4);
    for s in [1, 2] {
        let mine: Vec<&Value> = flows.iter().filter(|f| f["session"] == s).collect();
        assert_eq!(mine.len(), 2, "session {s}");
        for f in mine {
            assert_eq!(f["psn"]["retransmitted"], 0, "{f}");
            assert_eq!(f["psn"]["gap_events"], 0, "{f}");
        }
    }
    assert_eq!(split["connections"].as_array().unwrap().len(), 2);
    let text = ours(&[
        "read",
        &p,
        "--summary",
        "-q",
        "--encap-session",
        "--color",
        "never",
    ]);
    assert!(text.contains("(session 2)"), "{text}");
}

/// `--mirror-time`: the ERSPAN III timestamp (IEEE 1588 ns, seconds in platform subheader 5)
/// replaces the collector's capture time.
#[test]
fn mirror_time_uses_erspan3_hardware_timestamps() {
    let d = tempfile::tempdir().unwrap();
    let frames = inner_frames(None);
    let c = Carrier {
        v6: false,
        vlan: None,
    };
    let hw = |i: usize| (1_690_000_000u64, 500_000_000 + 1000 * i as u64 + 7);
    let recs: Vec<Rec> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (s, ns) = hw(i);
            let t = Tunnel::Erspan3 {
                session: 3,
                vlan: 0,
                cos: 0,
                truncated: false,
                timestamp: ns as u32,
                gra: 2,
                hw: 1,
                platform: Some((5, s as u32)),
            };
            let w = wrap(f, &t, &c, i as u32);
            let n = w.len() as u32;
            // The collector stamps them 3 ms later, with jitter.
            (
                s * 1_000_000_000 + ns + 3_000_000 + (i as u64 % 3) * 777,
                w,
                n,
            )
        })
        .collect();
    let p = write(d.path(), "e3.pcap", &recs);
    let collector = json_lines(&p);
    let hwtime: Vec<Value> = ours(&["read", &p, "--json", "--mirror-time"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (i, (a, b)) in collector.iter().zip(&hwtime).enumerate() {
        let (s, ns) = hw(i);
        assert_eq!(b["ts_ns"], s * 1_000_000_000 + ns);
        assert_ne!(a["ts_ns"], b["ts_ns"]);
    }
    let text = ours(&["read", &p, "--mirror-time", "--color", "never"]);
    let second = text.lines().nth(1).unwrap();
    assert!(
        second.contains(" 0.000001000 "),
        "relative time from the hardware: {second}"
    );
}

/// VXLAN on a non-standard port is decapsulated only with `--vxlan-port`.
#[test]
fn vxlan_port_option() {
    let d = tempfile::tempdir().unwrap();
    let frames = inner_frames(None);
    let t = Tunnel::Vxlan { vni: 9, port: 8472 };
    let c = Carrier {
        v6: false,
        vlan: None,
    };
    let p = write(d.path(), "vx8472.pcap", &wrapped(&frames, &t, &c));
    let default: Vec<Value> = json_lines(&p);
    assert!(
        default
            .iter()
            .all(|v| v["roce"].is_null() && v["dst_port"] == 8472)
    );
    let opt: Vec<Value> = ours(&["read", &p, "--json", "--vxlan-port", "8472"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(opt.len(), frames.len());
    assert!(
        opt.iter()
            .all(|v| v["roce"] == "v2" && v["encap"][0]["vni"] == 9)
    );
}

/// `-V` shows the carrier, the outer IP, GRE and ERSPAN fields before the inner frame.
#[test]
fn verbose_shows_the_tunnel() {
    let d = tempfile::tempdir().unwrap();
    let frames = inner_frames(Some(5));
    let t = Tunnel::Erspan3 {
        session: 77,
        vlan: 0,
        cos: 3,
        truncated: false,
        timestamp: 42,
        gra: 1,
        hw: 9,
        platform: None,
    };
    let c = Carrier {
        v6: true,
        vlan: Some(300),
    };
    let p = write(d.path(), "v.pcap", &wrapped(&frames[..1], &t, &c));
    let text = ours(&["read", &p, "-V", "--color", "never"]);
    let outer = format!(
        "Outer IP: {} → {}",
        std::net::Ipv6Addr::from(OUTER_V6.0),
        std::net::Ipv6Addr::from(OUTER_V6.1)
    );
    for want in [
        "Carrier 802.1Q Virtual LAN: ID 300, PCP 1, DEI 0 (TPID 0x8100)",
        outer.as_str(),
        "GRE: protocol 0x22eb, sequence 1",
        "ERSPAN Type III: session 77 VLAN 0 COS 3 BSO 0 T 0 SGT 3000 HW 9 ingress",
        "timestamp 42 granularity 1 (100 ns) frame type 0",
        "    802.1Q Virtual LAN: ID 5, PCP",
        "[mirrored erspan3 session 77]",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

mod properties {
    use super::common::frames::{Ext, V2};
    use super::common::mirror::{Carrier, Tunnel, wrap};
    use proptest::prelude::*;
    use roce_inspect::decode::{DecodeConfig, Deth, LinkType, decode_frame};

    fn tunnel(kind: u8, session: u16, t: bool) -> Tunnel {
        match kind % 5 {
            0 => Tunnel::Erspan2 {
                session,
                vlan: session & 0xfff,
                cos: 5,
                truncated: t,
                index: 9,
            },
            1 => Tunnel::Erspan3 {
                session,
                vlan: 0,
                cos: 1,
                truncated: t,
                timestamp: u32::from(session) << 8,
                gra: (session % 4) as u8,
                hw: 3,
                platform: (session % 2 == 0).then_some((7, 99)),
            },
            2 => Tunnel::Teb {
                checksum: t,
                key: (session % 3 == 0).then_some(u32::from(session)),
                seq: !t,
            },
            3 => Tunnel::Erspan1,
            _ => Tunnel::Vxlan {
                vni: u32::from(session) << 4,
                port: 4789,
            },
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Any RoCEv2 frame of the project's builder, in any tunnel over IPv4 or IPv6, tagged or
        /// not, cut anywhere or whole: the decoder sees the same inner frame (link summary,
        /// RoCE packet or other kind, with its ICRC verdict) as when the frame is read directly
        /// with the same cut, and records exactly one tunnel layer.
        #[test]
        fn wrapped_decodes_like_direct(
            opcode in prop::sample::select(vec![0x00u8, 0x04, 0x06, 0x0a, 0x0c, 0x10, 0x11, 0x13, 0x64, 0x81]),
            payload in 0usize..300,
            inner_vlan in prop::option::of(0u16..4096),
            kind in any::<u8>(),
            session in 0u16..1024,
            v6 in any::<bool>(),
            outer_vlan in prop::option::of(1u16..4096),
            cut in prop::option::of(14usize..400),
        ) {
            let f = V2 {
                opcode,
                payload,
                vlan: inner_vlan,
                psn: u32::from(session) * 7,
                ext: Ext { deth: Deth { qkey: 0x8001_0000, src_qp: 5 }, ..Ext::default() },
                ..V2::default()
            }
            .build();
            let cut_at = cut.map_or(f.len(), |c| c.min(f.len()));
            let inner = &f[..cut_at];
            // A cut copy is flagged by ERSPAN's T bit; GRE and VXLAN cannot say.
            let t = tunnel(kind, session, cut_at < f.len());
            let w = wrap(inner, &t, &Carrier { v6, vlan: outer_vlan }, u32::from(session));
            let cfg = DecodeConfig::default();
            let direct = decode_frame(LinkType::ETHERNET, inner, f.len() as u32, &cfg);
            let mirrored = decode_frame(LinkType::ETHERNET, &w, w.len() as u32, &cfg);
            prop_assert_eq!(mirrored.encap.layers().count(), 1);
            prop_assert!(direct.encap.is_empty());
            prop_assert_eq!(direct.link, mirrored.link);
            prop_assert_eq!(format!("{:?}", direct.kind), format!("{:?}", mirrored.kind));
        }
    }
}

/// Every key of a mirrored frame's JSON (top level and `encap` elements, every tunnel type) is
/// documented in README's JSON section.
#[test]
fn encap_json_keys_are_documented() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("## JSON output (per packet)").unwrap();
    let doc = &readme[start..];
    let d = tempfile::tempdir().unwrap();
    let mut keys = std::collections::BTreeSet::new();
    for (name, t, c, inner_vlan) in cases() {
        let frames = inner_frames(inner_vlan);
        let path = write(d.path(), &format!("{name}.pcap"), &wrapped(&frames, &t, &c));
        for v in json_lines(&path) {
            keys.extend(v.as_object().unwrap().keys().cloned());
            for layer in v["encap"].as_array().unwrap() {
                keys.extend(layer.as_object().unwrap().keys().cloned());
            }
        }
    }
    assert!(keys.contains("encap") && keys.contains("timestamp_upper"));
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| !doc.contains(&format!("`{k}`")))
        .collect();
    assert!(missing.is_empty(), "undocumented JSON keys: {missing:?}");
}
