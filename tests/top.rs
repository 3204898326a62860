//! `roce-inspect top` in a real terminal: tmux sessions of a given size run it, the screen is
//! read with `tmux capture-pane -p`, keys are sent with `tmux send-keys`.
//!
//! - Replay of the samples at 100×30 and 80×24: after the end of the file every flow's row
//!   shows the packets `read --summary --json` counts for it (an independent path: the batch
//!   reader and the report, not the dashboard's live counters), and `q` ends `top` with exit
//!   status 0, the alternate screen left and the terminal back in canonical mode with echo.
//! - Live on the loopback of a network namespace (root only, as tests/capture.rs): RoCE
//!   datagrams sent to UDP port 4791 show as their QPs' rows with their packet counts; `-Z`
//!   gives up root once the device is open, and `w` writes as that user.
//! - The display filter (`/`, `-Y`): the rows left equal the packets counted from `read
//!   --json` in the test.
//! - Not a terminal: one line, exit status 2.
//!
//! Tests needing tmux skip with one line when it is not installed (`make deps` installs it).

use std::fs;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

static COUNTER: AtomicU32 = AtomicU32::new(0);

fn unique(prefix: &str) -> String {
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    )
}

/// Whether tmux can be run; prints one skip line when not.
fn have_tmux(test: &str) -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: {test}: tmux not found (make deps installs it)");
    }
    ok
}

/// A detached tmux session on its own server socket, killed on drop.
struct Tmux {
    socket: String,
    session: String,
}

impl Tmux {
    /// Start `cmd` (a shell command line) in a `w`×`h` session.
    fn start(w: u16, h: u16, cmd: &str) -> Tmux {
        let t = Tmux {
            socket: unique("ri-top"),
            session: "top".into(),
        };
        let st = t
            .tmux()
            .args(["new-session", "-d", "-s", &t.session])
            .args(["-x", &w.to_string(), "-y", &h.to_string()])
            .arg(cmd)
            .status()
            .expect("tmux new-session");
        assert!(st.success(), "tmux new-session failed");
        t
    }

    fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    /// The screen's lines.
    fn screen(&self) -> Vec<String> {
        let out = self
            .tmux()
            .args(["capture-pane", "-p", "-t", &self.session])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Wait up to `secs` for a screen on which `ok` holds; that screen.
    fn wait_for(&self, secs: u64, ok: impl Fn(&[String]) -> bool) -> Vec<String> {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(Instant::now() < end, "timed out; screen:\n{}", s.join("\n"));
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Type `text` literally (no key names).
    fn type_text(&self, text: &str) {
        let st = self
            .tmux()
            .args(["send-keys", "-l", "-t", &self.session, text])
            .status()
            .expect("send-keys");
        assert!(st.success());
    }

    fn keys(&self, keys: &str) {
        let st = self
            .tmux()
            .args(["send-keys", "-t", &self.session, keys])
            .status()
            .expect("send-keys");
        assert!(st.success());
    }

    /// A pane variable (`#{alternate_on}`, `#{pane_tty}`).
    fn var(&self, name: &str) -> String {
        let out = self
            .tmux()
            .args(["display-message", "-p", "-t", &self.session, name])
            .output()
            .expect("display-message");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self
            .tmux()
            .arg("kill-server")
            .stderr(Stdio::null())
            .status();
    }
}

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

/// `read FILE --summary --json`'s flows: (`src → dst`, DestQP, packets).
fn summary_flows(path: &Path) -> Vec<(String, u32, u64)> {
    let out = Command::new(BIN)
        .arg("read")
        .arg(path)
        .args(["--summary", "--json"])
        .output()
        .expect("read");
    assert!(out.status.success());
    let r: Value = serde_json::from_slice(&out.stdout).expect("report JSON");
    r["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .map(|f| {
            (
                format!(
                    "{} → {}",
                    f["src"].as_str().unwrap(),
                    f["dst"].as_str().unwrap()
                ),
                f["dest_qp"].as_u64().unwrap() as u32,
                f["packets"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The packets column of the row of `flow` (`src → dst`) and `qp` on `screen`.
fn row_packets(screen: &[String], flow: &str, qp: u32) -> Option<u64> {
    let qp = format!("{qp:#08x}");
    screen.iter().find_map(|l| {
        let rest = l.strip_prefix(flow)?;
        let mut t = rest.split_whitespace();
        if t.next()? != qp {
            return None;
        }
        let _gbps = t.next()?;
        t.next()?.parse().ok()
    })
}

/// The table's rows on `screen`: (`src → dst`, DestQP, packets), sorted. A row is a line of
/// `SRC → DST 0xQP GBPS PACKETS …` (IPv4 pairs fit at 100 columns).
fn table_rows(screen: &[String]) -> Vec<(String, u32, u64)> {
    let mut rows: Vec<(String, u32, u64)> = screen
        .iter()
        .filter_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            if t.len() < 6 || t[1] != "→" {
                return None;
            }
            let qp = u32::from_str_radix(t[3].strip_prefix("0x")?, 16).ok()?;
            Some((format!("{} → {}", t[0], t[2]), qp, t[5].parse().ok()?))
        })
        .collect();
    rows.sort();
    rows
}

/// `read FILE --json`'s RoCE packets that `keep` (a predicate on the packet's JSON object,
/// written in the test) keeps, counted per (`src → dst`, DestQP), sorted: the rows a display
/// filter of the same meaning should leave.
fn json_counts(path: &Path, mut keep: impl FnMut(&Value) -> bool) -> Vec<(String, u32, u64)> {
    let out = Command::new(BIN)
        .arg("read")
        .arg(path)
        .arg("--json")
        .output()
        .expect("read");
    assert!(out.status.success());
    let mut counts = std::collections::BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let p: Value = serde_json::from_str(line).expect("packet JSON");
        let Some(qp) = p["bth"]["dest_qp"].as_u64() else {
            continue;
        };
        if keep(&p) {
            let flow = format!(
                "{} → {}",
                p["src"].as_str().unwrap(),
                p["dst"].as_str().unwrap()
            );
            *counts.entry((flow, qp as u32)).or_insert(0u64) += 1;
        }
    }
    counts.into_iter().map(|((f, q), n)| (f, q, n)).collect()
}

#[test]
fn slash_applies_a_display_filter() {
    if !have_tmux("slash_applies_a_display_filter") {
        return;
    }
    let path = sample("congestion.pcap");
    let qp = |p: &Value| p["bth"]["dest_qp"].as_u64();
    let want = json_counts(&path, |p| matches!(qp(p), Some(0xc31 | 0xa32)));
    assert_eq!(want.len(), 2, "{want:?}");
    let every = json_counts(&path, |_| true);
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("rc");
    let cmd = format!(
        "{BIN} top -r {}; echo $? > {}; sleep 60",
        path.display(),
        rc.display()
    );
    let t = Tmux::start(100, 30, &cmd);
    t.wait_for(30, |s| {
        s.iter().any(|l| l.contains("finished: end of file")) && table_rows(s) == every
    });
    // A mistake: the error read -Y prints for it, above the prompt; top goes on.
    let cli = Command::new(BIN)
        .arg("read")
        .arg(&path)
        .args(["-Y", "bth.dest_qp == "])
        .output()
        .expect("read");
    let cli = String::from_utf8_lossy(&cli.stderr).to_string();
    let at = cli.find("display filter: column").expect("read -Y's error");
    let msg = cli[at..]
        .trim_end()
        .trim_end_matches(" (see --help)")
        .to_string();
    t.keys("/");
    t.type_text("bth.dest_qp == ");
    t.keys("Enter");
    let s = t.wait_for(5, |s| s.iter().any(|l| l.trim_end() == msg));
    assert_eq!(s.last().map(|l| l.trim_end()), Some("/bth.dest_qp =="));
    // Corrected and applied: the rows left are the packets of those two QPs.
    t.type_text("0xc31 || bth.dest_qp == 0xa32");
    t.keys("Enter");
    let frames: u64 = want.iter().map(|r| r.2).sum();
    let head = format!("filter: bth.dest_qp == 0xc31 || bth.dest_qp == 0xa32 ({frames} frames)");
    let s = t.wait_for(5, |s| s[2].contains(&head) && table_rows(s) == want);
    assert!(s.last().unwrap().starts_with("q quit"), "{}", s.join("\n"));
    // Esc leaves the filter as it was; an empty one clears it.
    t.keys("/");
    t.type_text("x");
    t.keys("Escape");
    t.wait_for(5, |s| {
        s.last().unwrap().starts_with("q quit") && table_rows(s) == want
    });
    t.keys("/");
    t.keys("C-u");
    t.keys("Enter");
    t.wait_for(5, |s| !s[2].contains("filter:") && table_rows(s) == every);
    quit_and_check(&t, &rc, "q");
}

#[test]
fn y_filters_from_the_start() {
    if !have_tmux("y_filters_from_the_start") {
        return;
    }
    let path = sample("congestion.pcap");
    let want = json_counts(&path, |p| p["ecn"] == "ce");
    assert_eq!(want.len(), 2, "{want:?}");
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("rc");
    let cmd = format!(
        "{BIN} top -r {} -Y 'ecn == \"ce\"'; echo $? > {}; sleep 60",
        path.display(),
        rc.display()
    );
    let t = Tmux::start(100, 30, &cmd);
    t.wait_for(30, |s| {
        s.iter().any(|l| l.contains("finished: end of file")) && table_rows(s) == want
    });
    quit_and_check(&t, &rc, "q");
}

/// The request packets (not ACKs, opcode 0x11) of `read FILE --json` whose PSN their flow
/// already carried, counted per flow as `table_rows` gives them: what
/// `analysis.retransmission` means (a resend of a PSN seen before), worked out in the test.
fn resent_by_json(path: &Path) -> Vec<(String, u32, u64)> {
    let mut seen = std::collections::HashSet::new();
    json_counts(path, |p| {
        let b = &p["bth"];
        if b["opcode"] == 0x11 {
            return false;
        }
        let k = (
            p["src"].to_string(),
            p["dst"].to_string(),
            b["dest_qp"].as_u64(),
            b["psn"].as_u64(),
        );
        !seen.insert(k)
    })
}

#[test]
fn analysis_fields_filter_on_the_marks() {
    if !have_tmux("analysis_fields_filter_on_the_marks") {
        return;
    }
    let path = sample("write_bw.pcap");
    let want = resent_by_json(&path);
    assert!(!want.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("rc");
    let cmd = format!(
        "{BIN} top -r {} -Y analysis.retransmission; echo $? > {}; sleep 60",
        path.display(),
        rc.display()
    );
    let t = Tmux::start(100, 30, &cmd);
    t.wait_for(30, |s| {
        s.iter().any(|l| l.contains("finished: end of file")) && table_rows(s) == want
    });
    // Cleared, then typed after the end: the kept frames are analysed again for their marks.
    t.keys("/");
    t.keys("C-u");
    t.keys("Enter");
    t.wait_for(5, |s| !s[2].contains("filter:") && table_rows(s).len() == 2);
    t.keys("/");
    t.type_text("analysis.retransmission");
    t.keys("Enter");
    t.wait_for(5, |s| {
        s[2].contains("filter: analysis.retransmission") && table_rows(s) == want
    });
    quit_and_check(&t, &rc, "q");
}

/// Whether the terminal `tty` is back in canonical mode with echo (raw mode left).
fn cooked(tty: &str) -> bool {
    let out = Command::new("stty")
        .args(["-F", tty, "-a"])
        .output()
        .expect("stty");
    let s = String::from_utf8_lossy(&out.stdout);
    let words: Vec<&str> = s.split_whitespace().collect();
    words.contains(&"icanon") && words.contains(&"echo")
}

/// Quit with `key` (`q`, `C-c`); check the exit status and the terminal.
fn quit_and_check(t: &Tmux, rc_file: &Path, key: &str) {
    let tty = t.var("#{pane_tty}");
    t.keys(key);
    let end = Instant::now() + Duration::from_secs(10);
    while !rc_file.exists() {
        assert!(Instant::now() < end, "top did not end on q");
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(100));
    assert_eq!(fs::read_to_string(rc_file).unwrap().trim(), "0");
    assert_eq!(t.var("#{alternate_on}"), "0", "alternate screen left");
    assert!(
        cooked(&tty),
        "terminal {tty} back in canonical mode with echo"
    );
}

fn replay(file: &str, w: u16, h: u16, quit: &str) {
    let path = sample(file);
    let want = summary_flows(&path);
    assert!(!want.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("rc");
    let cmd = format!(
        "{BIN} top -r {} --save-dir {}; echo $? > {}; sleep 60",
        path.display(),
        dir.path().display(),
        rc.display()
    );
    let t = Tmux::start(w, h, &cmd);
    // The end of the file, and every row as the summary counts it (waited for together: a
    // screen read while the terminal is still taking a redraw has its new header before its
    // new rows). A timeout shows the screen.
    let screen = t.wait_for(30, |s| {
        s.iter().any(|l| l.contains("finished: end of file"))
            && want
                .iter()
                .all(|(flow, qp, packets)| row_packets(s, flow, *qp) == Some(*packets))
    });
    for l in &screen {
        assert!(l.chars().count() <= w as usize);
    }
    quit_and_check(&t, &rc, quit);
}

#[test]
fn replay_rows_equal_the_summary_100x30() {
    if !have_tmux("replay_rows_equal_the_summary_100x30") {
        return;
    }
    for f in ["write_bw.pcap", "congestion.pcap", "allreduce_node0.pcap"] {
        replay(f, 100, 30, "q");
    }
}

#[test]
fn replay_rows_equal_the_summary_80x24() {
    if !have_tmux("replay_rows_equal_the_summary_80x24") {
        return;
    }
    for f in [
        "read_timeout.pcap",
        "congestion.pcap",
        "allreduce_node0.pcap",
    ] {
        replay(f, 80, 24, "C-c");
    }
}

#[test]
fn keys_sort_select_detail_write_and_summary() {
    if !have_tmux("keys_sort_select_detail_write_and_summary") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("rc");
    let path = sample("congestion.pcap");
    let cmd = format!(
        "{BIN} top -r {} --save-dir {} --summary; echo $? > {}; sleep 60",
        path.display(),
        dir.path().display(),
        rc.display()
    );
    let t = Tmux::start(100, 30, &cmd);
    t.wait_for(30, |s| {
        s.iter().any(|l| l.contains("finished: end of file"))
    });
    // s: sorted by packets.
    t.keys("s");
    t.wait_for(5, |s| s[2].starts_with("sort: packets"));
    // Enter: the detail pane names the selected flow (the first row).
    t.keys("Enter");
    let s = t.wait_for(5, |s| s.iter().any(|l| l.contains("(RC)")));
    let first = s[4]
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        s.iter().any(|l| l.contains(&first) && l.contains("(RC)")),
        "{}",
        s.join("\n")
    );
    // A resize to 80x24: the screen follows (the key line at the new bottom, nothing wider).
    let st = t
        .tmux()
        .args(["resize-window", "-t", &t.session, "-x", "80", "-y", "24"])
        .status()
        .expect("resize-window");
    assert!(st.success());
    let s = t.wait_for(5, |s| s.len() == 24 && s[23].starts_with("q quit"));
    assert!(
        s.iter().all(|l| l.chars().count() <= 80),
        "{}",
        s.join("\n")
    );
    // w: every frame of the file written as pcapng, which `read` reads back.
    t.keys("w");
    let s = t.wait_for(5, |s| s[2].contains("wrote 327 frames"));
    let written: Vec<PathBuf> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcapng"))
        .collect();
    assert_eq!(written.len(), 1, "{}", s.join("\n"));
    assert_eq!(summary_flows(&written[0]), summary_flows(&path));
    quit_and_check(&t, &rc, "q");
    // --summary: the report printed after the screen closed.
    t.wait_for(5, |s| {
        s.iter()
            .any(|l| l.contains("ICRC failures and malformed frames"))
    });
}

#[test]
fn sigterm_ends_it_like_q() {
    if !have_tmux("sigterm_ends_it_like_q") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("rc");
    let pid = dir.path().join("pid");
    // The shell's exec'd child is top itself; its pid is written first.
    let cmd = format!(
        "sh -c 'echo $$ > {}; exec {BIN} top -r {}'; echo $? > {}; sleep 60",
        pid.display(),
        sample("write_bw.pcap").display(),
        rc.display()
    );
    let t = Tmux::start(80, 24, &cmd);
    t.wait_for(30, |s| {
        s.iter().any(|l| l.contains("finished: end of file"))
    });
    let tty = t.var("#{pane_tty}");
    let pid: i32 = fs::read_to_string(&pid).unwrap().trim().parse().unwrap();
    // SAFETY: a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let end = Instant::now() + Duration::from_secs(10);
    while !rc.exists() {
        assert!(Instant::now() < end, "top did not end on SIGTERM");
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(100));
    assert_eq!(fs::read_to_string(&rc).unwrap().trim(), "0");
    assert_eq!(t.var("#{alternate_on}"), "0");
    assert!(cooked(&tty));
}

#[test]
fn a_read_error_ends_the_replay_and_status_1() {
    if !have_tmux("a_read_error_ends_the_replay_and_status_1") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("rc");
    let err = dir.path().join("err");
    // The sample cut 10 bytes before its end: its last record is incomplete.
    let bytes = fs::read(sample("write_bw.pcap")).unwrap();
    let cut = dir.path().join("cut.pcap");
    fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
    let cmd = format!(
        "{BIN} top -r {} 2> {}; echo $? > {}; sleep 60",
        cut.display(),
        err.display(),
        rc.display()
    );
    let t = Tmux::start(100, 30, &cmd);
    t.wait_for(30, |s| s[2].contains("finished: capture error"));
    t.keys("q");
    let end = Instant::now() + Duration::from_secs(10);
    while !rc.exists() {
        assert!(Instant::now() < end, "top did not end on q");
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(100));
    assert_eq!(fs::read_to_string(&rc).unwrap().trim(), "1");
    let err = fs::read_to_string(&err).unwrap();
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("roce-inspect: ") && last.contains("stopped after"),
        "{err}"
    );
}

#[test]
fn no_permission_is_capture_s_line() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: no_permission_is_capture_s_line needs root (to drop privileges)");
        return;
    }
    if !have_tmux("no_permission_is_capture_s_line") {
        return;
    }
    // The same command as user nobody, without capabilities.
    let nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups";
    let capture = Command::new("sh")
        .arg("-c")
        .arg(format!("{nobody} {BIN} capture lo -c 1"))
        .output()
        .expect("capture");
    let want = String::from_utf8_lossy(&capture.stderr).to_string();
    assert!(want.contains("permission denied"), "{want}");
    let dir = tempfile::tempdir().unwrap();
    let (rc, err) = (dir.path().join("rc"), dir.path().join("err"));
    let cmd = format!(
        "{nobody} {BIN} top lo 2> {}; echo $? > {}; sleep 60",
        err.display(),
        rc.display()
    );
    let _t = Tmux::start(100, 30, &cmd);
    let end = Instant::now() + Duration::from_secs(10);
    while !rc.exists() {
        assert!(Instant::now() < end, "top did not end");
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(100));
    assert_eq!(fs::read_to_string(&rc).unwrap().trim(), "1");
    assert_eq!(fs::read_to_string(&err).unwrap(), want);
}

#[test]
fn not_a_terminal_is_one_line_and_status_2() {
    let out = Command::new(BIN)
        .args(["top", "-r"])
        .arg(sample("write_bw.pcap"))
        .stdin(Stdio::null())
        .output()
        .expect("top");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("top needs a terminal"), "{err}");
    assert!(out.stdout.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Live, on a network namespace's loopback

/// A network namespace for the test's lifetime, its loopback up.
struct Netns(String);

impl Netns {
    fn new() -> Netns {
        let name = unique("ri-top");
        for args in [
            vec!["netns", "add", &name],
            vec!["-n", &name, "link", "set", "lo", "up"],
        ] {
            let st = Command::new("ip").args(&args).status().expect("ip");
            assert!(st.success(), "ip {args:?}");
        }
        Netns(name)
    }

    /// Send UDP datagrams `payloads` to 127.0.0.1:4791 from a socket inside the namespace.
    fn send(&self, payloads: Vec<Vec<u8>>) {
        let path = format!("/run/netns/{}", self.0);
        thread::spawn(move || {
            let ns = fs::File::open(&path).unwrap();
            // SAFETY: a valid namespace fd; only this thread changes namespace.
            let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0);
            let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
            for p in &payloads {
                sock.send_to(p, "127.0.0.1:4791").unwrap();
            }
        })
        .join()
        .unwrap();
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.0])
            .stderr(Stdio::null())
            .status();
    }
}

