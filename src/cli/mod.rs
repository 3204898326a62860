//! Command-line definitions (clap) and the glue that wires sources, decoder, analysis and
//! printers together. No protocol logic lives here.

pub mod assets;
pub mod pipeline;
pub mod progress;

use clap::{Args, Parser, Subcommand};

use crate::output::style::ColorChoice;

/// Top-level command line.
#[derive(Debug, Parser)]
#[command(
    name = "roce-inspect",
    version,
    long_version = long_version(),
    about = "Inspect RDMA over Converged Ethernet (RoCEv1/RoCEv2) and InfiniBand traffic",
    long_about = "Decode every RoCE packet of a capture: BTH and extended headers, ICRC check, \
                  FECN/BECN, CNPs, ECN marks, malformed and truncated packets.",
    after_help = "Examples:\n  roce-inspect read trace.pcap\n  roce-inspect read trace.pcap --json | jq .bth.psn"
)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// `--version` text: version, git commit, and the optional features compiled in.
pub fn long_version() -> String {
    let mut features = Vec::new();
    if cfg!(feature = "verbs") {
        features.push("verbs");
    }
    if cfg!(feature = "gpu") {
        features.push("gpu");
    }
    format!(
        "{} (git {})\nfeatures: {}",
        env!("CARGO_PKG_VERSION"),
        env!("ROCE_INSPECT_GIT_HASH"),
        if features.is_empty() {
            "none".to_string()
        } else {
            features.join(", ")
        }
    )
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode a pcap or pcapng capture file (`-` reads standard input).
    #[command(
        after_help = "Examples:\n  roce-inspect read trace.pcap\n  roce-inspect read trace.pcap -V -c 5\n  \
                            roce-inspect read trace.pcap --json | jq 'select(.bth.opcode_name==\"RC_ACKNOWLEDGE\")'\n  \
                            tcpdump -w - -i eth0 udp port 4791 | roce-inspect read -"
    )]
    Read(ReadArgs),
    /// Send RDMA WRITE traffic over libibverbs, from host or GPU memory, as perftest's ib_write_bw.
    #[command(after_help = "Examples:\n  roce-inspect generate --listen\n  \
                            roce-inspect generate --peer 192.168.1.2 --size 8K --iters 100\n  \
                            roce-inspect generate --gpu 0 --peer fe80::2:c903:0:1 --imm")]
    Generate(crate::generate::GenerateArgs),
}

/// `read` arguments.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// Capture file (pcap or pcapng); `-` for standard input. Like `tcpdump -r FILE`.
    #[arg(value_name = "FILE")]
    pub file: String,
    /// Display and decoding options.
    #[command(flatten)]
    pub display: DisplayArgs,
}

/// Options shared by `read` and `capture`.
#[derive(Debug, Args, Clone)]
pub struct DisplayArgs {
    /// Stop after N frames (counted after the BPF filter), like `tcpdump -c N`.
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,
    /// libpcap BPF filter expression, like tcpdump's, e.g. `-f 'udp port 4791 and host 10.0.0.1'`.
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,
    /// Show only packets to this destination QP (decimal or 0x hex), e.g. `--qp 0x11`.
    #[arg(long, value_name = "QPN", value_parser = parse_qpn)]
    pub qp: Option<u32>,
    /// Show only this opcode: a number (`--opcode 0x0a`), a full name (`RC_RDMA_WRITE_ONLY`) or an
    /// operation for every transport (`RDMA_WRITE_ONLY`, `ACKNOWLEDGE`, `CNP`).
    #[arg(long, value_name = "NAME|N", value_parser = parse_opcode)]
    pub opcode: Option<OpcodeSet>,
    /// One JSON object per packet per line (NDJSON), for jq: `--json | jq .bth.psn`.
    #[arg(long)]
    pub json: bool,
    /// Print the full header tree of every packet, like `tshark -V`.
    #[arg(short = 'V', long = "verbose")]
    pub verbose: bool,
    /// Also list frames that are not RoCE, one short line each.
    #[arg(long)]
    pub all: bool,
    /// Colour: auto (terminal and NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Accepted for tcpdump compatibility; addresses are never resolved to names.
    #[arg(short = 'n')]
    pub numeric: bool,
    /// Also decode UDP destination port N as RoCEv2 (repeatable), e.g. `--roce-port 9741`.
    #[arg(long = "roce-port", value_name = "N")]
    pub roce_ports: Vec<u16>,
    /// Analysis options.
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Analysis reports (flows, PSNs, messages, congestion) printed after the packets.
#[derive(Debug, Args, Clone, Default)]
pub struct ReportArgs {
    /// Print the analysis report at the end: QP connections and flows, PSN gaps and
    /// retransmissions, NAKs, ECN/CNP congestion, ICRC failures. With `--json`, one JSON document
    /// instead of per-packet lines: `read t.pcap --summary --json | jq '.flows[] | {dest_qp, psn}'`.
    #[arg(long)]
    pub summary: bool,
    /// Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// List the reassembled messages (SEND, WRITE, READ, atomics) per flow; NDJSON with `--json`.
    #[arg(long)]
    pub messages: bool,
    /// List the PSN gaps with their NAK and retransmission (the loss stories); NDJSON with `--json`.
    #[arg(long)]
    pub gaps: bool,
    /// Path MTU in bytes for READ PSN reservation, instead of inferring it from FIRST/MIDDLE
    /// payloads, e.g. `--mtu 4096`.
    #[arg(long, value_name = "BYTES", value_parser = parse_mtu)]
    pub mtu: Option<u32>,
    /// Most flows tracked at once; RoCE frames of further flows are counted as untracked, so
    /// memory stays bounded when QPNs are sprayed.
    #[arg(long = "max-flows", value_name = "N", default_value_t = 16384)]
    pub max_flows: usize,
}

impl ReportArgs {
    /// Whether any report was asked for (and so the analyzer must run).
    pub fn wanted(&self) -> bool {
        self.summary || self.quiet || self.messages || self.gaps
    }
}

fn parse_mtu(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(v @ (256 | 512 | 1024 | 2048 | 4096)) => Ok(v),
        _ => Err(format!(
            "'{s}' is not an IB path MTU (256, 512, 1024, 2048 or 4096)"
        )),
    }
}

/// A set of opcodes selected with `--opcode`.
#[derive(Clone, Debug)]
pub struct OpcodeSet(pub Box<[bool; 256]>);

fn parse_opcode(s: &str) -> Result<OpcodeSet, String> {
    crate::decode::opcode::parse_opcode_selector(s).map(|a| OpcodeSet(Box::new(a)))
}

fn parse_qpn(s: &str) -> Result<u32, String> {
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u32::from_str_radix(h, 16)
    } else {
        s.parse()
    }
    .map_err(|_| format!("'{s}' is not a QP number (decimal or 0x hex)"))?;
    if v > 0xff_ffff {
        return Err(format!("QP number {v:#x} is larger than 24 bits"));
    }
    Ok(v)
}
