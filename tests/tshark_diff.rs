//! Differential test against tshark (Wireshark's `infiniband` dissector) over every capture in
//! `../shared/captures/{real,derived,synthetic}`.
//!
//! For each file, `tshark -T fields` and `roce-inspect read FILE --json` are run; the RoCE frames
//! (tshark: `frame.protocols` contains `infiniband`; ours: every NDJSON line, since `--all` is
//! not given) must be the same frame numbers, and for each of them every header field both tools
//! decode must be equal: BTH (opcode, SE, M, PadCnt, TVer, P_Key, DestQP, AckReq, PSN), RETH,
//! AETH, DETH, AtomicETH, AtomicAckETH, ImmDt, IETH, the ICRC bytes on the wire, plus the
//! timestamp (ns since the epoch), frame lengths, VLAN tags and IP addresses. Presence must
//! match too: a header one tool shows and the other does not is a failure.
//!
//! tshark is the oracle; a missing tshark is a failure (CI installs it with `make deps`).
//!
//! Deliberate differences, with the reason:
//! * tshark 4.0 has no field of its own for the AtomicETH VA and R_Key: it files them under
//!   `infiniband.reth.va` / `infiniband.reth.r_key`. For CmpSwap / FetchAdd those two are
//!   compared with our `atomic_eth.va` / `atomic_eth.rkey`.
//! * tshark shows `infiniband.immdt` twice (the header item and its value); every occurrence
//!   must equal our `imm`.
//! * `infiniband.invariant.crc` is the 4 wire bytes read big-endian; our `icrc.value` is the
//!   CRC-32 value (wire bytes read little-endian, IBTA transmits it LSB first), so the two are
//!   byte-swapped.
//! * tshark decodes anything to or from UDP port 4791 as InfiniBand; we decode only the
//!   destination port (issue 2 point 3). None of these captures has a packet *from* 4791 to
//!   another port, so the frame sets still have to agree exactly; `tests/vectors.rs` covers that
//!   case.
//! * tshark does not know the RoCEv2 CNP layout (0x81): it shows the bytes after the BTH as
//!   `infiniband.vendor` and no ICRC field. For CNPs those bytes are checked to be 16 zero bytes
//!   followed by the ICRC bytes we report.
//! * tshark does not decode FECN/BECN or XRCETH and does not check the ICRC; only the fields
//!   listed above are compared, other oracles (tests/vectors.rs, tests/icrc.rs) cover the rest.
//! * `--disable-protocol infiniband.eoib`: tshark's Mellanox EoIB payload heuristic claims
//!   some zero-length UD SEND ONLY packets of the synthetic capture, throws an exception, and
//!   then omits the ICRC field; disabling it (like `rpcordma`, which the captures README
//!   disables for the same reason) lets tshark show every header.
//! * Not in these captures, so not compared, but seen when the hand-built vectors of
//!   `tests/vectors.rs` were fed to tshark 4.0.17: it does not know FLUSH (0x1C) or ATOMIC
//!   WRITE (0x1D), and for RD SEND ONLY (0x44) it reads the RDETH 8 bytes late (the DETH's
//!   SrcQP word as EE-Context, the payload as DETH), where the spec digest (§2, rxe offsets:
//!   RDETH at 12, DETH at 16) puts them right after the BTH. We follow the spec.
//! * Truncated frames (`rping.snap64/96`): tshark drops a header whose bytes are not all
//!   captured (e.g. a RETH cut at 64 bytes) and so do we, so the presence rule applies as is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;
const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

/// tshark fields, in column order.
const FIELDS: &[&str] = &[
    "frame.number",
    "frame.protocols",
    "frame.time_epoch",
    "frame.len",
    "frame.cap_len",
    "ieee8021ad.id",
    "ieee8021ad.priority",
    "vlan.id",
    "vlan.priority",
    "ip.src",
    "ip.dst",
    "infiniband.bth.opcode",
    "infiniband.bth.se",
    "infiniband.bth.m",
    "infiniband.bth.padcnt",
    "infiniband.bth.tver",
    "infiniband.bth.p_key",
    "infiniband.bth.destqp",
    "infiniband.bth.a",
    "infiniband.bth.psn",
    "infiniband.reth.va",
    "infiniband.reth.r_key",
    "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.msn",
    "infiniband.deth.q_key",
    "infiniband.deth.srcqp",
    "infiniband.atomiceth.swapdt",
    "infiniband.atomiceth.cmpdt",
    "infiniband.atomicacketh.origremdt",
    "infiniband.immdt",
    "infiniband.ieth",
    "infiniband.invariant.crc",
    "infiniband.vendor",
];

