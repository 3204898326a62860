//! `roce-inspect export --parquet`: the tables read back with the `parquet` crate equal what
//! `read --json --marks` (the packets and their `analysis` object) and `read --summary --json`
//! print, field by field; DuckDB and Polars
//! (independent Parquet readers) read a folder of several exports as one dataset with the same
//! per-flow packet counts and the same packet and message values.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
mod common;

use common::mirror::{Carrier, Tunnel, wrap};
use roce_inspect::synth::capfile::{Record, pcap_bytes};
use roce_inspect::synth::scenario;
use serde_json::{Map, Value};

const SAMPLES: [&str; 4] = [
    "write_bw.pcap",
    "read_timeout.pcap",
    "congestion.pcap",
    "rocev1_ipv6_vlan.pcapng",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn sample(name: &str) -> PathBuf {
    root().join("samples").join(name)
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
}

fn run_ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `export FILES --parquet DIR EXTRA…`, whatever its outcome.
fn export_output(files: &[&Path], dir: &Path, extra: &[&str]) -> std::process::Output {
    bin()
        .arg("export")
        .args(files)
        .arg("--parquet")
        .arg(dir)
        .args(extra)
        .output()
        .unwrap()
}

/// `export FILES --parquet DIR EXTRA…`, which must succeed.
fn export(files: &[&Path], dir: &Path, extra: &[&str]) {
    let out = export_output(files, dir, extra);
    assert!(
        out.status.success(),
        "export {files:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every row of one Parquet file, as column name → JSON value.
fn read_table(path: &Path) -> Vec<Map<String, Value>> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let batch: RecordBatch = batch.unwrap();
        for i in 0..batch.num_rows() {
            let mut row = Map::new();
            for (f, col) in batch.schema().fields().iter().zip(batch.columns()) {
                row.insert(f.name().clone(), cell(col, i));
            }
            rows.push(row);
        }
    }
    rows
}

fn cell(col: &ArrayRef, i: usize) -> Value {
    if col.is_null(i) {
        return Value::Null;
    }
    match col.data_type() {
        DataType::UInt8 => col.as_primitive::<UInt8Type>().value(i).into(),
        DataType::UInt16 => col.as_primitive::<UInt16Type>().value(i).into(),
        DataType::UInt32 => col.as_primitive::<UInt32Type>().value(i).into(),
        DataType::UInt64 => col.as_primitive::<UInt64Type>().value(i).into(),
        DataType::Int64 => col.as_primitive::<Int64Type>().value(i).into(),
        DataType::Float64 => col.as_primitive::<Float64Type>().value(i).into(),
        DataType::Boolean => col.as_boolean().value(i).into(),
        DataType::Utf8 => col.as_string::<i32>().value(i).into(),
        DataType::Timestamp(TimeUnit::Nanosecond, Some(tz)) if tz.as_ref() == "UTC" => {
            (col.as_primitive::<TimestampNanosecondType>().value(i) as u64).into()
        }
        DataType::Null => Value::Null,
        t => panic!("unexpected column type {t}"),
    }
}

/// Flatten a JSON object the way the issue asks for: nested keys joined with `_`; arrays are
/// kept whole (the table holds their JSON text). Written independently of the exporter's code.
fn flatten(prefix: &str, v: &Value, out: &mut Map<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}_{k}")
                };
                flatten(&name, x, out);
            }
        }
        leaf => {
            out.insert(prefix.to_string(), leaf.clone());
        }
    }
}

fn part(dir: &Path, table: &str, capture: &str) -> PathBuf {
    dir.join(table)
        .join(format!("capture={capture}"))
        .join("part-0.parquet")
}

/// The RoCE lines of `read --json --marks` (with the `analysis` object), flattened.
fn json_packets(file: &Path) -> Vec<Map<String, Value>> {
    let out = run_ok(bin().arg("read").arg(file).args(["--json", "--marks"]));
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| !v["roce"].is_null())
        .map(|v| {
            let mut m = Map::new();
            flatten("", &v, &mut m);
            m
        })
        .collect()
}

/// Compare the `packets` table of `file` with `read --json`, field by field.
fn assert_packets_round_trip(file: &Path, dir: &Path, host: &str) {
    let capture = file.file_name().unwrap().to_str().unwrap();
    let table = read_table(&part(dir, "packets", capture));
    assert_packets_equal_json(&table, file, host);
}

