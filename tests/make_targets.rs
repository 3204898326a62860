//! The Makefile's `deps` and `install` recipes, run for real with stand-ins: fake
//! `dpkg-query`, `apt-get`, `sudo` and `id` on PATH record what `make deps` would run as root
//! and as a user; `make install` copies into a DESTDIR.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Write an executable shell script.
fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Run `make deps` with stand-ins: `uid` is what `id -u` says, `missing` the package that
/// `dpkg-query` reports as not installed (None: all installed). Returns the log of the
/// commands the stand-ins received, one per line.
fn make_deps(uid: u32, missing: Option<&str>) -> Vec<String> {
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = d.path().join("log");
    let log_s = log.display();
    script(
        &bin,
        "id",
        &format!("[ \"$1\" = -u ] && echo {uid} || exec /usr/bin/id \"$@\""),
    );
    let miss = missing.unwrap_or("-none-");
    script(
        &bin,
        "dpkg-query",
        &format!(
            "for p; do last=$p; done\n[ \"$last\" = {miss} ] && exit 1\nprintf 'install ok installed'"
        ),
    );
    script(
        &bin,
        "apt-get",
        &format!("echo \"apt-get DEBIAN_FRONTEND=$DEBIAN_FRONTEND $*\" >> {log_s}"),
    );
    script(
        &bin,
        "sudo",
        &format!("echo \"sudo $*\" >> {log_s}\nexec \"$@\""),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = Command::new("make")
        .args(["-s", "--no-print-directory", "deps"])
        .current_dir(root())
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "make deps: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn deps_as_root_runs_apt_get_without_sudo() {
    let log = make_deps(0, Some("tshark"));
    assert_eq!(
        log,
        [
            "apt-get DEBIAN_FRONTEND=noninteractive update -qq",
            "apt-get DEBIAN_FRONTEND=noninteractive install -y -qq --no-install-recommends tshark",
        ]
    );
}

#[test]
fn deps_as_a_user_goes_through_sudo() {
    let log = make_deps(1000, Some("jq"));
    assert_eq!(
        log,
        [
            "sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq",
            "apt-get DEBIAN_FRONTEND=noninteractive update -qq",
            "sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jq",
            "apt-get DEBIAN_FRONTEND=noninteractive install -y -qq --no-install-recommends jq",
        ]
    );
}

#[test]
fn deps_with_everything_installed_runs_nothing() {
    assert!(make_deps(0, None).is_empty());
    assert!(make_deps(1000, None).is_empty());
}

/// `make install DESTDIR=… PREFIX=…` puts the binary, every man page and the bash, zsh and
/// fish completions where those tools look (the build step is skipped with CARGO=true and the
/// test's own binary).
#[test]
fn install_honours_destdir_and_prefix() {
    let d = tempfile::tempdir().unwrap();
    let out = Command::new("make")
        .args([
            "-s",
            "--no-print-directory",
            "install",
            "CARGO=true",
            "PREFIX=/opt/ri",
        ])
        .arg(format!("DESTDIR={}", d.path().display()))
        .arg(format!("BIN={}", env!("CARGO_BIN_EXE_roce-inspect")))
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base: PathBuf = d.path().join("opt/ri");
    let exe = base.join("bin/roce-inspect");
    let v = Command::new(&exe).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("roce-inspect "));
    for e in std::fs::read_dir(root().join("man")).unwrap() {
        let name = e.unwrap().file_name();
        assert!(
            base.join("share/man/man1").join(&name).is_file(),
            "{name:?}"
        );
    }
    for p in [
        "share/bash-completion/completions/roce-inspect",
        "share/zsh/site-functions/_roce-inspect",
        "share/fish/vendor_completions.d/roce-inspect.fish",
    ] {
        assert!(base.join(p).is_file(), "{p}");
    }
}
