//! Display filters (`-Y`) and the field registry (issue 35).
//!
//! * The registry is the `--json` schema. `--json` writes its lines by walking the registry, so
//!   this checks the walk (nesting, key paths, what is `null`), not the values: those are
//!   checked against tshark (tests/tshark_diff.rs) and hand-computed bytes (tests/vectors.rs).
//!   On every frame of the samples, the hostile inputs, hand-built frames of every opcode and
//!   mirror tunnel, and the shared captures when present, each registry field's values equal
//!   the values at its key path in the frame's JSON line (absent = missing or `null`), every
//!   key path printed has a registry entry, and every registry entry (but `analysis.*`, which
//!   `--json` prints only with marks) is present on some frame; on the same frames, each field
//!   present has its text in the frame's `-V` tree (its registry label and its value as `-V`
//!   writes it), unless its entry says why not.
//! * Differential against `tshark -Y`: for a table of filter pairs (ours; Wireshark's
//!   `infiniband.*` / `ip.*`), the frame numbers shown are equal on the samples and the shared
//!   captures (skipped without them). tshark is the oracle.
//! * A property test: random filter trees from the grammar select the same frames as the same
//!   tree evaluated here over the `--json` output.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as J;

use roce_inspect::decode::{DecodeConfig, LinkType, decode_frame};
use roce_inspect::filter::fields::{FIELDS, Pkt, Value, Verbose};
use roce_inspect::output::FrameCtx;
use roce_inspect::output::json::write_frame;
use roce_inspect::output::line::Line;
use roce_inspect::output::style::Palette;
use roce_inspect::output::verbose::write_tree;

mod common;
const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

/// The capture files of a folder, sorted (none when it does not exist).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".pcap") || n.ends_with(".pcapng")
        })
        .collect();
    v.sort();
    v
}

fn samples() -> Vec<PathBuf> {
    files_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("samples"))
}

/// The samples whose RoCE packets travel inside a switch mirror (ERSPAN, VXLAN): tshark's
/// `ip.*` fields match the carrier's IP header as well as the mirrored packet's, while ours are
/// the mirrored packet's alone, so the `ip.*` pairs of the differential do not apply to them.
fn mirrored(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("erspan") || n.starts_with("vxlan"))
}

fn shared() -> Vec<PathBuf> {
    let Some(root) = common::captures_dir() else {
        return Vec::new();
    };
    let mut v = Vec::new();
    for sub in ["real", "derived", "synthetic"] {
        v.extend(files_in(&root.join(sub)));
    }
    v.extend(files_in(&root.join("../cases")));
    v
}

/// Every record of a capture file: (link type, number, time ns, wire length, bytes).
fn records(path: &Path) -> Vec<(LinkType, u64, u64, u32, Vec<u8>)> {
    let Ok(mut cap) = pcap::Capture::from_file_with_precision(path, pcap::Precision::Nano) else {
        return Vec::new();
    };
    let lt = LinkType::from_dlt(cap.get_datalink().0);
    let mut out = Vec::new();
    let mut n = 0;
    while let Ok(p) = cap.next_packet() {
        n += 1;
        let ts = p.header.ts.tv_sec as u64 * 1_000_000_000 + p.header.ts.tv_usec as u64;
        out.push((lt, n, ts, p.header.len, p.data.to_vec()));
    }
    out
}

/// Hand-built frames: every opcode with every extended header filled in, over IPv4, IPv6 and
/// RoCEv1 (GRH), with two VLAN tags; and each mirror tunnel around one of them.
fn built_frames() -> Vec<Vec<u8>> {
    use common::mirror::{Carrier, Tunnel, wrap};
    use roce_inspect::decode::{Aeth, AtomicEth, Deth, Feth, Opcode, Reth};
    use roce_inspect::synth::frame::{Bth, Net, Packet, VlanTag};
    let mut out = Vec::new();
    for op in 0..=255u8 {
        for net in 0..3 {
            let mut p = Packet::v4(
                [10, 0, 0, 1],
                [10, 0, 0, 2],
                Bth {
                    opcode: Opcode(op),
                    dest_qp: 0x11,
                    psn: 5,
                    ..Bth::default()
                },
            );
            p.ext.reth = Reth {
                va: 0x1000,
                rkey: 7,
                dma_len: 4096,
            };
            // An ACK with credits, an RNR NAK and a NAK (IBTA Table 43).
            p.ext.aeth = Aeth {
                syndrome: [0x05, 0x25, 0x61][net],
                msn: 3,
            };
            p.ext.deth = Deth {
                qkey: 0x1111,
                src_qp: 0x22,
            };
            p.ext.imm.data = 9;
            p.ext.ieth.rkey = 10;
            p.ext.atomic_eth = AtomicEth {
                va: 0x2000,
                rkey: 8,
                swap_add: 1,
                compare: 2,
            };
            p.ext.atomic_ack_eth.orig = 3;
            p.ext.rdeth.ee_context = 4;
            p.ext.xrceth.xrc_srq = 5;
            p.ext.feth = Feth { sel: 1, plt: 2 };
            p.payload_len = 8;
            p.eth.tags = vec![VlanTag::dot1q(100, 3), VlanTag::dot1q(200, 5)];
            if net == 1 {
                p.net = Net::Ipv6 {
                    src: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                    dst: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
                    tclass: 0x03,
                    flow_label: 7,
                    hop_limit: 9,
                };
            } else if net == 2 {
                p.net = Net::Grh {
                    sgid: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                    dgid: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
                    tclass: 0x02,
                    flow_label: 7,
                    hop_limit: 9,
                };
            }
            out.push(p.build());
        }
    }
    let inner = out[0x0a * 3].clone();
    let tunnels = [
        Tunnel::Erspan1,
        Tunnel::Erspan2 {
            session: 5,
            vlan: 7,
            cos: 1,
            truncated: true,
            index: 9,
        },
        Tunnel::Erspan3 {
            session: 6,
            vlan: 8,
            cos: 2,
            truncated: false,
            timestamp: 1234,
            gra: 1,
            hw: 3,
            platform: Some((3, 99)),
        },
        Tunnel::GreIp { key: Some(77) },
        Tunnel::Teb {
            checksum: true,
            key: Some(1),
            seq: true,
        },
        Tunnel::Vxlan {
            vni: 42,
            port: 4789,
        },
    ];
    for t in &tunnels {
        out.push(wrap(
            &inner,
            t,
            &Carrier {
                v6: false,
                vlan: Some(12),
            },
            3,
        ));
    }
    // Two tunnels deep.
    let once = wrap(
        &inner,
        &tunnels[5],
        &Carrier {
            v6: true,
            vlan: None,
        },
        1,
    );
    out.push(wrap(
        &once,
        &tunnels[1],
        &Carrier {
            v6: false,
            vlan: None,
        },
        2,
    ));
    out
}