/// Compare rows of the `packets` table of `file` (read by any reader, in frame order) with
/// `read --json`, field by field.
fn assert_packets_equal_json(table: &[Map<String, Value>], file: &Path, host: &str) {
    let capture = file.file_name().unwrap().to_str().unwrap();
    let json = json_packets(file);
    assert_eq!(table.len(), json.len(), "{capture}: packet count");
    assert!(!json.is_empty());
    for (row, mut want) in table.iter().zip(json) {
        let frame = want["frame"].clone();
        // `ts_ns` is the `ts` timestamp column; `truncated` is written only when true.
        let ts = want.remove("ts_ns").unwrap();
        want.insert("ts".into(), ts);
        want.entry("truncated").or_insert(Value::Bool(false));
        want.insert("capture".into(), capture.into());
        want.insert("host".into(), host.into());
        for (k, v) in &want {
            let got = match row.get(k) {
                // An array (`encap`): its JSON text, which parses back to the same value.
                Some(Value::String(text)) if v.is_array() => serde_json::from_str(text).ok(),
                other => other.cloned(),
            };
            assert_eq!(
                got.as_ref(),
                Some(v),
                "{capture} frame {frame}: column {k} (JSON has it, the table has {:?})",
                row.get(k)
            );
        }
        for (k, v) in row {
            if !want.contains_key(k) {
                assert!(
                    v.is_null(),
                    "{capture} frame {frame}: {k} = {v} but read --json has no such field"
                );
            }
        }
    }
}

/// Compare a report table with the `--summary --json` array of the same name.
fn assert_report_table(file: &Path, dir: &Path, table: &str, summary: &Value) {
    let capture = file.file_name().unwrap().to_str().unwrap();
    let rows = read_table(&part(dir, table, capture));
    assert_report_rows(&rows, file, table, summary);
}

/// Compare rows of a report table of `file` (read by any reader, in the file's order) with the
/// `--summary --json` array of the same name.
fn assert_report_rows(rows: &[Map<String, Value>], file: &Path, table: &str, summary: &Value) {
    let capture = file.file_name().unwrap().to_str().unwrap();
    let items = summary[table].as_array().unwrap();
    assert_eq!(rows.len(), items.len(), "{capture}: {table} rows");
    // Keys with a value in some item: each must be a column; a key null in every item has none.
    let mut valued = std::collections::HashSet::new();
    for item in items {
        let mut flat = Map::new();
        flatten("", item, &mut flat);
        valued.extend(
            flat.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, _)| k),
        );
    }
    for k in &valued {
        assert!(
            rows.is_empty() || rows[0].contains_key(k),
            "{capture} {table}: no column {k}"
        );
    }
    for (row, item) in rows.iter().zip(items) {
        let mut want = Map::new();
        flatten("", item, &mut want);
        for (k, v) in &want {
            match row.get(k) {
                // An array: its JSON text, which parses back to the same value.
                Some(Value::String(text)) if v.is_array() => assert_eq!(
                    &serde_json::from_str::<Value>(text).unwrap(),
                    v,
                    "{capture} {table}: column {k}"
                ),
                Some(got) => assert_eq!(got, v, "{capture} {table}: column {k}"),
                // Null in every row (no column), or an object null here whose keys are
                // columns from other rows.
                None => assert!(
                    v.is_null() && !valued.contains(k),
                    "{capture} {table}: no column {k}"
                ),
            }
        }
        for (k, v) in row {
            if k != "capture" && k != "host" && !want.contains_key(k) {
                assert!(v.is_null(), "{capture} {table}: {k} = {v} not in the JSON");
            }
        }
        assert_eq!(row["capture"], capture);
    }
}

fn summary(file: &Path) -> Value {
    let out = run_ok(
        bin()
            .arg("read")
            .arg(file)
            .args(["--summary", "--json", "--messages"]),
    );
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn samples_round_trip_packets_and_report_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = SAMPLES.iter().map(|s| sample(s)).collect();
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    export(&refs, tmp.path(), &["--host", "node1"]);
    for f in &files {
        assert_packets_round_trip(f, tmp.path(), "node1");
        let s = summary(f);
        for table in ["flows", "connections", "messages", "gaps"] {
            assert_report_table(f, tmp.path(), table, &s);
        }
    }
    // write_bw.pcap has a PSN gap (its scenario drops a packet): the table is not empty.
    let gaps = read_table(&part(tmp.path(), "gaps", "write_bw.pcap"));
    assert!(!gaps.is_empty());
}

