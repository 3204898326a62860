//! Live-capture tests: `roce-inspect capture` on real interfaces of network namespaces that each
//! test creates (and removes, through a guard, even when it fails), so tests running in
//! parallel, and other programs on this machine, never see each other's packets. All traffic
//! stays inside those namespaces: 127.0.0.1 on a namespace's own loopback, or raw Ethernet
//! frames on a veth pair without addresses.
//!
//! These tests need root (network namespaces, packet capture). When not root they fail with a
//! message saying why, unless `ROCE_INSPECT_UNPRIVILEGED=1` marks the run as unprivileged: then
//! they are skipped with a printed note.
//!
//! The RoCE packets are built here from the spec (spec/roce.md §1–§4): BTH, RETH, AETH, pad,
//! and an ICRC computed over the exact headers that go on the wire. For datagrams sent through
//! a UDP socket the kernel writes the IPv4 header; it is predictable: version/IHL 0x45, total
//! length, ID 0 (the kernel uses ID 0 for DF packets of unconnected sockets, and DF is forced
//! with IP_PMTUDISC_DO), DF, protocol 17, 127.0.0.1 → 127.0.0.1. TOS, TTL and both checksums
//! are masked by the ICRC, so the tests can require `icrc.status == "good"`.

use std::fs;
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use roce_inspect::decode::icrc;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

// ---------------------------------------------------------------------------------------------
// Privilege check and namespace guard

/// Whether the test can run; panics with the reason when not root and the run is not marked
/// unprivileged.
fn privileged(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    if std::env::var("ROCE_INSPECT_UNPRIVILEGED").as_deref() == Ok("1") {
        eprintln!(
            "note: {test} skipped: it needs root (network namespaces, packet capture) and \
             ROCE_INSPECT_UNPRIVILEGED=1 marks this run as unprivileged"
        );
        return false;
    }
    panic!(
        "{test} needs root: it creates network namespaces and captures packets. Run the tests as \
         root (CI does), or set ROCE_INSPECT_UNPRIVILEGED=1 to skip the live-capture tests."
    );
}

fn run_ok(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

static NS_COUNTER: AtomicU32 = AtomicU32::new(0);

/// A network namespace that exists for the guard's lifetime (`ip netns add` / `ip netns del`).
struct Netns {
    name: String,
}

impl Netns {
    /// A fresh namespace with a unique name; its loopback is down until [`Netns::lo_up`].
    fn new() -> Netns {
        let name = format!(
            "ri-cap-{}-{}",
            std::process::id(),
            NS_COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        run_ok(Command::new("ip").args(["netns", "add", &name]));
        Netns { name }
    }

    /// `ip -n NS ARGS…`.
    fn ip(&self, args: &[&str]) {
        run_ok(Command::new("ip").args(["-n", &self.name]).args(args));
    }

    fn lo_up(&self) {
        self.ip(&["link", "set", "lo", "up"]);
    }

    /// Run `f` on a thread that has joined this namespace (setns), so sockets and capture
    /// handles it opens live there.
    fn run_in<R: Send + 'static>(&self, f: impl FnOnce() -> R + Send + 'static) -> R {
        let path = format!("/run/netns/{}", self.name);
        thread::spawn(move || {
            let ns = fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            // SAFETY: a valid namespace fd; only this thread changes namespace.
            let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .expect("namespace thread panicked")
    }

    /// `ip netns exec NS roce-inspect ARGS…`.
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, BIN]).args(args);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .stderr(Stdio::null())
            .status();
    }
}

// ---------------------------------------------------------------------------------------------
// A running capture

/// A `roce-inspect capture` child with its stdout lines and stderr lines collected by threads.
/// Killed on drop if still running.
struct Capture {
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    /// When stdout goes to this file instead of a pipe.
    stdout_file: Option<std::path::PathBuf>,
    stderr: Arc<Mutex<Vec<String>>>,
    out_done: Option<thread::JoinHandle<()>>,
    err_done: Option<thread::JoinHandle<()>>,
}

fn collect(
    r: impl std::io::Read + Send + 'static,
    sink: Arc<Mutex<Vec<String>>>,
    ready: Option<mpsc::Sender<()>>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { break };
            let is_ready = line.starts_with("capturing on ");
            sink.lock().expect("lock").push(line);
            if let (true, Some(tx)) = (is_ready, &ready) {
                let _ = tx.send(());
            }
        }
    })
}

impl Capture {
    /// Start `roce-inspect capture ARGS…` in `ns` with stdout into a pipe (so it captures in
    /// immediate mode and flushes per packet) and wait for its readiness line on stderr.
    fn start(ns: &Netns, args: &[&str]) -> Capture {
        Capture::start_to(ns, args, None)
    }

    /// Like [`Capture::start`]; with `stdout_file`, stdout goes to that regular file instead,
    /// so the capture reads packets in blocks (buffered mode) and buffers its output.
    fn start_to(ns: &Netns, args: &[&str], stdout_file: Option<&Path>) -> Capture {
        Capture::start_with(ns, args, stdout_file, false)
    }

    /// Like [`Capture::start`], with the read end of stdout's pipe closed at once (as `| head`
    /// closes it): the first packet line written fails with EPIPE.
    fn start_closed(ns: &Netns, args: &[&str]) -> Capture {
        Capture::start_with(ns, args, None, true)
    }

    fn start_with(
        ns: &Netns,
        args: &[&str],
        stdout_file: Option<&Path>,
        close_stdout: bool,
    ) -> Capture {
        let mut full = vec!["capture"];
        full.extend_from_slice(args);
        Capture::spawn_with(ns.command(&full), stdout_file, close_stdout)
    }

    /// Start the capture command `cmd` (`ns.command(…)`) with stdout into a pipe and wait for
    /// its readiness line.
    fn spawn(cmd: Command) -> Capture {
        Capture::spawn_with(cmd, None, false)
    }