/// Frames of other kinds, written from the specifications' layouts: a native IB packet (LRH,
/// IBTA Vol 1 §7.7: VL 0, LVer 0, SL 3, LNH 2, DLID 5, length in words, SLID 9; then an RC
/// SEND ONLY BTH, ICRC and VCRC), an IPv4 ICMP frame, an LLDP frame (Ethertype 0x88cc), and an
/// ERF record of type 1 (ERF_TYPE_HDLC_POS).
fn other_frames() -> Vec<(LinkType, Vec<u8>)> {
    let bth = [0x04, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0, 7];
    let words = ((8 + bth.len() + 4) / 4) as u16;
    let mut ib = vec![0x00, 0x32, 0, 5];
    ib.extend_from_slice(&words.to_be_bytes());
    ib.extend_from_slice(&[0, 9]);
    ib.extend_from_slice(&bth);
    ib.extend_from_slice(&[0; 6]);
    let eth = |ty: [u8; 2], body: &[u8]| {
        let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, ty[0], ty[1]];
        f.extend_from_slice(body);
        f
    };
    let mut ip = vec![
        0x45, 0, 0, 28, 0, 0, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ];
    let ck = common::frames::ip_checksum(&ip);
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
    ip.extend_from_slice(&[8, 0, 0xf7, 0xff, 0, 0, 0, 0]);
    let mut erf = vec![0u8; 16];
    erf[8] = 1;
    erf[10..12].copy_from_slice(&20u16.to_be_bytes());
    erf[14..16].copy_from_slice(&4u16.to_be_bytes());
    erf.extend_from_slice(&[0xff, 3, 0, 0x21]);
    vec![
        (LinkType::INFINIBAND, ib),
        (LinkType::ETHERNET, eth([0x08, 0x00], &ip)),
        (LinkType::ETHERNET, eth([0x88, 0xcc], &[0; 46])),
        (LinkType::ERF, erf),
    ]
}

/// The JSON values at a dotted key path: one per `encap` layer for `encap.*`.
fn json_values<'j>(line: &'j J, name: &str) -> Vec<&'j J> {
    let mut parts = name.split('.');
    let first = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    let Some(v) = line.get(first) else {
        return Vec::new();
    };
    let roots: Vec<&J> = match v {
        J::Array(a) => a.iter().collect(),
        v => vec![v],
    };
    roots
        .into_iter()
        .filter_map(|mut v| {
            for k in &rest {
                v = v.get(k)?;
            }
            (!v.is_null()).then_some(v)
        })
        .collect()
}

/// Every key path of a JSON line (arrays' elements' keys under the array's key).
fn key_paths(v: &J, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        J::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(p.clone());
                key_paths(x, &p, out);
            }
        }
        J::Array(a) => a.iter().for_each(|x| key_paths(x, prefix, out)),
        _ => {}
    }
}

/// Whether a registry value equals a JSON value.
fn same(v: &Value, j: &J) -> bool {
    match v {
        Value::Uint(u) => j.as_u64() == Some(*u),
        Value::Bool(b) => j.as_bool() == Some(*b),
        Value::Str(s) => j.as_str() == Some(*s),
        Value::Text(s) => j.as_str() == Some(s.as_str()),
        Value::Addr(a) => j.as_str() == Some(a.to_string().as_str()),
        Value::Float(f) => j.as_f64() == Some(*f),
        Value::Present => j.is_object() || j.is_array(),
        // `values()` passes no null on: never compared.
        Value::Null => false,
    }
}

/// Check one frame; add the fields present on it to `seen`.
fn check_frame(
    what: &str,
    lt: LinkType,
    n: u64,
    ts: u64,
    len: u32,
    data: &[u8],
    seen: &mut BTreeSet<&'static str>,
) {
    let frame = decode_frame(lt, data, len, &DecodeConfig::default());
    let ctx = FrameCtx {
        number: n,
        ts_ns: ts,
        rel_ns: 0,
        caplen: data.len() as u32,
        len,
    };
    let mut l = Line::new();
    write_frame(&mut l, &ctx, &frame);
    let line: J = serde_json::from_slice(&l.buf).unwrap();
    let mut paths = BTreeSet::new();
    key_paths(&line, "", &mut paths);
    let names: BTreeSet<&str> = FIELDS.iter().map(|f| f.name).collect();
    for p in &paths {
        assert!(
            names.contains(p.as_str()),
            "{what} frame {n}: JSON key {p} has no registry entry"
        );
    }
    let pkt = Pkt {
        ctx: &ctx,
        frame: &frame,
        marks: None,
    };
    for f in FIELDS {
        let ours = f.values(&pkt);
        let json = json_values(&line, f.name);
        assert_eq!(
            ours.len(),
            json.len(),
            "{what} frame {n}: {}: {ours:?} vs {json:?}",
            f.name
        );
        for (o, j) in ours.iter().zip(&json) {
            assert!(same(o, j), "{what} frame {n}: {}: {o:?} vs {j}", f.name);
        }
        if !ours.is_empty() {
            seen.insert(f.name);
        }
    }
    check_verbose(what, n, &ctx, &frame, &pkt);
}

