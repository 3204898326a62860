//! `read FILE --html REPORT.html` (issue 14): the file is self-contained (no external
//! resources), and headless Chromium, with the network disabled, renders it without console
//! messages to a screenshot that is not blank, with the flow table's row count in the DOM equal
//! to the flows of `--summary --json`. Without Debian's `chromium` the browser part prints one
//! `skipped:` line.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command as Proc;

use assert_cmd::Command;
use serde_json::Value;

fn bin() -> Command {
    Command::cargo_bin("roce-inspect").expect("binary")
}

fn sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
        .display()
        .to_string()
}

fn report(file: &str, dir: &Path) -> (PathBuf, String) {
    let out = dir.join("report.html");
    let run = bin()
        .args(["read", file, "--html"])
        .arg(&out)
        .output()
        .expect("run");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(run.stdout.is_empty(), "--html alone prints nothing");
    let html = std::fs::read_to_string(&out).expect("html written");
    (out, html)
}

fn flows(file: &str) -> usize {
    let out = bin()
        .args(["read", file, "-q", "--summary", "--json"])
        .output()
        .expect("run");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    v["flows"].as_array().expect("flows").len()
}

#[test]
fn self_contained() {
    let dir = tempfile::tempdir().expect("tempdir");
    for s in ["write_bw.pcap", "congestion.pcap", "read_timeout.pcap"] {
        let (_, html) = report(&sample(s), dir.path());
        assert!(html.starts_with("<!DOCTYPE html>"));
        // Only the SVG namespace name may look like a URL; nothing is loaded from anywhere.
        let urls = html.matches("http://").count() + html.matches("https://").count();
        let ns = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
        assert_eq!(urls, ns, "{s}: no URL but the SVG namespace");
        assert_eq!(ns, 4, "{s}: four inline plots");
        for bad in [" src=", " href=", "@import", "url("] {
            assert!(!html.contains(bad), "{s}: external reference {bad}");
        }
        assert!(
            html.contains("<table class=\"sortable\" id=\"flows\">"),
            "{s}"
        );
        assert!(html.contains("<script>") && html.contains("addEventListener('click'"));
    }
}

/// A standard output closed before the report is printed (`| true`) ends the printing, not
/// the run: the `--html` file is written all the same, and the exit status is 0 (it was lost,
/// with status 0, before).
#[test]
fn written_when_stdout_is_closed() {
    let dir = tempfile::tempdir().expect("tempdir");
    // `read write_bw.pcap ARGS --html OUT | true` through a shell, with roce-inspect's status.
    let closed = |args: &str, out: &Path| {
        let script = format!(
            "set -o pipefail; '{}' read '{}' {args} --html '{}' | true",
            assert_cmd::cargo::cargo_bin("roce-inspect").display(),
            sample("write_bw.pcap"),
            out.display()
        );
        Proc::new("bash")
            .arg("-c")
            .arg(&script)
            .output()
            .expect("bash")
    };
    for extra in ["-q", "--summary", "--gaps --json"] {
        let out = dir.path().join("closed.html");
        let _ = std::fs::remove_file(&out);
        let run = closed(extra, &out);
        let code = run.status.code();
        assert!(
            code == Some(0) || code == Some(141),
            "{extra}: status {code:?}, {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let html = std::fs::read_to_string(&out).unwrap_or_default();
        assert!(
            html.starts_with("<!DOCTYPE html>"),
            "{extra}: no report written"
        );
        assert!(html.contains("id=\"flows\""), "{extra}");
    }
    // A report file that cannot be written is an error even then (status 1, one line).
    let run = closed("--summary", &dir.path().join("no/such/dir/r.html"));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("r.html") && err.lines().count() == 1, "{err}");
    assert_eq!(run.status.code(), Some(1), "{err}");
}

fn chromium() -> Option<String> {
    let names = std::env::var("CHROMIUM")
        .ok()
        .into_iter()
        .chain(["chromium", "chromium-browser", "google-chrome"].map(String::from));
    for n in names {
        if Proc::new(&n)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(n);
        }
    }
    println!("skipped: no chromium found (Debian package `chromium`, or set CHROMIUM=path)");
    None
}

/// Run headless Chromium on `url` with the network disabled; returns (stdout, stderr).
fn headless(browser: &str, args: &[&str], url: &str) -> (String, String) {
    let profile = tempfile::tempdir().expect("profile dir");
    let out = Proc::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            // No name resolves and no proxy is reachable: the network is off.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Rows in the body of the table with DOM id `id`.
fn table_rows(dom: &str, id: &str) -> usize {
    let start = dom.find(&format!("id=\"{id}\"")).expect("table in the DOM");
    let end = start + dom[start..].find("</table>").expect("table end");
    let body = &dom[start..end];
    let tbody = body.find("<tbody>").expect("tbody");
    body[tbody..].matches("<tr>").count()
}

#[test]
fn renders_in_headless_chromium() {
    let Some(browser) = chromium() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    for s in ["write_bw.pcap", "congestion.pcap"] {
        let file = sample(s);
        let (path, _) = report(&file, dir.path());
        let url = format!("file://{}", path.canonicalize().expect("path").display());
        let (dom, log) = headless(&browser, &["--dump-dom"], &url);
        let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
        assert!(console.is_empty(), "{s}: console messages: {console:?}");
        assert_eq!(
            table_rows(&dom, "flows"),
            flows(&file),
            "{s}: flow rows in the DOM"
        );
        assert!(dom.contains("<svg"), "{s}: plots in the DOM");
        let shot = dir.path().join("shot.png");
        let (_, log) = headless(
            &browser,
            &[&format!("--screenshot={}", shot.display())],
            &url,
        );
        let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
        assert!(console.is_empty(), "{s}: console messages: {console:?}");
        let (inked, colours) = ink(&shot);
        assert!(
            inked > 0.02,
            "{s}: screenshot nearly blank ({inked:.4} non-white)"
        );
        assert!(colours > 8, "{s}: screenshot has {colours} colours");
    }
}

/// Fraction of non-white pixels and number of distinct colours of a PNG screenshot.
fn ink(path: &Path) -> (f64, usize) {
    let dec = png::Decoder::new(std::fs::File::open(path).expect("screenshot"));
    let mut r = dec.read_info().expect("png");
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).expect("frame");
    let ch = info.color_type.samples();
    let px = &buf[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    let mut inked = 0usize;
    let n = px.len() / ch;
    for p in px.chunks(ch) {
        if p[..3].iter().any(|&c| c < 240) {
            inked += 1;
        }
        if colours.len() < 1000 {
            colours.insert([p[0], p[1], p[2]]);
        }
    }
    (inked as f64 / n as f64, colours.len())
}
