//! IBTA path MTUs and their `enum ibv_mtu` codes (`<infiniband/verbs.h>`: IBV_MTU_256 = 1 …
//! IBV_MTU_4096 = 5). The MTU is of the RoCE payload, not of the Ethernet frame: a 1500-byte
//! netdev gives 1024 (rdma-core rxe, mlx5).

use std::fmt;
use std::str::FromStr;

/// A path MTU in bytes of IBA payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mtu {
    /// 256 bytes (IBV_MTU_256 = 1).
    M256,
    /// 512 bytes (IBV_MTU_512 = 2).
    M512,
    /// 1024 bytes (IBV_MTU_1024 = 3).
    M1024,
    /// 2048 bytes (IBV_MTU_2048 = 4).
    M2048,
    /// 4096 bytes (IBV_MTU_4096 = 5).
    M4096,
}

impl Mtu {
    /// All MTUs, smallest first.
    pub const ALL: [Mtu; 5] = [Mtu::M256, Mtu::M512, Mtu::M1024, Mtu::M2048, Mtu::M4096];

    /// The size in bytes.
    pub fn bytes(self) -> u32 {
        256 << (self.code() - 1)
    }

    /// The `enum ibv_mtu` value (1 = 256 … 5 = 4096).
    pub fn code(self) -> u32 {
        match self {
            Mtu::M256 => 1,
            Mtu::M512 => 2,
            Mtu::M1024 => 3,
            Mtu::M2048 => 4,
            Mtu::M4096 => 5,
        }
    }

    /// The MTU of an `enum ibv_mtu` value, `None` outside 1..=5.
    pub fn from_code(code: u32) -> Option<Mtu> {
        Mtu::ALL.into_iter().find(|m| m.code() == code)
    }

    /// The MTU of a size in bytes, `None` unless it is one of 256, 512, 1024, 2048, 4096.
    pub fn from_bytes(bytes: u32) -> Option<Mtu> {
        Mtu::ALL.into_iter().find(|m| m.bytes() == bytes)
    }
}

impl fmt::Display for Mtu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.bytes())
    }
}

impl FromStr for Mtu {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.trim()
            .parse::<u32>()
            .ok()
            .and_then(Mtu::from_bytes)
            .ok_or_else(|| format!("`{s}` is not an IBA MTU: use 256, 512, 1024, 2048 or 4096"))
    }
}

/// The path MTU both sides use: the smallest of the two active MTUs and the user's cap
/// (perftest `check_mtu` takes min(local, remote) the same way).
pub fn negotiate(local: Mtu, remote: Mtu, cap: Option<Mtu>) -> Mtu {
    let m = local.min(remote);
    cap.map_or(m, |c| m.min(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_bytes() {
        let pairs: Vec<(u32, u32)> = Mtu::ALL.iter().map(|m| (m.code(), m.bytes())).collect();
        assert_eq!(pairs, [(1, 256), (2, 512), (3, 1024), (4, 2048), (5, 4096)]);
        assert_eq!(Mtu::from_code(0), None);
        assert_eq!(Mtu::from_code(6), None);
        assert_eq!(Mtu::from_code(3), Some(Mtu::M1024));
        assert_eq!(Mtu::from_bytes(1500), None);
        assert_eq!("2048".parse::<Mtu>(), Ok(Mtu::M2048));
        assert!("1500".parse::<Mtu>().is_err());
        assert!("x".parse::<Mtu>().is_err());
        assert_eq!(Mtu::M4096.to_string(), "4096");
    }

    #[test]
    fn negotiation_takes_the_minimum() {
        assert_eq!(negotiate(Mtu::M4096, Mtu::M1024, None), Mtu::M1024);
        assert_eq!(negotiate(Mtu::M1024, Mtu::M4096, None), Mtu::M1024);
        assert_eq!(
            negotiate(Mtu::M4096, Mtu::M4096, Some(Mtu::M2048)),
            Mtu::M2048
        );
        assert_eq!(
            negotiate(Mtu::M512, Mtu::M4096, Some(Mtu::M2048)),
            Mtu::M512
        );
    }
}
