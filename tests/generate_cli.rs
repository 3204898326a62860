//! `roce-inspect generate` error paths on a machine without RDMA devices or GPUs (CI): each
//! fails with one clear line on stderr and exit status 1, never a panic.

use std::path::Path;

use assert_cmd::Command;

/// Runs `roce-inspect generate ARGS` and returns (exit code, stderr).
fn generate(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("roce-inspect")
        .unwrap()
        .arg("generate")
        .args(args)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "panic: {err}");
    (out.status.code().unwrap_or(-1), err)
}

/// One line, `roce-inspect: …`, exit 1.
fn assert_one_line_error(code: i32, err: &str) {
    assert_eq!(code, 1, "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    assert!(err.starts_with("roce-inspect: "), "{err:?}");
}

/// True when this host has RDMA devices, where the no-device tests cannot apply.
fn host_has_rdma_devices() -> bool {
    Path::new("/sys/class/infiniband")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some())
}

#[test]
fn no_rdma_on_this_host() {
    if host_has_rdma_devices() {
        eprintln!("skipped: this host has RDMA devices");
        return;
    }
    for role in [&["--peer", "127.0.0.1"][..], &["--listen"][..]] {
        let (code, err) = generate(role);
        assert_one_line_error(code, &err);
        if cfg!(feature = "verbs") {
            assert!(
                err.contains("this kernel has no RDMA support (ibv_get_device_list: ENOSYS)")
                    || err.contains("no RDMA device found"),
                "{err}"
            );
            assert!(
                err.contains("rdma link add rxe0 type rxe netdev eth0"),
                "{err}"
            );
        } else {
            assert!(err.contains("has no verbs support"), "{err}");
        }
    }
}

#[test]
fn gpu_without_cuda_driver_fails_cleanly() {
    let has_libcuda = [
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/usr/lib64/libcuda.so.1",
    ]
    .iter()
    .any(|p| Path::new(p).exists());
    let (code, err) = generate(&["--peer", "127.0.0.1", "--gpu", "0"]);
    assert_one_line_error(code, &err);
    if !cfg!(feature = "verbs") {
        assert!(err.contains("has no verbs support"), "{err}");
    } else if !cfg!(feature = "gpu") {
        assert!(
            err.contains("--gpu 0: this build has no GPU support"),
            "{err}"
        );
    } else if !has_libcuda {
        assert!(
            err.contains("--gpu 0: the CUDA driver (libcuda.so.1) was not found"),
            "{err}"
        );
    }
}

#[test]
fn gpu_index_out_of_range() {
    let (code, err) = generate(&["--peer", "127.0.0.1", "--gpu", "4000"]);
    assert_one_line_error(code, &err);
    assert!(
        err.contains("--gpu 4000") || err.contains("no verbs support"),
        "{err}"
    );
}

/// A malformed or link-local `--peer` is a usage error (status 2, like `--mtu 1500`), found
/// before any device is looked for.
#[test]
fn bad_peer_is_refused_before_any_device() {
    for (peer, why) in [
        ("not-an-address", "--peer `not-an-address` is neither"),
        ("fe80::1", "is link-local"),
    ] {
        let (code, err) = generate(&["--peer", peer]);
        assert_eq!(code, 2, "{peer}: {err}");
        assert_eq!(err.lines().count(), 1, "{peer}: {err:?}");
        assert!(err.contains(why), "{peer}: {err}");
    }
}

#[test]
fn usage_errors_are_clap_errors() {
    // No role, both roles, --iters with --duration: clap's usage errors (exit 2).
    for args in [
        &[][..],
        &["--listen", "--peer", "10.0.0.1"][..],
        &["--peer", "10.0.0.1", "--iters", "5", "--duration", "1"][..],
        &["--peer", "10.0.0.1", "--mtu", "1500"][..],
        &["--peer", "10.0.0.1", "--size", "0"][..],
    ] {
        let (code, err) = generate(args);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
}

#[test]
fn help_has_examples() {
    let out = Command::cargo_bin("roce-inspect")
        .unwrap()
        .args(["generate", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--listen",
        "--peer",
        "--oob-port",
        "--device",
        "--ib-port",
        "--gid-index",
        "--gpu",
        "--size",
        "--imm",
        "--iters",
        "--duration",
        "--tx-depth",
        "--qps",
        "--tclass",
        "--mtu",
        "--json",
    ] {
        assert!(help.contains(flag), "{flag} missing from help");
    }
    assert!(help.matches("Example:").count() >= 16, "{help}");
    assert!(help.contains("[default: 18515]"));
}
