//! Offloaded RoCE capture on RDMA devices through libibverbs, as libpcap's RDMA sniffer does
//! (`pcap-rdmasniff.c`; spec/verbs.md §5): a raw packet QP on the port, an
//! `IBV_FLOW_ATTR_SNIFFER` flow steering rule that copies every packet of the port (the
//! offloaded RoCE traffic included) to it, receive buffers posted to it, completions polled.
//! For ConnectX NICs whose RoCE bypasses the kernel, when the system's libpcap is built
//! without RDMA support (Debian, Ubuntu).
//!
//! Cost: the NIC copies every packet of the port to host memory, which slows the offloaded
//! traffic; the ring holds [`DEFAULT_SLOTS`] buffers, and packets arriving while none is
//! posted are dropped by the NIC (the `out_of_buffer` hardware counter, reported).
//!
//! The pure parts (device names, the receive ring, sysfs, error classification) are always
//! built and unit-tested; the verbs calls ([`verbs`]) need the `verbs` feature.

pub mod deliver;
pub mod ring;
pub mod sysfs;
#[cfg(feature = "verbs")]
pub mod verbs;

/// Receive buffers posted (libpcap's RDMASNIFF_NUM_RECEIVES is 128; more absorbs bursts).
pub const DEFAULT_SLOTS: usize = 512;
/// Bytes per receive buffer: a 9000-byte jumbo frame plus VLAN tags, rounded to 9216.
pub const SLOT_SIZE: usize = 9216;
/// Hardware counter of packets dropped for want of a posted receive buffer (mlx5).
pub const DROP_COUNTER: &str = "out_of_buffer";

/// Why the sniffer could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum SnifferError {
    /// No RDMA device of that name.
    #[error("{name}: no such RDMA device (RDMA devices: {available})")]
    NoSuchDevice {
        /// Name asked for.
        name: String,
        /// The devices there are, comma-separated, or `none`.
        available: String,
    },
    /// A malformed `DEVICE[:PORT]`.
    #[error("{0}: not a port number (use DEVICE or DEVICE:PORT, e.g. mlx5_0:1)")]
    BadPort(String),
    /// The device has no such port.
    #[error("{dev} has no port {port}")]
    NoSuchPort {
        /// Device.
        dev: String,
        /// Port.
        port: u8,
    },
    /// Creating a raw packet QP needs CAP_NET_RAW.
    #[error(
        "{dev}: permission denied creating a raw packet QP (needs root or CAP_NET_RAW: sudo setcap cap_net_raw+ep $(which roce-inspect))"
    )]
    PermissionDenied {
        /// Device.
        dev: String,
    },
    /// The device has no raw packet QPs (Soft-RoCE, most non-ConnectX NICs).
    #[error("{dev}: the device cannot create raw packet QPs ({err}), so it cannot sniff{hint}")]
    NoRawPacketQp {
        /// Device.
        dev: String,
        /// The error of `ibv_create_qp`.
        err: String,
        /// What to do instead.
        hint: String,
    },
    /// The sniffer flow rule was refused.
    #[error(
        "{dev}: the sniffer flow rule was refused ({err}): flow steering must be enabled (mlx5: device-managed flow steering, the default on ConnectX-4 and later)"
    )]
    FlowRule {
        /// Device.
        dev: String,
        /// The error of `ibv_create_flow`.
        err: String,
    },
    /// Another verbs call failed.
    #[error("{dev}: {call}: {err}")]
    Verbs {
        /// Device.
        dev: String,
        /// The call.
        call: &'static str,
        /// Its error.
        err: String,
    },
}

/// Split `DEVICE[:PORT]` (libpcap's syntax) into the device name and port (1 when absent or
/// empty).
///
/// # Errors
/// [`SnifferError::BadPort`] when the port is not a number from 1 to 255.
pub fn parse_device(spec: &str) -> Result<(&str, u8), SnifferError> {
    match spec.split_once(':') {
        None => Ok((spec, 1)),
        Some((d, "")) => Ok((d, 1)),
        Some((d, p)) => match p.parse::<u8>() {
            Ok(n) if n > 0 => Ok((d, n)),
            _ => Err(SnifferError::BadPort(spec.to_string())),
        },
    }
}

/// The error for a failed `ibv_create_qp(IBV_QPT_RAW_PACKET)` with `errno`: EPERM / EACCES
/// mean CAP_NET_RAW is missing (libpcap's reading); EOPNOTSUPP, EINVAL, ENOSYS and
/// EPROTONOSUPPORT that the device has no raw packet QPs.
pub fn qp_error(dev: &str, soft: bool, errno: i32) -> SnifferError {
    let err = std::io::Error::from_raw_os_error(errno).to_string();
    match errno {
        libc::EPERM | libc::EACCES => SnifferError::PermissionDenied {
            dev: dev.to_string(),
        },
        libc::EOPNOTSUPP | libc::EINVAL | libc::ENOSYS | libc::EPROTONOSUPPORT => {
            SnifferError::NoRawPacketQp {
                dev: dev.to_string(),
                err,
                hint: if soft {
                    "; Soft-RoCE packets pass the kernel: capture on its network device".into()
                } else {
                    "; mirror the switch port, or use ibdump on ConnectX".into()
                },
            }
        }
        _ => SnifferError::Verbs {
            dev: dev.to_string(),
            call: "ibv_create_qp(IBV_QPT_RAW_PACKET)",
            err,
        },
    }
}

