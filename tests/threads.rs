//! `read --threads N` prints exactly what `--threads 1` prints — packet lines (text, `-V`,
//! JSON), reports (`--summary --json`, text), `--messages`, `--gaps`, with `-c` and `-f` — on
//! random mixes of generated traces larger than one parallel window (so batch and window
//! boundaries fall everywhere): the sample scenarios tiled on many hosts and interleaved in
//! time (flows that pair late), a CNP flood to QPs with no data, PSNs wrapping at 2^24.

use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use roce_inspect::decode::{Aeth, Opcode, Reth};
use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, Record, pcap_bytes};
use roce_inspect::synth::frame::{Bth, Packet};
use roce_inspect::synth::scenario::{
    self, BASE_NS, congestion, read_timeout, relocate_ipv4, write_bw,
};

/// RC WRITE ONLY + ACK pairs whose PSNs cross 2^24, on hosts 10.250.0.x.
fn psn_wrap(n: u32, start_ns: u64) -> Vec<Record> {
    let mut v = Vec::new();
    for i in 0..n {
        let psn = (0xff_fff0 + i) & 0xff_ffff;
        let mut w = Packet::v4(
            [10, 250, 0, 1],
            [10, 250, 0, 2],
            Bth {
                opcode: Opcode(0x0a),
                dest_qp: 0x77,
                psn,
                ack_req: true,
                ..Bth::default()
            },
        );
        w.payload_len = 64;
        w.ext.reth = Reth {
            va: 0x1000 + u64::from(i) * 64,
            rkey: 9,
            dma_len: 64,
        };
        let mut a = Packet::v4(
            [10, 250, 0, 2],
            [10, 250, 0, 1],
            Bth {
                opcode: Opcode(0x11),
                dest_qp: 0x66,
                psn,
                ..Bth::default()
            },
        );
        a.ext.aeth = Aeth {
            syndrome: 0x1f,
            msn: i + 1,
        };
        let t = start_ns + u64::from(i) * 2_000;
        v.push(Record::new(t, w.build()));
        v.push(Record::new(t + 700, a.build()));
    }
    v
}

/// A flood of CNPs (BECN) to QPs that send nothing, from 10.251.0.3.
fn cnp_flood(n: u32, start_ns: u64) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let mut c = Packet::v4(
                [10, 251, 0, 3],
                [10, 251, (i % 200) as u8, 1],
                Bth {
                    opcode: Opcode(0x81),
                    dest_qp: 0x100 + i % 500,
                    becn: true,
                    ..Bth::default()
                },
            );
            c.udp_src = 0xd000 + (i % 4000) as u16;
            Record::new(start_ns + u64::from(i) * 300, c.build())
        })
        .collect()
}

/// `copies` tiles of each scenario on their own hosts, each shifted by a random offset so
/// that they interleave; then the wrap and flood parts; sorted by time.
fn mix(copies: u16, shifts: &[u64], flood: u32) -> Vec<Record> {
    let tiles = [
        write_bw::scenario().sample.records,
        read_timeout::scenario().sample.records,
        congestion::scenario().sample.records,
    ];
    let mut recs = Vec::new();
    for c in 0..copies {
        let tile = &tiles[usize::from(c) % tiles.len()];
        let shift = shifts[usize::from(c) % shifts.len()];
        for r in tile {
            recs.push(Record::new(r.ts_ns + shift, relocate_ipv4(&r.data, c + 1)));
        }
    }
    recs.extend(psn_wrap(3000, BASE_NS + 5_000));
    recs.extend(cnp_flood(flood, BASE_NS + 7_000));
    recs.sort_by_key(|r| r.ts_ns);
    recs
}

fn run(file: &Path, threads: &str, args: &[&str]) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .arg("read")
        .arg(file)
        .args(["--threads", threads, "--color", "never"])
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), out.stdout, out.stderr)
}

const VARIANTS: &[&[&str]] = &[
    &[],
    &["--json"],
    &["-q"],
    &["--summary", "--json", "--messages"],
    &["--messages", "-q"],
    &["--gaps", "--json"],
    &["-V", "-c", "20000"],
    &["-c", "17001", "--json", "--summary"],
    &["-f", "udp and not host 10.251.0.3", "--summary"],
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 3, ..ProptestConfig::default() })]
    #[test]
    fn threads_print_the_same(
        copies in 200u16..260,
        shifts in proptest::collection::vec(0u64..3_000_000, 1..6),
        flood in 1_000u32..6_000,
        threads in prop::sample::select(vec!["2", "3", "4"]),
    ) {
        let recs = mix(copies, &shifts, flood);
        prop_assert!(recs.len() > 40_000, "only {} frames", recs.len());
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("mix.pcap");
        std::fs::write(&f, pcap_bytes(LINKTYPE_ETHERNET, scenario::SNAPLEN, &recs)).unwrap();
        for v in VARIANTS {
            let one = run(&f, "1", v);
            prop_assert_eq!(one.0, Some(0), "{:?}: {}", v, String::from_utf8_lossy(&one.2));
            let many = run(&f, threads, v);
            prop_assert!(one == many, "--threads {} differs from --threads 1 with {:?}", threads, v);
        }
    }
}

