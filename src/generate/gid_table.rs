//! The port's GID table and the choice of the GID to send from.
//!
//! Entries come from `_ibv_query_gid_ex` (rdma-core ≥ v32) or, as a fallback, from sysfs
//! (kernel ABI `Documentation/ABI/testing/sysfs-class-infiniband`, since Linux 4.4):
//! `/sys/class/infiniband/<dev>/ports/<port>/gids/<idx>` holds the GID and
//! `.../gid_attrs/types/<idx>` the exact strings `RoCE v2` or `IB/RoCE v1`
//! (rdma-core `libibverbs/cmd_device.c` parses the same strings), `.../gid_attrs/ndevs/<idx>`
//! the netdev.
//!
//! The default choice follows perftest's `compute_gid_score` restricted to RoCE v2: a GID of the
//! peer's address family, a non-link-local one before a link-local one, then the lowest index.

use std::fs;
use std::io;
use std::path::Path;

use super::gid::{Family, Gid};

/// The kind of a GID-table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum GidType {
    /// InfiniBand (native IB ports).
    Ib,
    /// RoCE v1 (Ethertype 0x8915).
    RoceV1,
    /// RoCE v2 (UDP port 4791).
    RoceV2,
}

/// One populated entry of a port's GID table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GidEntry {
    /// Index into the GID table (`--gid-index`, the QP's `sgid_index`).
    pub index: u32,
    /// The GID.
    pub gid: Gid,
    /// Its type.
    pub kind: GidType,
    /// The netdev it belongs to, when known.
    pub ndev: Option<String>,
}

impl GidType {
    /// Parses the contents of a sysfs `gid_attrs/types/<idx>` file.
    pub fn from_sysfs(s: &str) -> Option<GidType> {
        match s.trim() {
            "RoCE v2" => Some(GidType::RoceV2),
            "IB/RoCE v1" => Some(GidType::RoceV1),
            "IB" => Some(GidType::Ib),
            _ => None,
        }
    }
}

/// Reads the populated entries of `<root>/<dev>/ports/<port>/` (`root` is normally
/// `/sys/class/infiniband`). Empty (all-zero) slots, slots whose type cannot be read (the kernel
/// answers EINVAL for unused ones) and unparsable entries are skipped. Fails only if the
/// `gids` directory cannot be listed.
pub fn read_sysfs(root: &Path, dev: &str, port: u8) -> io::Result<Vec<GidEntry>> {
    let port_dir = root.join(dev).join("ports").join(port.to_string());
    let mut out = Vec::new();
    for entry in fs::read_dir(port_dir.join("gids"))? {
        let entry = entry?;
        let Some(index) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(text) = fs::read_to_string(entry.path()) else {
            continue;
        };
        let Ok(gid) = text.parse::<Gid>() else {
            continue;
        };
        if gid.is_zero() {
            continue;
        }
        let attrs = port_dir.join("gid_attrs");
        let Some(kind) = fs::read_to_string(attrs.join("types").join(index.to_string()))
            .ok()
            .and_then(|t| GidType::from_sysfs(&t))
        else {
            continue;
        };
        let ndev = fs::read_to_string(attrs.join("ndevs").join(index.to_string()))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        out.push(GidEntry {
            index,
            gid,
            kind,
            ndev,
        });
    }
    out.sort_by_key(|e| e.index);
    Ok(out)
}

/// Picks the RoCE v2 GID to send from for a peer of `family`: see the module documentation.
/// `None` when the table has no RoCE v2 GID of that family.
pub fn select(entries: &[GidEntry], family: Family) -> Option<&GidEntry> {
    entries
        .iter()
        .filter(|e| e.kind == GidType::RoceV2 && !e.gid.is_zero() && e.gid.family() == family)
        .min_by_key(|e| (e.gid.is_link_local(), e.index))
}