    fn spawn_with(mut cmd: Command, stdout_file: Option<&Path>, close_stdout: bool) -> Capture {
        let out = match stdout_file {
            Some(p) => Stdio::from(fs::File::create(p).expect("create stdout file")),
            None => Stdio::piped(),
        };
        let mut child = cmd
            .stdout(out)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn roce-inspect capture");
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let out_done = child
            .stdout
            .take()
            .filter(|_| !close_stdout)
            .map(|o| collect(o, stdout.clone(), None));
        let err_done = collect(
            child.stderr.take().expect("stderr"),
            stderr.clone(),
            Some(tx),
        );
        let mut cap = Capture {
            child,
            stdout,
            stdout_file: stdout_file.map(Path::to_path_buf),
            stderr,
            out_done,
            err_done: Some(err_done),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if rx.recv_timeout(Duration::from_millis(50)).is_ok() {
                return cap;
            }
            if let Ok(Some(st)) = cap.child.try_wait() {
                cap.join_readers();
                panic!(
                    "capture exited ({st}) before it was ready; stderr: {:?}",
                    cap.stderr_lines()
                );
            }
            assert!(
                Instant::now() < deadline,
                "capture not ready after 20 s; stderr: {:?}",
                cap.stderr_lines()
            );
        }
    }

    fn stdout_lines(&self) -> Vec<String> {
        match &self.stdout_file {
            Some(p) => fs::read_to_string(p)
                .expect("read stdout file")
                .lines()
                .map(str::to_string)
                .collect(),
            None => self.stdout.lock().expect("lock").clone(),
        }
    }

    fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lock().expect("lock").clone()
    }

    fn join_readers(&mut self) {
        if let Some(h) = self.out_done.take() {
            let _ = h.join();
        }
        if let Some(h) = self.err_done.take() {
            let _ = h.join();
        }
    }

    /// Wait until stdout has `n` lines (at most `secs`).
    fn wait_lines(&self, n: usize, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while self.stdout.lock().expect("lock").len() < n {
            assert!(
                Instant::now() < deadline,
                "expected {n} output lines within {secs} s, got {:?}; stderr: {:?}",
                self.stdout_lines(),
                self.stderr_lines()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait for the process to exit (at most `secs`), then for its output to be read.
    fn wait_exit(&mut self, secs: u64) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                self.join_readers();
                return st;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                self.join_readers();
                panic!(
                    "capture still running after {secs} s; stdout: {:?}; stderr: {:?}",
                    self.stdout_lines(),
                    self.stderr_lines()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, sig: libc::c_int) {
        // `ip netns exec` execs the command, so the child's pid is roce-inspect's.
        // SAFETY: kill on our own child's pid.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(rc, 0, "kill: {}", std::io::Error::last_os_error());
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// RoCE packets from the spec

/// One IBA transport packet: BTH, optional RETH / AETH, payload, pad (ICRC added later).
#[derive(Clone, Debug)]
struct Pkt {
    opcode: u8,
    qp: u32,
    psn: u32,
    ack_req: bool,
    /// RETH: virtual address, R_Key, DMA length.
    reth: Option<(u64, u32, u32)>,
    /// AETH: syndrome, MSN.
    aeth: Option<(u8, u32)>,
    payload: Vec<u8>,
}

impl Pkt {
    fn pad(&self) -> u8 {
        ((4 - self.payload.len() % 4) % 4) as u8
    }

    /// BTH ‖ extension headers ‖ payload ‖ pad bytes (spec/roce.md §1).
    fn transport(&self) -> Vec<u8> {
        let mut t = vec![
            self.opcode,
            self.pad() << 4, // SE 0, M 0, PadCnt, TVer 0
            0xff,
            0xff, // P_Key 0xFFFF
            0,    // FECN, BECN, Resv6a
        ];
        t.extend_from_slice(&self.qp.to_be_bytes()[1..]);
        t.push(if self.ack_req { 0x80 } else { 0 });
        t.extend_from_slice(&self.psn.to_be_bytes()[1..]);
        if let Some((va, rkey, len)) = self.reth {
            t.extend_from_slice(&va.to_be_bytes());
            t.extend_from_slice(&rkey.to_be_bytes());
            t.extend_from_slice(&len.to_be_bytes());
        }
        if let Some((syndrome, msn)) = self.aeth {
            t.push(syndrome);
            t.extend_from_slice(&msn.to_be_bytes()[1..]);
        }
        t.extend_from_slice(&self.payload);
        t.extend(std::iter::repeat_n(0u8, self.pad() as usize));
        t
    }
}

/// A mixed RC stream: an RDMA WRITE first/middle/last with its ACK, a WRITE ONLY with pad, a
/// SEND ONLY, each with its own QP/PSN (PSN 0xFFFFFE checks 24-bit values).
fn sample_packets() -> Vec<Pkt> {
    let data = |n: usize| (0..n).map(|i| i as u8).collect::<Vec<u8>>();
    vec![
        Pkt {
            opcode: 0x06, // RC RDMA WRITE FIRST
            qp: 0x11,
            psn: 100,
            ack_req: false,
            reth: Some((0x7f00_0000_1000, 0x1234, 612)),
            aeth: None,
            payload: data(256),
        },
        Pkt {
            opcode: 0x07, // RC RDMA WRITE MIDDLE
            qp: 0x11,
            psn: 101,
            ack_req: false,
            reth: None,
            aeth: None,
            payload: data(256),
        },
        Pkt {
            opcode: 0x08, // RC RDMA WRITE LAST
            qp: 0x11,
            psn: 102,
            ack_req: true,
            reth: None,
            aeth: None,
            payload: data(100),
        },
        Pkt {
            opcode: 0x11, // RC ACKNOWLEDGE
            qp: 0x22,
            psn: 102,
            ack_req: false,
            reth: None,
            aeth: Some((0x1f, 1)),
            payload: vec![],
        },
        Pkt {
            opcode: 0x0a, // RC RDMA WRITE ONLY, 10 bytes + 2 pad
            qp: 0x12_3456,
            psn: 0xff_fffe,
            ack_req: true,
            reth: Some((0x1000, 0xabcd, 10)),
            aeth: None,
            payload: data(10),
        },
        Pkt {
            opcode: 0x04, // RC SEND ONLY
            qp: 0x11,
            psn: 103,
            ack_req: true,
            reth: None,
            aeth: None,
            payload: data(64),
        },
    ]
}

const LOCALHOST: [u8; 4] = [127, 0, 0, 1];

/// UDP payload (transport ‖ ICRC) for a datagram from 127.0.0.1:`sport` to 127.0.0.1:4791 sent
/// through a UDP socket, with the ICRC over the IPv4 header the kernel will write (see the
/// module comment) and the UDP header.
fn udp_payload(p: &Pkt, sport: u16) -> Vec<u8> {
    let t = p.transport();
    let udp_len = (8 + t.len() + 4) as u16;
    let total = 20 + udp_len;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0]);
    ip.extend_from_slice(&LOCALHOST);
    ip.extend_from_slice(&LOCALHOST);
    let mut udp = sport.to_be_bytes().to_vec();
    udp.extend_from_slice(&4791u16.to_be_bytes());
    udp.extend_from_slice(&udp_len.to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    let crc = icrc::rocev2_ipv4(&ip, &udp, &t);
    let mut out = t;
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Send `pkts` from a UDP socket in `ns` to 127.0.0.1:4791 with ECN ECT(0), in order.
fn send_udp(ns: &Netns, pkts: Vec<Pkt>) {
    ns.run_in(move || {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let fd = sock.as_raw_fd();
        let set = |level, name, v: libc::c_int| {
            // SAFETY: a valid socket and an int option.
            let rc = unsafe {
                libc::setsockopt(
                    fd,
                    level,
                    name,
                    (&v as *const libc::c_int).cast(),
                    size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            assert_eq!(rc, 0, "setsockopt: {}", std::io::Error::last_os_error());
        };
        set(
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_DO,
        );
        set(libc::IPPROTO_IP, libc::IP_TOS, 0x02);
        let sport = sock.local_addr().expect("local addr").port();
        for p in &pkts {
            sock.send_to(&udp_payload(p, sport), "127.0.0.1:4791")
                .expect("send");
        }
    });
}

fn json_lines(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect()
}

/// Check decoded packets against what was sent: opcode, QP, PSN, good ICRC, RoCEv2.
fn check_decoded(got: &[Value], sent: &[Pkt]) {
    assert_eq!(got.len(), sent.len(), "packets decoded: {got:?}");
    for (g, s) in got.iter().zip(sent) {
        assert_eq!(g["roce"], "v2", "{g}");
        assert_eq!(g["bth"]["opcode"], s.opcode as u64, "{g}");
        assert_eq!(g["bth"]["dest_qp"], s.qp as u64, "{g}");
        assert_eq!(g["bth"]["psn"], s.psn as u64, "{g}");
        assert_eq!(g["bth"]["ack_req"], s.ack_req, "{g}");
        assert_eq!(g["bth"]["pad"], s.pad() as u64, "{g}");
        assert_eq!(g["payload_len"], s.payload.len() as u64, "{g}");
        assert_eq!(g["icrc"]["status"], "good", "{g}");
        assert_eq!(g["ecn"], "ect0", "{g}");
        assert_eq!(g["src"], "127.0.0.1", "{g}");
        if let Some((_, rkey, len)) = s.reth {
            assert_eq!(g["reth"]["rkey"], rkey as u64, "{g}");
            assert_eq!(g["reth"]["dma_len"], len as u64, "{g}");
        }
        if let Some((syndrome, _)) = s.aeth {
            assert_eq!(g["aeth"]["syndrome"], syndrome as u64, "{g}");
        }
        assert!(g.get("malformed").is_none(), "{g}");
    }
}

fn read_json(path: &Path) -> Vec<String> {
    let out = Command::new(BIN)
        .args(["read", path.to_str().expect("utf-8 path"), "--json"])
        .output()
        .expect("run read");
    assert!(
        out.status.success(),
        "read {path:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(str::to_string)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Tests

/// `capture lo -c N --json -w out.pcap` on a namespace's loopback: N RoCEv2 datagrams sent from
/// a UDP socket are decoded with their opcodes, QPs, PSNs and a good ICRC; the capture stops by
/// itself after N; the savefile re-read by `read` gives the same JSON, line for line. Output
/// into a pipe (immediate mode).
#[test]
fn capture_loopback_json_and_savefile() {
    if !privileged("capture_loopback_json_and_savefile") {
        return;
    }
    loopback_json_and_savefile(false);
}

/// The same with stdout into a regular file: buffered mode (TPACKET_V3 blocks on Linux).
#[test]
fn capture_loopback_buffered_to_file() {
    if !privileged("capture_loopback_buffered_to_file") {
        return;
    }
    loopback_json_and_savefile(true);
}

fn loopback_json_and_savefile(to_file: bool) {
    let ns = Netns::new();
    ns.lo_up();
    let dir = tempfile::tempdir().expect("tempdir");
    let pcap = dir.path().join("out.pcap");
    let sent = sample_packets();
    let n = sent.len().to_string();
    let out_file = dir.path().join("stdout.json");
    let mut cap = Capture::start_to(
        &ns,
        &["lo", "-c", &n, "--json", "-w", pcap.to_str().expect("path")],
        to_file.then_some(out_file.as_path()),
    );
    send_udp(&ns, sent.clone());
    let st = cap.wait_exit(20);
    let stderr = cap.stderr_lines();
    assert!(st.success(), "exit {st}; stderr: {stderr:?}");
    assert_eq!(
        stderr[0], "capturing on lo, link-type EN10MB, snapshot length 262144 bytes",
        "{stderr:?}"
    );
    let report = stderr.join("\n");
    assert!(
        report.contains(&format!("{n} frames captured on lo ({n} RoCE)")),
        "{report}"
    );
    assert!(report.contains("stopped: frame count reached"), "{report}");
    let lines = cap.stdout_lines();
    check_decoded(&json_lines(&lines), &sent);
    assert_eq!(read_json(&pcap), lines, "savefile re-read differs");
}

/// `capture … --parquet DIR`: the packets table holds every frame sent, under the `-w` file's
/// name and the `--host` given, with the PSNs and QPs that were sent (read back with the
/// `parquet` crate); the flows table is there too.
#[test]
fn capture_parquet_export() {
    if !privileged("capture_parquet_export") {
        return;
    }
    use arrow_array::cast::AsArray;
    use arrow_array::types::UInt32Type;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let ns = Netns::new();
    ns.lo_up();
    let dir = tempfile::tempdir().expect("tempdir");
    // The export is written as the user the capture drops root to (nobody): it must reach DIR.
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
    let pcap = dir.path().join("cap1.pcap");
    let out = dir.path().join("ds");
    let sent = sample_packets();
    let n = sent.len().to_string();
    let args = [
        "lo",
        "-c",
        &n,
        "-q",
        "-w",
        pcap.to_str().expect("path"),
        "--parquet",
        out.to_str().expect("path"),
        "--host",
        "nodeA",
    ];
    let mut cap = Capture::start(&ns, &args);
    send_udp(&ns, sent.clone());
    let st = cap.wait_exit(20);
    assert!(st.success(), "exit {st}; stderr: {:?}", cap.stderr_lines());
    let part = out.join("packets/capture=cap1.pcap/part-0.parquet");
    let file = fs::File::open(&part).unwrap_or_else(|e| panic!("{part:?}: {e}"));
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let col = |c: &str| b.column_by_name(c).unwrap().clone();
        for i in 0..b.num_rows() {
            rows.push((
                col("host").as_string::<i32>().value(i).to_string(),
                col("bth_dest_qp").as_primitive::<UInt32Type>().value(i),
                col("bth_psn").as_primitive::<UInt32Type>().value(i),
            ));
        }
    }
    let want: Vec<_> = sent
        .iter()
        .map(|p| ("nodeA".to_string(), p.qp, p.psn))
        .collect();
    assert_eq!(rows, want);
    assert!(out.join("flows/capture=cap1.pcap/part-0.parquet").is_file());
}

/// `capture … --parquet DIR | head`: the closed output stops the capture at its first packet
/// line, and the export of what was captured is still written (it was lost before: the run
/// was not finished once the output was closed). Exit status 0, nothing on stderr.
#[test]
fn capture_parquet_export_survives_a_closed_output() {
    if !privileged("capture_parquet_export_survives_a_closed_output") {
        return;
    }
    let ns = Netns::new();
    ns.lo_up();
    let dir = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = dir.path().join("ds");
    let args = [
        "lo",
        "--parquet",
        out.to_str().expect("path"),
        "--host",
        "nodeA",
    ];
    let mut cap = Capture::start_closed(&ns, &args);
    send_udp(&ns, sample_packets());
    let st = cap.wait_exit(20);
    assert!(st.success(), "exit {st}; stderr: {:?}", cap.stderr_lines());
    let tables: Vec<_> = fs::read_dir(&out)
        .expect("the export folder")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for t in ["packets", "flows", "connections", "messages", "gaps"] {
        assert!(tables.iter().any(|x| x == t), "{t} missing: {tables:?}");
        let parts: Vec<_> = fs::read_dir(out.join(t))
            .unwrap()
            .map(|e| e.unwrap().path().join("part-0.parquet"))
            .collect();
        assert!(parts.iter().all(|p| p.is_file()), "{t}: {parts:?}");
    }
}

/// `--summary --json` on a capture prints one report document when the capture stops, covering
/// every packet sent (not an empty report while idle).
#[test]
fn capture_summary_is_printed_at_stop() {
    if !privileged("capture_summary_is_printed_at_stop") {
        return;
    }
    let ns = Netns::new();
    ns.lo_up();
    let sent = sample_packets();
    let n = sent.len().to_string();
    let mut cap = Capture::start(&ns, &["lo", "-c", &n, "--summary", "--json"]);
    // Let the capture go idle once before sending, as a user's capture would.
    thread::sleep(Duration::from_millis(300));
    send_udp(&ns, sent.clone());
    let st = cap.wait_exit(20);
    assert!(st.success(), "exit {st}; stderr: {:?}", cap.stderr_lines());
    let lines = cap.stdout_lines();
    assert_eq!(lines.len(), 1, "one report document: {lines:?}");
    let report: Value = serde_json::from_str(&lines[0]).expect("report JSON");
    assert_eq!(report["frames"]["roce"], sent.len() as u64, "{report}");
    assert_eq!(report["icrc"]["good"], sent.len() as u64, "{report}");
}

/// A capture stopped by SIGINT (and one by SIGTERM) exits 0, prints the report, and leaves a
/// savefile that `read` and `tshark -r` both read in full.
#[test]
fn capture_stopped_by_signal_leaves_valid_savefile() {
    if !privileged("capture_stopped_by_signal_leaves_valid_savefile") {
        return;
    }
    for (sig, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let ns = Netns::new();
        ns.lo_up();
        let dir = tempfile::tempdir().expect("tempdir");
        let pcap = dir.path().join("sig.pcap");
        let sent: Vec<Pkt> = sample_packets().into_iter().take(3).collect();
        let mut cap = Capture::start(&ns, &["lo", "--json", "-w", pcap.to_str().expect("path")]);
        send_udp(&ns, sent.clone());
        // Output is flushed per packet on a pipe: all three show up while it still runs.
        cap.wait_lines(3, 10);
        cap.signal(sig);
        let st = cap.wait_exit(10);
        let stderr = cap.stderr_lines().join("\n");
        assert!(st.success(), "{name}: exit {st}; stderr: {stderr}");
        assert!(
            stderr.contains("3 frames captured on lo (3 RoCE); stopped: interrupted"),
            "{name}: {stderr}"
        );
        assert!(stderr.contains("stopped: interrupted"), "{name}: {stderr}");
        assert!(!stderr.contains("warning"), "{name}: {stderr}");
        let lines = cap.stdout_lines();
        check_decoded(&json_lines(&lines), &sent);
        assert_eq!(read_json(&pcap), lines, "{name}: savefile re-read differs");
        let ts = Command::new("tshark")
            .args(["-n", "-r", pcap.to_str().expect("path")])
            .output()
            .expect("tshark is needed for this test (make deps installs it)");
        assert!(
            ts.status.success(),
            "{name}: tshark -r: {}",
            String::from_utf8_lossy(&ts.stderr)
        );
        let frames = String::from_utf8_lossy(&ts.stdout).lines().count();
        assert_eq!(frames, 3, "{name}: tshark saw {frames} frames");
    }
}

/// `--duration` stops an idle capture by itself.
#[test]
fn capture_duration_stops() {
    if !privileged("capture_duration_stops") {
        return;
    }
    let ns = Netns::new();
    ns.lo_up();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out.txt");
    let t0 = Instant::now();
    // stdout to a file: buffered mode, where an idle capture must still notice the deadline.
    let mut cap = Capture::start_to(&ns, &["lo", "--duration", "0.5"], Some(&out));
    let st = cap.wait_exit(10);
    assert!(st.success(), "exit {st}: {:?}", cap.stderr_lines());
    assert!(t0.elapsed() >= Duration::from_millis(500));
    let stderr = cap.stderr_lines().join("\n");
    assert!(
        stderr.contains("0 frames captured on lo (0 RoCE)"),
        "{stderr}"
    );
    assert!(stderr.contains("stopped: duration reached"), "{stderr}");
    // No RoCE under the default filter: a hint for mirror collectors, whose tunnels it drops.
    assert!(
        stderr.contains("no RoCE frames passed the default filter")
            && stderr.contains("-f 'ip proto 47'"),
        "{stderr}"
    );
    // With a filter of one's own, no such hint.
    let mut cap = Capture::start_to(
        &ns,
        &["lo", "--duration", "0.2", "-f", "ip proto 47"],
        Some(&out),
    );
    let st = cap.wait_exit(10);
    assert!(st.success(), "exit {st}: {:?}", cap.stderr_lines());
    let stderr = cap.stderr_lines().join("\n");
    assert!(!stderr.contains("default filter"), "{stderr}");
}

fn eth_frame(tags: &[(u16, u16)], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01];
    for (tpid, tci) in tags {
        f.extend_from_slice(&tpid.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// IPv4 ‖ UDP ‖ transport ‖ ICRC for a RoCEv2 packet to `dport` (10.99.0.1 → 10.99.0.2; only
/// ever written as a raw frame onto a veth inside a test namespace).
fn rocev2_ip(p: &Pkt, dport: u16) -> Vec<u8> {
    let t = p.transport();
    let udp_len = (8 + t.len() + 4) as u16;
    let mut ip = vec![0x45, 0x02];
    ip.extend_from_slice(&(20 + udp_len).to_be_bytes());
    ip.extend_from_slice(&[
        0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 99, 0, 1, 10, 99, 0, 2,
    ]);
    let c = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut udp = 0xc001u16.to_be_bytes().to_vec();
    udp.extend_from_slice(&dport.to_be_bytes());
    udp.extend_from_slice(&udp_len.to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    let crc = icrc::rocev2_ipv4(&ip, &udp, &t);
    let mut out = ip;
    out.extend_from_slice(&udp);
    out.extend_from_slice(&t);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// GRH ‖ transport ‖ ICRC for a RoCEv1 packet.
fn rocev1(p: &Pkt) -> Vec<u8> {
    let t = p.transport();
    let mut grh = vec![0x60, 0, 0, 0];
    grh.extend_from_slice(&((t.len() + 4) as u16).to_be_bytes());
    grh.push(0x1b); // next header: BTH
    grh.push(64);
    grh.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    grh.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    let crc = icrc::with_grh(&grh, &t);
    let mut out = grh;
    out.extend_from_slice(&t);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The default filter on a real Ethernet interface (a veth pair in a namespace): RoCEv2
/// untagged, behind one 802.1Q tag and behind QinQ tags, RoCEv1, and RoCEv2 to an extra
/// `--roce-port` are captured; UDP to another port and ARP are not. The kernel moves the outer
/// VLAN tag out of the packet data on receive, so this checks libpcap's live VLAN filtering
/// and tag reinsertion, not only the filter's text.
#[test]
fn capture_veth_default_filter_keeps_roce_only() {
    if !privileged("capture_veth_default_filter_keeps_roce_only") {
        return;
    }
    // Immediate mode (stdout a pipe, TPACKET_V2 on Linux), then buffered (a file, TPACKET_V3).
    veth_default_filter(false);
    veth_default_filter(true);
}

fn veth_default_filter(to_file: bool) {
    let ns = Netns::new();
    ns.ip(&["link", "add", "va", "type", "veth", "peer", "name", "vb"]);
    ns.ip(&["link", "set", "va", "up"]);
    ns.ip(&["link", "set", "vb", "up"]);
    let p = sample_packets();
    let frames = [
        ("udp53", eth_frame(&[], 0x0800, &rocev2_ip(&p[0], 53))),
        ("v2", eth_frame(&[], 0x0800, &rocev2_ip(&p[0], 4791))),
        ("arp", eth_frame(&[], 0x0806, &[0u8; 28])),
        (
            "v2 vlan 100",
            eth_frame(&[(0x8100, 0x6064)], 0x0800, &rocev2_ip(&p[3], 4791)),
        ),
        (
            "v2 qinq 10/20",
            eth_frame(
                &[(0x88a8, 10), (0x8100, 20)],
                0x0800,
                &rocev2_ip(&p[4], 4791),
            ),
        ),
        ("v1", eth_frame(&[], 0x8915, &rocev1(&p[5]))),
        (
            "v2 port 9741",
            eth_frame(&[], 0x0800, &rocev2_ip(&p[1], 9741)),
        ),
        (
            "udp53 vlan",
            eth_frame(&[(0x8100, 100)], 0x0800, &rocev2_ip(&p[2], 53)),
        ),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let out_file = dir.path().join("stdout.json");
    let mut cap = Capture::start_to(
        &ns,
        &["vb", "-c", "5", "--json", "--roce-port", "9741"],
        to_file.then_some(out_file.as_path()),
    );
    let raw: Vec<Vec<u8>> = frames.iter().map(|(_, f)| f.clone()).collect();
    ns.run_in(move || {
        let mut tx = pcap::Capture::from_device("va")
            .and_then(|c| c.open())
            .expect("open va for sending");
        for f in &raw {
            tx.sendpacket(f.as_slice()).expect("sendpacket");
        }
    });
    let st = cap.wait_exit(20);
    assert!(st.success(), "exit {st}: {:?}", cap.stderr_lines());
    let got = json_lines(&cap.stdout_lines());
    assert_eq!(got.len(), 5, "to_file {to_file}: {got:#?}");
    let expect = [
        (&p[0], "v2", None, None),
        (&p[3], "v2", Some(100), None),
        (&p[4], "v2", Some(10), Some(20)),
        (&p[5], "v1", None, None),
        (&p[1], "v2", None, None),
    ];
    for (g, (s, ver, vlan, inner)) in got.iter().zip(expect) {
        assert_eq!(g["roce"], ver, "to_file {to_file}: {g}");
        assert_eq!(g["bth"]["psn"], s.psn as u64, "{g}");
        assert_eq!(g["bth"]["dest_qp"], s.qp as u64, "{g}");
        assert_eq!(g["icrc"]["status"], "good", "{g}");
        assert_eq!(g.get("vlan").and_then(Value::as_u64), vlan, "{g}");
        assert_eq!(g.get("inner_vlan").and_then(Value::as_u64), inner, "{g}");
    }
    assert_eq!(got[1]["vlan_pcp"], 3, "{}", got[1]);
    assert_eq!(got[4]["udp_dst_port"], 9741, "{}", got[4]);
}

/// Runs `roce-inspect ARGS…` (in `ns` when given) and checks a one-line error and exit 1.
fn expect_error(ns: Option<&Netns>, args: &[&str], needles: &[&str]) -> String {
    expect_exit(ns, args, needles, 1)
}

/// [`expect_error`] with exit status `code`.
fn expect_exit(ns: Option<&Netns>, args: &[&str], needles: &[&str], code: i32) -> String {
    let out: Output = match ns {
        Some(ns) => ns.command(args).output(),
        None => Command::new(BIN).args(args).output(),
    }
    .expect("run roce-inspect");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout not empty");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: not one line: {stderr}"
    );
    assert!(stderr.starts_with("roce-inspect: "), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{args:?}: {stderr:?} lacks {n:?}");
    }
    stderr
}

#[test]
fn capture_errors_are_one_line() {
    if !privileged("capture_errors_are_one_line") {
        return;
    }
    let ns = Netns::new();
    // No such interface: the message lists the namespace's interfaces.
    expect_error(
        Some(&ns),
        &["capture", "nosuch0"],
        &["nosuch0: no such interface", "available: ", "lo"],
    );
    // Interface down: a new namespace's loopback is down.
    expect_error(Some(&ns), &["capture", "lo"], &["lo: interface is down"]);
    ns.lo_up();
    // Bad filter: a usage error naming the expression, with libpcap's message.
    expect_exit(
        Some(&ns),
        &["capture", "lo", "-f", "udp port"],
        &["bad filter expression 'udp port': ", "syntax error"],
        2,
    );
    // Savefile not writable.
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("missing-dir").join("out.pcap");
    expect_error(
        Some(&ns),
        &["capture", "lo", "-w", bad.to_str().expect("path")],
        &["cannot write savefile", "No such file or directory"],
    );
    expect_error(
        Some(&ns),
        &["capture", "lo", "-w", dir.path().to_str().expect("path")],
        &["cannot write savefile", "Is a directory"],
    );
}

// ---------------------------------------------------------------------------------------------
// Giving up root once the device is open (tcpdump's -Z)

/// `getent passwd USER`'s user and group IDs (the system's own lookup, not ours).
fn getent_ids(user: &str) -> Option<(u32, u32)> {
    let out = Command::new("getent")
        .args(["passwd", user])
        .output()
        .ok()?;
    let line = String::from_utf8(out.stdout).ok()?;
    let f: Vec<&str> = line.trim().split(':').collect();
    Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?))
}

/// What /proc/PID/status says a process runs as.
struct ProcIds {
    /// `Uid:` real, effective, saved, filesystem.
    uids: Vec<u32>,
    /// `Gid:` the same.
    gids: Vec<u32>,
    /// `Groups:` the supplementary groups.
    groups: String,
    /// `CapEff:` the effective capabilities (hex).
    cap_eff: String,
}

/// The `Uid:`, `Gid:`, `Groups:` and `CapEff:` lines of /proc/PID/status.
fn proc_ids(pid: u32) -> ProcIds {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    let field = |k: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap_or_else(|| panic!("{k} missing in {status}"))
            .trim()
            .to_string()
    };
    let ids = |k: &str| -> Vec<u32> {
        field(k)
            .split_whitespace()
            .map(|x| x.parse().expect("id"))
            .collect()
    };
    ProcIds {
        uids: ids("Uid:"),
        gids: ids("Gid:"),
        groups: field("Groups:"),
        cap_eff: field("CapEff:"),
    }
}

/// Start a capture on a namespace's loopback with `extra` arguments and a `-w` file in a
/// folder anyone can reach; once it is ready (device open), return the IDs it runs with
/// (/proc), then let it capture the sample packets and return the savefile's owner and its
/// frames as re-read.
fn capture_ids(extra: &[&str], sudo_user: Option<&str>) -> (ProcIds, (u32, u32)) {
    use std::os::unix::fs::MetadataExt;
    let ns = Netns::new();
    ns.lo_up();
    let dir = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
    let pcap = dir.path().join("out.pcap");
    let sent = sample_packets();
    let n = sent.len().to_string();
    let mut args = vec![
        "capture",
        "lo",
        "-c",
        &n,
        "--json",
        "-w",
        pcap.to_str().expect("path"),
    ];
    args.extend_from_slice(extra);
    let mut cmd = ns.command(&args);
    match sudo_user {
        Some(u) => cmd.env("SUDO_USER", u),
        None => cmd.env_remove("SUDO_USER"),
    };
    let mut cap = Capture::spawn(cmd);
    let ids = proc_ids(cap.child.id());
    send_udp(&ns, sent.clone());
    let st = cap.wait_exit(20);
    assert!(st.success(), "exit {st}; stderr: {:?}", cap.stderr_lines());
    // Everything captured after the drop is in the savefile.
    let lines = cap.stdout_lines();
    check_decoded(&json_lines(&lines), &sent);
    assert_eq!(read_json(&pcap), lines, "savefile re-read differs");
    let m = fs::metadata(&pcap).expect("savefile");
    (ids, (m.uid(), m.gid()))
}

/// `capture lo -Z nobody -w FILE`: once the device is open the process runs as nobody (real,
/// effective, saved and filesystem IDs, as /proc/PID/status shows them, against `getent
/// passwd nobody`), with no supplementary group and no capability, and the savefile, created
/// before the drop, belongs to nobody and holds every packet sent.
#[test]
fn capture_drops_root_to_the_z_user() {
    if !privileged("capture_drops_root_to_the_z_user") {
        return;
    }
    let Some((uid, gid)) = getent_ids("nobody") else {
        eprintln!("skipped: no user 'nobody' on this system");
        return;
    };
    let (ids, owner) = capture_ids(&["-Z", "nobody"], Some("daemon"));
    assert_eq!(ids.uids, vec![uid; 4]);
    assert_eq!(ids.gids, vec![gid; 4]);
    assert_eq!(ids.groups, "");
    assert_eq!(ids.cap_eff, "0000000000000000");
    assert_eq!(owner, (uid, gid));
}

/// Without -Z, a run as root becomes the user behind sudo (SUDO_USER), else nobody; `-Z root`
/// keeps root (and the savefile root's).
#[test]
fn capture_drops_root_to_sudo_user_else_nobody() {
    if !privileged("capture_drops_root_to_sudo_user_else_nobody") {
        return;
    }
    let (Some(nobody), Some(daemon)) = (getent_ids("nobody"), getent_ids("daemon")) else {
        eprintln!("skipped: no users 'nobody' and 'daemon' on this system");
        return;
    };
    let (ids, owner) = capture_ids(&[], Some("daemon"));
    assert_eq!(
        (ids.uids, ids.gids, owner),
        (vec![daemon.0; 4], vec![daemon.1; 4], daemon)
    );
    let (ids, owner) = capture_ids(&[], None);
    assert_eq!(
        (ids.uids, ids.gids, owner),
        (vec![nobody.0; 4], vec![nobody.1; 4], nobody)
    );
    let (ids, owner) = capture_ids(&["-Z", "root"], Some("daemon"));
    assert_eq!(
        (ids.uids, ids.gids, owner),
        (vec![0; 4], vec![0; 4], (0, 0))
    );
}

/// `-Z` naming no user: one line, usage error (exit status 2), before the device is opened.
#[test]
fn capture_bad_z_user_is_a_usage_error() {
    if !privileged("capture_bad_z_user_is_a_usage_error") {
        return;
    }
    let ns = Netns::new();
    ns.lo_up();
    expect_exit(
        Some(&ns),
        &["capture", "lo", "-Z", "no-such-user-ri38"],
        &["-Z no-such-user-ri38: no such user"],
        2,
    );
}

/// Not root but given CAP_NET_RAW + CAP_NET_ADMIN with setcap (README's alternative to sudo):
/// once the device is open the capture holds no capability any more (/proc/PID/status CapEff
/// and CapPrm zero) and still captures every packet sent. The binary is copied somewhere
/// nobody can run it, given the capabilities, and started as nobody through setpriv.
#[test]
fn capture_with_file_capabilities_clears_them() {
    if !privileged("capture_with_file_capabilities_clears_them") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
    let bin = dir.path().join("roce-inspect");
    fs::copy(BIN, &bin).expect("copy binary");
    let set = Command::new("setcap")
        .args(["cap_net_raw,cap_net_admin=eip"])
        .arg(&bin)
        .output();
    if !set.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: setcap (libcap2-bin) is not there or the file system has no xattrs");
        return;
    }
    let ns = Netns::new();
    ns.lo_up();
    let sent = sample_packets();
    let n = sent.len().to_string();
    let mut cmd = Command::new("ip");
    cmd.args([
        "netns",
        "exec",
        &ns.name,
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
    ])
    .args(["--clear-groups", "--inh-caps=-all"])
    .arg(&bin)
    .args(["capture", "lo", "-c", &n, "--json"]);
    let mut cap = Capture::spawn(cmd);
    let status = fs::read_to_string(format!("/proc/{}/status", cap.child.id())).expect("status");
    let field = |k: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().to_string())
    };
    assert_eq!(field("Uid:").as_deref(), Some("65534\t65534\t65534\t65534"));
    assert_eq!(field("CapEff:").as_deref(), Some("0000000000000000"));
    assert_eq!(field("CapPrm:").as_deref(), Some("0000000000000000"));
    send_udp(&ns, sent.clone());
    let st = cap.wait_exit(20);
    assert!(st.success(), "exit {st}; stderr: {:?}", cap.stderr_lines());
    check_decoded(&json_lines(&cap.stdout_lines()), &sent);
}

/// `--html FILE` is written when the capture stops, after root was given up: the file is
/// created before the drop and given to the user, and one the user could not reach is refused
/// at the start (one line, exit status 1), not after the capture.
#[test]
fn capture_html_is_written_as_the_z_user() {
    use std::os::unix::fs::MetadataExt;
    if !privileged("capture_html_is_written_as_the_z_user") {
        return;
    }
    let Some((uid, _)) = getent_ids("nobody") else {
        eprintln!("skipped: no user 'nobody' on this system");
        return;
    };
    let ns = Netns::new();
    ns.lo_up();
    let dir = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
    let html = dir.path().join("report.html");
    let sent = sample_packets();
    let n = sent.len().to_string();
    let h = html.to_str().expect("path");
    let mut cap = Capture::start(&ns, &["lo", "-c", &n, "-Z", "nobody", "--html", h]);
    send_udp(&ns, sent);
    let st = cap.wait_exit(20);
    assert!(st.success(), "exit {st}; stderr: {:?}", cap.stderr_lines());
    let text = fs::read_to_string(&html).expect("the --html file");
    assert!(
        text.starts_with("<!DOCTYPE html>"),
        "{}",
        &text[..text.len().min(80)]
    );
    assert_eq!(fs::metadata(&html).expect("html").uid(), uid);

    // A folder only root can enter: refused before capturing.
    let private = dir.path().join("private");
    fs::create_dir(&private).expect("mkdir");
    fs::set_permissions(&private, fs::Permissions::from_mode(0o700)).expect("chmod");
    let bad = private.join("r.html");
    expect_error(
        Some(&ns),
        &[
            "capture",
            "lo",
            "-Z",
            "nobody",
            "--html",
            bad.to_str().expect("path"),
        ],
        &[
            "cannot be written as nobody",
            "-Z root",
            "Permission denied",
        ],
    );
}

/// Without root or capabilities, capture says what it needs. The binary is copied somewhere
/// an unprivileged user can run it, then started as `nobody` through setpriv.
#[test]
fn capture_permission_denied_says_what_is_needed() {
    if !privileged("capture_permission_denied_says_what_is_needed") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
    let bin = dir.path().join("roce-inspect");
    fs::copy(BIN, &bin).expect("copy binary");
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&bin)
        .args(["capture", "lo"])
        .output()
        .expect("setpriv (util-linux) is needed for this test");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for n in [
        "lo: permission denied",
        "CAP_NET_RAW + CAP_NET_ADMIN",
        "setcap cap_net_raw,cap_net_admin=eip",
    ] {
        assert!(stderr.contains(n), "{stderr:?} lacks {n:?}");
    }
}

/// `list` and its alias `interfaces` show the namespace's interfaces with flags and addresses,
/// and the note on NIC-offloaded RoCE.
#[test]
fn list_shows_interfaces_and_offload_note() {
    if !privileged("list_shows_interfaces_and_offload_note") {
        return;
    }
    let ns = Netns::new();
    ns.lo_up();
    for cmd in ["list", "interfaces"] {
        let out = ns.command(&[cmd]).output().expect("run list");
        assert!(out.status.success(), "{cmd}");
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(
            s.lines()
                .any(|l| l.contains(". lo [up, running, loopback]")),
            "{cmd}: {s}"
        );
        assert!(s.contains("     127.0.0.1/8"), "{cmd}: {s}");
        assert!(
            s.contains("Capturing RoCE that the NIC offloads"),
            "{cmd}: {s}"
        );
        assert!(s.contains("mlx5_0") && s.contains("ibdump"), "{cmd}: {s}");
        assert!(
            s.contains("tcpdump-rdma") && s.contains("rxe"),
            "{cmd}: {s}"
        );
    }
}

/// `-f 'udp port 4791'` on a live Ethernet interface: the priority-tagged (VLAN 0, PCP 3) and
/// QinQ RoCE frames it misses are counted in one stderr line at the end, and neither shown nor
/// saved with `-w`; the untagged ones are captured as before.
#[test]
fn capture_veth_filter_counts_missed_tagged_frames() {
    if !privileged("capture_veth_filter_counts_missed_tagged_frames") {
        return;
    }
    let ns = Netns::new();
    ns.ip(&["link", "add", "va", "type", "veth", "peer", "name", "vb"]);
    ns.ip(&["link", "set", "va", "up"]);
    ns.ip(&["link", "set", "vb", "up"]);
    let p = sample_packets();
    let frames = [
        eth_frame(&[(0x8100, 0x6000)], 0x0800, &rocev2_ip(&p[3], 4791)),
        eth_frame(&[], 0x0800, &rocev2_ip(&p[0], 4791)),
        eth_frame(&[(0x8100, 0x6000)], 0x0800, &rocev2_ip(&p[2], 53)),
        eth_frame(
            &[(0x88a8, 10), (0x8100, 20)],
            0x0800,
            &rocev2_ip(&p[4], 4791),
        ),
        eth_frame(&[], 0x0800, &rocev2_ip(&p[1], 4791)),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let saved = dir.path().join("saved.pcap");
    let mut cap = Capture::start(
        &ns,
        &[
            "vb",
            "-c",
            "2",
            "--json",
            "-f",
            "udp port 4791",
            "-w",
            saved.to_str().unwrap(),
        ],
    );
    ns.run_in(move || {
        let mut tx = pcap::Capture::from_device("va")
            .and_then(|c| c.open())
            .expect("open va for sending");
        for f in &frames {
            tx.sendpacket(f.as_slice()).expect("sendpacket");
        }
    });
    let st = cap.wait_exit(20);
    let err = cap.stderr_lines();
    assert!(st.success(), "exit {st}: {err:?}");
    let got = json_lines(&cap.stdout_lines());
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(got[0]["bth"]["psn"], p[0].psn as u64);
    assert_eq!(got[1]["bth"]["psn"], p[1].psn as u64);
    assert!(
        err.iter()
            .any(|l| l.contains("2 tagged RoCE frames were not matched")
                && l.contains("(vlan and (udp port 4791 or (vlan and udp port 4791)))")),
        "{err:?}"
    );
    assert_eq!(read_json(&saved).len(), 2, "only matched frames are saved");
}
