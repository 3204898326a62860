//! Command-line behaviour of `roce-inspect read` (assert_cmd): the errors of issue 2 point 5,
//! usage errors, a closed output pipe, NDJSON keys, the selection options, standard input,
//! `--roce-port`, and colour control.
//!
//! Expected frame counts and positions come from walking the pcap record headers here (24-byte
//! file header, 16-byte record headers: libpcap's classic format), not from roce-inspect.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
use serde_json::Value;

mod common;

/// A third-party capture of `../shared/captures/real` (tests using it start with
/// `need_shared!()`).
fn real(name: &str) -> PathBuf {
    common::captures_root().join("real").join(name)
}

/// A bundled sample (made by `make_samples`).
fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

fn bin() -> Command {
    let mut c = Command::cargo_bin("roce-inspect").unwrap();
    c.env_remove("NO_COLOR");
    c
}

/// Run and return (status code, stdout, stderr).
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = bin().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The error contract: exit 1, exactly one stderr line, prefixed, naming the file.
fn assert_one_line_error(code: Option<i32>, stderr: &str, file: &str, what: &str) {
    assert_eq!(code, Some(1), "{what}: exit status; stderr {stderr:?}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: stderr must be one line: {stderr:?}"
    );
    assert!(
        lines[0].starts_with("roce-inspect: "),
        "{what}: {:?}",
        lines[0]
    );
    assert!(
        lines[0].contains(file),
        "{what}: file not named: {:?}",
        lines[0]
    );
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
}

/// Classic little-endian pcap: (link type, [(record offset, record end, ts_ns)]).
fn pcap_records(b: &[u8]) -> (u32, Vec<(usize, usize, u64)>) {
    assert_eq!(&b[..4], &[0xd4, 0xc3, 0xb2, 0xa1], "µs little-endian pcap");
    let le = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let lt = le(20);
    let mut off = 24;
    let mut recs = Vec::new();
    while off + 16 <= b.len() {
        let caplen = le(off + 8) as usize;
        let end = off + 16 + caplen;
        if end > b.len() {
            break;
        }
        let ts = le(off) as u64 * 1_000_000_000 + le(off + 4) as u64 * 1000;
        recs.push((off, end, ts));
        off = end;
    }
    (lt, recs)
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

// ---------------------------------------------------------------- errors (issue 2 point 5)

#[test]
fn missing_file() {
    let (code, out, err) = run(&["read", "/nonexistent/dir/trace.pcap"]);
    assert_one_line_error(code, &err, "/nonexistent/dir/trace.pcap", "missing");
    assert!(err.contains("No such file"), "{err}");
    assert!(out.is_empty());
}

#[test]
fn empty_file() {
    let d = tmp();
    let p = d.path().join("empty.pcap");
    std::fs::write(&p, b"").unwrap();
    let (code, out, err) = run(&["read", p.to_str().unwrap()]);
    assert_one_line_error(code, &err, "empty.pcap", "empty");
    assert!(err.contains("empty"), "{err}");
    assert!(out.is_empty());
}

/// Empty input is worded one way whatever it comes from: an empty file, a device that reads
/// nothing, standard input, for `read` and `correlate` alike.
#[test]
fn empty_input_is_worded_one_way() {
    let d = tmp();
    let p = d.path().join("empty.pcap");
    std::fs::write(&p, b"").unwrap();
    let wb = sample("write_bw.pcap");
    let p = p.to_str().unwrap();
    for (args, named) in [
        (vec!["read", p], "empty.pcap"),
        (vec!["read", "/dev/null"], "/dev/null"),
        (vec!["correlate", p, wb.to_str().unwrap()], "empty.pcap"),
    ] {
        let (code, _, err) = run(&args);
        assert_one_line_error(code, &err, named, "empty");
        assert!(
            err.ends_with(&format!("{named}: file is empty\n")),
            "{args:?}: {err}"
        );
    }
    for args in [
        vec!["read", "-"],
        vec!["correlate", "-", wb.to_str().unwrap()],
    ] {
        let out = StdCommand::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .args(&args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err, "roce-inspect: <stdin>: file is empty\n", "{args:?}");
    }
}

#[test]
fn not_a_capture() {
    let d = tmp();
    let p = d.path().join("notes.pcap");
    std::fs::write(&p, "this is a text file, not a capture\n".repeat(10)).unwrap();
    let (code, out, err) = run(&["read", p.to_str().unwrap()]);
    assert_one_line_error(code, &err, "notes.pcap", "not a capture");
    assert!(err.contains("not a pcap"), "{err}");
    assert!(out.is_empty());
}

#[test]
fn directory_is_an_error() {
    let d = tmp();
    let (code, _, err) = run(&["read", d.path().to_str().unwrap()]);
    assert_one_line_error(code, &err, d.path().to_str().unwrap(), "directory");
}

/// A file cut in the middle of its 24th record: the 23 complete records are still printed,
/// then one line on stderr naming the file, exit 1.
#[test]
fn file_cut_in_the_middle_of_a_record() {
    let m = common::mixed();
    let full = std::fs::read(&m.pcap).unwrap();
    let (_, recs) = pcap_records(&full);
    let cut_rec = 23; // 0-based index of the record that gets cut
    let (start, end, _) = recs[cut_rec];
    let cut = start + 16 + (end - start - 16) / 2;
    let d = tmp();
    let p = d.path().join("cut.pcap");
    std::fs::write(&p, &full[..cut]).unwrap();

    let (code, out, err) = run(&["read", p.to_str().unwrap(), "--all", "--json"]);
    assert_one_line_error(code, &err, "cut.pcap", "cut record");
    let frames: Vec<u64> = json_lines(&out)
        .iter()
        .map(|v| v["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(frames, (1..=cut_rec as u64).collect::<Vec<_>>());

    // Same in the default text format: 23 lines, then the error.
    let (code, out, err) = run(&["read", p.to_str().unwrap(), "--all"]);
    assert_one_line_error(code, &err, "cut.pcap", "cut record (text)");
    assert_eq!(out.lines().count(), cut_rec);
    // The error names the last good record by its number in the file, filter or not.
    assert!(err.contains(&format!("after frame {cut_rec}:")), "{err}");
    let (_, _, err_f) = run(&["read", p.to_str().unwrap(), "-f", "tcp"]);
    assert_eq!(err_f, err, "with a filter");

    // And a file cut inside a record *header*.
    let p2 = d.path().join("cut2.pcap");
    std::fs::write(&p2, &full[..start + 6]).unwrap();
    let (code, out, err) = run(&["read", p2.to_str().unwrap(), "--all"]);
    assert_one_line_error(code, &err, "cut2.pcap", "cut record header");
    assert_eq!(out.lines().count(), cut_rec);
}

#[test]
fn pcapng_cut_in_the_middle_of_a_block() {
    let m = common::mixed();
    let full = std::fs::read(&m.pcapng).unwrap();
    let d = tmp();
    let p = d.path().join("cut.pcapng");
    std::fs::write(&p, &full[..full.len() / 2]).unwrap();
    let (code, out, err) = run(&["read", p.to_str().unwrap(), "--all"]);
    assert_one_line_error(code, &err, "cut.pcapng", "cut pcapng");
    assert!(
        out.lines().count() > 10,
        "frames before the cut are printed"
    );
}

/// A pcap file header with link type 105 (IEEE 802.11), written by hand.
#[test]
fn unsupported_link_type() {
    let mut h = Vec::new();
    h.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes()); // magic, µs
    h.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
    h.extend_from_slice(&4u16.to_le_bytes());
    h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
    h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
    h.extend_from_slice(&65535u32.to_le_bytes()); // snaplen
    h.extend_from_slice(&105u32.to_le_bytes()); // LINKTYPE_IEEE802_11
    // One 4-byte record, so the error is about the link type and not about an empty file.
    h.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 1, 2, 3, 4]);
    let d = tmp();
    let p = d.path().join("wifi.pcap");
    std::fs::write(&p, &h).unwrap();
    let (code, out, err) = run(&["read", p.to_str().unwrap()]);
    assert_one_line_error(code, &err, "wifi.pcap", "link type");
    assert!(err.contains("105"), "{err}");
    assert!(out.is_empty());
}

