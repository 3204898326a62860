//! Man pages (clap_mangen) and shell completions (clap_complete) generated from the clap
//! definitions, so they cannot say something the CLI does not do. `make assets` (the
//! `gen_assets` example) writes them to `man/` and `completions/`; `tests/assets.rs` fails when
//! the checked-in files differ from what the current CLI renders.

use std::path::PathBuf;

use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;

/// Date printed in the man pages' footer (`.TH`); bump it with the version.
pub const MAN_DATE: &str = "2026-11-29";

/// Every generated file: its path relative to the repository root, and its bytes.
///
/// # Errors
/// Rendering errors from clap_mangen (I/O into memory; not expected).
pub fn render_all() -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut out = Vec::new();
    // The man page shows the plain version: the git hash would make it stale at every commit.
    let cmd = Cli::command().long_version(env!("CARGO_PKG_VERSION"));
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .date(MAN_DATE)
        .render(&mut buf)?;
    out.push((PathBuf::from("man/roce-inspect.1"), buf));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("roce-inspect-{}", sub.get_name());
        let mut page = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("roce-inspect {}", sub.get_name()));
        // The synopsis is clap's own usage line, as `--help` prints it: clap_mangen's listing
        // shows no option values and one FILE where several are taken.
        let usage = page.render_usage().to_string();
        let usage = usage.trim_start_matches("Usage:").trim().to_string();
        let page = page.override_usage(usage);
        let mut buf = Vec::new();
        clap_mangen::Man::new(page)
            .date(MAN_DATE)
            .render(&mut buf)?;
        out.push((PathBuf::from(format!("man/{name}.1")), buf));
    }
    for (shell, file) in [
        (Shell::Bash, "roce-inspect.bash"),
        (Shell::Zsh, "_roce-inspect"),
        (Shell::Fish, "roce-inspect.fish"),
        (Shell::PowerShell, "roce-inspect.ps1"),
        (Shell::Elvish, "roce-inspect.elv"),
    ] {
        let mut buf = Vec::new();
        let mut c = Cli::command();
        clap_complete::generate(shell, &mut c, "roce-inspect", &mut buf);
        if shell == Shell::Bash {
            buf = fix_bash_case_labels(&buf);
        }
        out.push((PathBuf::from(format!("completions/{file}")), buf));
    }
    Ok(out)
}

/// clap_complete 4.6's bash script names subcommand states `roce__inspect__subcmd__read` where it
/// sets them but `roce__subcmd__inspect__subcmd__read` in the `case` that completes their
/// options (it treats the `-` in the binary name as a subcommand separator there), so nothing
/// after the subcommand completed. Make the labels match the states.
fn fix_bash_case_labels(script: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(script)
        .replace("roce__subcmd__inspect__", "roce__inspect__")
        .into_bytes()
}
