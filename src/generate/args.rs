//! Command-line arguments of `roce-inspect generate`.

use clap::{ArgGroup, Args};

use super::mtu::Mtu;
use super::oob::DEFAULT_PORT;
use super::wire::MAX_QPS;

/// `roce-inspect generate`: RDMA WRITE traffic between two hosts, as perftest's `ib_write_bw`.
///
/// Start the server with `--listen` on one host and the client with `--peer` on the other. The
/// client's QPs write into the server's buffer; before the traffic both print, per QP, the QPNs,
/// PSNs and GIDs to look for in a capture.
#[derive(Args, Clone, Debug, PartialEq)]
#[command(group(ArgGroup::new("role").required(true).args(["listen", "peer"])))]
#[command(group(ArgGroup::new("stop").args(["iters", "duration"])))]
pub struct GenerateArgs {
    /// Be the server: wait for a client on --oob-port and let it write into our buffer.
    ///
    /// Example: `roce-inspect generate --listen --device rxe0`
    #[arg(long)]
    pub listen: bool,

    /// Be the client and write to this server: an IPv4 address, an IPv6 address, or a GID.
    ///
    /// An IPv4-mapped GID (`::ffff:a.b.c.d`, as `ibv_devinfo -v` lists it) means its IPv4
    /// address. The out-of-band TCP connection goes to this address; the local GID is chosen in
    /// the same address family. A link-local IPv6 address or GID (fe80::/10) names the
    /// interface it is reached through, as ping does: `fe80::1%eth0`.
    ///
    /// Example: `--peer 192.168.1.2`, `--peer 0000:0000:0000:0000:0000:ffff:c0a8:0102`
    #[arg(long, value_name = "GID|IP", value_parser = peer_arg)]
    pub peer: Option<String>,

    /// TCP port of the out-of-band exchange (QPN, PSN, GID, rkey, address, MTU).
    ///
    /// perftest's default. Both sides must use the same port.
    ///
    /// Example: `--oob-port 20000`
    #[arg(long, default_value_t = DEFAULT_PORT, value_name = "PORT")]
    pub oob_port: u16,

    /// RDMA device to use (default: the first device with an active Ethernet port).
    ///
    /// Names as `ibv_devices` or `rdma link` list them.
    ///
    /// Example: `--device mlx5_0`, `--device rxe0`
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,

    /// Port number on the device (1-based, as in `ibv_devinfo`).
    ///
    /// Example: `--ib-port 2`
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u8).range(1..))]
    pub ib_port: u8,

    /// GID-table index to send from (default: the first RoCE v2 GID of the peer's address family,
    /// preferring non-link-local ones).
    ///
    /// Same as perftest's `-x`; `show_gids` or `/sys/class/infiniband/<dev>/ports/<port>/gids/`
    /// list the table.
    ///
    /// Example: `--gid-index 3`
    #[arg(long, value_name = "N")]
    pub gid_index: Option<u32>,

    /// Put the buffer in the memory of CUDA GPU N instead of host memory (needs the `gpu` build
    /// feature, an NVIDIA driver, and a NIC that can register GPU memory through dma-buf or
    /// nvidia-peermem).
    ///
    /// On the client the WRITEs are read from GPU memory, on the server they land in it, as with
    /// NCCL.
    ///
    /// Example: `--gpu 0`
    #[arg(long, value_name = "N")]
    pub gpu: Option<u32>,

    /// Bytes per RDMA WRITE (client), with an optional K, M or G suffix (powers of 1024).
    ///
    /// Each WRITE is split into ceil(size / path MTU) packets on the wire.
    ///
    /// Example: `--size 4096`, `--size 1M`
    #[arg(long, default_value = "65536", value_name = "BYTES", value_parser = parse_size)]
    pub size: u64,

    /// Send RDMA WRITE WITH IMMEDIATE instead of RDMA WRITE (client); the server posts receives
    /// and counts the immediates.
    ///
    /// Example: `--imm`
    #[arg(long)]
    pub imm: bool,

    /// WRITEs per QP (client); the default when --duration is not given is 5000, perftest's.
    ///
    /// Example: `--iters 100000`
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub iters: Option<u64>,

    /// Send for this many seconds instead of a number of WRITEs (client).
    ///
    /// Example: `--duration 10`, `--duration 0.5`
    #[arg(long, value_name = "S", value_parser = parse_duration)]
    pub duration: Option<f64>,

    /// WRITEs outstanding per QP (client): the send-queue depth.
    ///
    /// perftest's default is 128.
    ///
    /// Example: `--tx-depth 16`
    #[arg(long, default_value_t = 128, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=16384))]
    pub tx_depth: u32,

    /// Number of parallel RC QPs (client); each writes to its own slice of the server's buffer.
    ///
    /// Example: `--qps 4`
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=MAX_QPS as i64))]
    pub qps: u32,

    /// IP traffic class of our packets (the GRH traffic class: DSCP << 2 | ECN).
    ///
    /// Example: `--tclass 106` (DSCP 26, ECN ECT(0)), `--tclass 0`
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub tclass: u8,

    /// Cap the path MTU (bytes: 256, 512, 1024, 2048 or 4096); otherwise the smaller of the two
    /// ports' active MTUs.
    ///
    /// Example: `--mtu 1024`
    #[arg(long, value_name = "BYTES")]
    pub mtu: Option<Mtu>,

    /// Print the QP lines and the results as one JSON document instead of text and a table.
    ///
    /// Example: `--json | jq .summary.gbit_per_s`
    #[arg(long)]
    pub json: bool,
}