/// Checks a `--gid-index` given by the user against the table.
pub fn by_index(entries: &[GidEntry], index: u32) -> Result<&GidEntry, String> {
    let e = entries
        .iter()
        .find(|e| e.index == index)
        .ok_or_else(|| format!("--gid-index {index} is not a populated entry of the GID table"))?;
    if e.kind != GidType::RoceV2 {
        return Err(format!(
            "--gid-index {index} ({}) is a {:?} GID; generate sends RoCE v2 only",
            e.gid, e.kind
        ));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    struct FakeSysfs {
        dir: tempfile::TempDir,
    }

    impl FakeSysfs {
        fn new() -> FakeSysfs {
            FakeSysfs {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        fn port(&self) -> PathBuf {
            self.dir.path().join("rxe0/ports/1")
        }

        fn add(&self, idx: u32, gid: &str, kind: Option<&str>, ndev: Option<&str>) {
            let p = self.port();
            for d in ["gids", "gid_attrs/types", "gid_attrs/ndevs"] {
                fs::create_dir_all(p.join(d)).unwrap();
            }
            fs::write(p.join("gids").join(idx.to_string()), format!("{gid}\n")).unwrap();
            if let Some(k) = kind {
                fs::write(
                    p.join("gid_attrs/types").join(idx.to_string()),
                    format!("{k}\n"),
                )
                .unwrap();
            }
            if let Some(n) = ndev {
                fs::write(
                    p.join("gid_attrs/ndevs").join(idx.to_string()),
                    format!("{n}\n"),
                )
                .unwrap();
            }
        }
    }

    const LL: &str = "fe80:0000:0000:0000:5054:00ff:fe12:3456";
    const V4: &str = "0000:0000:0000:0000:0000:ffff:c0a8:7a0b";
    const V6: &str = "fd00:0000:0000:0000:0000:0000:0000:0002";
    const ZERO: &str = "0000:0000:0000:0000:0000:0000:0000:0000";

    /// The table rxe builds on a netdev with 192.168.122.11 and fd00::2: v1 and v2 of each.
    fn rxe_like() -> FakeSysfs {
        let fs = FakeSysfs::new();
        fs.add(0, LL, Some("IB/RoCE v1"), Some("eth0"));
        fs.add(1, LL, Some("RoCE v2"), Some("eth0"));
        fs.add(2, V4, Some("IB/RoCE v1"), Some("eth0"));
        fs.add(3, V4, Some("RoCE v2"), Some("eth0"));
        fs.add(4, V6, Some("IB/RoCE v1"), Some("eth0"));
        fs.add(5, V6, Some("RoCE v2"), Some("eth0"));
        // Unused slots: zero GID, type file unreadable.
        fs.add(6, ZERO, None, None);
        fs.add(7, ZERO, Some("RoCE v2"), None);
        fs
    }

    #[test]
    fn reads_the_table() {
        let fs = rxe_like();
        let t = read_sysfs(fs.dir.path(), "rxe0", 1).unwrap();
        assert_eq!(t.len(), 6);
        assert_eq!(
            t.iter().map(|e| e.index).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!(t[3].gid.to_string(), V4);
        assert_eq!(t[3].kind, GidType::RoceV2);
        assert_eq!(t[2].kind, GidType::RoceV1);
        assert_eq!(t[3].ndev.as_deref(), Some("eth0"));
    }

    #[test]
    fn selects_by_family() {
        let fs = rxe_like();
        let t = read_sysfs(fs.dir.path(), "rxe0", 1).unwrap();
        let v4 = select(&t, Family::Ipv4).unwrap();
        assert_eq!(v4.index, 3);
        assert_eq!(
            v4.gid.to_ipv4_mapped(),
            Some("192.168.122.11".parse().unwrap())
        );
        // IPv6: the global address beats the link-local one at a lower index.
        assert_eq!(select(&t, Family::Ipv6).unwrap().index, 5);
    }

    #[test]
    fn link_local_only() {
        let fs = FakeSysfs::new();
        fs.add(0, LL, Some("IB/RoCE v1"), None);
        fs.add(1, LL, Some("RoCE v2"), None);
        let t = read_sysfs(fs.dir.path(), "rxe0", 1).unwrap();
        assert_eq!(select(&t, Family::Ipv6).unwrap().index, 1);
        assert_eq!(select(&t, Family::Ipv4), None);
        assert_eq!(t[0].ndev, None);
    }

    #[test]
    fn no_roce_v2() {
        let fs = FakeSysfs::new();
        fs.add(0, LL, Some("IB/RoCE v1"), None);
        fs.add(1, V4, Some("IB/RoCE v1"), None);
        let t = read_sysfs(fs.dir.path(), "rxe0", 1).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(select(&t, Family::Ipv4), None);
        assert_eq!(select(&t, Family::Ipv6), None);
    }

    #[test]
    fn explicit_index() {
        let fs = rxe_like();
        let t = read_sysfs(fs.dir.path(), "rxe0", 1).unwrap();
        assert_eq!(by_index(&t, 5).unwrap().gid.to_string(), V6);
        assert!(by_index(&t, 2).unwrap_err().contains("RoceV1"));
        assert!(by_index(&t, 6).unwrap_err().contains("not a populated"));
    }

    #[test]
    fn missing_port_is_an_error() {
        let fs = rxe_like();
        assert!(read_sysfs(fs.dir.path(), "rxe0", 2).is_err());
        assert!(read_sysfs(fs.dir.path(), "mlx5_0", 1).is_err());
    }

    #[test]
    fn junk_entries_are_skipped() {
        let fs = rxe_like();
        let p = fs.port();
        fs::write(p.join("gids/not-a-number"), V4).unwrap();
        fs::write(p.join("gids/9"), "garbage").unwrap();
        fs::write(p.join("gid_attrs/types/9"), "RoCE v2").unwrap();
        fs.add(10, V4, Some("RoCE v3"), None);
        let t = read_sysfs(fs.dir.path(), "rxe0", 1).unwrap();
        assert_eq!(t.len(), 6);
    }

    #[test]
    fn type_strings() {
        assert_eq!(GidType::from_sysfs("RoCE v2\n"), Some(GidType::RoceV2));
        assert_eq!(GidType::from_sysfs("IB/RoCE v1\n"), Some(GidType::RoceV1));
        assert_eq!(GidType::from_sysfs("roce v2"), None);
    }
}
