//! InfiniBand/RoCE GIDs: the 128-bit port addresses of the GID table.
//!
//! On RoCE a GID is an IP address of the netdev: IPv6 addresses as they are, IPv4 addresses as
//! IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`, IBTA Annex A17.4.5.1). Text forms accepted by
//! [`Gid::from_str`]: the colon form the kernel writes to
//! `/sys/class/infiniband/<dev>/ports/<port>/gids/<idx>` and `ibv_devinfo -v` prints
//! (`fe80:0000:0000:0000:0202:c9ff:fe00:0001`), any IPv6 text form (`::ffff:10.0.0.1`,
//! `fe80::1`), and 32 hex digits without separators.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// A 16-byte GID, in network byte order (the bytes that go into the GRH / IPv6 header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Gid(pub [u8; 16]);

/// The address family of a GID or peer address: selects the RoCE v2 GID to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// IPv4, carried in an IPv4-mapped GID (`::ffff:a.b.c.d`).
    Ipv4,
    /// IPv6, the GID is the address itself.
    Ipv6,
}

/// Why a string is not a GID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a GID (expected eight colon-separated groups like \
     fe80:0000:0000:0000:0202:c9ff:fe00:0001, an IPv6 address, or 32 hex digits)"
)]
pub struct GidParseError(pub String);

impl Gid {
    /// The all-zero GID: an unused slot of the GID table.
    pub const ZERO: Gid = Gid([0; 16]);

    /// The GID of an IP address: IPv6 as is, IPv4 as `::ffff:a.b.c.d`.
    pub fn from_ip(ip: IpAddr) -> Gid {
        match ip {
            IpAddr::V4(v4) => Gid(v4.to_ipv6_mapped().octets()),
            IpAddr::V6(v6) => Gid(v6.octets()),
        }
    }

    /// The GID read as an IPv6 address.
    pub fn to_ipv6(self) -> Ipv6Addr {
        Ipv6Addr::from(self.0)
    }

    /// The IPv4 address of an IPv4-mapped GID (`::ffff:a.b.c.d`), `None` for any other GID.
    pub fn to_ipv4_mapped(self) -> Option<Ipv4Addr> {
        self.to_ipv6().to_ipv4_mapped()
    }

    /// The IP address a RoCE v2 packet to or from this GID carries: IPv4 for mapped GIDs.
    pub fn to_ip(self) -> IpAddr {
        match self.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(self.to_ipv6()),
        }
    }

    /// The family of [`Gid::to_ip`].
    pub fn family(self) -> Family {
        if self.to_ipv4_mapped().is_some() {
            Family::Ipv4
        } else {
            Family::Ipv6
        }
    }

    /// True for an unused (all-zero) GID-table slot.
    pub fn is_zero(self) -> bool {
        self == Gid::ZERO
    }

    /// True for IPv6 link-local GIDs (`fe80::/10`), such as the default GID derived from the MAC.
    pub fn is_link_local(self) -> bool {
        self.0[0] == 0xfe && (self.0[1] & 0xc0) == 0x80
    }
}

impl fmt::Display for Gid {
    /// The sysfs / `ibv_devinfo` form: eight groups of four lowercase hex digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, pair) in self.0.chunks_exact(2).enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{:02x}{:02x}", pair[0], pair[1])?;
        }
        Ok(())
    }
}

impl FromStr for Gid {
    type Err = GidParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if let Ok(v6) = t.parse::<Ipv6Addr>() {
            return Ok(Gid(v6.octets()));
        }
        if t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            let mut out = [0u8; 16];
            for (i, byte) in out.iter_mut().enumerate() {
                *byte = u8::from_str_radix(&t[2 * i..2 * i + 2], 16)
                    .map_err(|_| GidParseError(s.to_string()))?;
            }
            return Ok(Gid(out));
        }
        Err(GidParseError(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sysfs_colon_form() {
        let g: Gid = "fe80:0000:0000:0000:0202:c9ff:fe00:0001".parse().unwrap();
        assert_eq!(
            g.0,
            [
                0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x02, 0xc9, 0xff, 0xfe, 0x00, 0x00, 0x01
            ]
        );
        assert!(g.is_link_local());
        assert_eq!(g.family(), Family::Ipv6);
        assert_eq!(g.to_string(), "fe80:0000:0000:0000:0202:c9ff:fe00:0001");
    }

    #[test]
    fn ipv4_mapped_gid_maps_to_ipv4() {
        let g: Gid = "0000:0000:0000:0000:0000:ffff:c0a8:0102".parse().unwrap();
        assert_eq!(g.to_ipv4_mapped(), Some(Ipv4Addr::new(192, 168, 1, 2)));
        assert_eq!(g.to_ip(), IpAddr::V4(Ipv4Addr::new(192, 168, 1, 2)));
        assert_eq!(g.family(), Family::Ipv4);
        assert!(!g.is_link_local());
        let short: Gid = "::ffff:192.168.1.2".parse().unwrap();
        assert_eq!(short, g);
        assert_eq!(Gid::from_ip(IpAddr::V4(Ipv4Addr::new(192, 168, 1, 2))), g);
    }

    #[test]
    fn parses_32_hex_digits() {
        let g: Gid = "fe800000000000000202c9fffe000001".parse().unwrap();
        assert_eq!(g.to_string(), "fe80:0000:0000:0000:0202:c9ff:fe00:0001");
        let upper: Gid = "FE800000000000000202C9FFFE000001".parse().unwrap();
        assert_eq!(upper, g);
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "fe80",
            "fe80:0000:0000:0000:0202:c9ff:fe00",
            "fe800000000000000202c9fffe00000",
            "fe800000000000000202c9fffe0000011",
            "zz800000000000000202c9fffe000001",
            "192.168.1.2",
            "+e800000000000000202c9fffe000001",
        ] {
            assert!(bad.parse::<Gid>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn zero_and_link_local() {
        assert!(Gid::ZERO.is_zero());
        assert!(!Gid::ZERO.is_link_local());
        let g: Gid = "febf::1".parse().unwrap();
        assert!(g.is_link_local());
        let g: Gid = "fec0::1".parse().unwrap();
        assert!(!g.is_link_local());
    }
}