/// A capture of one packet per header kind that the samples lack (QinQ tags with priorities,
/// pad bytes, CmpSwap, ATOMIC ACKNOWLEDGE, immediate data, UD with DETH, an RNR NAK, a CNP),
/// built with the project's frame builder into `dir`.
fn header_kinds_capture(dir: &Path) -> PathBuf {
    use roce_inspect::decode::{Aeth, AtomicEth, Deth, Reth};
    use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, Record, pcap_bytes};
    use roce_inspect::synth::frame::VlanTag;
    let qinq = vec![
        VlanTag {
            tpid: 0x88a8,
            pcp: 5,
            vid: 200,
        },
        VlanTag::dot1q(100, 3),
    ];
    let frames = [
        rc_frame(0x0b, 1, &|p| {
            p.eth.tags = qinq.clone();
            p.bth.pad = 2;
            p.payload_len = 6;
            p.ext.reth = Reth {
                va: 0x7f00_0000_1000,
                rkey: 0x1234,
                dma_len: 6,
            };
            p.ext.imm.data = 0x0102_0304;
        }),
        rc_frame(0x13, 2, &|p| {
            p.ext.atomic_eth = AtomicEth {
                va: 0x7f00_0000_2000,
                rkey: 0x4321,
                swap_add: 7,
                compare: 5,
            }
        }),
        rc_frame(0x12, 2, &|p| {
            p.ext.aeth = Aeth {
                syndrome: 0x1f,
                msn: 3,
            };
            p.ext.atomic_ack_eth.orig = 5;
        }),
        rc_frame(0x65, 9, &|p| {
            p.ext.deth = Deth {
                qkey: 0x1111_1111,
                src_qp: 0x0000c3,
            };
            p.ext.imm.data = 0xaabb_ccdd;
            p.payload_len = 32;
        }),
        rc_frame(0x11, 4, &|p| {
            p.ext.aeth = Aeth {
                syndrome: 0x20 | 14,
                msn: 4,
            }
        }),
        rc_frame(0x81, 0, &|p| p.bth.becn = true),
    ];
    let recs: Vec<Record> = frames
        .into_iter()
        .enumerate()
        .map(|(i, f)| Record::new(1_796_090_400_000_000_000 + i as u64 * 1_000, f))
        .collect();
    let path = dir.join("header_kinds.pcap");
    std::fs::write(&path, pcap_bytes(LINKTYPE_ETHERNET, 65535, &recs)).unwrap();
    path
}