// ---------------------------------------------------------------- usage errors: exit 2

#[test]
fn bad_arguments_exit_2() {
    let f = sample("write_bw.pcap");
    let f = f.to_str().unwrap();
    for args in [
        vec![],
        vec!["read"],
        vec!["frobnicate", f],
        vec!["read", f, "--frobnicate"],
        vec!["read", f, "--qp", "zz"],
        vec!["read", f, "--qp", "0x1000000"], // wider than 24 bits
        vec!["read", f, "--opcode", "NOT_AN_OPCODE"],
        vec!["read", f, "--opcode", "256"],
        vec!["read", f, "-c", "x"],
        vec!["read", f, "--color", "sometimes"],
        vec!["read", f, "--roce-port", "70000"],
        vec!["read", f, "--roce-port", "0"],
        vec!["read", f, "-c", "0"],
        vec!["read", f, "--mtu", "1000"],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}");
        assert!(
            !err.is_empty() && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        // A bare `roce-inspect` prints the help; every real usage error is one line.
        if !args.is_empty() {
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.starts_with("roce-inspect: "), "{args:?}: {err}");
        }
    }
}

/// A filter libpcap cannot compile is a usage error (exit 2, as for arguments clap refuses):
/// one line naming the expression, with libpcap's reason; for every command that reads files.
#[test]
fn bad_filter_is_a_one_line_usage_error() {
    let wb = sample("write_bw.pcap");
    let wb = wb.to_str().unwrap();
    let (n0, n1) = (
        sample("allreduce_node0.pcap"),
        sample("allreduce_node1.pcap"),
    );
    let dir = tmp();
    let pq = dir.path().join("pq");
    let svg = dir.path().join("p.svg");
    for args in [
        vec!["read", wb, "-f", "udp and ((("],
        vec!["read", wb, "-q", "--threads", "2", "-f", "udp and ((("],
        vec![
            "export",
            wb,
            "--parquet",
            pq.to_str().unwrap(),
            "-f",
            "udp and (((",
        ],
        vec![
            "correlate",
            n0.to_str().unwrap(),
            n1.to_str().unwrap(),
            "-f",
            "udp and (((",
        ],
        vec!["plot", wb, "-o", svg.to_str().unwrap(), "-f", "udp and ((("],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("roce-inspect: ")
                && err.contains("bad filter expression 'udp and (((': "),
            "{args:?}: {err}"
        );
        // libpcap's reason, without its own preamble.
        assert!(
            !err.contains("can't parse filter expression"),
            "{args:?}: {err}"
        );
        assert!(out.is_empty(), "{args:?}");
    }
    let (code, _, err) = run(&["read", wb, "-f", "port 99999"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("'port 99999'") && err.contains("99999"),
        "{err}"
    );
}

// ---------------------------------------------------------------- time going back