/// A file the mapped reader stops on (a record cut short at the end): libpcap takes over in
/// the middle of the parallel read, and the frames, the report and the one-line error are those
/// of `--threads 1`.
#[test]
fn parallel_read_hands_over_to_libpcap() {
    let recs = mix(200, &[0, 1_500_000], 2_000);
    let mut bytes = pcap_bytes(LINKTYPE_ETHERNET, scenario::SNAPLEN, &recs);
    bytes.truncate(bytes.len() - 10);
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("cut.pcap");
    std::fs::write(&f, &bytes).unwrap();
    for v in [&[][..], &["--summary", "--json"][..]] {
        let one = run(&f, "1", v);
        assert_eq!(one.0, Some(1));
        assert_eq!(String::from_utf8_lossy(&one.2).lines().count(), 1);
        assert!(one == run(&f, "2", v), "{v:?}");
    }
}

/// A record header in the middle of the file that libpcap refuses (its captured length far
/// above the snap length): the frames before it, the report and the one-line error are those
/// of `--threads 1`, wherever the error falls among the batches being located, decoded and
/// analysed.
#[test]
fn parallel_read_error_in_the_middle() {
    let recs = mix(200, &[0, 1_500_000], 2_000);
    let bytes = pcap_bytes(LINKTYPE_ETHERNET, scenario::SNAPLEN, &recs);
    // Walk the records (24-byte file header; 16-byte record headers, incl_len at offset 8).
    let mut at = 24;
    let mut starts = Vec::new();
    while at + 16 <= bytes.len() {
        starts.push(at);
        let incl = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + incl;
    }
    let d = tempfile::tempdir().unwrap();
    for frac in [3, 2] {
        let mut bad = bytes.clone();
        let h = starts[starts.len() * (frac - 1) / frac];
        bad[h + 8..h + 12].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
        let f = d.path().join(format!("bad{frac}.pcap"));
        std::fs::write(&f, &bad).unwrap();
        for v in [&[][..], &["-q"][..], &["--summary", "--json"][..]] {
            let one = run(&f, "1", v);
            assert_eq!(one.0, Some(1), "{v:?}");
            let err = String::from_utf8_lossy(&one.2);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(!one.1.is_empty(), "frames before the error are printed");
            assert!(one == run(&f, "2", v), "{v:?}");
        }
    }
}

/// Frames of 8 KiB (RC WRITE MIDDLE, jumbo MTU): batches end at their byte cap (their share of
/// 16 MiB: 1 MiB, 128 such frames, when packet lines are printed) rather than their record
/// count, and walked pages are released behind the reader while the batches before are still
/// decoded and analysed. With a short first stretch of ACK-sized frames, then big ones, then
/// small ones again, every mode prints what `--threads 1` prints.
#[test]
fn big_frames_fill_windows_by_bytes() {
    let mut recs = Vec::new();
    let mut t = BASE_NS;
    let mut psn = 0u32;
    for (n, payload) in [
        (3_000u32, 0usize),
        (6_000, 8_192),
        (3_000, 64),
        (2_000, 8_192),
    ] {
        for _ in 0..n {
            let mut w = Packet::v4(
                [10, 252, 0, 1],
                [10, 252, 0, 2],
                Bth {
                    opcode: Opcode(if payload == 0 { 0x11 } else { 0x07 }),
                    dest_qp: 0x99,
                    psn,
                    ..Bth::default()
                },
            );
            if payload == 0 {
                w.ext.aeth = Aeth {
                    syndrome: 0x1f,
                    msn: psn,
                };
            }
            w.payload_len = payload;
            recs.push(Record::new(t, w.build()));
            t += 1_000;
            psn = (psn + 1) & 0xff_ffff;
        }
    }
    let bytes = pcap_bytes(LINKTYPE_ETHERNET, scenario::SNAPLEN, &recs);
    assert!(bytes.len() > 3 * (8 << 20), "{} bytes", bytes.len());
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("big.pcap");
    std::fs::write(&f, &bytes).unwrap();
    for v in [
        &[][..],
        &["--json"][..],
        &["-q"][..],
        &["--summary", "--json", "--gaps"][..],
        &["-c", "9500", "--json", "--summary"][..],
    ] {
        let one = run(&f, "1", v);
        assert_eq!(one.0, Some(0), "{v:?}: {}", String::from_utf8_lossy(&one.2));
        assert!(!one.1.is_empty(), "{v:?}");
        for threads in ["2", "3"] {
            assert!(one == run(&f, threads, v), "--threads {threads} {v:?}");
        }
    }
}