/// The error for a failed `ibv_create_flow(IBV_FLOW_ATTR_SNIFFER)` with `errno`.
pub fn flow_error(dev: &str, errno: i32) -> SnifferError {
    let err = std::io::Error::from_raw_os_error(errno).to_string();
    match errno {
        libc::EPERM | libc::EACCES => SnifferError::PermissionDenied {
            dev: dev.to_string(),
        },
        _ => SnifferError::FlowRule {
            dev: dev.to_string(),
            err,
        },
    }
}

/// How `capture NAME` reaches an RDMA device's traffic, for `roce-inspect list`.
pub fn capture_path(dev: &sysfs::DeviceDesc, in_libpcap: bool) -> String {
    if in_libpcap {
        return "libpcap (its RDMA sniffer)".into();
    }
    if dev.is_soft() {
        let nd: Vec<&str> = dev
            .ports
            .iter()
            .filter_map(|p| p.netdev.as_deref())
            .collect();
        return match nd.first() {
            Some(n) => format!("software RDMA: capture on its network device {n}"),
            None => "software RDMA: capture on its network device".into(),
        };
    }
    if cfg!(feature = "verbs") {
        "verbs sniffer (raw packet QP + sniffer flow rule)".into()
    } else {
        "none (rebuild with --features verbs for the verbs sniffer)".into()
    }
}

/// The end-of-capture line on the sniffer's drops: frames delivered, error completions, and
/// the NIC's `out_of_buffer` count over the capture (packets dropped because no buffer was
/// posted), when the device has that counter.
pub fn drop_report(c: &ring::RingCounters, out_of_buffer: Option<u64>) -> String {
    let mut s = format!(
        "sniffer: {} frames received, {} longer than {SLOT_SIZE} bytes dropped, {} error completions",
        c.received, c.too_long, c.errors
    );
    match out_of_buffer {
        Some(n) => s.push_str(&format!(
            "; NIC dropped {n} for want of a receive buffer ({DROP_COUNTER})"
        )),
        None => s.push_str(&format!(
            "; NIC drop counter ({DROP_COUNTER}) not available"
        )),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_specs() {
        assert_eq!(parse_device("mlx5_0").unwrap(), ("mlx5_0", 1));
        assert_eq!(parse_device("mlx5_0:").unwrap(), ("mlx5_0", 1));
        assert_eq!(parse_device("mlx5_1:2").unwrap(), ("mlx5_1", 2));
        for bad in ["mlx5_0:x", "mlx5_0:0", "mlx5_0:300"] {
            assert!(
                matches!(parse_device(bad), Err(SnifferError::BadPort(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn qp_and_flow_errors_say_what_to_do() {
        let e = qp_error("mlx5_0", false, libc::EPERM).to_string();
        assert!(
            e.contains("CAP_NET_RAW") && e.starts_with("mlx5_0: permission denied"),
            "{e}"
        );
        let e = qp_error("rxe0", true, libc::EOPNOTSUPP).to_string();
        assert!(
            e.contains("cannot create raw packet QPs") && e.contains("network device"),
            "{e}"
        );
        let e = qp_error("irdma0", false, libc::EINVAL).to_string();
        assert!(e.contains("mirror the switch port"), "{e}");
        assert!(matches!(
            qp_error("x", false, libc::ENOMEM),
            SnifferError::Verbs { .. }
        ));
        assert!(
            flow_error("mlx5_0", libc::EINVAL)
                .to_string()
                .contains("flow steering")
        );
        assert!(matches!(
            flow_error("mlx5_0", libc::EPERM),
            SnifferError::PermissionDenied { .. }
        ));
        for e in [
            qp_error("a", true, libc::EINVAL),
            flow_error("a", libc::EINVAL),
        ] {
            assert_eq!(e.to_string().lines().count(), 1);
        }
    }

    #[test]
    fn list_paths() {
        let port = |nd: Option<&str>| sysfs::PortDesc {
            port: 1,
            link_layer: "Ethernet".into(),
            netdev: nd.map(str::to_string),
        };
        let mlx = sysfs::DeviceDesc {
            name: "mlx5_0".into(),
            driver: Some("mlx5_core".into()),
            ports: vec![port(Some("ens1f0"))],
        };
        let rxe = sysfs::DeviceDesc {
            name: "rxe0".into(),
            driver: None,
            ports: vec![port(Some("eth0"))],
        };
        assert!(capture_path(&mlx, true).starts_with("libpcap"));
        assert!(capture_path(&mlx, false).starts_with("verbs sniffer"));
        assert_eq!(
            capture_path(&rxe, false),
            "software RDMA: capture on its network device eth0"
        );
    }

    #[test]
    fn drop_line() {
        let c = ring::RingCounters {
            received: 10,
            bytes: 1000,
            too_long: 1,
            errors: 2,
            stray: 0,
        };
        let s = drop_report(&c, Some(5));
        assert!(
            s.contains("10 frames received") && s.contains("NIC dropped 5"),
            "{s}"
        );
        assert!(drop_report(&c, None).contains("not available"));
    }
}