/// The default number of WRITEs per QP (perftest `DEF_ITERS` for bandwidth tests).
pub const DEFAULT_ITERS: u64 = 5000;

/// The largest `--size`: 2 GiB, the usual `max_msg_sz` of RoCE NICs and rxe.
pub const MAX_SIZE: u64 = 1 << 31;

/// Parses a byte count with an optional K/M/G (×1024) suffix, 1..=[`MAX_SIZE`].
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1u64 << 10),
        Some((i, 'm' | 'M')) => (&t[..i], 1 << 20),
        Some((i, 'g' | 'G')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a byte count (e.g. 4096, 64K, 1M)"))?;
    let bytes = n
        .checked_mul(mult)
        .filter(|b| (1..=MAX_SIZE).contains(b))
        .ok_or_else(|| format!("`{s}`: the size must be 1 byte to 2G"))?;
    Ok(bytes)
}

/// Parses a positive, finite number of seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 * 365.0 => Ok(v),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

/// `--peer`'s value, checked as [`super::peer::Peer::parse`] checks it, so that a malformed
/// address is a usage error (status 2) like the other arguments.
fn peer_arg(s: &str) -> Result<String, String> {
    super::peer::Peer::parse(s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: GenerateArgs,
    }

    fn parse(argv: &[&str]) -> Result<GenerateArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("generate").chain(argv.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("2G"), Ok(1 << 31));
        assert!(parse_size("3G").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999999999999K").is_err());
        assert!(parse_size("1é").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("0.5"), Ok(0.5));
        for bad in ["0", "-1", "nan", "inf", "x"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn defaults() {
        let a = parse(&["--peer", "10.0.0.2"]).unwrap();
        assert_eq!(a.peer.as_deref(), Some("10.0.0.2"));
        assert!(!a.listen);
        assert_eq!(a.oob_port, 18515);
        assert_eq!(a.ib_port, 1);
        assert_eq!(a.size, 65536);
        assert_eq!(a.tx_depth, 128);
        assert_eq!(a.qps, 1);
        assert_eq!(a.tclass, 0);
        assert_eq!(
            (a.iters, a.duration, a.gpu, a.gid_index, a.mtu),
            (None, None, None, None, None)
        );
    }

    #[test]
    fn all_flags() {
        let a = parse(&[
            "--peer",
            "fd00::1",
            "--oob-port",
            "20000",
            "--device",
            "rxe0",
            "--ib-port",
            "2",
            "--gid-index",
            "3",
            "--gpu",
            "1",
            "--size",
            "1M",
            "--imm",
            "--iters",
            "10",
            "--tx-depth",
            "16",
            "--qps",
            "4",
            "--tclass",
            "106",
            "--mtu",
            "2048",
            "--json",
        ])
        .unwrap();
        assert_eq!(a.oob_port, 20000);
        assert_eq!(a.device.as_deref(), Some("rxe0"));
        assert_eq!((a.ib_port, a.gid_index, a.gpu), (2, Some(3), Some(1)));
        assert_eq!((a.size, a.imm, a.iters), (1 << 20, true, Some(10)));
        assert_eq!((a.tx_depth, a.qps, a.tclass), (16, 4, 106));
        assert_eq!(a.mtu, Some(Mtu::M2048));
        assert!(a.json);
    }

    #[test]
    fn refusals() {
        assert!(parse(&[]).is_err(), "a role is required");
        assert!(parse(&["--listen", "--peer", "1.2.3.4"]).is_err());
        assert!(parse(&["--peer", "1.2.3.4", "--iters", "5", "--duration", "1"]).is_err());
        assert!(parse(&["--peer", "1.2.3.4", "--ib-port", "0"]).is_err());
        assert!(parse(&["--peer", "1.2.3.4", "--qps", "0"]).is_err());
        assert!(parse(&["--peer", "1.2.3.4", "--qps", "257"]).is_err());
        assert!(parse(&["--peer", "1.2.3.4", "--tx-depth", "0"]).is_err());
        assert!(parse(&["--peer", "1.2.3.4", "--mtu", "1500"]).is_err());
        assert!(parse(&["--peer", "1.2.3.4", "--tclass", "256"]).is_err());
        assert!(parse(&["--listen", "--iters", "0"]).is_err());
    }
}
