//! README cannot drift: every `roce-inspect` command in its `sh` blocks (but live capture,
//! `top` and `generate`) runs from the repository root and succeeds, and every output block marked `<!-- output of: CMD -->` appears,
//! line for line, in what CMD prints now.

use std::path::{Path, PathBuf};
use std::process::Command;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// Run a README command line in bash (pipes and `jq` as written), from the crate root, with
/// the freshly built binary first on PATH.
fn sh(cmd: &str) -> (bool, String, String) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_roce-inspect"));
    let dir = bin.parent().unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-o", "pipefail", "-c", cmd])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Fenced blocks as (info string, body, the line before the fence).
fn blocks(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    let mut prev = String::new();
    while let Some(l) = lines.next() {
        if let Some(info) = l.strip_prefix("```") {
            let mut body = String::new();
            for b in lines.by_ref() {
                if b.starts_with("```") {
                    break;
                }
                body.push_str(b);
                body.push('\n');
            }
            out.push((info.to_string(), body, prev.clone()));
        }
        prev = l.to_string();
    }
    out
}

/// Subcommands whose README lines are not run: they capture live, send traffic, or watch an
/// interface (they need root, an RDMA device or a second host).
const NOT_RUN: [&str; 3] = ["capture", "generate", "top"];

/// Every `roce-inspect` command line of README's `sh` blocks (comment after two spaces cut
/// off), with whether it is to be run: not when its subcommand is in [`NOT_RUN`]. Lines that
/// start with another program (`sudo roce-inspect capture …`, `tcpdump … | roce-inspect read -`)
/// are live captures and not listed.
fn readme_commands() -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for (info, body, _) in blocks(&readme()) {
        if info != "sh" {
            continue;
        }
        for line in body.lines() {
            let cmd = line.split("  #").next().unwrap().trim();
            if !cmd.starts_with("roce-inspect ") {
                continue;
            }
            let sub = cmd.split_whitespace().nth(1).unwrap_or_default();
            out.push((cmd.to_string(), !NOT_RUN.contains(&sub)));
        }
    }
    out
}

/// README's examples run as written from a fresh clone: every `roce-inspect` line of its `sh`
/// blocks but live capture, `top` and `generate` runs from the repository root with exit
/// status 0, prints something (or writes the file it names) and nothing on stderr.
#[test]
fn readme_commands_run() {
    let mut ran = 0;
    for (cmd, run) in readme_commands() {
        if !run {
            continue;
        }
        let (ok, stdout, stderr) = sh(&cmd);
        assert!(ok, "README command failed: {cmd}\n{stderr}");
        // Commands that write a file (`-o F`, `--html F`, `--parquet D`) print nothing
        // themselves: the file must be there instead.
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let written = words
            .windows(2)
            .find(|w| ["-o", "--html", "--parquet"].contains(&w[0]))
            .map(|w| w[1]);
        match written {
            Some(f) => assert!(
                std::path::Path::new(f).exists(),
                "README command wrote no {f}: {cmd}"
            ),
            None => assert!(!stdout.is_empty(), "README command printed nothing: {cmd}"),
        }
        assert!(
            stderr.is_empty(),
            "README command wrote to stderr: {cmd}\n{stderr}"
        );
        ran += 1;
    }
    // 29 lines when this was written (issue 38): the test must not pass by finding none.
    assert!(ran >= 29, "only {ran} README commands found");
}

/// Every file a run README line reads exists in a fresh clone: its `.pcap`/`.pcapng` arguments
/// are under `samples/` (committed), not files of the reader's own.
#[test]
fn readme_commands_name_real_samples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (cmd, run) in readme_commands() {
        for w in cmd.split_whitespace().filter(|w| {
            run && (w.ends_with(".pcap") || w.ends_with(".pcapng")) && !w.starts_with('-')
        }) {
            assert!(
                w.starts_with("samples/") && root.join(w).is_file(),
                "README command names {w}, not a bundled sample: {cmd}"
            );
        }
    }
}

#[test]
fn pasted_output_is_current() {
    let mut checked = 0;
    for (_, body, before) in blocks(&readme()) {
        let Some(cmd) = before
            .trim()
            .strip_prefix("<!-- output of:")
            .and_then(|s| s.strip_suffix("-->"))
        else {
            continue;
        };
        let (ok, stdout, stderr) = sh(cmd.trim());
        assert!(ok, "{cmd}: {stderr}");
        let now: Vec<&str> = stdout.lines().map(str::trim_end).collect();
        let pasted: Vec<&str> = body.lines().map(str::trim_end).collect();
        // The pasted block must be a contiguous run of what the command prints now.
        let found = now
            .windows(pasted.len().max(1))
            .any(|w| w == pasted.as_slice());
        assert!(
            found,
            "README output of `{cmd}` is stale; it now prints:\n{}",
            now.join("\n")
        );
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} output blocks checked");
}