/// The fields whose text a frame's `-V` tree lacks, with the first such frame.
static VERBOSE_MISSES: std::sync::Mutex<BTreeMap<&str, String>> =
    std::sync::Mutex::new(BTreeMap::new());

/// Every field present in the frame has its text in the frame's `-V` tree (its label from the
/// registry, its value as `-V` writes it), unless its registry entry says why not.
fn check_verbose(
    what: &str,
    n: u64,
    ctx: &FrameCtx,
    frame: &roce_inspect::decode::Frame<'_>,
    pkt: &Pkt<'_, '_>,
) {
    let mut tree = Vec::new();
    write_tree(&mut tree, &Palette::new(false), ctx, frame).unwrap();
    let tree = String::from_utf8(tree).unwrap();
    for f in FIELDS {
        match f.verbose {
            Verbose::Hidden(why) => {
                assert!(
                    !why.is_empty(),
                    "{}: hidden from -V without a reason",
                    f.name
                );
                continue;
            }
            Verbose::Shown { only: Some(_), .. } => continue,
            Verbose::Shown { only: None, .. } => {}
        }
        for v in f.values(pkt) {
            let text = f.shown(v.clone()).to_string();
            if !tree.contains(&text) {
                VERBOSE_MISSES
                    .lock()
                    .unwrap()
                    .entry(f.name)
                    .or_insert_with(|| {
                        format!(
                            "{what} frame {n}: {} = {v:?}: -V has no `{text}`:\n{tree}",
                            f.name
                        )
                    });
            }
        }
    }
}

#[test]
fn registry_is_the_json_schema() {
    let mut seen = BTreeSet::new();
    let hostile = files_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile"));
    for path in samples().iter().chain(&hostile).chain(&shared()) {
        for (lt, n, ts, len, data) in records(path) {
            check_frame(
                &path.display().to_string(),
                lt,
                n,
                ts,
                len,
                &data,
                &mut seen,
            );
        }
    }
    for (i, (lt, f)) in built_frames()
        .into_iter()
        .map(|f| (LinkType::ETHERNET, f))
        .chain(other_frames())
        .enumerate()
    {
        check_frame("built", lt, i as u64 + 1, 0, f.len() as u32, &f, &mut seen);
    }
    // A frame cut by the snap length (its wire length longer than the bytes captured), so that
    // `truncated` has an input without the shared captures too.
    let whole = built_frames().swap_remove(0);
    let cut = &whole[..whole.len().min(60)];
    check_frame(
        "built, cut",
        LinkType::ETHERNET,
        1,
        0,
        whole.len() as u32 + 64,
        cut,
        &mut seen,
    );
    let missing: Vec<&str> = FIELDS
        .iter()
        .map(|f| f.name)
        .filter(|n| !n.starts_with("analysis") && !seen.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "registry fields no input has: {missing:?}"
    );
    let misses = VERBOSE_MISSES.lock().unwrap();
    assert!(
        misses.is_empty(),
        "registry fields -V does not show as the registry says: {:?}\n{}",
        misses.keys().collect::<Vec<_>>(),
        misses.values().cloned().collect::<Vec<_>>().join("\n")
    );
}

