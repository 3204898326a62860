//! `--peer`: where the out-of-band TCP connection goes, and which GID family to use.
//!
//! perftest takes a host name and uses the TCP connection only; here `--peer` also accepts the
//! peer's GID as `show_gids` or `ibv_devinfo -v` prints it, so that a user can copy it from the
//! GID table. An IPv4-mapped GID (`::ffff:a.b.c.d`) means the peer's IPv4 address. A
//! link-local IPv6 address or GID (`fe80::/10`, the GID at index 0 of most RoCE ports) needs the
//! interface it is reached through, as `ping fe80::1%eth0` does (RFC 4007 §11's zone index).

use std::net::{IpAddr, SocketAddr, SocketAddrV6};

use super::gid::{Family, Gid};

/// A parsed `--peer` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    /// The address the out-of-band TCP connection goes to.
    pub ip: IpAddr,
    /// The GID the user named, when `--peer` was a GID or an IPv6 address.
    pub gid: Option<Gid>,
    /// Interface index of a link-local IPv6 peer's zone (`%eth0` or `%2`); 0 without one.
    pub scope_id: u32,
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
    /// An IPv6 link-local address without a zone: TCP cannot reach it without the interface.
    #[error(
        "--peer `{0}` is link-local (fe80::/10): name the interface it is reached through, \
         as in `{0}%eth0`, or give the server's IPv4 or global IPv6 address"
    )]
    LinkLocal(String),
    /// A zone (`%IFACE`) on an address that is not IPv6 link-local.
    #[error("--peer `{0}`: only a link-local IPv6 address (fe80::/10) takes an interface (%IFACE)")]
    ScopeNotLinkLocal(String),
    /// A zone naming no interface of this machine.
    #[error("--peer `{0}`: no network interface `{1}` on this machine")]
    UnknownInterface(String, String),
}

/// The interface index of zone `z`: a number, or an interface name (`if_nametoindex(3)`).
fn zone_index(z: &str) -> Option<u32> {
    if let Ok(n) = z.parse::<u32>() {
        return (n > 0).then_some(n);
    }
    let name = std::ffi::CString::new(z).ok()?;
    // SAFETY: `name` is a NUL-terminated string that outlives the call.
    let i = unsafe { libc::if_nametoindex(name.as_ptr()) };
    (i > 0).then_some(i)
}

impl Peer {
    /// Parses an IPv4 address, an IPv6 address, or a GID; a link-local IPv6 one with its
    /// interface (`fe80::1%eth0`).
    ///
    /// # Errors
    /// A [`PeerError`] saying what is wrong with `s`.
    pub fn parse(s: &str) -> Result<Peer, PeerError> {
        let (t, zone) = match s.trim().split_once('%') {
            Some((a, z)) => (a, Some(z)),
            None => (s.trim(), None),
        };
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
        let link_local = matches!(ip, IpAddr::V6(v6) if Gid(v6.octets()).is_link_local());
        if matches!(ip, IpAddr::V4(v4) if v4.is_broadcast()) {
            return Err(PeerError::NotUnicast(s.to_string()));
        }
        let scope_id = match (link_local, zone) {
            (true, None) => return Err(PeerError::LinkLocal(s.to_string())),
            (false, Some(_)) => return Err(PeerError::ScopeNotLinkLocal(s.to_string())),
            (true, Some(z)) => zone_index(z)
                .ok_or_else(|| PeerError::UnknownInterface(s.to_string(), z.to_string()))?,
            (false, None) => 0,
        };
        Ok(Peer { ip, gid, scope_id })
    }

    /// The GID family the local side should pick: that of the peer's address.
    pub fn family(&self) -> Family {
        match self.ip {
            IpAddr::V4(_) => Family::Ipv4,
            IpAddr::V6(_) => Family::Ipv6,
        }
    }

    /// The TCP address of the peer's out-of-band listener (with the zone of a link-local peer).
    pub fn socket_addr(&self, port: u16) -> SocketAddr {
        match self.ip {
            IpAddr::V6(v6) if self.scope_id != 0 => {
                SocketAddr::V6(SocketAddrV6::new(v6, port, 0, self.scope_id))
            }
            ip => SocketAddr::new(ip, port),
        }
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
        let msg = Peer::parse("fe80::1").unwrap_err().to_string();
        assert!(msg.contains("fe80::1%eth0"), "{msg}");
        assert!(matches!(
            Peer::parse("192.168.1.2%lo"),
            Err(PeerError::ScopeNotLinkLocal(_))
        ));
        assert!(matches!(
            Peer::parse("fd00::2%lo"),
            Err(PeerError::ScopeNotLinkLocal(_))
        ));
        assert!(matches!(
            Peer::parse("fe80::1%no-such-if0"),
            Err(PeerError::UnknownInterface(_, _))
        ));
        assert!(matches!(
            Peer::parse("fe80::1%0"),
            Err(PeerError::UnknownInterface(_, _))
        ));
    }

    /// A link-local peer with its zone, by name (the loopback interface every Linux machine
    /// has) or by number: the TCP address carries the interface index.
    #[test]
    fn link_local_with_zone() {
        let lo = zone_index("lo").expect("a loopback interface");
        for s in ["fe80::1%lo".to_string(), format!("fe80::1%{lo}")] {
            let p = Peer::parse(&s).unwrap();
            assert_eq!(p.scope_id, lo, "{s}");
            assert_eq!(p.family(), Family::Ipv6);
            assert_eq!(
                p.socket_addr(18515).to_string(),
                format!("[fe80::1%{lo}]:18515")
            );
        }
        let p = Peer::parse("fe80:0000:0000:0000:5054:00ff:fe12:3456%lo").unwrap();
        assert_eq!(p.ip, "fe80::5054:ff:fe12:3456".parse::<IpAddr>().unwrap());
        assert!(p.gid.is_some());
    }

    #[test]
    fn accepted_family() {
        assert_eq!(family_of("10.0.0.1".parse().unwrap()), Family::Ipv4);
        assert_eq!(family_of("::ffff:10.0.0.1".parse().unwrap()), Family::Ipv4);
        assert_eq!(family_of("fd00::1".parse().unwrap()), Family::Ipv6);
    }
}