#[test]
fn hostile_captures_round_trip() {
    // Malformed, truncated, nested-VLAN and odd packets: nulls and the error columns.
    let tmp = tempfile::tempdir().unwrap();
    for name in [
        "nested_vlan.pcap",
        "pad_exceeds_payload.pcap",
        "rxe_opcode_ff.pcap",
        "udp_len_exceeds_frame.pcap",
        "read_dma_len_max.pcap",
    ] {
        let f = root().join("tests/hostile").join(name);
        export(&[&f], tmp.path(), &[]);
        let host = name.trim_end_matches(".pcap");
        assert_packets_round_trip(&f, tmp.path(), host);
    }
}

/// The `packets` table's analysis columns against the `write_bw` scenario's truth, read back
/// with the `parquet` crate: `analysis_retransmission` is set exactly on the WRITE packets whose
/// (destination QP, PSN, opcode) an earlier frame carried, found here from the frames' bytes
/// (BTH at offset 42 of these untagged IPv4 frames: opcode byte 0, DestQP bytes 5–7, PSN bytes
/// 9–11, IBTA Vol 1 §9.2), and null elsewhere; `analysis_message` groups the frames as the
/// scenario's responder accepted them into messages.
#[test]
fn analysis_columns_equal_scenario_truth() {
    let w = scenario::write_bw::scenario();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("w.pcap");
    std::fs::write(&file, w.sample.bytes()).unwrap();
    let dir = tmp.path().join("out");
    export(&[&file], &dir, &[]);
    let rows = read_table(&part(&dir, "packets", "w.pcap"));
    let be = |b: &[u8]| b.iter().fold(0u32, |v, &x| v << 8 | u32::from(x));
    let mut seen = std::collections::HashSet::new();
    let mut want_retx = Vec::new();
    for (i, r) in w.sample.records.iter().enumerate() {
        let bth = &r.data[42..54];
        let key = (bth[0], be(&bth[5..8]), be(&bth[9..12]));
        // ACKs (opcode 0x11) are not requests or responses: their PSNs repeat by design.
        if key.0 != 0x11 && !seen.insert(key) {
            want_retx.push(i as u64 + 1);
        }
    }
    assert_eq!(rows.len(), w.sample.records.len());
    let got_retx: Vec<u64> = rows
        .iter()
        .filter(|r| r["analysis_retransmission"] == Value::Bool(true))
        .map(|r| r["frame"].as_u64().unwrap())
        .collect();
    assert!(!want_retx.is_empty());
    assert_eq!(got_retx, want_retx);
    assert!(
        rows.iter()
            .all(|r| r["analysis_retransmission"].is_null() || r["analysis_retransmission"] == true)
    );
    let mut groups: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for r in &rows {
        if let Some(id) = r["analysis_message"].as_u64() {
            groups
                .entry(id)
                .or_default()
                .push(r["frame"].as_u64().unwrap());
        }
    }
    let want: BTreeMap<u64, Vec<u64>> = w
        .truth
        .message_frames
        .iter()
        .map(|f| (f[0], f.clone()))
        .collect();
    assert_eq!(groups, want);
}

/// A late mark reaches the `packets` table through the export's window: in
/// ../shared/cases/nak_verdicts.pcap (its README: FETCH_ADD PSN 302, frame 5, is answered by a
/// NAK remote access error, frame 6; WRITE ONLY PSN 900, frame 7, by a NAK invalid request,
/// frame 8) `analysis_naked` is set on frames 5 and 7 only, `analysis_nak_reason` on 6 and 8.
#[test]
fn late_naked_marks_reach_the_packets_table() {
    need_shared!();
    let case = PathBuf::from(common::case("nak_verdicts.pcap"));
    let tmp = tempfile::tempdir().unwrap();
    export(&[&case], tmp.path(), &[]);
    let rows = read_table(&part(tmp.path(), "packets", "nak_verdicts.pcap"));
    let frames = |col: &str| -> Vec<(u64, Value)> {
        rows.iter()
            .filter(|r| !r[col].is_null())
            .map(|r| (r["frame"].as_u64().unwrap(), r[col].clone()))
            .collect()
    };
    assert_eq!(
        frames("analysis_naked"),
        vec![(5, Value::Bool(true)), (7, Value::Bool(true))]
    );
    assert_eq!(
        frames("analysis_nak_reason"),
        vec![(6, "remote_access".into()), (8, "invalid_request".into())]
    );
}

