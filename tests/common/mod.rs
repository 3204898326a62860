//! Shared helpers for the analysis tests.
#![allow(dead_code)]

pub mod frames;
pub mod mirror;

use std::path::{Path, PathBuf};

use roce_inspect::analyze::{AnalyzeConfig, Analyzer, Report};
use roce_inspect::decode::{DecodeConfig, LinkType, decode_frame};

/// The bytes written in hexadecimal in `s` (two digits a byte, nothing else).
pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The folder of third-party captures: `ROCE_INSPECT_CAPTURES`, or `../shared/captures` beside
/// the repository (whether or not it exists).
pub fn captures_root() -> PathBuf {
    match std::env::var_os("ROCE_INSPECT_CAPTURES") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures"),
    }
}

/// The third-party captures folder ([`captures_root`]), or `None` after printing one
/// `skipped: third-party captures not found at …` line on stderr (once per test binary) when it
/// does not exist, so that a test needing it returns early and passes on a fresh clone (use
/// [`need_shared!`]).
pub fn captures_dir() -> Option<PathBuf> {
    let dir = captures_root();
    if dir.is_dir() {
        Some(dir)
    } else {
        // Straight to file descriptor 2, once per test binary: libtest captures what a test
        // prints, and the skip must show in `cargo test`'s output.
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let line = format!(
                "skipped: third-party captures not found at {}\n",
                dir.display()
            );
            // SAFETY: writes a valid buffer to fd 2, which the process keeps open.
            let _ = unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
        });
        None
    }
}

/// Path of a file under the third-party captures folder (see [`captures_root`]). Tests that use
/// it start with [`need_shared!`].
pub fn capture(rel: &str) -> String {
    captures_root().join(rel).display().to_string()
}

/// Path of a users' case under `../shared/cases` (beside the captures folder). Tests that use
/// it start with [`need_shared!`].
pub fn case(name: &str) -> String {
    captures_root()
        .join("../cases")
        .join(name)
        .display()
        .to_string()
}

/// Returns from the calling test (which then passes, having printed one `skipped:` line) when
/// the third-party captures folder is not there.
#[macro_export]
macro_rules! need_shared {
    () => {
        if common::captures_dir().is_none() {
            return;
        }
    };
}

/// Read a capture file and run the analyzer over every frame.
pub fn analyze_file(path: &str, cfg: AnalyzeConfig) -> Report {
    let mut cap = pcap::Capture::from_file_with_precision(path, pcap::Precision::Nano)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let lt = LinkType::from_dlt(cap.get_datalink().0);
    let dcfg = DecodeConfig::default();
    let mut a = Analyzer::new(cfg);
    let mut n = 0u64;
    while let Ok(pkt) = cap.next_packet() {
        n += 1;
        let ts = pkt.header.ts.tv_sec as u64 * 1_000_000_000 + pkt.header.ts.tv_usec as u64;
        let f = decode_frame(lt, pkt.data, pkt.header.len, &dcfg);
        a.push(n, ts, &f);
    }
    a.finish()
}

/// Run tshark with `-T fields` for `fields` over RoCE packets; one Vec<String> per packet.
pub fn tshark(path: &str, fields: &[&str]) -> Vec<Vec<String>> {
    tshark_filter(path, "infiniband", fields)
}

/// Run tshark with `-T fields` for `fields` over packets matching the display `filter`.
pub fn tshark_filter(path: &str, filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut args: Vec<String> = vec![
        "-r".into(),
        path.into(),
        "--disable-protocol".into(),
        "rpcordma".into(),
        "-Y".into(),
        filter.into(),
        "-T".into(),
        "fields".into(),
        "-E".into(),
        "separator=|".into(),
        "-E".into(),
        "occurrence=f".into(),
    ];
    for f in fields {
        args.push("-e".into());
        args.push((*f).into());
    }
    let out = std::process::Command::new("tshark")
        .args(&args)
        .output()
        .expect("tshark must be installed (make deps)");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('|').map(|s| s.to_string()).collect())
        .collect()
}

/// Run tshark with `-T fields` for `fields` over every frame of `path`: one row per frame, its
/// fields split on tabs, every occurrence of a field `;`-joined. Disables the two heuristic
/// dissectors that misread RoCE: rpcordma (the captures README's flag: it marks 4-byte SENDs
/// malformed) and infiniband.eoib (the Mellanox EoIB payload heuristic claims some zero-length
/// UD SENDs, throws, and tshark then omits the ICRC field).
pub fn tshark_all(path: &Path, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = std::process::Command::new("tshark");
    cmd.arg("-r")
        .arg(path)
        .args(["--disable-protocol", "rpcordma"])
        .args(["--disable-protocol", "infiniband.eoib"])
        .args(["-n", "-T", "fields"])
        // Tab between fields, `;` between occurrences of one field (the default `,` would
        // collide with the separator).
        .args([
            "-E",
            "separator=/t",
            "-E",
            "aggregator=;",
            "-E",
            "occurrence=a",
        ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark must be installed (make deps)");
    assert!(
        out.status.success(),
        "tshark failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("tshark output is UTF-8")
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// A tshark number: decimal, or hex with `0x`.
pub fn tshark_num(s: &str) -> u64 {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    } else {
        s.parse().unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }
}

/// A project-made capture for the CLI tests, written to a temporary folder: the frames of the
/// `write_bw` sample scenario with a perftest-like TCP exchange (10.0.0.1:18515 ↔ 10.0.0.2)
/// before, among and after them, as a microsecond pcap (what tcpdump writes). Counts are known
/// by construction.
pub struct Mixed {
    /// Keeps the folder alive.
    pub dir: tempfile::TempDir,
    /// The `.pcap` file.
    pub pcap: PathBuf,
    /// The same frames as pcapng.
    pub pcapng: PathBuf,
    /// RoCE frames.
    pub roce: usize,
    /// TCP frames.
    pub tcp: usize,
}

/// Build [`Mixed`].
pub fn mixed() -> Mixed {
    use roce_inspect::synth::capfile::{self, LINKTYPE_ETHERNET, Record, Resolution};
    let roce = roce_inspect::synth::scenario::write_bw::scenario()
        .sample
        .records;
    let tcp = |i: usize, ts: u64| {
        let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .tcp(18515, 40000, 1000 + i as u32 * 10, 65535)
            .ack(1);
        let payload = [b'p'; 10];
        let mut v = Vec::new();
        b.write(&mut v, &payload).unwrap();
        Record::new(ts, v)
    };
    let mut recs = Vec::new();
    let mut n_tcp = 0;
    for (i, r) in roce.iter().enumerate() {
        if i % 20 == 0 {
            recs.push(tcp(n_tcp, r.ts_ns.saturating_sub(1_000)));
            n_tcp += 1;
        }
        recs.push(r.clone());
    }
    let last = recs.last().unwrap().ts_ns;
    recs.push(tcp(n_tcp, last + 5_000));
    n_tcp += 1;
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("mixed.pcap");
    let mut f = std::fs::File::create(&pcap).unwrap();
    capfile::write_pcap_with(&mut f, LINKTYPE_ETHERNET, 65535, Resolution::Micro, &recs).unwrap();
    let pcapng = dir.path().join("mixed.pcapng");
    std::fs::write(
        &pcapng,
        capfile::pcapng_bytes(LINKTYPE_ETHERNET, 65535, &recs),
    )
    .unwrap();
    Mixed {
        dir,
        pcap,
        pcapng,
        roce: roce.len(),
        tcp: n_tcp,
    }
}
