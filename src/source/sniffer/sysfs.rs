//! RDMA devices as the kernel lists them in sysfs (`/sys/class/infiniband`, kernel ABI
//! `Documentation/ABI/testing/sysfs-class-infiniband`): ports, link layer, network device,
//! driver, and the per-port hardware counters the sniffer reports drops from
//! (`ports/N/hw_counters/out_of_buffer`: packets the NIC dropped for want of a posted receive
//! buffer, mlx5 `mlx5_ib` Q counters).

use std::fs;
use std::path::{Path, PathBuf};

/// Where the kernel lists RDMA devices.
pub const SYSFS_ROOT: &str = "/sys/class/infiniband";

/// One port of an RDMA device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortDesc {
    /// Port number (from 1).
    pub port: u8,
    /// `Ethernet` (RoCE) or `InfiniBand`.
    pub link_layer: String,
    /// The network device of the port's first GID (`gid_attrs/ndevs/0`), for RoCE.
    pub netdev: Option<String>,
}

/// One RDMA device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceDesc {
    /// Device name (`mlx5_0`, `rxe0`).
    pub name: String,
    /// Kernel driver (`mlx5_core`), when the device has a bus device.
    pub driver: Option<String>,
    /// Ports.
    pub ports: Vec<PortDesc>,
}

impl DeviceDesc {
    /// Whether this is a software RDMA device (Soft-RoCE `rxe`, `siw`), whose packets pass the
    /// kernel's network stack and can be captured on its netdev.
    pub fn is_soft(&self) -> bool {
        self.driver.is_none() && (self.name.starts_with("rxe") || self.name.starts_with("siw"))
    }
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The RDMA devices under `root` (normally [`SYSFS_ROOT`]), sorted by name; empty when there
/// is none or no RDMA support.
pub fn devices(root: &Path) -> Vec<DeviceDesc> {
    let Ok(rd) = fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<DeviceDesc> = rd
        .filter_map(Result::ok)
        .map(|e| {
            let dir = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let driver = fs::read_link(dir.join("device/driver"))
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
            DeviceDesc {
                name,
                driver,
                ports: ports(&dir),
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn ports(dir: &Path) -> Vec<PortDesc> {
    let Ok(rd) = fs::read_dir(dir.join("ports")) else {
        return Vec::new();
    };
    let mut v: Vec<PortDesc> = rd
        .filter_map(Result::ok)
        .filter_map(|e| {
            let port: u8 = e.file_name().to_str()?.parse().ok()?;
            let p = e.path();
            Some(PortDesc {
                port,
                link_layer: read_trim(&p.join("link_layer")).unwrap_or_else(|| "unknown".into()),
                netdev: read_trim(&p.join("gid_attrs/ndevs/0")),
            })
        })
        .collect();
    v.sort_by_key(|p| p.port);
    v
}

/// Path of a port's hardware counter.
pub fn counter_path(root: &Path, dev: &str, port: u8, name: &str) -> PathBuf {
    root.join(dev)
        .join("ports")
        .join(port.to_string())
        .join("hw_counters")
        .join(name)
}

/// A port's hardware counter, when the device has it.
pub fn counter(root: &Path, dev: &str, port: u8, name: &str) -> Option<u64> {
    read_trim(&counter_path(root, dev, port, name))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, s: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    }

    #[test]
    fn lists_devices_ports_and_counters() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        write(&root.join("mlx5_0/ports/1/link_layer"), "Ethernet\n");
        write(&root.join("mlx5_0/ports/1/gid_attrs/ndevs/0"), "ens1f0\n");
        write(
            &root.join("mlx5_0/ports/1/hw_counters/out_of_buffer"),
            "42\n",
        );
        fs::create_dir_all(root.join("bus/drivers/mlx5_core")).unwrap();
        fs::create_dir_all(root.join("mlx5_0/device")).unwrap();
        std::os::unix::fs::symlink(
            root.join("bus/drivers/mlx5_core"),
            root.join("mlx5_0/device/driver"),
        )
        .unwrap();
        write(&root.join("rxe0/ports/1/link_layer"), "Ethernet");
        write(&root.join("rxe0/ports/1/gid_attrs/ndevs/0"), "eth0");
        write(&root.join("mlx5_1/ports/2/link_layer"), "InfiniBand");
        write(&root.join("mlx5_1/ports/1/link_layer"), "InfiniBand");
        fs::remove_dir_all(root.join("bus")).ok();
        let devs = devices(root);
        let names: Vec<&str> = devs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["mlx5_0", "mlx5_1", "rxe0"]);
        assert_eq!(devs[0].ports[0].netdev.as_deref(), Some("ens1f0"));
        assert_eq!(
            devs[1].ports.iter().map(|p| p.port).collect::<Vec<_>>(),
            [1, 2]
        );
        assert!(devs[2].is_soft() && !devs[1].is_soft());
        assert_eq!(counter(root, "mlx5_0", 1, "out_of_buffer"), Some(42));
        assert_eq!(counter(root, "mlx5_0", 2, "out_of_buffer"), None);
        assert!(devices(&root.join("missing")).is_empty());
    }
}