/// ERF records (link type 197) as ibdump and DAG cards write them, in a pcap and a pcapng file
/// into `dir`: Ethernet records (type 2, 2 bytes of pad, the frame with its FCS) carrying
/// RoCEv2 packets from the project's frame builder — one with an extension header, one cut
/// after 64 frame bytes — and a native-IB record (type 21: LRH, RC SEND ONLY, hand-computed
/// ICRC 0xd19749ca and VCRC, as in tests/linktypes.rs), whole and with a wlen of 10. Each
/// record's pcap time is 5 s after its ERF header's, whose fractions of a second need rounding
/// to the ns: tshark takes the time and the wire length from the ERF header, and so must we.
fn erf_captures(dir: &Path) -> [PathBuf; 2] {
    use roce_inspect::decode::Reth;
    use roce_inspect::synth::capfile::{Record, pcap_bytes, pcapng_bytes};
    const SECS: u64 = 1_796_090_400;
    let erf = |frac: u32, ty: u8, ext: &[u8], body: &[u8], wlen: usize| {
        let mut r = ((SECS << 32) | u64::from(frac)).to_le_bytes().to_vec();
        r.extend([ty, 0x04]);
        r.extend(((16 + ext.len() + body.len()) as u16).to_be_bytes());
        r.extend([0, 0]);
        r.extend((wlen as u16).to_be_bytes());
        r.extend_from_slice(ext);
        r.extend_from_slice(body);
        // The pcap record's time: 5 s later, whole µs.
        Record::new(
            (SECS + 5) * 1_000_000_000 + u64::from(frac % 1000) * 1000,
            r,
        )
    };
    let eth = |opcode: u8, psn: u32, payload: usize| {
        let mut f = rc_frame(opcode, psn, &|p| {
            p.payload_len = payload;
            if opcode == 0x0a {
                p.ext.reth = Reth {
                    va: 0x7f00_0000_1000,
                    rkey: 0x77,
                    dma_len: payload as u32,
                };
            }
        });
        // The Ethernet FCS, which ERF records keep: CRC-32 of the frame, least significant
        // byte first (IEEE 802.3 §3.2.9).
        let fcs = crc32fast::hash(&f);
        f.extend(fcs.to_le_bytes());
        f
    };
    let padded = |f: &[u8]| [&[0u8, 0][..], f].concat();
    let ib = common::hex("30020005000800070400ffff0000002a800001000001020304050607ca4997d11234");
    let write = eth(0x0a, 10, 200);
    let ack = eth(0x11, 10, 0);
    let big = eth(0x0a, 11, 512);
    let ext = [0x03, 0, 0, 0, 0, 0, 0, 0];
    let recs = [
        erf(1 << 30, 2, &[], &padded(&write), write.len()),
        erf((1 << 30) + 3, 0x82, &ext, &padded(&ack), ack.len()),
        erf(1 << 31, 21, &[], &ib, ib.len()),
        erf(0xffff_fff0, 2, &[], &padded(&big[..64]), big.len()),
        // Bytes past wlen are not the frame's: 10 of the 34 were on the wire (malformed).
        erf(7, 21, &[], &ib, 10),
    ];
    let pcap = dir.join("erf.pcap");
    std::fs::write(&pcap, pcap_bytes(197, 65535, &recs)).unwrap();
    let pcapng = dir.join("erf.pcapng");
    std::fs::write(&pcapng, pcapng_bytes(197, 65535, &recs)).unwrap();
    [pcap, pcapng]
}

/// Raw IP captures (the IPv4 packets of frame-builder frames, Ethernet header dropped): link
/// type 101 (LINKTYPE_RAW, which libpcap hands over as DLT_RAW 12) in a pcap and a pcapng file,
/// and 228 (LINKTYPE_IPV4) in a pcap file, into `dir`.
fn raw_ip_captures(dir: &Path) -> [PathBuf; 3] {
    use roce_inspect::decode::{Aeth, Reth};
    use roce_inspect::synth::capfile::{Record, pcap_bytes, pcapng_bytes};
    let frames = [
        rc_frame(0x0a, 20, &|p| {
            p.payload_len = 64;
            p.ext.reth = Reth {
                va: 0x7f00_0000_4000,
                rkey: 0x99,
                dma_len: 64,
            };
        }),
        rc_frame(0x11, 20, &|p| {
            p.ext.aeth = Aeth {
                syndrome: 0x1f,
                msn: 1,
            }
        }),
        rc_frame(0x11, 21, &|p| {
            p.ext.aeth = Aeth {
                syndrome: 0x60,
                msn: 1,
            }
        }),
    ];
    let recs: Vec<Record> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| Record::new(1_796_090_400_000_000_000 + i as u64 * 500, f[14..].to_vec()))
        .collect();
    let out = [
        ("raw101.pcap", 101, false),
        ("raw101.pcapng", 101, true),
        ("ipv4.pcap", 228, false),
    ];
    out.map(|(name, lt, ng)| {
        let p = dir.join(name);
        let bytes = if ng {
            pcapng_bytes(lt, 65535, &recs)
        } else {
            pcap_bytes(lt, 65535, &recs)
        };
        std::fs::write(&p, bytes).unwrap();
        p
    })
}