/// Frame numbers `read FILE -Y EXPR` shows (through `--json`).
fn ours(path: &Path, expr: &str, threads: &str) -> Vec<u64> {
    let out = Command::new(BIN)
        .arg("read")
        .arg(path)
        .args(["-Y", expr, "--json", "--threads", threads])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{expr}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<J>(l).unwrap()["frame"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// Frame numbers `tshark -Y EXPR` shows.
fn theirs(path: &Path, expr: &str) -> Vec<u64> {
    common::tshark_filter(&path.display().to_string(), expr, &["frame.number"])
        .into_iter()
        .map(|r| r[0].parse().unwrap())
        .collect()
}

/// (ours, tshark's): each is applied to RoCE frames only (`roce &&` / `infiniband &&`).
const PAIRS: &[(&str, &str)] = &[
    ("bth", "infiniband.bth"),
    ("aeth", "infiniband.aeth"),
    ("!reth", "!infiniband.reth"),
    ("not deth", "not infiniband.deth"),
    ("imm", "infiniband.immdt"),
    ("ieth", "infiniband.ieth"),
    ("bth.psn > 100", "infiniband.bth.psn > 100"),
    ("bth.psn == 0", "infiniband.bth.psn == 0"),
    ("bth.psn >= 0xffffff", "infiniband.bth.psn >= 0xffffff"),
    ("bth.psn <= 0x7fffff", "infiniband.bth.psn <= 0x7fffff"),
    ("bth.opcode == 0x11", "infiniband.bth.opcode == 0x11"),
    ("bth.opcode == 021", "infiniband.bth.opcode == 021"),
    (
        "bth.opcode in {0x06..0x0a, 4, 0x64}",
        "infiniband.bth.opcode in {0x06..0x0a, 4, 0x64}",
    ),
    (
        "bth.opcode not in {0x06..0x0a}",
        "infiniband.bth.opcode not in {0x06..0x0a}",
    ),
    ("bth.dest_qp != 1", "infiniband.bth.destqp != 1"),
    (
        "bth.dest_qp < 0x100 || bth.dest_qp > 0x800",
        "infiniband.bth.destqp < 0x100 || infiniband.bth.destqp > 0x800",
    ),
    ("bth.ack_req == true", "infiniband.bth.a == 1"),
    (
        "bth.se == 1 || bth.ack_req == 1 && !aeth",
        "infiniband.bth.se == 1 || infiniband.bth.a == 1 && !infiniband.aeth",
    ),
    (
        "(bth.se == 1 || bth.ack_req == 1) && !aeth",
        "(infiniband.bth.se == 1 || infiniband.bth.a == 1) && !infiniband.aeth",
    ),
    ("!bth.m == false", "!infiniband.bth.m == 0"),
    ("bth.pkey != 0xffff", "infiniband.bth.p_key != 0xffff"),
    ("bth.pad > 0", "infiniband.bth.padcnt > 0"),
    ("reth.dma_len >= 4096", "infiniband.reth.dmalen >= 4096"),
    ("reth.dma_len == 0", "infiniband.reth.dmalen == 0"),
    // tshark files an AtomicETH's VA and R_Key under infiniband.reth (tests/tshark_diff.rs).
    (
        "reth.rkey > 0x1000 and reth.va != 0 or atomic_eth.rkey > 0x1000 and atomic_eth.va != 0",
        "infiniband.reth.r_key > 0x1000 and infiniband.reth.va != 0",
    ),
    (
        "aeth.syndrome == 0x60 || aeth.syndrome in {0x20..0x3f}",
        "infiniband.aeth.syndrome == 0x60 || infiniband.aeth.syndrome in {0x20..0x3f}",
    ),
    ("aeth.msn > 5", "infiniband.aeth.msn > 5"),
    (
        "deth.qkey == 0x80010000 || deth.src_qp == 1",
        "infiniband.deth.q_key == 0x80010000 || infiniband.deth.srcqp == 1",
    ),
    (
        "ecn == \"ect0\"",
        "ip.dsfield.ecn == 2 || ipv6.tclass.ecn == 2",
    ),
    (
        "ecn == \"ce\"",
        "ip.dsfield.ecn == 3 || ipv6.tclass.ecn == 3",
    ),
    (
        "ecn in {\"not-ect\", \"ect1\"}",
        "ip.dsfield.ecn in {0, 1} || ipv6.tclass.ecn in {0, 1}",
    ),
    (
        "dscp == 26 || dscp == 0",
        "ip.dsfield.dscp in {26, 0} || ipv6.tclass.dscp in {26, 0}",
    ),
    ("src == 10.0.0.0/8", "ip.src == 10.0.0.0/8"),
    (
        "!(dst == 192.168.0.0/16) && roce == \"v2\"",
        "!(ip.dst == 192.168.0.0/16) && udp",
    ),
    (
        "dst == 10.0.0.0/8 || dst == fe80::/10",
        "ip.dst == 10.0.0.0/8 || ipv6.dst == fe80::/10 || infiniband.grh.dgid == fe80::/10",
    ),
    ("udp_src_port >= 49152", "udp.srcport >= 49152"),
    (
        "len > 1000 && caplen == len",
        "frame.len > 1000 && frame.cap_len == frame.len",
    ),
    ("frame in {1..10, 50}", "frame.number in {1..10, 50}"),
    ("vlan", "vlan"),
];

#[test]
fn frames_equal_tshark_display_filters() {
    // tshark runs once per pair and file (0.3 s to 1 s each): on the samples every second
    // pair, on the shared captures under 1 MB (the large synthetic one adds time, not cases)
    // every eighth, a different share on each file, so that each pair meets several captures.
    let direct: Vec<PathBuf> = samples().into_iter().filter(|p| !mirrored(p)).collect();
    let mut files: Vec<(PathBuf, usize)> = direct.iter().map(|p| (p.clone(), 2)).collect();
    files.extend(
        shared()
            .into_iter()
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() < 1 << 20))
            .map(|p| (p, 8)),
    );
    let mut compared = 0;
    for (k, (path, every)) in files.iter().enumerate() {
        for (mine, ws) in PAIRS.iter().skip(k % every).step_by(*every) {
            // tshark does not know FLUSH (0x1c) or ATOMIC WRITE (0x1d) (tests/tshark_diff.rs).
            let a = ours(
                path,
                &format!("roce && !(bth.opcode in {{0x1c, 0x1d}}) && ({mine})"),
                "1",
            );
            let b = theirs(
                path,
                &format!("infiniband && !(infiniband.bth.opcode in {{0x1c, 0x1d}}) && ({ws})"),
            );
            assert_eq!(a, b, "{}: ours {mine:?} vs tshark {ws:?}", path.display());
            compared += 1;
        }
    }
    // Several threads show the same frames.
    for path in samples() {
        let expr = "roce && (aeth || bth.psn > 100 && !reth)";
        assert_eq!(
            ours(&path, expr, "1"),
            ours(&path, expr, "3"),
            "{}",
            path.display()
        );
    }
    assert!(compared >= PAIRS.len() * direct.len() / 2);
}

#[test]
fn display_filter_errors_are_one_line_and_exit_2() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/write_bw.pcap");
    for (expr, text) in [
        (
            "bth.psn >",
            "display filter: column 10: expected a value (unsigned integer), found the end",
        ),
        (
            "bth.nope == 1",
            "display filter: column 1: 'bth.nope' is not a field",
        ),
        (
            "ecn == \"ce",
            "display filter: column 8: string without its closing '\"'",
        ),
    ] {
        let out = Command::new(BIN)
            .arg("read")
            .arg(&sample)
            .args(["-Y", expr])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{expr}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(text), "{expr}: {err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn list_fields_lists_the_registry() {
    let out = Command::new(BIN)
        .args(["read", "--list-fields"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: BTreeMap<&str, (&str, &str)> = text
        .lines()
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c.len(), 3, "{l}");
            (c[0], (c[1], c[2]))
        })
        .collect();
    assert_eq!(rows.len(), FIELDS.len());
    assert_eq!(rows["bth.psn"].0, "unsigned integer");
    assert_eq!(rows["ecn"].0, "string");
    assert_eq!(rows["src"].0, "address");
    assert_eq!(rows["reth"].0, "header");
    assert_eq!(rows["bth.ack_req"].0, "boolean");
}