/// A RoCEv2 UDP payload: BTH (IBTA Vol 1 §9.2: opcode, flags 0, P_Key 0xFFFF, DestQP, PSN),
/// a RETH for WRITE ONLY (opcode 0x0A), `payload` bytes and 4 ICRC bytes (not checked here).
fn roce(opcode: u8, qp: u32, psn: u32, payload: usize) -> Vec<u8> {
    let mut t = vec![opcode, 0, 0xff, 0xff, 0];
    t.extend_from_slice(&qp.to_be_bytes()[1..]);
    t.push(0);
    t.extend_from_slice(&psn.to_be_bytes()[1..]);
    if opcode == 0x0a {
        t.extend_from_slice(&0x1000u64.to_be_bytes());
        t.extend_from_slice(&0x1234u32.to_be_bytes());
        t.extend_from_slice(&(payload as u32).to_be_bytes());
    }
    t.extend(std::iter::repeat_n(0x5a, payload));
    t.extend_from_slice(&[0; 4]);
    t
}

#[test]
fn live_loopback_rows() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: live_loopback_rows needs root (network namespace, packet capture)");
        return;
    }
    if !have_tmux("live_loopback_rows") {
        return;
    }
    let ns = Netns::new();
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("rc");
    let cmd = format!(
        "ip netns exec {} {BIN} top lo; echo $? > {}; sleep 60",
        ns.0,
        rc.display()
    );
    let t = Tmux::start(100, 30, &cmd);
    t.wait_for(20, |s| s[0].starts_with("capture on lo"));
    // QP 0x11: 5 WRITE ONLY (PSN 0-4); QP 0x22: 3 SEND ONLY (PSN 10-12).
    let mut p: Vec<Vec<u8>> = (0..5).map(|i| roce(0x0a, 0x11, i, 256)).collect();
    p.extend((10..13).map(|i| roce(0x04, 0x22, i, 64)));
    ns.send(p);
    let flow = "127.0.0.1 → 127.0.0.1";
    let s = t.wait_for(10, |s| {
        row_packets(s, flow, 0x11) == Some(5) && row_packets(s, flow, 0x22) == Some(3)
    });
    assert!(s[1].contains("8 frames (8 RoCE)"), "{}", s.join("\n"));
    quit_and_check(&t, &rc, "q");
}