/// A frame stamped before the first one has a negative relative time, as tshark's
/// `frame.time_relative` shows it (it was printed as 0 before): frame 2 is stamped 1.999999627 s
/// before frame 1, frame 3 768 ns after it.
#[test]
fn relative_time_goes_negative() {
    use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, pcap_bytes};
    let mut recs: Vec<_> = roce_inspect::synth::scenario::write_bw::scenario()
        .sample
        .records
        .into_iter()
        .take(3)
        .collect();
    let t0 = recs[0].ts_ns;
    recs[1].ts_ns = t0 - 1_999_999_627;
    recs[2].ts_ns = t0 + 768;
    let d = tmp();
    let f = d.path().join("back.pcap");
    std::fs::write(&f, pcap_bytes(LINKTYPE_ETHERNET, 65535, &recs)).unwrap();
    let (code, out, err) = run(&["read", f.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let times: Vec<&str> = out
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(
        times,
        ["0.000000000", "-1.999999627", "0.000000768"],
        "{out}"
    );
}

// ---------------------------------------------------------------- warnings in JSON

/// What makes the numbers doubtful is in `--summary --json`'s `warnings`, not only in the text
/// report or on stderr: flows beyond `--max-flows`, and a file damaged after some frame (the
/// report is of the frames before it; status 1 and the line on stderr as before).
#[test]
fn json_warnings_name_untracked_flows_and_a_damaged_file() {
    use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, pcap_bytes};
    let recs = roce_inspect::synth::scenario::write_bw::scenario()
        .sample
        .records;
    let d = tmp();
    let whole = d.path().join("whole.pcap");
    let bytes = pcap_bytes(LINKTYPE_ETHERNET, 65535, &recs);
    std::fs::write(&whole, &bytes).unwrap();
    let (code, out, err) = run(&[
        "read",
        whole.to_str().unwrap(),
        "--summary",
        "--json",
        "--max-flows",
        "1",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let untracked = v["frames"]["untracked"].as_u64().unwrap();
    assert!(untracked > 0);
    let w = v["warnings"].as_array().unwrap();
    assert!(
        w.iter().any(|w| w.as_str().unwrap().starts_with(&format!(
            "{untracked} RoCE frames in 1 flows beyond --max-flows"
        ))),
        "{w:?}"
    );
    // Cut 10 bytes into the data of the 21st record: 20 frames read.
    let mut at = 24;
    for _ in 0..20 {
        at += 16 + u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    let cut = d.path().join("cut.pcap");
    std::fs::write(&cut, &bytes[..at + 16 + 10]).unwrap();
    let (code, out, err) = run(&["read", cut.to_str().unwrap(), "--summary", "--json"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("cut.pcap: after frame 20: "), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["frames"]["total"], 20);
    let w = v["warnings"].as_array().unwrap();
    assert!(
        w.iter().any(|w| {
            let w = w.as_str().unwrap();
            w.contains("cut.pcap: after frame 20: ")
                && w.ends_with("the report covers the frames before it")
        }),
        "{w:?}"
    );
}

/// A capture with its header and no record: exit 0, nothing on standard output, and one note
/// on stderr (before, nothing at all was printed, as if the tool had not run).
#[test]
fn header_only_capture_is_noted() {
    use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, pcap_bytes};
    let d = tmp();
    let f = d.path().join("hdr.pcap");
    std::fs::write(&f, pcap_bytes(LINKTYPE_ETHERNET, 65535, &[])).unwrap();
    let (code, out, err) = run(&["read", f.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("hdr.pcap: no frames"), "{err}");
    // With a report, the note is one of its warnings (a `--summary --json | jq` pipeline sees
    // it), not a line on stderr besides.
    let (code, out, err) = run(&["read", f.to_str().unwrap(), "--summary", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let w = v["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].as_str()
            .unwrap()
            .ends_with("hdr.pcap: no frames (the file holds a capture header only)"),
        "{w:?}"
    );
    let (_, out, err) = run(&["read", f.to_str().unwrap(), "-q"]);
    assert!(err.is_empty(), "{err}");
    assert!(
        out.contains("warning: ") && out.contains("hdr.pcap: no frames"),
        "{out}"
    );
    // `--gaps` and `--messages` print no warnings: the note stays on stderr.
    for args in [["-q", "--gaps"], ["-q", "--messages"]] {
        let (code, _, err) = run(&["read", f.to_str().unwrap(), args[0], args[1]]);
        assert_eq!(code, Some(0), "{err}");
        assert!(err.contains("hdr.pcap: no frames"), "{args:?}: {err}");
    }
}

/// `-V` shows the ICRC as its CRC-32 value and as the bytes on the wire — the frame's last
/// four (Wireshark's "Invariant CRC" reads those as one big-endian number).
#[test]
fn verbose_icrc_shows_the_wire_bytes() {
    use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, pcap_bytes};
    let recs: Vec<_> = roce_inspect::synth::scenario::write_bw::scenario()
        .sample
        .records
        .into_iter()
        .take(1)
        .collect();
    let d = tmp();
    let f = d.path().join("one.pcap");
    std::fs::write(&f, pcap_bytes(LINKTYPE_ETHERNET, 65535, &recs)).unwrap();
    let (code, out, err) = run(&["read", f.to_str().unwrap(), "-V"]);
    assert_eq!(code, Some(0), "{err}");
    let data = &recs[0].data;
    let last: Vec<String> = data[data.len() - 4..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let value = u32::from_le_bytes(data[data.len() - 4..].try_into().unwrap());
    let want = format!("ICRC: 0x{value:08x} (wire {}) [good]", last.join(" "));
    assert!(out.contains(&want), "{want}\n{out}");
}

// ---------------------------------------------------------------- closed pipe

/// `read f.pcap | head -1` through a real shell pipe: exit 0 (or death by SIGPIPE), no panic
/// text. The capture (the congestion sample four times over) prints far more than a pipe
/// buffer holds.
#[test]
fn closed_pipe_is_quiet() {
    let bin = assert_cmd::cargo::cargo_bin("roce-inspect");
    let d = tmp();
    let f = d.path().join("big.pcap");
    {
        use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, pcap_bytes};
        let one = roce_inspect::synth::scenario::congestion::scenario()
            .sample
            .records;
        let span = one.last().unwrap().ts_ns - one[0].ts_ns + 1_000;
        let recs: Vec<_> = (0..4u64)
            .flat_map(|k| {
                one.iter().map(move |r| {
                    let mut r = r.clone();
                    r.ts_ns += k * span;
                    r
                })
            })
            .collect();
        std::fs::write(&f, pcap_bytes(LINKTYPE_ETHERNET, 65535, &recs)).unwrap();
    }
    for extra in ["", "--json", "-V", "--all"] {
        let script = format!(
            "set -o pipefail; '{}' read '{}' {extra} | head -1 >/dev/null",
            bin.display(),
            f.display()
        );
        let out = StdCommand::new("bash")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        // With pipefail the pipeline's status is roce-inspect's: 0, or 128+13 if SIGPIPE.
        let code = out.status.code();
        assert!(
            code == Some(0) || code == Some(141),
            "{extra}: status {code:?}, stderr {err}"
        );
        assert!(err.is_empty(), "{extra}: stderr {err:?}");
    }
}

// ---------------------------------------------------------------- JSON

const TOP_KEYS: &[&str] = &[
    "frame",
    "ts_ns",
    "len",
    "caplen",
    "roce",
    "src",
    "dst",
    "ecn",
    "bth",
    "payload_len",
    "icrc",
];
const BTH_KEYS: &[&str] = &[
    "opcode",
    "opcode_name",
    "se",
    "m",
    "pad",
    "tver",
    "pkey",
    "fecn",
    "becn",
    "dest_qp",
    "ack_req",
    "psn",
];

fn has_keys(v: &Value, keys: &[&str], ctx: &str) {
    for k in keys {
        assert!(v.get(k).is_some(), "{ctx}: missing key {k:?} in {v}");
    }
}

/// A µs pcap with one packet of each extended header kind (RETH, AETH, DETH, AtomicETH,
/// AtomicAckETH, ImmDt), built with the project's frame builder.
fn ext_headers_fixture(dir: &Path) -> PathBuf {
    use roce_inspect::decode::{Aeth, AtomicEth, Deth, Opcode, Reth};
    use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, Record, Resolution, write_pcap_with};
    use roce_inspect::synth::frame::{Bth, Packet};
    let mk = |opcode: u8, f: &dyn Fn(&mut Packet)| {
        let mut p = Packet::v4(
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            Bth {
                opcode: Opcode(opcode),
                dest_qp: 0x12,
                psn: 7,
                ..Bth::default()
            },
        );
        f(&mut p);
        p.build()
    };
    let frames = [
        mk(0x06, &|p| {
            p.ext.reth = Reth {
                va: 0x1000,
                rkey: 0x55,
                dma_len: 2048,
            };
            p.payload_len = 1024;
        }),
        mk(0x11, &|p| {
            p.ext.aeth = Aeth {
                syndrome: 0x1f,
                msn: 3,
            }
        }),
        mk(0x64, &|p| {
            p.ext.deth = Deth {
                qkey: 0x1111_1111,
                src_qp: 0x99,
            };
            p.payload_len = 16;
        }),
        mk(0x14, &|p| {
            p.ext.atomic_eth = AtomicEth {
                va: 0x2000,
                rkey: 0x66,
                swap_add: 1,
                compare: 0,
            }
        }),
        mk(0x12, &|p| {
            p.ext.aeth = Aeth {
                syndrome: 0x1f,
                msn: 4,
            };
            p.ext.atomic_ack_eth.orig = 41;
        }),
        mk(0x0b, &|p| {
            p.ext.reth = Reth {
                va: 0x3000,
                rkey: 0x77,
                dma_len: 8,
            };
            p.ext.imm.data = 0xdead_beef;
            p.payload_len = 8;
        }),
    ];
    let recs: Vec<Record> = frames
        .into_iter()
        .enumerate()
        .map(|(i, f)| Record::new(1_700_000_000_000_000_000 + i as u64 * 1_000, f))
        .collect();
    let path = dir.join("ext.pcap");
    let mut out = std::fs::File::create(&path).unwrap();
    write_pcap_with(&mut out, LINKTYPE_ETHERNET, 65535, Resolution::Micro, &recs).unwrap();
    path
}

/// Check every `--json` line of the µs pcap at `path` against the documented keys and the
/// record headers; note the extended headers seen.
fn check_json_keys(path: &Path, seen_ext: &mut std::collections::BTreeSet<&'static str>) {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).unwrap();
    let (_, recs) = pcap_records(&bytes);
    let (code, out, err) = run(&["read", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let lines = json_lines(&out);
    assert!(!lines.is_empty());
    for v in &lines {
        let ctx = format!("{name} {v}");
        has_keys(v, TOP_KEYS, &ctx);
        has_keys(&v["bth"], BTH_KEYS, &ctx);
        has_keys(&v["icrc"], &["status", "value", "expected"], &ctx);
        let n = v["frame"].as_u64().unwrap() as usize;
        let (off, end, ts) = recs[n - 1];
        let le = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as u64;
        assert_eq!(v["ts_ns"].as_u64(), Some(ts), "{ctx}");
        assert_eq!(v["caplen"].as_u64(), Some((end - off - 16) as u64), "{ctx}");
        assert_eq!(v["len"].as_u64(), Some(le(off + 12)), "{ctx}");
        assert_eq!(v["roce"], "v2");
        assert!(
            ["not-ect", "ect0", "ect1", "ce"].contains(&v["ecn"].as_str().unwrap()),
            "{ctx}"
        );
        assert!(v["bth"]["opcode"].is_u64() && v["bth"]["opcode_name"].is_string());
        assert!(v["bth"]["ack_req"].is_boolean() && v["bth"]["psn"].is_u64());
        assert!(v["payload_len"].is_u64());
        for (k, keys) in [
            ("reth", &["va", "rkey", "dma_len"][..]),
            ("aeth", &["syndrome", "kind", "value", "msn"][..]),
            ("deth", &["qkey", "src_qp"][..]),
            ("atomic_eth", &["va", "rkey", "swap_add", "compare"][..]),
            ("atomic_ack_eth", &["orig"][..]),
        ] {
            if let Some(h) = v.get(k) {
                has_keys(h, keys, &ctx);
                for kk in keys {
                    assert!(h[kk].is_u64() || *kk == "kind", "{ctx}: {k}.{kk}");
                }
                seen_ext.insert(k);
            }
        }
        if v.get("imm").is_some() {
            assert!(v["imm"].is_u64(), "{ctx}");
            seen_ext.insert("imm");
        }
    }
}

/// Every `--json` line parses and carries the documented keys with the documented types;
/// `ts_ns`, `len` and `caplen` equal the pcap record headers. On a project-made file with every
/// extended header, and on real captures when they are there.
#[test]
fn json_lines_have_the_documented_keys() {
    let d = tmp();
    let mut seen_ext = std::collections::BTreeSet::new();
    check_json_keys(&ext_headers_fixture(d.path()), &mut seen_ext);
    assert_eq!(seen_ext.len(), 6, "extended headers seen: {seen_ext:?}");
    check_json_keys(&common::mixed().pcap, &mut seen_ext);
    need_shared!();
    for name in [
        "rping.pcap",
        "rdma_atomic_bw.pcap",
        "nccl_nccl_node0.pcap",
        "pingpong_ud.pcap",
    ] {
        check_json_keys(&real(name), &mut seen_ext);
    }
}

// ---------------------------------------------------------------- selection options

fn read_json(args: &[&str]) -> Vec<Value> {
    let (code, out, err) = run(args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    json_lines(&out)
}

fn frames_of(v: &[Value]) -> Vec<u64> {
    v.iter().map(|x| x["frame"].as_u64().unwrap()).collect()
}

#[test]
fn qp_selects_destination_qp() {
    let f = sample("write_bw.pcap");
    let f = f.to_str().unwrap();
    let all = read_json(&["read", f, "--json"]);
    // The two QPs of the sample (samples/README.md): 0x000b12 = 2834, 0x000a11 = 2577.
    for q in ["0xb12", "2834", "0x000a11", "2577"] {
        let qn = if let Some(h) = q.strip_prefix("0x") {
            u64::from_str_radix(h, 16).unwrap()
        } else {
            q.parse().unwrap()
        };
        let sel = read_json(&["read", f, "--json", "--qp", q]);
        assert!(!sel.is_empty(), "--qp {q}");
        let want: Vec<u64> = all
            .iter()
            .filter(|v| v["bth"]["dest_qp"].as_u64() == Some(qn))
            .map(|v| v["frame"].as_u64().unwrap())
            .collect();
        assert_eq!(frames_of(&sel), want, "--qp {q}");
    }
}

#[test]
fn opcode_selects_by_number_and_name() {
    let f = sample("read_timeout.pcap");
    let f = f.to_str().unwrap();
    let all = read_json(&["read", f, "--json"]);
    let with = |op: u64| -> Vec<u64> {
        all.iter()
            .filter(|v| v["bth"]["opcode"].as_u64() == Some(op))
            .map(|v| v["frame"].as_u64().unwrap())
            .collect()
    };
    // READ RESPONSE MIDDLE is 0x0e for RC (spec §2).
    for sel in [
        "0x0e",
        "14",
        "RC_RDMA_READ_RESPONSE_MIDDLE",
        "rdma_read_response_middle",
    ] {
        let got = read_json(&["read", f, "--json", "--opcode", sel]);
        assert!(!got.is_empty(), "--opcode {sel}");
        assert_eq!(frames_of(&got), with(0x0e), "--opcode {sel}");
    }
    let got = read_json(&["read", f, "--json", "--opcode", "RDMA_READ_REQUEST"]);
    assert_eq!(frames_of(&got), with(0x0c));
    // Nothing matches: no output, success.
    assert!(read_json(&["read", f, "--json", "--opcode", "CNP"]).is_empty());
}

#[test]
fn count_stops_after_n_frames() {
    let m = common::mixed();
    let f = m.pcap.to_str().unwrap();
    let got = read_json(&["read", f, "--json", "--all", "-c", "5"]);
    assert_eq!(frames_of(&got), vec![1, 2, 3, 4, 5]);
    // -c counts frames read, not lines printed (like tcpdump -c).
    let all = read_json(&["read", f, "--json"]);
    let got = read_json(&["read", f, "--json", "-c", "12"]);
    let want: Vec<u64> = frames_of(&all).into_iter().filter(|n| *n <= 12).collect();
    assert_eq!(frames_of(&got), want);
    let (code, out, _) = run(&["read", f, "--all", "-c", "3"]);
    assert_eq!((code, out.lines().count()), (Some(0), 3));
}

/// `--all` lists every frame (count from the pcap record headers); `-f` applies a BPF filter.
#[test]
fn all_and_bpf_filter() {
    let m = common::mixed();
    let path = m.pcap.clone();
    let f = path.to_str().unwrap();
    let (_, recs) = pcap_records(&std::fs::read(&path).unwrap());
    let all = read_json(&["read", f, "--json", "--all"]);
    assert_eq!(frames_of(&all), (1..=recs.len() as u64).collect::<Vec<_>>());
    let roce: Vec<&Value> = all.iter().filter(|v| !v["roce"].is_null()).collect();
    let other: Vec<&Value> = all.iter().filter(|v| v["roce"].is_null()).collect();
    assert_eq!(roce.len(), m.roce);
    assert_eq!(other.len(), m.tcp, "perftest-like TCP exchange");
    assert!(
        other.iter().all(|v| v["proto"] == "tcp"),
        "non-RoCE frames are perftest's TCP"
    );

    // 'udp' keeps every RoCE frame and drops the TCP ones.
    let udp = read_json(&["read", f, "--json", "--all", "-f", "udp"]);
    assert_eq!(udp.len(), roce.len());
    assert!(udp.iter().all(|v| v["roce"] == "v2"));
    // Filtered frames keep their numbers in the file, as Wireshark numbers them.
    assert_eq!(
        frames_of(&udp),
        frames_of(&roce.iter().map(|v| (*v).clone()).collect::<Vec<_>>())
    );
    let tcp_numbers: Vec<u64> = other.iter().map(|v| v["frame"].as_u64().unwrap()).collect();
    // 'tcp' keeps no RoCE frame.
    assert!(read_json(&["read", f, "--json", "-f", "tcp"]).is_empty());
    let tcp = read_json(&["read", f, "--json", "--all", "-f", "tcp"]);
    assert_eq!(tcp.len(), other.len());
    assert_eq!(frames_of(&tcp), tcp_numbers);
    // The text output of --all has one line per frame.
    let (code, out, _) = run(&["read", f, "--all"]);
    assert_eq!((code, out.lines().count()), (Some(0), recs.len()));
}

/// `-` reads the capture from standard input, with the same output as the file.
#[test]
fn stdin_dash() {
    let m = common::mixed();
    let path = m.pcap.clone();
    let (_, from_file, _) = run(&["read", path.to_str().unwrap(), "--json"]);
    let out = bin()
        .args(["read", "-", "--json"])
        .pipe_stdin(&path)
        .unwrap()
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), from_file);
    assert_eq!(from_file.lines().count(), m.roce);
    // A non-capture on stdin is a one-line error naming <stdin>.
    let out = bin()
        .args(["read", "-"])
        .write_stdin("garbage garbage garbage garbage")
        .output()
        .unwrap();
    assert_one_line_error(
        out.status.code(),
        &String::from_utf8(out.stderr).unwrap(),
        "stdin",
        "stdin garbage",
    );
}

/// Rewrite every UDP destination port 4791 to 9741 (as Lumina's mirror does, spec §7) in a
/// copy of the mixed capture: nothing is RoCE by default, all of it with `--roce-port 9741`,
/// and then the ICRC is bad because it covers the UDP port.
#[test]
fn roce_port_option() {
    let m = common::mixed();
    let mut b = std::fs::read(&m.pcap).unwrap();
    let (lt, recs) = pcap_records(&b);
    assert_eq!(lt, 1);
    let mut rewritten = 0;
    for (off, end, _) in recs {
        let fr = off + 16;
        // Ethernet II, IPv4, UDP.
        if end - fr < 42 || b[fr + 12..fr + 14] != [0x08, 0x00] || b[fr + 23] != 17 {
            continue;
        }
        let udp = fr + 14 + (b[fr + 14] & 0x0f) as usize * 4;
        if b[udp + 2..udp + 4] == 4791u16.to_be_bytes() {
            b[udp + 2..udp + 4].copy_from_slice(&9741u16.to_be_bytes());
            rewritten += 1;
        }
    }
    assert_eq!(rewritten, m.roce);
    let d = tmp();
    let p = d.path().join("mirror.pcap");
    std::fs::write(&p, &b).unwrap();
    let f = p.to_str().unwrap();

    assert!(read_json(&["read", f, "--json"]).is_empty());
    // Nothing decoded: stderr says so and points at --roce-port (exit 0: not an error).
    let (code, out, err) = run(&["read", f]);
    assert_eq!((code, out.as_str()), (Some(0), ""));
    assert!(
        err.contains("no RoCE packets") && err.contains("--roce-port"),
        "{err}"
    );
    let got = read_json(&["read", f, "--json", "--roce-port", "9741"]);
    assert_eq!(got.len(), m.roce);
    for v in &got {
        assert_eq!(v["udp_dst_port"], 9741);
        assert_eq!(v["icrc"]["status"], "bad", "{v}");
        assert_ne!(v["icrc"]["value"], v["icrc"]["expected"]);
    }
    // Repeatable, and 4791 stays on.
    let got = read_json(&[
        "read",
        f,
        "--json",
        "--roce-port",
        "1234",
        "--roce-port",
        "9741",
    ]);
    assert_eq!(got.len(), m.roce);
    let orig = m.pcap.clone();
    let got = read_json(&[
        "read",
        orig.to_str().unwrap(),
        "--json",
        "--roce-port",
        "9741",
    ]);
    assert_eq!(got.len(), m.roce);
    assert!(got.iter().all(|v| v["icrc"]["status"] == "good"));
}

// ---------------------------------------------------------------- colour

fn has_escape(s: &[u8]) -> bool {
    s.contains(&0x1b)
}

#[test]
fn color_never_always_and_no_color() {
    let f = sample("write_bw.pcap");
    let f = f.to_str().unwrap();
    let out = bin()
        .args(["read", f, "--color", "never"])
        .output()
        .unwrap();
    assert!(!out.stdout.is_empty() && !has_escape(&out.stdout));
    let out = bin()
        .args(["read", f, "--color", "always"])
        .output()
        .unwrap();
    assert!(has_escape(&out.stdout), "--color always must colour");
    // NO_COLOR does not override an explicit --color always …
    let out = bin()
        .env("NO_COLOR", "1")
        .args(["read", f, "--color", "always"])
        .output()
        .unwrap();
    assert!(has_escape(&out.stdout));
    // … and auto (the default) on a pipe is plain.
    let out = bin().args(["read", f]).output().unwrap();
    assert!(!has_escape(&out.stdout));
    // -V and --all honour --color never too.
    let out = bin()
        .args(["read", f, "--color", "never", "-V", "--all"])
        .output()
        .unwrap();
    assert!(!has_escape(&out.stdout));
    // JSON never carries escapes.
    let out = bin()
        .args(["read", f, "--color", "always", "--json"])
        .output()
        .unwrap();
    assert!(!has_escape(&out.stdout));
}

/// `auto` on a terminal colours unless NO_COLOR is set: run under a pseudo-terminal with
/// util-linux `script` (package bsdutils, Essential in Debian).
#[test]
fn color_auto_on_a_terminal_honours_no_color() {
    let bin = assert_cmd::cargo::cargo_bin("roce-inspect");
    let f = sample("write_bw.pcap");
    let cmd = format!("'{}' read '{}' -c 3", bin.display(), f.display());
    let on_tty = |no_color: Option<&str>| {
        let mut c = StdCommand::new("script");
        c.args(["-qec", &cmd, "/dev/null"]);
        c.env_remove("NO_COLOR");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        let out = c
            .output()
            .expect("util-linux `script` is needed for the pty test");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.len() > 100, "no output through the pty");
        out.stdout
    };
    assert!(has_escape(&on_tty(None)), "auto on a terminal must colour");
    assert!(
        !has_escape(&on_tty(Some("1"))),
        "NO_COLOR=1 must turn colour off"
    );
    // no-color.org: an empty NO_COLOR does not count.
    assert!(has_escape(&on_tty(Some(""))));
}

/// A nanosecond pcap (magic 0xa1b23c4d) keeps every timestamp exact to the ns: the µs mixed
/// capture rewritten by hand with sub-microsecond digits added.
#[test]
fn nanosecond_pcap_timestamps_are_exact() {
    let m = common::mixed();
    let mut b = std::fs::read(&m.pcap).unwrap();
    let (_, recs) = pcap_records(&b);
    let mut want = Vec::new();
    for (i, (off, _, _)) in recs.iter().enumerate() {
        let sec = u32::from_le_bytes(b[*off..off + 4].try_into().unwrap()) as u64;
        let usec = u32::from_le_bytes(b[off + 4..off + 8].try_into().unwrap()) as u64;
        let ns = usec * 1000 + (i as u64 * 37) % 1000;
        b[off + 4..off + 8].copy_from_slice(&(ns as u32).to_le_bytes());
        want.push(sec * 1_000_000_000 + ns);
    }
    b[..4].copy_from_slice(&0xa1b2_3c4du32.to_le_bytes());
    let d = tmp();
    let p = d.path().join("ns.pcap");
    std::fs::write(&p, &b).unwrap();
    let got = read_json(&["read", p.to_str().unwrap(), "--json", "--all"]);
    let ts: Vec<u64> = got.iter().map(|v| v["ts_ns"].as_u64().unwrap()).collect();
    assert_eq!(ts, want);
    // The relative time of the text output keeps the ns digits too: frame 2 is ts[1]-ts[0].
    let (_, out, _) = run(&["read", p.to_str().unwrap(), "--all", "-c", "2"]);
    let rel = want[1] - want[0];
    let shown = format!("{}.{:09}", rel / 1_000_000_000, rel % 1_000_000_000);
    assert!(
        out.lines().nth(1).unwrap().contains(&shown),
        "{out}\nwant {shown}"
    );
}

/// Every bundled sample is described in samples/README.md and decodes with every ICRC good
/// (tests/samples.rs checks that make_samples rewrites them identically).
#[test]
fn samples_are_described_and_decode() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "pcap" && x != "pcapng") {
            continue;
        }
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        assert!(
            readme.contains(&name),
            "{name} not described in samples/README.md"
        );
        // vxlan.pcap is VXLAN to UDP 8472, decoded when told (samples/README.md).
        let mut args = vec!["read", p.to_str().unwrap(), "--json"];
        if name == "vxlan.pcap" {
            args.extend(["--vxlan-port", "8472"]);
        }
        let v = read_json(&args);
        assert!(
            !v.is_empty() && v.iter().all(|x| x["icrc"]["status"] == "good"),
            "{name}"
        );
        n += 1;
    }
    assert!(n >= 4, "{n} samples");
}

/// Empty standard input is reported as empty, like an empty file.
#[test]
fn empty_stdin() {
    let out = bin().args(["read", "-"]).write_stdin("").output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_one_line_error(out.status.code(), &err, "<stdin>", "empty stdin");
    assert!(err.contains("empty"), "{err}");
}

/// tcpdump's `-r FILE` and `capture -i IFACE` are accepted as well as the positional forms.
#[test]
fn tcpdump_style_r_and_i() {
    let path = sample("write_bw.pcap");
    let f = path.to_str().unwrap();
    let positional = run(&["read", f, "--json"]);
    let dash_r = run(&["read", "-r", f, "--json"]);
    assert_eq!(positional, dash_r);
    let (code, _, err) = run(&["read", f, "-r", f]);
    assert_eq!(
        code,
        Some(2),
        "FILE and -r together are a usage error: {err}"
    );
    let (code, _, err) = run(&["capture", "-i", "no-such-if0"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no-such-if0: no such interface"), "{err}");
}

/// A frame cut inside its Ethernet header may have been RoCE: it is shown, marked, without
/// `--all`, and counted in the report.
#[test]
fn frame_cut_inside_the_link_header_is_shown() {
    let mut h = Vec::new();
    h.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes()); // magic, µs
    h.extend_from_slice(&2u16.to_le_bytes());
    h.extend_from_slice(&4u16.to_le_bytes());
    h.extend_from_slice(&0i32.to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes());
    h.extend_from_slice(&10u32.to_le_bytes()); // snaplen 10
    h.extend_from_slice(&1u32.to_le_bytes()); // Ethernet
    // One record: caplen 10 of a 60-byte frame.
    h.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 60, 0, 0, 0]);
    h.extend_from_slice(&[0xff; 10]);
    let d = tmp();
    let p = d.path().join("cut.pcap");
    std::fs::write(&p, &h).unwrap();
    let (code, out, err) = run(&["read", p.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.contains("[TRUNCATED]") && out.contains("Ethernet"),
        "{out}"
    );
    let v = read_json(&["read", p.to_str().unwrap(), "--json"]);
    assert_eq!((v.len(), &v[0]["truncated"]), (1, &Value::Bool(true)));
    let r = read_json(&["read", p.to_str().unwrap(), "--summary", "--json"]);
    assert_eq!(r[0]["frames"]["total"], 1);
}

/// With a BPF filter, frames keep their number and their time relative to the file's first
/// frame: the line of a frame is the same with and without `-f`.
#[test]
fn filter_keeps_numbers_and_relative_times() {
    let m = common::mixed();
    let path = m.pcap.clone();
    let f = path.to_str().unwrap();
    let (_, all, _) = run(&["read", f]);
    let (_, udp, _) = run(&["read", f, "-f", "udp"]);
    assert!(!udp.is_empty());
    assert_eq!(all, udp, "the file's RoCE frames are all UDP");
    let (_, qp, _) = run(&[
        "read",
        f,
        "--qp",
        "0xa11",
        "-f",
        "udp and src host 10.0.0.2",
    ]);
    for line in qp.lines() {
        assert!(all.lines().any(|l| l == line), "{line}");
    }
}

/// Found by a fresh-user review: requests that cannot give a meaningful result are one-line
/// errors, not empty pictures or reports with exit 0.
#[test]
fn meaningless_requests_are_refused() {
    let d = tmp();
    let w = sample("write_bw.pcap");
    let w = w.to_str().unwrap();
    let png = d.path().join("q.png");
    let jpg = d.path().join("x.jpg");
    let n0 = sample("allreduce_node0.pcap");
    let n0 = n0.to_str().unwrap();
    let r = sample("read_timeout.pcap");
    let afile = d.path().join("afile");
    std::fs::write(&afile, b"x").unwrap();
    for (args, code, what) in [
        (
            vec!["export", w, "--parquet", afile.to_str().unwrap()],
            1,
            "not a directory",
        ),
        (
            vec!["plot", w, "--qp", "0x999", "-o", png.to_str().unwrap()],
            1,
            "no flow to destination QP",
        ),
        (
            vec!["plot", w, "-o", jpg.to_str().unwrap()],
            2,
            "must end in .svg or .png",
        ),
        (
            vec!["plot", w, "-o", "/nonexistent/dir/x.png"],
            1,
            "No such file or directory",
        ),
        (vec!["read", w, "--max-flows", "0"], 2, "at least 1"),
        (vec!["correlate", n0, n0], 2, "given twice"),
        (
            vec!["correlate", w, r.to_str().unwrap()],
            1,
            "no packet was seen by two captures",
        ),
    ] {
        let (c, _, err) = run(&args);
        assert_eq!(c, Some(code), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
    }
    assert!(!png.exists() && !jpg.exists());
}

/// A full disk on standard output is an error (exit 1, one line, no Rust `(os error N)`), for
/// `read` and for `export`'s per-file lines; a dataset folder that cannot be created says so.
#[test]
fn output_and_folder_errors_are_one_plain_line() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    let dir = tmp();
    let wb = sample("write_bw.pcap");
    let wb = wb.to_str().unwrap();
    let pq = dir.path().join("pq");
    // (exit status, standard error) of a run whose standard output is a full disk.
    let to_full = |args: &[&str]| {
        let full = std::fs::File::create("/dev/full").unwrap();
        let out = StdCommand::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };
    for args in [
        vec!["read", wb],
        vec!["export", wb, "--parquet", pq.to_str().unwrap()],
    ] {
        let (code, stderr) = to_full(&args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("roce-inspect: writing output: "),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("os error"), "{args:?}: {stderr}");
    }
    // --help and --version too: clap prints them, a failed write is still an error.
    for args in [vec!["--version"], vec!["read", "--help"], vec!["--help"]] {
        let (code, stderr) = to_full(&args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr, "roce-inspect: writing output: No space left on device\n",
            "{args:?}"
        );
    }
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let below = file.join("sub");
    let (code, _, stderr) = run(&["export", wb, "--parquet", below.to_str().unwrap()]);
    assert_one_line_error(
        code,
        &stderr,
        below.to_str().unwrap(),
        "folder under a file",
    );
    assert!(
        stderr.contains("cannot create the dataset folder"),
        "{stderr}"
    );
    assert!(!stderr.contains("os error"), "{stderr}");
}

/// An ERF record's time (link type 197, ibdump's native-IB records) is its ERF header's in a
/// classic pcap file and the block's in a pcapng file, as tshark 4.0 has them, whether the file
/// is named or piped to standard input; its lengths are the ERF header's in both. By hand: the
/// ERF time is 1,796,090,400 s + 2³⁰/2³² s (.25 s); the pcap or pcapng record's is 5 s and 7 µs
/// later; the record holds the 16-byte header and 34 frame bytes, wlen 34.
#[test]
fn erf_time_follows_the_container_from_stdin_too() {
    use roce_inspect::synth::capfile::{Record, pcap_bytes, pcapng_bytes};
    const S: u64 = 1_796_090_400;
    let ib = common::hex("30020005000800070400ffff0000002a800001000001020304050607ca4997d11234");
    let mut r = ((S << 32) | (1 << 30)).to_le_bytes().to_vec();
    r.extend([21, 0x04, 0, 50, 0, 0, 0, 34]);
    r.extend(&ib);
    let rec = [Record::new((S + 5) * 1_000_000_000 + 7_000, r)];
    let dir = tmp();
    for (name, bytes, want) in [
        (
            "erf.pcap",
            pcap_bytes(197, 65535, &rec),
            S * 1_000_000_000 + 250_000_000,
        ),
        (
            "erf.pcapng",
            pcapng_bytes(197, 65535, &rec),
            (S + 5) * 1_000_000_000 + 7_000,
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let named = bin().args(["read", "--json"]).arg(&path).output().unwrap();
        let piped = bin()
            .args(["read", "--json", "-"])
            .write_stdin(bytes)
            .output()
            .unwrap();
        for (how, out) in [("named", named), ("piped", piped)] {
            let stdout = String::from_utf8(out.stdout).unwrap();
            let v = &json_lines(&stdout)[0];
            assert_eq!(v["ts_ns"], want, "{name} {how}: {stdout}");
            assert_eq!(
                (v["len"].as_u64(), v["caplen"].as_u64()),
                (Some(34), Some(34))
            );
            assert_eq!(v["icrc"]["status"], "good", "{name} {how}: {stdout}");
        }
    }
}

/// Raw IP files (LINKTYPE_RAW 101, which libpcap hands over as DLT_RAW 12) are read by name,
/// from standard input, with a filter and through libpcap's reader, in pcap and pcapng: the
/// first WRITE of the write_bw sample without its 14-byte Ethernet header (tshark: "RRoCE").
#[test]
fn raw_ip_link_type_101_reads_every_way() {
    use roce_inspect::synth::capfile::{Record, pcap_bytes, pcapng_bytes};
    let first = &roce_inspect::synth::scenario::write_bw::scenario()
        .sample
        .records[0];
    let rec = [Record::new(first.ts_ns, first.data[14..].to_vec())];
    let dir = tmp();
    for (name, bytes) in [
        ("raw.pcap", pcap_bytes(101, 65535, &rec)),
        ("raw.pcapng", pcapng_bytes(101, 65535, &rec)),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let p = path.to_str().unwrap();
        let piped = bin()
            .args(["read", "--json", "-"])
            .write_stdin(bytes)
            .output()
            .unwrap();
        let piped = (
            piped.status.code(),
            String::from_utf8(piped.stdout).unwrap(),
        );
        let named = run(&["read", "--json", p]);
        let filtered = run(&["read", "--json", "-f", "udp dst port 4791", p]);
        let lib = bin()
            .args(["read", "--json", p])
            .env("ROCE_INSPECT_READER", "libpcap")
            .output()
            .unwrap();
        let lib = (lib.status.code(), String::from_utf8(lib.stdout).unwrap());
        for (how, (code, out)) in [
            ("named", (named.0, named.1)),
            ("piped", piped),
            ("filtered", (filtered.0, filtered.1)),
            ("libpcap", lib),
        ] {
            assert_eq!(code, Some(0), "{name} {how}: {out}");
            let v = &json_lines(&out)[0];
            assert_eq!(v["roce"], "v2", "{name} {how}: {out}");
            assert_eq!(v["caplen"].as_u64(), Some(first.data.len() as u64 - 14));
            assert_eq!(v["icrc"]["status"], "good", "{name} {how}: {out}");
        }
    }
}