/// (ours, tshark's) fields that hold the same value, printed alike by `-T fields`.
const FIELD_PAIRS: &[(&str, &str)] = &[
    ("frame", "frame.number"),
    ("len", "frame.len"),
    ("caplen", "frame.cap_len"),
    ("bth.opcode", "infiniband.bth.opcode"),
    ("bth.se", "infiniband.bth.se"),
    ("bth.m", "infiniband.bth.m"),
    ("bth.pad", "infiniband.bth.padcnt"),
    ("bth.tver", "infiniband.bth.tver"),
    ("bth.pkey", "infiniband.bth.p_key"),
    ("bth.dest_qp", "infiniband.bth.destqp"),
    ("bth.ack_req", "infiniband.bth.a"),
    ("bth.psn", "infiniband.bth.psn"),
    ("reth.va", "infiniband.reth.va"),
    ("reth.rkey", "infiniband.reth.r_key"),
    ("reth.dma_len", "infiniband.reth.dmalen"),
    ("aeth.syndrome", "infiniband.aeth.syndrome"),
    ("aeth.msn", "infiniband.aeth.msn"),
    ("deth.qkey", "infiniband.deth.q_key"),
    ("deth.src_qp", "infiniband.deth.srcqp"),
    ("atomic_ack_eth.orig", "infiniband.atomicacketh.origremdt"),
    ("udp_src_port", "udp.srcport"),
];

