//! Man pages and completions in the repository must be what the current CLI renders, the man
//! page must render with mandoc/groff, and the bash completion must load.

use std::path::Path;
use std::process::Command;

#[test]
fn man_pages_and_completions_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    for (rel, bytes) in roce_inspect::cli::assets::render_all().unwrap() {
        match std::fs::read(root.join(&rel)) {
            Ok(on_disk) if on_disk == bytes => {}
            _ => stale.push(rel.display().to_string()),
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files (run `make assets` and commit): {stale:?}"
    );
}

#[test]
fn man_page_renders() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("man/roce-inspect.1");
    let out = Command::new("mandoc")
        .args(["-T", "utf8", "-W", "warning"])
        .arg(&page)
        .output()
        .or_else(|_| Command::new("man").arg("-l").arg(&page).output())
        .expect("mandoc or man is needed (make deps installs mandoc)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("roce-inspect"), "{text}");
    assert!(text.contains("read"), "{text}");
}

#[test]
fn bash_completion_loads() {
    let comp = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/roce-inspect.bash");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p roce-inspect",
            comp.display()
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("roce-inspect"));
}

/// Completing after the subcommand works: `roce-inspect read --co<TAB>` offers `--color` and
/// `--count`, and `roce-inspect capture --buf<TAB>` offers `--buffer-size` and `--buffered`.
#[test]
fn bash_completes_subcommand_options() {
    let comp = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/roce-inspect.bash");
    let complete = |words: &str| {
        let script = format!(
            "source '{}'; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             COMP_LINE=\"{words}\"; COMP_POINT=${{#COMP_LINE}}; \
             _roce__inspect roce-inspect \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            comp.display()
        );
        let out = Command::new("bash").arg("-c").arg(script).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let read = complete("roce-inspect read --co");
    assert!(
        read.contains("--color") && read.contains("--count"),
        "{read}"
    );
    let cap = complete("roce-inspect capture --buf");
    assert!(
        cap.contains("--buffer-size") && cap.contains("--buffered"),
        "{cap}"
    );
}