/// An Ethernet frame from the project's frame builder: RoCEv2 over IPv4 10.0.0.1 → 10.0.0.2,
/// DestQP 0x0001a2, `opcode` and `psn`, then whatever `f` sets.
fn rc_frame(opcode: u8, psn: u32, f: &dyn Fn(&mut roce_inspect::synth::frame::Packet)) -> Vec<u8> {
    use roce_inspect::decode::Opcode;
    use roce_inspect::synth::frame::{Bth, Packet};
    let bth = Bth {
        opcode: Opcode(opcode),
        dest_qp: 0x0001a2,
        psn,
        ..Bth::default()
    };
    let mut p = Packet::v4([10, 0, 0, 1], [10, 0, 0, 2], bth);
    f(&mut p);
    p.build()
}

/// The bundled samples, then the third-party captures when they are there.
fn capture_files() -> Vec<PathBuf> {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut dirs = vec![samples];
    if let Some(base) = common::captures_dir() {
        dirs.extend(["real", "derived", "synthetic"].map(|d| base.join(d)));
    }
    let mut files = Vec::new();
    for d in dirs {
        let rd = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for e in rd {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".pcap") || name.ends_with(".pcapng") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn tshark_available() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One tshark row: field → every occurrence (aggregated with `;`).
type Row = BTreeMap<&'static str, Vec<String>>;

fn run_tshark(file: &Path) -> BTreeMap<u64, Row> {
    let mut rows = BTreeMap::new();
    for cols in common::tshark_all(file, FIELDS) {
        assert_eq!(cols.len(), FIELDS.len(), "tshark row: {cols:?}");
        let mut row = Row::new();
        for (f, c) in FIELDS.iter().zip(cols) {
            if !c.is_empty() {
                row.insert(f, c.split(';').map(str::to_string).collect());
            }
        }
        if !row["frame.protocols"][0]
            .split(':')
            .any(|p| p == "infiniband")
        {
            continue;
        }
        let n = common::tshark_num(&row["frame.number"][0]);
        rows.insert(n, row);
    }
    rows
}

/// `read FILE --json`, with the default (mapped) reader; libpcap's reader
/// (`ROCE_INSPECT_READER=libpcap`) must print the same.
fn run_ours(file: &Path) -> BTreeMap<u64, Value> {
    let go = |reader: &str, threads: &str| {
        Command::new(BIN)
            .arg("read")
            .arg(file)
            .args(["--json", "--threads", threads])
            .env("ROCE_INSPECT_READER", reader)
            .output()
            .expect("running roce-inspect")
    };
    let out = go("", "2");
    let lib = go("libpcap", "2");
    let one = go("", "1");
    assert!(
        out.stdout == lib.stdout && out.status.code() == lib.status.code(),
        "{}: the mapped and libpcap readers differ",
        file.display()
    );
    assert!(
        out.stdout == one.stdout && out.status.code() == one.status.code(),
        "{}: the mapped reader with one thread and with two differ",
        file.display()
    );
    assert!(
        out.status.success(),
        "roce-inspect failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut frames = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let n = v["frame"].as_u64().expect("frame number");
        assert!(frames.insert(n, v).is_none(), "frame {n} printed twice");
    }
    frames
}

/// `frame.time_epoch` (`1781684412.357518000`, nanosecond digits) as integer ns.
fn epoch_ns(s: &str) -> u64 {
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    assert!(frac.len() <= 9, "{s:?}");
    let ns: u64 = format!("{frac:0<9}").parse().unwrap();
    sec.parse::<u64>().unwrap() * 1_000_000_000 + ns
}

/// A tshark boolean: `1`/`0` or `True`/`False`.
fn parse_bool(s: &str) -> bool {
    match s {
        "1" | "True" | "true" => true,
        "0" | "False" | "false" => false,
        _ => panic!("not a tshark boolean: {s:?}"),
    }
}

/// A tshark FT_BYTES value (`00200000` or `00:20:00:00`) as a big-endian number.
fn parse_bytes(s: &str) -> u64 {
    let h: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    u64::from_str_radix(&h, 16).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

/// Counts of compared fields, to prove the comparison is not vacuous.
#[derive(Default)]
struct Coverage(BTreeMap<&'static str, u64>);

impl Coverage {
    fn hit(&mut self, what: &'static str) {
        *self.0.entry(what).or_default() += 1;
    }
}

struct Cmp<'a> {
    file: String,
    frame: u64,
    errs: &'a mut Vec<String>,
    cov: &'a mut Coverage,
}

impl Cmp<'_> {
    fn eq(&mut self, what: &'static str, tshark: Option<u64>, ours: Option<u64>) {
        if tshark.is_some() {
            self.cov.hit(what);
        }
        if tshark != ours {
            self.errs.push(format!(
                "{} frame {}: {what}: tshark {:?}, roce-inspect {:?}",
                self.file, self.frame, tshark, ours
            ));
        }
    }
}

fn first<'r>(row: &'r Row, f: &str) -> Option<&'r str> {
    row.get(f).map(|v| v[0].as_str())
}