#[test]
fn fields_equal_tshark_fields() {
    let mut files = samples();
    files.extend(shared());
    for path in &files {
        // tshark files an AtomicETH's VA and R_Key under infiniband.reth, and does not know
        // FLUSH (0x1c) or ATOMIC WRITE (0x1d) (tests/tshark_diff.rs): those frames are left out
        // on both sides.
        let mut cmd = Command::new(BIN);
        cmd.arg("read").arg(path).args([
            "-Y",
            "roce && !atomic_eth && !(bth.opcode in {0x1c, 0x1d})",
            "-T",
            "fields",
            "-E",
            "separator=|",
        ]);
        for (o, _) in FIELD_PAIRS {
            cmd.args(["-e", o]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mine: Vec<Vec<String>> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('|').map(str::to_string).collect())
            .collect();
        let names: Vec<&str> = FIELD_PAIRS.iter().map(|(_, t)| *t).collect();
        let theirs = common::tshark_filter(
            &path.display().to_string(),
            "infiniband && !infiniband.atomiceth && !(infiniband.bth.opcode in {0x1c, 0x1d})",
            &names,
        );
        assert_eq!(mine.len(), theirs.len(), "{}", path.display());
        for (a, b) in mine.iter().zip(&theirs) {
            for (i, (o, t)) in FIELD_PAIRS.iter().enumerate() {
                assert_eq!(a[i], b[i], "{} frame {}: {o} vs {t}", path.display(), a[0]);
            }
        }
    }
}

/// `analysis.retransmission` is set exactly on the request/response packets whose (flow, PSN,
/// opcode) occurred earlier in the capture, computed here from tshark's fields (flow: source
/// and destination address, destination QP). Checked on the samples and the lossy synthetic
/// capture.
#[test]
fn retransmission_marks_equal_repeats_in_tshark_fields() {
    let mut files = samples();
    if let Some(root) = common::captures_dir() {
        files.push(root.join("synthetic/loss_ce_read.pcap"));
    }
    for path in &files {
        let rows = common::tshark_filter(
            &path.display().to_string(),
            "infiniband.bth && !(infiniband.bth.opcode in {0x11, 0x12, 0x51, 0x52, 0xb1, 0xb2, 0x81, 0x64, 0x65})",
            &[
                "frame.number",
                "ip.src",
                "ip.dst",
                "ipv6.src",
                "ipv6.dst",
                "infiniband.grh.sgid",
                "infiniband.grh.dgid",
                "infiniband.bth.destqp",
                "infiniband.bth.psn",
                "infiniband.bth.opcode",
            ],
        );
        let mut seen = BTreeSet::new();
        let mut want = Vec::new();
        for r in rows {
            let key = r[1..].join("|");
            if !seen.insert(key) {
                want.push(r[0].parse::<u64>().unwrap());
            }
        }
        let out = Command::new(BIN)
            .arg("read")
            .arg(path)
            .args([
                "-Y",
                "analysis.retransmission",
                "-T",
                "fields",
                "-e",
                "frame",
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        let got: Vec<u64> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(got, want, "{}", path.display());
    }
}

/// `-w` writes the shown frames, unmodified, as pcapng with their marks as `frame.comment`:
/// read back by tshark, the times and bytes are the original frames' (tshark on the input) and
/// the comments carry `[RETX]` on the resent frames (computed from tshark's fields as above)
/// and `[NAK psn_seq_err]` on NAK code 0 (IBTA Table 43).
#[test]
fn written_frames_carry_their_marks() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/write_bw.pcap");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("shown.pcapng");
    let st = Command::new(BIN)
        .arg("read")
        .arg(&sample)
        .args(["-Y", "analysis.retransmission || aeth.nak", "-w"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert!(st.stdout.is_empty(), "-w prints no packet lines");
    let fields = [
        "frame.time_epoch",
        "frame.len",
        "frame.cap_len",
        "infiniband.invariant.crc",
    ];
    let key = [
        "infiniband.aeth.syndrome",
        "ip.src",
        "infiniband.bth.destqp",
        "infiniband.bth.psn",
        "infiniband.bth.opcode",
    ];
    let all: Vec<&str> = fields.iter().chain(&key).copied().collect();
    let mut seen = BTreeSet::new();
    let want: Vec<Vec<String>> =
        common::tshark_filter(&sample.display().to_string(), "infiniband", &all)
            .into_iter()
            .filter_map(|r| {
                let (shown, k) = r.split_at(fields.len());
                let nak = k[0].parse::<u8>().is_ok_and(|s| s >> 5 == 3);
                let retx = k[0].is_empty() && !seen.insert(k[1..].join("|"));
                let tag = match (nak, retx) {
                    (true, _) => "[NAK psn_seq_err]",
                    (_, true) => "[RETX]",
                    _ => return None,
                };
                let mut row = shown.to_vec();
                row.push(tag.to_string());
                Some(row)
            })
            .collect();
    let mut got_fields = fields.to_vec();
    got_fields.push("frame.comment");
    let got = common::tshark_filter(&out.display().to_string(), "frame", &got_fields);
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

/// A filter tree of the test's own, rendered as text for `-Y` and evaluated here on a frame's
/// `--json` line with Wireshark's rules (absent field: every comparison false).
#[derive(Clone, Debug)]
enum Tree {
    And(Box<Tree>, Box<Tree>),
    Or(Box<Tree>, Box<Tree>),
    Not(Box<Tree>),
    Has(&'static str),
    Cmp(&'static str, &'static str, u64),
    In(&'static str, Vec<(u64, u64)>),
    Str(&'static str, &'static str),
}

/// Numeric fields and values around the samples' own.
const NUM: &[(&str, &[u64])] = &[
    ("bth.psn", &[0, 100, 57344, 851968, 3841846, 16777215]),
    ("bth.opcode", &[4, 6, 10, 12, 16, 17, 100, 129]),
    ("bth.dest_qp", &[0x11, 0x118, 0xa11, 0xb12, 0x302]),
    ("reth.dma_len", &[0, 128, 1024, 4096]),
    ("aeth.syndrome", &[0, 31, 0x60, 0x61]),
    ("len", &[60, 100, 1082, 4200]),
    ("frame", &[1, 10, 50, 100]),
    ("dscp", &[0, 26, 48]),
];
const PRESENCE: &[&str] = &["reth", "aeth", "deth", "imm", "grh", "vlan", "bth"];
const STRS: &[(&str, &[&str])] = &[
    ("ecn", &["ce", "ect0", "not-ect", "ect1"]),
    (
        "bth.opcode_name",
        &["RC_ACKNOWLEDGE", "CNP", "RC_RDMA_WRITE_FIRST"],
    ),
    ("icrc.status", &["good", "bad"]),
];

fn tree() -> impl proptest::strategy::Strategy<Value = Tree> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        prop::sample::select(PRESENCE).prop_map(Tree::Has),
        (
            prop::sample::select(NUM),
            prop::sample::select(&["==", "!=", "<", "<=", ">", ">="][..]),
            any::<prop::sample::Index>()
        )
            .prop_map(|((f, vs), op, i)| Tree::Cmp(f, op, vs[i.index(vs.len())])),
        (
            prop::sample::select(NUM),
            prop::collection::vec((any::<prop::sample::Index>(), 0u64..3), 1..4)
        )
            .prop_map(|((f, vs), items)| {
                Tree::In(
                    f,
                    items
                        .iter()
                        .map(|(i, w)| {
                            let a = vs[i.index(vs.len())];
                            (a, a + w)
                        })
                        .collect(),
                )
            }),
        (prop::sample::select(STRS), any::<prop::sample::Index>())
            .prop_map(|((f, vs), i)| Tree::Str(f, vs[i.index(vs.len())])),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Tree::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Tree::Or(Box::new(a), Box::new(b))),
            inner.prop_map(|a| Tree::Not(Box::new(a))),
        ]
    })
}

impl Tree {
    /// The expression; parenthesised fully, or not at all where precedence makes it the same
    /// tree, so both paths are exercised.
    fn text(&self) -> String {
        match self {
            Tree::And(a, b) => format!("{} && {}", a.operand(true), b.operand(true)),
            Tree::Or(a, b) => format!("({}) || ({})", a.text(), b.text()),
            Tree::Not(a) => format!("!{}", a.operand(false)),
            Tree::Has(f) => f.to_string(),
            Tree::Cmp(f, op, v) => format!("{f} {op} {v:#x}"),
            Tree::In(f, items) => {
                let s: Vec<String> = items
                    .iter()
                    .map(|(a, b)| {
                        if a == b {
                            a.to_string()
                        } else {
                            format!("{a}..{b}")
                        }
                    })
                    .collect();
                format!("{f} in {{{}}}", s.join(", "))
            }
            Tree::Str(f, v) => format!("{f} == \"{v}\""),
        }
    }

    /// As an operand of `&&` (`and`) or `!`: bare when it binds at least as tightly.
    fn operand(&self, and: bool) -> String {
        match self {
            Tree::Or(..) => format!("({})", self.text()),
            Tree::And(..) if !and => format!("({})", self.text()),
            _ => self.text(),
        }
    }

    fn eval(&self, j: &J) -> bool {
        let get = |f: &str| json_values(j, f).into_iter().next().cloned();
        match self {
            Tree::And(a, b) => a.eval(j) && b.eval(j),
            Tree::Or(a, b) => a.eval(j) || b.eval(j),
            Tree::Not(a) => !a.eval(j),
            Tree::Has(f) => get(f).is_some(),
            Tree::Cmp(f, op, v) => get(f).and_then(|x| x.as_u64()).is_some_and(|x| match *op {
                "==" => x == *v,
                "!=" => x != *v,
                "<" => x < *v,
                "<=" => x <= *v,
                ">" => x > *v,
                _ => x >= *v,
            }),
            Tree::In(f, items) => get(f)
                .and_then(|x| x.as_u64())
                .is_some_and(|x| items.iter().any(|(a, b)| (*a..=*b).contains(&x))),
            Tree::Str(f, v) => get(f).is_some_and(|x| x.as_str() == Some(*v)),
        }
    }
}

/// A sample's frame: link type, number, time (ns), wire length, bytes, its `--json` line.
type SampleFrame = (LinkType, u64, u64, u32, Vec<u8>, J);

/// The samples' frames, decoded, with their JSON lines.
fn sample_frames() -> Vec<SampleFrame> {
    let mut out = Vec::new();
    for path in samples() {
        for (lt, n, ts, len, data) in records(&path) {
            let frame = decode_frame(lt, &data, len, &DecodeConfig::default());
            let ctx = FrameCtx {
                number: n,
                ts_ns: ts,
                rel_ns: 0,
                caplen: data.len() as u32,
                len,
            };
            let mut l = Line::new();
            write_frame(&mut l, &ctx, &frame);
            let j: J = serde_json::from_slice(&l.buf).unwrap();
            out.push((lt, n, ts, len, data, j));
        }
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
    #[test]
    fn random_filters_equal_an_evaluation_over_json(t in tree()) {
        use roce_inspect::filter::DisplayFilter;
        static FRAMES: std::sync::OnceLock<Vec<SampleFrame>> =
            std::sync::OnceLock::new();
        let frames = FRAMES.get_or_init(sample_frames);
        let text = t.text();
        let f = DisplayFilter::compile(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        for (lt, n, ts, len, data, j) in frames {
            let frame = decode_frame(*lt, data, *len, &DecodeConfig::default());
            let ctx = FrameCtx { number: *n, ts_ns: *ts, rel_ns: 0, caplen: data.len() as u32, len: *len };
            let ours = f.matches(&Pkt { ctx: &ctx, frame: &frame, marks: None });
            proptest::prop_assert_eq!(ours, t.eval(j), "{} on frame {}", text, n);
        }
    }
}

/// `-T fields` lines of `read FILE --marks -Y EXPR -e …`, split on tabs.
fn marked_fields(path: &Path, expr: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new(BIN);
    cmd.arg("read")
        .arg(path)
        .args(["--marks", "-Y", expr, "-T", "fields"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
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

/// The marks equal the scenario writers' ground truth (src/synth/scenario): `write_bw` loses
/// one packet (one gap of one PSN after it, NAKed with a PSN sequence error, the lost PSN
/// carried again after the NAK, every PSN sent twice marked resent once); `read_timeout`
/// re-issues READ requests (marked as behind the expected PSN); `congestion` answers
/// CE-marked packets with CNPs (each CNP names an earlier CE frame).
#[test]
fn marks_equal_scenario_truth() {
    use roce_inspect::synth::scenario::{congestion, read_timeout, write_bw};
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, bytes: Vec<u8>| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let w = write_bw::scenario();
    let wf = file("w.pcap", w.sample.bytes());
    let t = &w.truth;
    let gaps = marked_fields(&wf, "analysis.gap", &["bth.psn", "analysis.gap"]);
    assert_eq!(gaps, vec![vec![(t.lost_psn + 1).to_string(), "1".into()]]);
    let naks = marked_fields(&wf, "analysis.nak_reason == \"psn_seq_err\"", &["bth.psn"]);
    assert_eq!(naks.len(), t.naks);
    assert!(naks.iter().all(|r| r[0] == t.lost_psn.to_string()));
    let naked = marked_fields(&wf, "analysis.naked", &["bth.psn"]);
    assert_eq!(naked, vec![vec![t.lost_psn.to_string()]]);
    let resent: BTreeSet<String> = marked_fields(&wf, "analysis.retransmission", &["bth.psn"])
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(resent.len(), t.resent_psns);

    let r = read_timeout::scenario();
    let rf = file("r.pcap", r.sample.bytes());
    let again = marked_fields(
        &rf,
        // A READ re-issued from its middle starts at a PSN its first issue reserved but did
        // not carry: behind the expected PSN, out of order rather than a retransmission.
        "(analysis.retransmission || analysis.out_of_order) && bth.opcode_name == \"RC_RDMA_READ_REQUEST\"",
        &["bth.psn", "reth.va", "reth.dma_len"],
    );
    let want: Vec<Vec<String>> = r
        .truth
        .reissued
        .iter()
        .map(|(psn, va, len)| vec![psn.to_string(), format!("0x{va:016x}"), len.to_string()])
        .collect();
    assert_eq!(again, want);

    let c = congestion::scenario();
    let cf = file("c.pcap", c.sample.bytes());
    let cnps = marked_fields(
        &cf,
        "bth.opcode_name == \"CNP\"",
        &["frame", "analysis.cnp_for"],
    );
    assert_eq!(cnps.len(), c.truth.cnps.iter().sum::<usize>());
    let ce: BTreeSet<String> = marked_fields(&cf, "ecn == \"ce\"", &["frame"])
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    for r in &cnps {
        assert!(
            ce.contains(&r[1]),
            "CNP {} answers frame {:?}, not CE",
            r[0],
            r[1]
        );
        assert!(r[1].parse::<u64>().unwrap() < r[0].parse::<u64>().unwrap());
    }
}

/// `analysis.message` groups the packets as the `write_bw` scenario's responder accepted them
/// (its truth: the frames of each message, in sequence, so without the copies it discarded
/// after the lost packet), each group's id is the frame that began it, `-Y 'analysis.message
/// == N'` shows exactly the frames of message N, and `--messages --json` prints the same ids,
/// each with the first and last frame and packet count of its group.
#[test]
fn message_ids_equal_scenario_truth() {
    use roce_inspect::synth::scenario::write_bw;
    let dir = tempfile::tempdir().unwrap();
    let w = write_bw::scenario();
    let wf = dir.path().join("w.pcap");
    std::fs::write(&wf, w.sample.bytes()).unwrap();
    let want: BTreeMap<u64, Vec<u64>> = w
        .truth
        .message_frames
        .iter()
        .map(|frames| (frames[0], frames.clone()))
        .collect();
    assert_eq!(want.len(), write_bw::MESSAGES);
    let mut got: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for r in marked_fields(&wf, "analysis.message", &["frame", "analysis.message"]) {
        let (frame, id) = (r[0].parse().unwrap(), r[1].parse().unwrap());
        got.entry(id).or_default().push(frame);
    }
    assert_eq!(got, want);
    // The message the loss falls in: its packets before the gap, then the resends.
    let lossy = &w.truth.message_frames[write_bw::LOST_INDEX / 4];
    let expr = format!("analysis.message == {}", lossy[0]);
    let shown: Vec<u64> = marked_fields(&wf, &expr, &["frame"])
        .iter()
        .map(|r| r[0].parse().unwrap())
        .collect();
    assert_eq!(&shown, lossy);
    let out = Command::new(BIN)
        .arg("read")
        .arg(&wf)
        .args(["--messages", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let listed: BTreeMap<u64, Vec<u64>> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let m: J = serde_json::from_str(l).unwrap();
            let n = |k: &str| m[k].as_u64().unwrap();
            (
                n("id"),
                vec![n("first_frame"), n("last_frame"), n("packets")],
            )
        })
        .collect();
    let groups: BTreeMap<u64, Vec<u64>> = want
        .iter()
        .map(|(id, f)| (*id, vec![f[0], f[f.len() - 1], f.len() as u64]))
        .collect();
    assert_eq!(listed, groups);
}

/// The `analysis` object of `--marks --json` and the `analysis.*` fields of `-T fields` (the
/// registry) say the same, and every key `--json` prints with marks has a registry entry: both
/// read the registry, so this checks the two printers' walks over the same marks (the marks'
/// values are checked by src/analyze/marks.rs's tests).
#[test]
fn analysis_json_equals_the_registry() {
    let names: BTreeSet<&str> = FIELDS.iter().map(|f| f.name).collect();
    let analysis: Vec<&str> = FIELDS
        .iter()
        .map(|f| f.name)
        .filter(|n| n.starts_with("analysis."))
        .collect();
    for path in samples() {
        let out = Command::new(BIN)
            .arg("read")
            .arg(&path)
            // Every frame, as `marked_fields` shows them (`-Y frame`), RoCE or not.
            .args(["--marks", "-Y", "frame", "--json"])
            .output()
            .unwrap();
        let lines: Vec<J> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut fields = vec!["frame"];
        fields.extend(&analysis);
        let rows = marked_fields(&path, "frame", &fields);
        assert_eq!(rows.len(), lines.len());
        for (j, r) in lines.iter().zip(&rows) {
            let mut paths = BTreeSet::new();
            key_paths(j, "", &mut paths);
            for p in &paths {
                assert!(names.contains(p.as_str()), "{p}");
            }
            for (k, name) in analysis.iter().enumerate() {
                let v = json_values(j, name);
                let shown = match v.first() {
                    None => String::new(),
                    Some(J::Bool(b)) => u8::from(*b).to_string(),
                    Some(J::String(s)) => s.clone(),
                    Some(x) => x.to_string(),
                };
                assert_eq!(shown, r[k + 1], "{} frame {}: {name}", path.display(), r[0]);
            }
        }
    }
}

/// A fatal NAK marks the request it names, shown before it (a late mark, through the window):
/// ../shared/cases/nak_verdicts.pcap, whose README says FETCH_ADD PSN 302 (frame 5) is answered
/// by a NAK remote access error (frame 6) and WRITE ONLY PSN 900 (frame 7) by a NAK invalid
/// request (frame 8).
#[test]
fn late_naked_marks_reach_earlier_requests() {
    need_shared!();
    let case = PathBuf::from(common::case("nak_verdicts.pcap"));
    let rows = marked_fields(
        &case,
        "analysis.naked || analysis.nak_reason",
        &["frame", "bth.psn", "analysis.naked", "analysis.nak_reason"],
    );
    let want = [
        ["5", "302", "1", ""],
        ["6", "302", "", "remote_access"],
        ["7", "900", "1", ""],
        ["8", "900", "", "invalid_request"],
    ];
    assert_eq!(rows, want.map(|r| r.map(str::to_string).to_vec()).to_vec());
}

/// The window is bounded: with 1100 other frames (LLDP, Ethertype 0x88cc) put between the
/// WRITE ONLY PSN 900 of nak_verdicts.pcap and its NAK, more than the 1024 frames the window
/// holds, the WRITE is printed before the NAK is seen and stays unmarked; the FETCH_ADD, NAKed
/// right after, is still marked.
#[test]
fn late_marks_stop_at_the_window() {
    use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, Record, write_pcap};
    need_shared!();
    let case = PathBuf::from(common::case("nak_verdicts.pcap"));
    let mut recs: Vec<Record> = records(&case)
        .into_iter()
        .map(|(_, _, ts, _, data)| Record::new(ts, data))
        .collect();
    let mut lldp = vec![0x01, 0x80, 0xc2, 0, 0, 0x0e, 2, 0, 0, 0, 0, 1, 0x88, 0xcc];
    lldp.resize(60, 0);
    let ts = recs[6].ts_ns;
    let filler = (0..1100).map(|_| Record::new(ts, lldp.clone()));
    recs.splice(7..7, filler);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("far_nak.pcap");
    write_pcap(
        std::fs::File::create(&path).unwrap(),
        LINKTYPE_ETHERNET,
        262_144,
        &recs,
    )
    .unwrap();
    let rows = marked_fields(&path, "analysis.naked", &["frame", "bth.psn"]);
    assert_eq!(rows, vec![vec!["5".to_string(), "302".to_string()]]);
    let naks = marked_fields(&path, "analysis.nak_reason", &["frame"]);
    assert_eq!(naks, vec![vec!["6".to_string()], vec!["1108".to_string()]]);
}
