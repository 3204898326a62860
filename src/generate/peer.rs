//! `--peer`: where the out-of-band TCP connection goes, and which GID family to use.
//!
//! perftest takes a host name and uses the TCP connection only; here `--peer` also accepts the
//! peer's GID as `show_gids` or `ibv_devinfo -v` prints it, so that a user can copy it from the
//! GID table. An IPv4-mapped GID (`::ffff:a.b.c.d`) means the peer's IPv4 address.

use std::net::{IpAddr, SocketAddr};

use super::gid::{Family, Gid};

/// A parsed `--peer` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    /// The address the out-of-band TCP connection goes to.
    pub ip: IpAddr,
    /// The GID the user named, when `--peer` was a GID or an IPv6 address.
    pub gid: Option<Gid>,
}

/// Why a `--peer` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    /// Neither an IP address nor a GID.
    #[error(
        "--peer `{0}` is neither an IPv4 address, an IPv6 address nor a GID \
         (e.g. 192.168.1.2, fd00::2, 0000:0000:0000:0000:0000:ffff:c0a8:0102)"
    )]
    Unparsable(String),
    /// A GID or address that cannot be a peer (zero, unspecified, multicast).
    #[error("--peer `{0}` is not a unicast address")]
    NotUnicast(String),
    /// An IPv6 link-local address: TCP cannot reach it without an interface scope.
    #[error(
        "--peer `{0}` is link-local (fe80::/10): the out-of-band TCP connection needs a \
         routable address; give the server's IPv4 or global IPv6 address (and --gid-index on \
         both sides to send from link-local GIDs)"
    )]
    LinkLocal(String),
}

impl Peer {
    /// Parses an IPv4 address, an IPv6 address, or a GID.
    pub fn parse(s: &str) -> Result<Peer, PeerError> {
        let t = s.trim();
        let (ip, gid) = if let Ok(ip) = t.parse::<IpAddr>() {
            match ip {
                IpAddr::V4(_) => (ip, None),
                IpAddr::V6(v6) => (Gid(v6.octets()).to_ip(), Some(Gid(v6.octets()))),
            }
        } else if let Ok(gid) = t.parse::<Gid>() {
            (gid.to_ip(), Some(gid))
        } else {
            return Err(PeerError::Unparsable(s.to_string()));
        };
        if ip.is_unspecified() || ip.is_multicast() {
            return Err(PeerError::NotUnicast(s.to_string()));
        }
        match ip {
            IpAddr::V4(v4) if v4.is_broadcast() => {
                return Err(PeerError::NotUnicast(s.to_string()));
            }
            IpAddr::V6(v6) if Gid(v6.octets()).is_link_local() => {
                return Err(PeerError::LinkLocal(s.to_string()));
            }
            _ => {}
        }
        Ok(Peer { ip, gid })
    }

    /// The GID family the local side should pick: that of the peer's address.
    pub fn family(&self) -> Family {
        match self.ip {
            IpAddr::V4(_) => Family::Ipv4,
            IpAddr::V6(_) => Family::Ipv6,
        }
    }

    /// The TCP address of the peer's out-of-band listener.
    pub fn socket_addr(&self, port: u16) -> SocketAddr {
        SocketAddr::new(self.ip, port)
    }
}

/// The family of an address a server accepted a connection from (IPv4-mapped IPv6 → IPv4).
pub fn family_of(addr: IpAddr) -> Family {
    match addr {
        IpAddr::V4(_) => Family::Ipv4,
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some() => Family::Ipv4,
        IpAddr::V6(_) => Family::Ipv6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn ipv4() {
        let p = Peer::parse("192.168.1.2").unwrap();
        assert_eq!(p.ip, IpAddr::V4(Ipv4Addr::new(192, 168, 1, 2)));
        assert_eq!(p.gid, None);
        assert_eq!(p.family(), Family::Ipv4);
        assert_eq!(p.socket_addr(18515).to_string(), "192.168.1.2:18515");
    }

    #[test]
    fn ipv6() {
        let p = Peer::parse("fd00::2").unwrap();
        assert_eq!(p.ip, IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 2)));
        assert_eq!(p.family(), Family::Ipv6);
        assert_eq!(
            p.gid.map(|g| g.to_string()).as_deref(),
            Some("fd00:0000:0000:0000:0000:0000:0000:0002")
        );
        assert_eq!(p.socket_addr(1).to_string(), "[fd00::2]:1");
    }

    #[test]
    fn mapped_gid_becomes_ipv4() {
        for s in [
            "0000:0000:0000:0000:0000:ffff:c0a8:0102",
            "00000000000000000000ffffc0a80102",
            "::ffff:192.168.1.2",
        ] {
            let p = Peer::parse(s).unwrap();
            assert_eq!(p.ip, IpAddr::V4(Ipv4Addr::new(192, 168, 1, 2)), "{s}");
            assert_eq!(p.family(), Family::Ipv4, "{s}");
            assert_eq!(
                p.gid.and_then(|g| g.to_ipv4_mapped()),
                Some(Ipv4Addr::new(192, 168, 1, 2))
            );
        }
    }

    #[test]
    fn ipv6_gid() {
        let p = Peer::parse("fd00:0000:0000:0000:0000:0000:0000:0002").unwrap();
        assert_eq!(p.family(), Family::Ipv6);
        assert_eq!(p.ip, "fd00::2".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn rejects() {
        assert!(matches!(
            Peer::parse("host.example"),
            Err(PeerError::Unparsable(_))
        ));
        assert!(matches!(Peer::parse(""), Err(PeerError::Unparsable(_))));
        assert!(matches!(
            Peer::parse("1.2.3"),
            Err(PeerError::Unparsable(_))
        ));
        assert!(matches!(
            Peer::parse("0.0.0.0"),
            Err(PeerError::NotUnicast(_))
        ));
        assert!(matches!(Peer::parse("::"), Err(PeerError::NotUnicast(_))));
        assert!(matches!(
            Peer::parse("0000:0000:0000:0000:0000:0000:0000:0000"),
            Err(PeerError::NotUnicast(_))
        ));
        assert!(matches!(
            Peer::parse("224.0.0.1"),
            Err(PeerError::NotUnicast(_))
        ));
        assert!(matches!(
            Peer::parse("255.255.255.255"),
            Err(PeerError::NotUnicast(_))
        ));
        assert!(matches!(
            Peer::parse("fe80::1"),
            Err(PeerError::LinkLocal(_))
        ));
        assert!(matches!(
            Peer::parse("fe80:0000:0000:0000:5054:00ff:fe12:3456"),
            Err(PeerError::LinkLocal(_))
        ));
        let msg = Peer::parse("nope").unwrap_err().to_string();
        assert!(msg.contains("`nope`"), "{msg}");
    }

    #[test]
    fn accepted_family() {
        assert_eq!(family_of("10.0.0.1".parse().unwrap()), Family::Ipv4);
        assert_eq!(family_of("::ffff:10.0.0.1".parse().unwrap()), Family::Ipv4);
        assert_eq!(family_of("fd00::1".parse().unwrap()), Family::Ipv6);
    }
}