fn num(row: &Row, f: &str) -> Option<u64> {
    first(row, f).map(common::tshark_num)
}

fn flag(row: &Row, f: &str) -> Option<u64> {
    first(row, f).map(|s| parse_bool(s) as u64)
}

fn j(v: &Value, path: &[&str]) -> Option<u64> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    match cur {
        Value::Bool(b) => Some(*b as u64),
        Value::Number(n) => Some(n.as_u64().expect("unsigned JSON number")),
        Value::Null => None,
        other => panic!("unexpected JSON {other} at {path:?}"),
    }
}

fn ip(s: &str) -> u64 {
    let a: std::net::Ipv4Addr = s.parse().unwrap();
    u32::from(a) as u64
}

fn compare_frame(c: &mut Cmp<'_>, t: &Row, o: &Value) {
    c.eq(
        "frame.time_epoch",
        first(t, "frame.time_epoch").map(epoch_ns),
        j(o, &["ts_ns"]),
    );
    c.eq("frame.len", num(t, "frame.len"), j(o, &["len"]));
    c.eq("frame.cap_len", num(t, "frame.cap_len"), j(o, &["caplen"]));
    // VLAN tags: ours are the outermost tag (`vlan`, `vlan_pcp`) and the next one
    // (`inner_vlan`). tshark names an 802.1ad S-tag `ieee8021ad.*` and 802.1Q tags `vlan.*`.
    let all = |f: &str| -> Vec<u64> {
        t.get(f)
            .map(|v| v.iter().map(|s| common::tshark_num(s)).collect())
            .unwrap_or_default()
    };
    let mut ids = all("ieee8021ad.id");
    let mut pcps = all("ieee8021ad.priority");
    ids.extend(all("vlan.id"));
    pcps.extend(all("vlan.priority"));
    c.eq("vlan outer id", ids.first().copied(), j(o, &["vlan"]));
    c.eq("vlan outer pcp", pcps.first().copied(), j(o, &["vlan_pcp"]));
    c.eq("vlan inner id", ids.get(1).copied(), j(o, &["inner_vlan"]));
    // Compare IPv4 addresses when tshark has them (every RoCEv2 capture here is IPv4). Of a
    // mirrored frame (ERSPAN, VXLAN: our `encap`) tshark lists the tunnel's outer IP first
    // and the RoCE packet's own last; ours are the RoCE packet's.
    let ip_of = |f: &str| match o.get("encap") {
        Some(_) => t.get(f).and_then(|v| v.last()).map(String::as_str),
        None => first(t, f),
    };
    if let Some(src) = ip_of("ip.src") {
        c.eq("ip.src", Some(ip(src)), o["src"].as_str().map(ip));
        c.eq("ip.dst", ip_of("ip.dst").map(ip), o["dst"].as_str().map(ip));
    }
    c.eq(
        "bth.opcode",
        num(t, "infiniband.bth.opcode"),
        j(o, &["bth", "opcode"]),
    );
    c.eq("bth.se", flag(t, "infiniband.bth.se"), j(o, &["bth", "se"]));
    c.eq("bth.m", flag(t, "infiniband.bth.m"), j(o, &["bth", "m"]));
    c.eq(
        "bth.padcnt",
        num(t, "infiniband.bth.padcnt"),
        j(o, &["bth", "pad"]),
    );
    if num(t, "infiniband.bth.padcnt").is_some_and(|p| p > 0) {
        c.cov.hit("bth.padcnt>0");
    }
    c.eq(
        "bth.tver",
        num(t, "infiniband.bth.tver"),
        j(o, &["bth", "tver"]),
    );
    c.eq(
        "bth.p_key",
        num(t, "infiniband.bth.p_key"),
        j(o, &["bth", "pkey"]),
    );
    c.eq(
        "bth.destqp",
        num(t, "infiniband.bth.destqp"),
        j(o, &["bth", "dest_qp"]),
    );
    c.eq(
        "bth.a",
        flag(t, "infiniband.bth.a"),
        j(o, &["bth", "ack_req"]),
    );
    c.eq(
        "bth.psn",
        num(t, "infiniband.bth.psn"),
        j(o, &["bth", "psn"]),
    );

    // tshark files the AtomicETH VA and R_Key under the RETH field names.
    let atomic = o.get("atomic_eth").is_some()
        || num(t, "infiniband.atomiceth.swapdt").is_some()
        || num(t, "infiniband.atomiceth.cmpdt").is_some();
    let va_key = if atomic { "atomic_eth" } else { "reth" };
    c.eq(
        "reth.va",
        num(t, "infiniband.reth.va"),
        j(o, &[va_key, "va"]),
    );
    c.eq(
        "reth.r_key",
        num(t, "infiniband.reth.r_key"),
        j(o, &[va_key, "rkey"]),
    );
    c.eq(
        "reth.dmalen",
        num(t, "infiniband.reth.dmalen"),
        j(o, &["reth", "dma_len"]),
    );
    c.eq(
        "atomiceth.swapdt",
        num(t, "infiniband.atomiceth.swapdt"),
        j(o, &["atomic_eth", "swap_add"]),
    );
    c.eq(
        "atomiceth.cmpdt",
        num(t, "infiniband.atomiceth.cmpdt"),
        j(o, &["atomic_eth", "compare"]),
    );
    c.eq(
        "aeth.syndrome",
        num(t, "infiniband.aeth.syndrome"),
        j(o, &["aeth", "syndrome"]),
    );
    c.eq(
        "aeth.msn",
        num(t, "infiniband.aeth.msn"),
        j(o, &["aeth", "msn"]),
    );
    c.eq(
        "deth.q_key",
        num(t, "infiniband.deth.q_key"),
        j(o, &["deth", "qkey"]),
    );
    c.eq(
        "deth.srcqp",
        num(t, "infiniband.deth.srcqp"),
        j(o, &["deth", "src_qp"]),
    );
    c.eq(
        "atomicacketh.origremdt",
        num(t, "infiniband.atomicacketh.origremdt"),
        j(o, &["atomic_ack_eth", "orig"]),
    );
    // ImmDt: every occurrence (header item and value item) must equal ours.
    let ours_imm = j(o, &["imm"]);
    match t.get("infiniband.immdt") {
        Some(all) => {
            for s in all {
                c.eq("immdt", Some(parse_bytes(s)), ours_imm);
            }
        }
        None => c.eq("immdt", None, ours_imm),
    }
    c.eq(
        "ieth",
        first(t, "infiniband.ieth").map(parse_bytes),
        j(o, &["ieth", "rkey"]),
    );
    // The wire ICRC bytes: tshark reads them big-endian, we keep the CRC value (LSB first).
    let ours_icrc = j(o, &["icrc", "value"]).map(|v| v as u32);
    let opcode = j(o, &["bth", "opcode"]);
    if matches!(opcode, Some(0x80 | 0x81)) {
        // tshark does not know the CNP layout: it shows everything after the BTH as
        // "Unknown/Vendor Specific Data" and no ICRC field. Those bytes must be the 16 reserved
        // zero bytes (spec §2) followed by the ICRC we found.
        // The field occurs twice: the 4-byte subtree item, then the value item with all bytes.
        let vendor = t.get("infiniband.vendor").and_then(|v| v.last()).map(|s| {
            s.chars()
                .filter(|c| c.is_ascii_hexdigit())
                .collect::<String>()
        });
        let expect = ours_icrc.map(|v| {
            let b = v.to_le_bytes();
            format!(
                "{}{:02x}{:02x}{:02x}{:02x}",
                "00".repeat(16),
                b[0],
                b[1],
                b[2],
                b[3]
            )
        });
        if vendor.is_some() {
            c.cov.hit("cnp.vendor");
        }
        if vendor != expect {
            c.errs.push(format!(
                "{} frame {}: CNP bytes after BTH: tshark {vendor:?}, expected from roce-inspect {expect:?}",
                c.file, c.frame
            ));
        }
        c.eq("invariant.crc", num(t, "infiniband.invariant.crc"), None);
    } else {
        c.eq(
            "invariant.crc",
            num(t, "infiniband.invariant.crc"),
            ours_icrc.map(|v| v.swap_bytes() as u64),
        );
    }
}