/// `getent passwd USER`'s user and group IDs (the system's lookup, not ours).
fn getent_ids(user: &str) -> Option<(u32, u32)> {
    let out = Command::new("getent")
        .args(["passwd", user])
        .output()
        .ok()?;
    let line = String::from_utf8(out.stdout).ok()?;
    let f: Vec<&str> = line.trim().split(':').collect();
    Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?))
}

/// The process whose command line holds `needle` (a unique path), and its /proc status lines
/// `Uid:`, `Gid:`, `Groups:`, `CapEff:` (values, whitespace-joined).
fn proc_with(needle: &str) -> Option<(u32, [String; 4])> {
    for e in fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmd
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).to_string())
            .collect();
        // top itself (not the shell or `ip netns exec` around it).
        if !(args.first().is_some_and(|a| a == BIN) && args.iter().any(|a| a.contains(needle))) {
            continue;
        }
        let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let field = |k: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default()
        };
        return Some((
            pid,
            [
                field("Uid:"),
                field("Gid:"),
                field("Groups:"),
                field("CapEff:"),
            ],
        ));
    }
    None
}

/// `top lo -Z nobody` (as root, on a namespace's loopback): once the device is open the
/// process runs as nobody (real, effective, saved and filesystem IDs from /proc, against
/// `getent passwd nobody`), without supplementary groups or capabilities; the --save-dir it
/// created is nobody's, and `w` writes there, as nobody, every frame captured after the drop.
/// `-Z root` keeps root.
#[test]
fn live_top_drops_root_to_the_z_user() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: live_top_drops_root_to_the_z_user needs root (to drop privileges)");
        return;
    }
    if !have_tmux("live_top_drops_root_to_the_z_user") {
        return;
    }
    let Some((uid, gid)) = getent_ids("nobody") else {
        eprintln!("skipped: no user 'nobody' on this system");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    for (z, ids) in [("nobody", (uid, gid)), ("root", (0, 0))] {
        let ns = Netns::new();
        let save = dir.path().join(format!("saved-{z}"));
        let rc = dir.path().join(format!("rc-{z}"));
        let cmd = format!(
            "ip netns exec {} {BIN} top lo -Z {z} --save-dir {}; echo $? > {}; sleep 60",
            ns.0,
            save.display(),
            rc.display()
        );
        let t = Tmux::start(100, 30, &cmd);
        t.wait_for(20, |s| s[0].starts_with("capture on lo"));
        let (_, [uids, gids, groups, cap]) =
            proc_with(save.to_str().unwrap()).expect("top's process");
        assert_eq!(uids, vec![ids.0.to_string(); 4].join(" "), "-Z {z}");
        assert_eq!(gids, vec![ids.1.to_string(); 4].join(" "), "-Z {z}");
        if z == "nobody" {
            assert_eq!(groups, "");
            assert_eq!(cap, "0000000000000000");
        }
        let m = fs::metadata(&save).expect("--save-dir created");
        assert_eq!((m.uid(), m.gid()), ids, "-Z {z}");
        // 4 WRITE ONLY to QP 0x11, then w.
        ns.send((0..4).map(|i| roce(0x0a, 0x11, i, 128)).collect());
        t.wait_for(10, |s| {
            row_packets(s, "127.0.0.1 → 127.0.0.1", 0x11) == Some(4)
        });
        t.keys("w");
        t.wait_for(10, |s| s[2].contains("wrote 4 frames"));
        let written: Vec<PathBuf> = fs::read_dir(&save)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(written.len(), 1);
        let m = fs::metadata(&written[0]).unwrap();
        assert_eq!((m.uid(), m.gid()), ids, "the w file, -Z {z}");
        assert_eq!(
            summary_flows(&written[0]),
            [("127.0.0.1 → 127.0.0.1".to_string(), 0x11, 4)]
        );
        quit_and_check(&t, &rc, "q");
    }
    // A -Z name that is no user: one line, a usage error, before the device is opened.
    let (rc, err) = (dir.path().join("rc"), dir.path().join("err"));
    let cmd = format!(
        "{BIN} top lo -Z no-such-user-ri36 2> {}; echo $? > {}; sleep 60",
        err.display(),
        rc.display()
    );
    let _t = Tmux::start(100, 30, &cmd);
    let end = Instant::now() + Duration::from_secs(10);
    while !rc.exists() {
        assert!(Instant::now() < end, "top did not end");
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(100));
    assert_eq!(fs::read_to_string(&rc).unwrap().trim(), "2");
    assert_eq!(
        fs::read_to_string(&err).unwrap(),
        "roce-inspect: -Z no-such-user-ri36: no such user\n"
    );
}

#[test]
fn bad_arguments_are_usage_errors() {
    for args in [
        vec!["top", "-r", "x.pcap", "--speed", "0"],
        vec!["top", "-r", "x.pcap", "--speed", "fast"],
        vec!["top", "--speed", "2", "eth0"],
        vec!["top", "eth0", "-r", "x.pcap"],
        vec!["top", "-r", "x.pcap", "-Z", "nobody"],
        vec!["top", "-r", "x.pcap", "-Y", "bth.dest_qp =="],
        vec!["top", "-r", "x.pcap", "-Y", "no.such.field"],
    ] {
        let out = Command::new(BIN).args(&args).output().expect("top");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}