/// A generated trace longer than one batch (65 536 rows), with every 97th frame cut short.
#[test]
fn generated_trace_crosses_batches_and_round_trips() {
    let base = scenario::congestion::scenario().sample.records;
    let span = base.last().unwrap().ts_ns - base[0].ts_ns + 1_000;
    let mut records: Vec<Record> = Vec::new();
    for rep in 0..210u64 {
        for r in &base {
            let mut r = r.clone();
            r.ts_ns += rep * span;
            if records.len() % 97 == 0 {
                r = r.cut(50);
            }
            records.push(r);
        }
    }
    assert!(records.len() > 65_536);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("long.pcap");
    std::fs::write(&file, pcap_bytes(1, 262_144, &records)).unwrap();
    let dir = tmp.path().join("out");
    export(&[&file], &dir, &["--host", "gen"]);
    assert_packets_round_trip(&file, &dir, "gen");
    let s = summary(&file);
    assert_report_table(&file, &dir, "flows", &s);
    assert_report_table(&file, &dir, "messages", &s);
}

/// Mirrored traffic (ERSPAN III over IPv6 with a carrier VLAN, VXLAN over IPv4): the `encap`
/// column holds the tunnel layers exactly as `read --json` prints them.
#[test]
fn mirrored_frames_round_trip_with_encap() {
    let base = scenario::write_bw::scenario().sample.records;
    let tunnels = [
        (
            "erspan3.pcap",
            Tunnel::Erspan3 {
                session: 7,
                vlan: 5,
                cos: 3,
                truncated: false,
                timestamp: 1000,
                gra: 3,
                hw: 1,
                platform: None,
            },
            Carrier {
                v6: true,
                vlan: Some(301),
            },
        ),
        (
            "vxlan.pcap",
            Tunnel::Vxlan {
                vni: 4242,
                port: 4789,
            },
            Carrier {
                v6: false,
                vlan: None,
            },
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (name, t, c) in tunnels {
        let records: Vec<Record> = base
            .iter()
            .enumerate()
            .map(|(i, r)| Record::new(r.ts_ns, wrap(&r.data, &t, &c, i as u32 + 1)))
            .collect();
        let file = tmp.path().join(name);
        std::fs::write(&file, pcap_bytes(1, 262_144, &records)).unwrap();
        let dir = tmp.path().join("out");
        export(&[&file], &dir, &["--host", "mirror"]);
        assert_packets_round_trip(&file, &dir, "mirror");
        let rows = read_table(&part(&dir, "packets", name));
        assert_eq!(rows.len(), base.len());
        assert!(
            rows.iter().all(|r| r["encap"].is_string()),
            "{name}: encap set"
        );
    }
}

#[test]
fn files_carry_the_schema_version() {
    let tmp = tempfile::tempdir().unwrap();
    let f = sample("write_bw.pcap");
    export(&[&f], tmp.path(), &[]);
    for table in ["packets", "flows", "connections", "messages", "gaps"] {
        let reader = parquet::file::reader::SerializedFileReader::new(
            File::open(part(tmp.path(), table, "write_bw.pcap")).unwrap(),
        )
        .unwrap();
        use parquet::file::reader::FileReader;
        let kv: BTreeMap<String, Option<String>> = reader
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .unwrap()
            .iter()
            .map(|k| (k.key.clone(), k.value.clone()))
            .collect();
        assert_eq!(kv["roce_inspect.schema_version"].as_deref(), Some("1"));
        assert_eq!(kv["roce_inspect.table"].as_deref(), Some(table));
        // No temporary files are left next to the table.
        let names: Vec<_> =
            std::fs::read_dir(part(tmp.path(), table, "write_bw.pcap").parent().unwrap())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
        assert_eq!(names, ["part-0.parquet"]);
    }
}

#[test]
fn bad_input_is_one_line_and_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let out = export_output(&[Path::new("/nonexistent/x.pcap")], tmp.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/x.pcap"), "{err}");
    // Same file name twice: the partitions would collide.
    let a = sample("write_bw.pcap");
    let b = tmp.path().join("write_bw.pcap");
    std::fs::copy(&a, &b).unwrap();
    let out = export_output(&[&a, &b], &tmp.path().join("o"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("same file name"));
    // One file given twice says so.
    let out = export_output(&[&a, &a], &tmp.path().join("o"), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.ends_with("the same capture is given twice\n"), "{err}");
    // No --parquet: usage error.
    let out = bin().args(["export"]).arg(&a).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A capture where B's fatal NAK (remote access) refuses A's WRITE after `others` WRITEs of
/// another QP pair (IBTA Vol 1 §9.9.2).
fn late_nak_capture(path: &Path, others: u32) {
    use roce_inspect::decode::{Aeth, Opcode, Reth};
    use roce_inspect::synth::frame::{Bth, Packet};
    let t0 = 1_700_000_000_000_000_000u64;
    let write = |src, dst, qp, psn| {
        let bth = Bth {
            opcode: Opcode(0x0a),
            dest_qp: qp,
            psn,
            ..Bth::default()
        };
        let mut p = Packet::v4(src, dst, bth);
        p.ext.reth = Reth {
            va: 0x1000,
            rkey: 7,
            dma_len: 64,
        };
        p.payload_len = 64;
        p
    };
    let mut packets = vec![write([10, 0, 0, 1], [10, 0, 0, 2], 0x1b, 10)];
    for i in 0..others {
        packets.push(write([10, 0, 0, 3], [10, 0, 0, 4], 0x33, i));
    }
    let bth = Bth {
        opcode: Opcode(0x11),
        dest_qp: 0x2a,
        psn: 10,
        ..Bth::default()
    };
    let mut nak = Packet::v4([10, 0, 0, 2], [10, 0, 0, 1], bth);
    nak.ext.aeth = Aeth {
        syndrome: 0x62,
        msn: 1,
    };
    packets.push(nak);
    let records: Vec<Record> = packets
        .iter()
        .enumerate()
        .map(|(i, p)| Record::new(t0 + i as u64 * 1_000, p.build()))
        .collect();
    std::fs::write(path, pcap_bytes(1, 262_144, &records)).unwrap();
}

/// A fatal NAK that refuses a message thousands of packets after it completed: the exported
/// `messages` table has the refusal as `--summary --json --messages` does; one that comes
/// after more messages than the export holds back is a warning on stderr.
#[test]
fn late_fatal_nak_is_in_the_messages_table_or_warned() {
    let tmp = tempfile::tempdir().unwrap();
    for (others, warned) in [(3_000u32, false), (7_000, true)] {
        let file = tmp.path().join(format!("late{others}.pcap"));
        late_nak_capture(&file, others);
        let out = export_output(&[&file], &tmp.path().join("out"), &[]);
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.contains("status changed (a fatal NAK)"),
            warned,
            "{others}: {err}"
        );
        if !warned {
            let s = summary(&file);
            assert!(
                s["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|m| m["status"] == "nak_remote_access"),
                "the scenario has a refused message"
            );
            assert_report_table(&file, &tmp.path().join("out"), "messages", &s);
        }
    }
}

/// Packets whose integer fields jump between the ends of their ranges (VAs and atomic
/// operands near 0 and 2^64, R_Keys and QPNs at 0 and their maximum, PSNs wrapping, time going
/// back and forth by 1000 s): the `DELTA_BINARY_PACKED` columns hold differences that wrap.
/// Two requester flows (QPN 0xFFFFFF and 1) alternate WRITE ONLY and CmpSwap, each counting
/// its PSNs up through the wrap (so the WRITEs are messages); a third flow carries ATOMIC
/// ACKNOWLEDGEs.
fn extremes_capture(path: &Path) {
    use roce_inspect::decode::{Aeth, AtomicEth, Opcode, Reth};
    use roce_inspect::synth::frame::{Bth, Packet};
    let t0 = 1_700_000_000_000_000_000u64;
    let mut records = Vec::new();
    let mut psn = [0xff_ff80u32; 3];
    for i in 0..300u64 {
        let odd = i % 2 == 1;
        let big = |hi: u64, lo: u64| if odd { hi } else { lo };
        let flow = (i % 3) as usize;
        let (src, dst, dest_qp, opcode) = match flow {
            0 | 1 => {
                let qp = if flow == 0 { 0xff_ffff } else { 1 };
                let op = if psn[flow] % 2 == 0 { 0x0a } else { 0x13 };
                ([10, 9, 0, 1], [10, 9, 0, 2], qp, op)
            }
            _ => ([10, 9, 0, 2], [10, 9, 0, 1], 0x2a, 0x12),
        };
        let bth = Bth {
            opcode: Opcode(opcode),
            dest_qp,
            psn: psn[flow],
            pkey: big(0xffff, 0x8001) as u16,
            ..Bth::default()
        };
        psn[flow] = (psn[flow] + 1) & 0xff_ffff;
        let mut p = Packet::v4(src, dst, bth);
        p.ext.reth = Reth {
            va: big(u64::MAX - i, i),
            rkey: big(0xffff_ffff, 0) as u32,
            dma_len: 64,
        };
        p.ext.atomic_eth = AtomicEth {
            va: big(!7, 8),
            rkey: 7,
            swap_add: big(u64::MAX, 0),
            compare: big(0, u64::MAX),
        };
        p.ext.atomic_ack_eth.orig = big(u64::MAX, 1);
        p.ext.aeth = Aeth {
            syndrome: 0,
            msn: big(0xff_ffff, 0) as u32,
        };
        p.payload_len = if opcode == 0x0a { 64 } else { 0 };
        records.push(Record::new(t0 + big(1_000_000_000_000, 0) + i, p.build()));
    }
    std::fs::write(path, pcap_bytes(1, 262_144, &records)).unwrap();
}

/// DuckDB and Polars (Parquet readers independent of the `parquet` crate) read a folder of
/// several hosts' exports: DuckDB as one dataset with the per-flow packet counts of
/// `--summary --json`, and both readers every `packets` and `messages` value of every capture
/// as `read --json` and `--summary --json --messages` give it.
#[test]
fn duckdb_and_polars_read_several_exports_as_one_dataset() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("dataset");
    let extremes = tmp.path().join("extremes.pcap");
    extremes_capture(&extremes);
    // Three "hosts" exporting into the same folder.
    let inputs: [(&[PathBuf], &str); 3] = [
        (
            &[sample("write_bw.pcap"), sample("congestion.pcap")],
            "hostA",
        ),
        (
            &[
                sample("read_timeout.pcap"),
                sample("rocev1_ipv6_vlan.pcapng"),
            ],
            "hostB",
        ),
        (std::slice::from_ref(&extremes), "hostC"),
    ];
    for (files, host) in &inputs {
        let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        export(&refs, &dataset, &["--host", host]);
    }
    let out = Command::new("python3")
        .arg(root().join("tests/export_duckdb.py"))
        .arg(&dataset)
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            println!("skipped: python3 not runnable ({e})");
            return;
        }
    };
    if out.status.code() == Some(3) {
        eprint!("{}", String::from_utf8_lossy(&out.stdout));
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped: Vec<&str> = got["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for s in &skipped {
        eprintln!("skipped: the {s} check (its Python package is not installed)");
    }
    let readers: Vec<&str> = ["duckdb", "polars"]
        .into_iter()
        .filter(|r| !skipped.contains(r))
        .collect();
    // Expected: each file's `--summary --json` flows (capture, host, src, dst, dest_qp, packets).
    let mut want = Vec::new();
    for (files, host) in &inputs {
        for file in *files {
            let s = summary(file);
            let capture = file.file_name().unwrap().to_str().unwrap();
            for f in s["flows"].as_array().unwrap() {
                want.push(serde_json::json!([
                    capture,
                    host,
                    f["src"],
                    f["dst"],
                    f["dest_qp"],
                    f["packets"]
                ]));
            }
            for reader in &readers {
                let rows = |table: &str| -> Vec<Map<String, Value>> {
                    let r = &got["rows"][reader][table][capture];
                    assert!(r.is_array(), "{reader}: no {table} rows of {capture}");
                    serde_json::from_value(r.clone()).unwrap()
                };
                assert_packets_equal_json(&rows("packets"), file, host);
                assert_report_rows(&rows("messages"), file, "messages", &s);
            }
        }
    }
    if skipped.contains(&"duckdb") {
        return;
    }
    want.sort_by_key(|v| v.to_string());
    let sorted = |v: &Value| {
        let mut a = v.as_array().unwrap().clone();
        a.sort_by_key(|v| v.to_string());
        a
    };
    assert_eq!(sorted(&got["packets_per_flow"]), want, "packets per flow");
    assert_eq!(sorted(&got["flows"]), want, "flows table");
}

/// Temporary files never outlive an export: a Ctrl-C removes the ones being written (exit
/// status 130), and those of an export killed outright (`kill -9`: its PID gone) are removed by
/// the next export of the capture; a running export's are left alone.
#[test]
fn interrupted_exports_leave_no_temporary_files() {
    use std::io::Write as _;
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    let temporaries = |table: &str| -> Vec<String> {
        std::fs::read_dir(dir.join(table).join("capture=stdin"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".tmp"))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Standard input stays open: the export waits for more after the first frames.
    let mut child = bin()
        .args(["export", "-", "--parquet"])
        .arg(&dir)
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(sample("write_bw.pcap")).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&bytes).unwrap();
    stdin.flush().unwrap();
    // Wait until the export has its files open.
    for _ in 0..200 {
        if !temporaries("packets").is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(temporaries("packets").len(), 1, "the export is writing");
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    drop(stdin);
    assert_eq!(status.code(), Some(130));
    assert!(temporaries("packets").is_empty() && temporaries("messages").is_empty());

    // Left by a process that is gone (no PID is this large: Linux's limit is 2^22), and by
    // one that runs (this test).
    let folder = dir.join("packets").join("capture=stdin");
    std::fs::create_dir_all(&folder).unwrap();
    let dead = folder.join(".part-0.parquet.999999999-0.tmp");
    let alive = folder.join(format!(".part-0.parquet.{}-0.tmp", std::process::id()));
    std::fs::write(&dead, b"half").unwrap();
    std::fs::write(&alive, b"half").unwrap();
    run_ok(
        bin()
            .args(["export", "-", "--parquet"])
            .arg(&dir)
            .stdin(File::open(sample("write_bw.pcap")).unwrap()),
    );
    assert!(!dead.exists(), "a dead export's temporary file is removed");
    assert!(alive.exists(), "a running export's temporary file is kept");
    assert_eq!(read_table(&part(&dir, "packets", "stdin")).len(), 134);
}

/// What a user gets wrong is said once on stderr: standard input twice, a filter that does
/// not compile (the dataset folder it would have made is not left behind), and a capture
/// with no RoCE frame (exported, with a warning: its tables are empty).
#[test]
fn export_mistakes_are_said_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("new");
    let stdin = Path::new("-");
    let out = export_output(&[stdin, stdin], &dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "roce-inspect: standard input (-) is given twice\n"
    );
    let file = sample("write_bw.pcap");
    let out = export_output(&[&file], &dir, &["-f", "udp prot 4791"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.exists(), "no empty dataset folder is left");
    let out = export_output(&[&file], &dir, &["-f", "udp port 9"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: no RoCE frame passed the filter: its tables are empty"),
        "{err}"
    );
    assert!(read_table(&part(&dir, "packets", "write_bw.pcap")).is_empty());
}

/// The `gaps` table has the same columns in every capture's file — a capture with no gap, or
/// whose gaps have no NAK, retransmission or covering ACK, included — so that a folder of many
/// hosts' exports reads as one table (engines that take the first file's schema lost every gap
/// column when that file's capture had no gap). The columns are the keys of a gap of
/// `--summary --json` with everything filled, flattened.
#[test]
fn gaps_columns_are_the_same_in_every_capture() {
    let tmp = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = SAMPLES.iter().map(|s| sample(s)).collect();
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    export(&refs, tmp.path(), &[]);
    let columns = |f: &Path| -> Vec<String> {
        let name = f.file_name().unwrap().to_str().unwrap();
        let b = ParquetRecordBatchReaderBuilder::try_new(
            File::open(part(tmp.path(), "gaps", name)).unwrap(),
        )
        .unwrap();
        b.schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    };
    let want: Vec<&str> = vec![
        "capture",
        "host",
        "ack_frame",
        "expected_psn",
        "flow",
        "frame",
        "missing",
        "nak_delay_ns",
        "nak_frame",
        "nak_ts_ns",
        "received_psn",
        "retransmission_delay_ns",
        "retransmission_frame",
        "retransmission_trigger",
        "retransmission_ts_ns",
        "space",
        "ts_ns",
        "verdict",
    ];
    let mut without_gaps = 0;
    for f in &files {
        assert_eq!(columns(f), want, "{}", f.display());
        without_gaps += usize::from(summary(f)["gaps"].as_array().unwrap().is_empty());
    }
    assert!(without_gaps > 0, "a sample without gaps is among them");
}