#[test]
fn every_capture_matches_tshark() {
    assert!(
        tshark_available(),
        "tshark is not installed or does not run: the differential test needs it \
         (install it with `make deps`, Debian package `tshark`)"
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut files = capture_files();
    files.push(header_kinds_capture(tmp.path()));
    files.extend(erf_captures(tmp.path()));
    files.extend(raw_ip_captures(tmp.path()));
    // 4 samples, and 16 real + 7 derived + 1 synthetic at the time of writing; fail loudly if
    // the corpus vanished.
    let want = if common::captures_root().is_dir() {
        28
    } else {
        4
    };
    assert!(
        files.len() >= want,
        "only {} capture files found",
        files.len()
    );

    // Run the files on a few threads: tshark takes ~0.2 s per file.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let chunks: Vec<Vec<PathBuf>> = (0..threads)
        .map(|i| files.iter().skip(i).step_by(threads).cloned().collect())
        .collect();
    let results: Vec<(Vec<String>, Coverage, u64)> = std::thread::scope(|s| {
        let hs: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                s.spawn(move || {
                    let mut errs = Vec::new();
                    let mut cov = Coverage::default();
                    let mut frames = 0u64;
                    for f in chunk {
                        let name = f.display().to_string();
                        let theirs = run_tshark(f);
                        let ours = run_ours(f);
                        let tk: BTreeSet<_> = theirs.keys().collect();
                        let ok: BTreeSet<_> = ours.keys().collect();
                        if theirs.len() != ours.len() || tk != ok {
                            errs.push(format!(
                                "{name}: {} RoCE frames per tshark, {} per roce-inspect; \
                                 only tshark: {:?}; only roce-inspect: {:?}",
                                theirs.len(),
                                ours.len(),
                                tk.difference(&ok).take(10).collect::<Vec<_>>(),
                                ok.difference(&tk).take(10).collect::<Vec<_>>(),
                            ));
                        }
                        for (n, t) in &theirs {
                            let Some(o) = ours.get(n) else { continue };
                            frames += 1;
                            let mut c = Cmp {
                                file: name.clone(),
                                frame: *n,
                                errs: &mut errs,
                                cov: &mut cov,
                            };
                            compare_frame(&mut c, t, o);
                        }
                    }
                    (errs, cov, frames)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let mut errs = Vec::new();
    let mut cov = Coverage::default();
    let mut frames = 0;
    for (e, c, n) in results {
        errs.extend(e);
        for (k, v) in c.0 {
            *cov.0.entry(k).or_default() += v;
        }
        frames += n;
    }
    assert!(
        errs.is_empty(),
        "{} differences from tshark, first ones:\n{}",
        errs.len(),
        errs.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
    // The comparison must have exercised every header kind; a renamed tshark field or an empty
    // decode would otherwise pass silently.
    let want = if common::captures_root().is_dir() {
        4000
    } else {
        500
    };
    assert!(frames > want, "only {frames} RoCE frames compared");
    for what in [
        "frame.time_epoch",
        "vlan outer id",
        "vlan outer pcp",
        "vlan inner id",
        "bth.opcode",
        "bth.psn",
        "bth.destqp",
        "bth.a",
        "bth.padcnt",
        "bth.padcnt>0",
        "bth.p_key",
        "reth.va",
        "reth.r_key",
        "reth.dmalen",
        "aeth.syndrome",
        "aeth.msn",
        "deth.q_key",
        "deth.srcqp",
        "atomiceth.swapdt",
        "atomiceth.cmpdt",
        "atomicacketh.origremdt",
        "immdt",
        "invariant.crc",
        "cnp.vendor",
    ] {
        assert!(
            cov.0.get(what).copied().unwrap_or(0) > 0,
            "no frame exercised {what}; coverage: {:?}",
            cov.0
        );
    }
    eprintln!("tshark diff: {frames} frames; coverage {:?}", cov.0);
}
