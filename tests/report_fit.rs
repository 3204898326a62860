//! Every text report fits the terminal (issue 39): `read -q`, `--messages`, `--gaps` of every
//! sample and `correlate` of the three all-reduce captures, run in a pseudo-terminal of 80, 100
//! and 120 columns (util-linux `script`, the width set with `stty`, read by the program as any
//! terminal's), print no line wider than the terminal; a table that hides columns says which.
//! Piped (no terminal), the same reports keep every column.

use std::path::Path;
use std::process::Command;

use unicode_width::UnicodeWidthStr;

fn bin() -> String {
    env!("CARGO_BIN_EXE_roce-inspect").to_string()
}

fn samples() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .expect("samples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

/// Whether util-linux `script` (a pseudo-terminal) and `stty` run here.
fn have_pty() -> bool {
    Command::new("script")
        .args([
            "-q",
            "-e",
            "-c",
            "stty cols 50 rows 20 && stty size",
            "/dev/null",
        ])
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("20 50"))
}

/// A word of the shell command: single-quoted.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Run `args` in a pseudo-terminal `cols` wide; its output without carriage returns and ANSI
/// colour sequences.
fn in_terminal(cols: u16, args: &[String]) -> String {
    let cmd = format!(
        "stty cols {cols} rows 50 && {}",
        args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
    );
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .env_remove("COLUMNS")
        .output()
        .expect("script runs");
    assert!(out.status.success(), "{cmd}: {:?}", out.status);
    strip(&String::from_utf8_lossy(&out.stdout).replace('\r', ""))
}

/// `s` without ANSI SGR sequences.
fn strip(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut esc = false;
    for c in s.chars() {
        match (esc, c) {
            (false, '\u{1b}') => esc = true,
            (true, 'm') => esc = false,
            (true, _) => {}
            (false, c) => out.push(c),
        }
    }
    out
}

/// Every report's command line (without the binary).
fn reports() -> Vec<Vec<String>> {
    let mut v = Vec::new();
    for s in samples() {
        for extra in [&["-q"][..], &["-q", "--messages"], &["-q", "--gaps"]] {
            let mut a = vec!["read".to_string(), s.clone()];
            a.extend(extra.iter().map(|x| x.to_string()));
            // The VXLAN sample runs on Linux's old port, as README reads it.
            if s.ends_with("vxlan.pcap") {
                a.extend(["--vxlan-port".to_string(), "8472".to_string()]);
            }
            v.push(a);
        }
    }
    let mut c = vec!["correlate".to_string()];
    c.extend(
        samples()
            .into_iter()
            .filter(|s| s.contains("allreduce_node")),
    );
    v.push(c);
    v
}

#[test]
fn every_report_fits_80_100_and_120_columns() {
    if !have_pty() {
        eprintln!("skipped: util-linux script (a pseudo-terminal) not found");
        return;
    }
    let mut hidden_notes = 0;
    for cols in [80u16, 100, 120] {
        for args in reports() {
            for color in ["never", "always"] {
                let mut a = vec![bin()];
                a.extend(args.iter().cloned());
                a.extend(["--color".to_string(), color.to_string()]);
                let text = in_terminal(cols, &a);
                assert!(!text.trim().is_empty(), "{a:?}: nothing printed");
                for l in text.lines() {
                    assert!(
                        l.width() <= usize::from(cols),
                        "{cols} columns, {}: a line of {}:\n{l}\n\n{text}",
                        args.join(" "),
                        l.width()
                    );
                }
                hidden_notes += text.matches("hidden to fit the terminal").count();
            }
        }
    }
    // Narrow terminals hide columns, and say so.
    assert!(hidden_notes > 20, "{hidden_notes} notes of hidden columns");
}

#[test]
fn narrow_congestion_table_hides_the_ecn_breakdown_first() {
    if !have_pty() {
        eprintln!("skipped: util-linux script (a pseudo-terminal) not found");
        return;
    }
    let f = samples()
        .into_iter()
        .find(|s| s.ends_with("congestion.pcap"))
        .expect("congestion sample");
    let text = in_terminal(80, &[bin(), "read".into(), f.clone(), "-q".into()]);
    let congestion = &text[text.find("Congestion").expect("congestion table")..];
    let header = congestion.lines().nth(2).expect("header line");
    for kept in ["data", "src → dst", "CE %", "CNPs", "rate"] {
        assert!(header.contains(kept), "{kept} kept: {congestion}");
    }
    assert!(!header.contains("ECT1"), "{congestion}");
    assert!(congestion.contains("hidden to fit the terminal: ECT1, Not-ECT"));
    // The flow pairs are on one line each, not broken over three.
    assert!(congestion.contains("10.0.0.1 → 10.0.0.3"), "{congestion}");
    // --wide, and a pipe, keep every column.
    let wide = in_terminal(
        80,
        &[
            bin(),
            "read".into(),
            f.clone(),
            "-q".into(),
            "--wide".into(),
        ],
    );
    assert!(wide.contains("ECT1") && !wide.contains("hidden to fit"));
    let piped = Command::new(bin())
        .args(["read", &f, "-q"])
        .output()
        .unwrap();
    let piped = String::from_utf8_lossy(&piped.stdout);
    assert!(piped.contains("Not-ECT") && !piped.contains("hidden to fit"));
}
