//! Command-line definitions (clap) and the glue that wires sources, decoder, analysis and
//! printers together. No protocol logic lives here.

pub mod assets;
pub mod capture;
pub mod correlate;
pub mod export;
pub mod job;
mod live;
pub mod nccl;
pub mod plot;
pub mod sniff;
pub mod top;

use clap::{Args, Parser, Subcommand};

pub use crate::decode::opcode::OpcodeSet;
use crate::output::style::ColorChoice;
use crate::pipeline::plan::{OutputPlan, PacketFormat, ReportPlan};

/// Top-level command line.
#[derive(Debug, Parser)]
#[command(
    name = "roce-inspect",
    version,
    long_version = long_version(),
    about = "Inspect RDMA over Converged Ethernet (RoCEv1/RoCEv2) and InfiniBand traffic",
    long_about = "Decode every RoCE packet of a capture or a live interface: BTH and every extended \
                  header, ICRC check, FECN/BECN, CNPs, ECN marks, malformed and truncated packets; \
                  group them into QP flows and report messages, PSN gaps, retransmissions, NAKs \
                  and congestion (--summary).",
    after_help = "Examples:\n  \
                  roce-inspect read trace.pcap                      decode a capture file\n  \
                  roce-inspect capture eth0                         decode RoCE live (Ctrl-C stops)\n  \
                  roce-inspect generate --gpu 0 --peer <gid>        send RDMA WRITEs from GPU memory\n  \
                  roce-inspect read trace.pcap --summary            flows, gaps, congestion report\n  \
                  roce-inspect correlate n0.pcap n1.pcap n2.pcap    one job across hosts' captures\n  \
                  roce-inspect read trace.pcap --json | jq .bth.psn\n\n\
                  Exit status: 0 success, 1 runtime error, 2 usage error."
)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// Arguments that clap accepts one by one but that contradict each other (`plot --to` not after
/// `--from`): a usage error, exit status 2 ([`is_usage_error`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ArgError(pub String);

use crate::source::file::same_file;

/// Whether `e` is a bad command-line argument that only the run could find (a BPF filter
/// expression of the user's that libpcap cannot compile, an [`ArgError`]): `roce-inspect` then
/// exits with status 2, as for the arguments clap refuses.
pub fn is_usage_error(e: &anyhow::Error) -> bool {
    use crate::source::file::FileError;
    use crate::source::live::LiveError;
    use crate::source::privdrop::PrivDropError;
    e.chain().any(|c| {
        matches!(c.downcast_ref::<FileError>(), Some(FileError::Filter(..)))
            || matches!(c.downcast_ref::<LiveError>(), Some(LiveError::Filter(..)))
            || c.downcast_ref::<ArgError>().is_some()
            || matches!(
                c.downcast_ref::<PrivDropError>(),
                Some(PrivDropError::NoSuchUser(..))
            )
    })
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
        after_help = "Examples (the samples are in the source tree's samples/ folder):\n  \
                            roce-inspect read samples/write_bw.pcap\n  \
                            roce-inspect read samples/write_bw.pcap -V -c 5\n  \
                            roce-inspect read samples/write_bw.pcap --gaps\n  \
                            roce-inspect read samples/congestion.pcap -q\n  \
                            roce-inspect read samples/read_timeout.pcap --json | jq 'select(.bth.opcode_name==\"RC_RDMA_READ_REQUEST\")'\n  \
                            tcpdump -w - -i eth0 udp port 4791 | roce-inspect read -"
    )]
    Read(ReadArgs),
    /// Capture live from a network interface and decode RoCE packets as they arrive.
    ///
    /// Needs root or CAP_NET_RAW + CAP_NET_ADMIN. Stops on -c N, --duration, Ctrl-C or SIGTERM,
    /// then prints a report on standard error.
    #[command(after_help = CAPTURE_HELP, after_long_help = capture_long_help())]
    Capture(CaptureArgs),
    /// Send RDMA WRITEs over libibverbs from host or GPU memory, like perftest's ib_write_bw.
    #[command(after_help = "Examples:\n  roce-inspect generate --listen\n  \
                            roce-inspect generate --peer 192.168.1.2 --size 8K --iters 100\n  \
                            roce-inspect generate --gpu 0 --peer fe80::2:c903:0:1 --imm")]
    Generate(crate::generate::GenerateArgs),
    /// Match one job's packets across several captures (one per host or mirror): loss located
    /// to a link, capture clocks aligned, one-way delay per link and direction.
    #[command(after_help = "Examples:\n  \
                            roce-inspect correlate node0.pcap node1.pcap node2.pcap\n  \
                            roce-inspect correlate a.pcap b.pcap --json | jq .links")]
    Correlate(correlate::CorrelateArgs),
    /// See one NCCL job through NCCL's eyes: its connections (clear-to-send and data writes),
    /// steps, rings and trees, and the straggler of every step, from one capture per host.
    #[command(after_help = "Examples:\n  \
                            roce-inspect nccl node0.pcap node1.pcap node2.pcap\n  \
                            roce-inspect nccl node0.pcap --collective allreduce --ranks 8\n  \
                            roce-inspect nccl node*.pcap --json | jq .rings")]
    Nccl(nccl::NcclArgs),
    /// Write capture files as Parquet tables (packets, flows, connections, messages, gaps) for
    /// DuckDB, Polars or Spark.
    ///
    /// Each file becomes DIR/TABLE/capture=NAME/part-0.parquet (Hive-style partitions, zstd),
    /// so the exports of many hosts in one folder read as one dataset. `packets`, `messages` and
    /// `gaps` have fixed columns; `flows` and `connections` have the columns their capture has
    /// values for: read several captures' with DuckDB's `union_by_name=true` (Spark:
    /// `mergeSchema`).
    #[command(
        after_help = "Examples:\n  roce-inspect export trace.pcap --parquet out/\n  \
                            roce-inspect export node*.pcap --parquet /data/job42 --host rack3\n  \
                            duckdb -c \"select count(*) from read_parquet('out/packets/**/*.parquet', hive_partitioning=true)\"\n  \
                            duckdb -c \"select capture, sum(missing) from read_parquet('out/gaps/**/*.parquet', hive_partitioning=true) group by 1\""
    )]
    Export(export::ExportArgs),
    /// List the interfaces libpcap can capture on, and how to capture NIC-offloaded RoCE.
    #[command(visible_alias = "interfaces")]
    List,
    /// Draw a capture: PSN against time, rate and congestion, latency CDFs, message time lines,
    /// NCCL's steps (SVG, or PNG when OUT ends in .png).
    #[command(
        after_help = "Examples:\n  roce-inspect plot trace.pcap -o psn.svg\n  \
                            roce-inspect plot trace.pcap --kind rate --qp 0x11 --bin 0.0001 -o rate.png\n  \
                            roce-inspect plot trace.pcap --kind latency --from 1.5 --to 2 -o lat.svg\n  \
                            roce-inspect plot node0.pcap node1.pcap node2.pcap --kind nccl -o steps.png"
    )]
    Plot(plot::PlotArgs),
    /// A live dashboard of RoCE traffic: per-QP rates, packets, retransmissions, PSN gaps,
    /// NAKs, RNR NAKs, CE marks, CNPs and ACK RTT, updated as they happen (needs a terminal).
    ///
    /// Keys: q or Ctrl-C quit, ↑/↓ or j/k select a flow, Enter shows its last packets and
    /// gaps, s cycles the sort column, p pauses, / types a display filter (as -Y: the table
    /// counts only the packets it passes), w writes the frames kept so far to a pcapng file.
    /// Capturing needs root or CAP_NET_RAW + CAP_NET_ADMIN, as `capture` does; root is given up
    /// once the device is open (-Z).
    #[command(after_help = "Examples:\n  roce-inspect top eth0\n  \
                            roce-inspect top mlx5_0 --summary\n  \
                            roce-inspect top -r samples/congestion.pcap --speed 10\n  \
                            roce-inspect top -r samples/congestion.pcap -Y 'bth.dest_qp == 0xc31'")]
    Top(top::TopArgs),
}

const CAPTURE_HELP: &str = "By default only RoCE is captured: UDP to port 4791 (and every --roce-port) \
    and Ethertype 0x8915, untagged or behind VLAN tags. -f EXPR replaces that filter.\n\n\
    Examples:\n  roce-inspect capture eth0\n  roce-inspect capture eth0 -w run.pcap --duration 60\n  \
    roce-inspect capture eth0 --json | jq .bth.psn\n  \
    roce-inspect capture eth0 -f 'udp port 4791 and host 10.0.0.2' -c 100\n\n\
    On ConnectX NICs RoCE bypasses the kernel: see `roce-inspect list` or --help.";

/// `capture --help` (and the man page): the short help's text plus the note on capturing
/// NIC-offloaded RoCE.
fn capture_long_help() -> String {
    format!("{CAPTURE_HELP}\n\n{}", crate::source::live::OFFLOAD_NOTE)
}

/// `capture` arguments.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Interface to capture on (`roce-inspect list` shows them); `-i IFACE` works too, as in
    /// tcpdump.
    #[arg(
        value_name = "IFACE",
        required_unless_present = "i_iface",
        conflicts_with = "i_iface"
    )]
    pub iface: Option<String>,
    /// The interface, tcpdump style (`capture -i eth0`); same as IFACE.
    #[arg(short = 'i', id = "i_iface", value_name = "IFACE")]
    pub i_iface: Option<String>,
    /// Bytes kept of each frame (1-262144); longer frames are cut and their ICRC is reported as
    /// not checkable.
    #[arg(long, value_name = "BYTES", default_value_t = crate::source::live::MAX_SNAPLEN,
          value_parser = clap::value_parser!(u32).range(1..=crate::source::live::MAX_SNAPLEN as i64))]
    pub snaplen: u32,
    /// Put the interface into promiscuous mode (off by default; a mirror port usually needs it).
    #[arg(long)]
    pub promisc: bool,
    /// Kernel capture buffer size: bytes, or with a K, M or G suffix (powers of 1024).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    pub buffer_size: u32,
    /// Also write every captured frame, unmodified, to this pcap file (valid even after Ctrl-C);
    /// with -Y, only the shown frames, as pcapng with their analysis marks as packet comments
    /// (complete once the capture stops).
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub write: Option<String>,
    /// Hand packets over in blocks (at most 100 ms late) instead of one by one: much higher
    /// packet rates without drops. The default when standard output is not a terminal or a pipe
    /// (e.g. `-w FILE > /dev/null`); this forces it for terminals and pipes too.
    #[arg(long)]
    pub buffered: bool,
    /// Stop after this many seconds (fractions allowed), e.g. `--duration 30`.
    #[arg(long, value_name = "SECS", value_parser = parse_duration)]
    pub duration: Option<f64>,
    /// Also write every RoCE frame and, at the end, the report as Parquet tables under DIR, as
    /// `export` does; the capture is named after the -w file, else IFACE-UNIXTIME.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<std::path::PathBuf>,
    /// With --parquet: the `host` column (default: this machine's host name).
    #[arg(long, value_name = "NAME", requires = "parquet")]
    pub host: Option<String>,
    /// Once the device and the -w file are open, run as USER instead of root (tcpdump's -Z):
    /// default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. The -w
    /// file and a new --parquet folder are given to USER.
    #[arg(short = 'Z', long = "relinquish-privileges", value_name = "USER")]
    pub user: Option<String>,
    /// Display and decoding options.
    #[command(flatten)]
    pub display: DisplayArgs,
}

/// `read` arguments.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// Capture file (pcap or pcapng); `-` for standard input. `-r FILE` works too, as in tcpdump.
    #[arg(
        value_name = "FILE",
        required_unless_present_any = ["r_file", "list_fields"],
        conflicts_with = "r_file"
    )]
    pub file: Option<String>,
    /// The capture file, tcpdump style (`read -r trace.pcap`); same as FILE.
    #[arg(short = 'r', id = "r_file", value_name = "FILE")]
    pub r_file: Option<String>,
    /// Write the shown frames (after -Y, --qp, --opcode), unmodified, to this pcapng file
    /// instead of printing them, each with its analysis marks as the packet comment
    /// (Wireshark's `frame.comment`), e.g. `-Y analysis.retransmission -w resent.pcapng`.
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub write: Option<String>,
    /// List every field that -Y and -T fields -e read, with its type and description (like
    /// `tshark -G fields`), and exit.
    #[arg(long = "list-fields", id = "list_fields")]
    pub list_fields: bool,
    /// Threads that decode and format packets (default: the cores available), while the
    /// calling thread analyses them in order and writes the output, which is the same whatever
    /// the number; 1 reads on one thread. Several threads are used while a pcap/pcapng file is
    /// read from its memory mapping (not standard input, not with --mirror-time).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..),
          allow_negative_numbers = true)]
    pub threads: Option<u16>,
    /// Display and decoding options.
    #[command(flatten)]
    pub display: DisplayArgs,
}

/// Parse a count that must be at least 1 (`--max-flows`).
///
/// # Errors
/// Not a number, or 0.
pub fn positive_usize(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

impl ReadArgs {
    /// The number of threads: `--threads`, or the cores available.
    pub fn threads(&self) -> usize {
        self.threads.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            usize::from,
        )
    }

    /// The file to read, given as FILE or `-r FILE`.
    pub fn path(&self) -> &str {
        self.file
            .as_deref()
            .or(self.r_file.as_deref())
            .unwrap_or("-")
    }
}

impl CaptureArgs {
    /// The interface, given as IFACE or `-i IFACE`.
    pub fn interface(&self) -> &str {
        self.iface
            .as_deref()
            .or(self.i_iface.as_deref())
            .unwrap_or_default()
    }
}

/// Options shared by `read` and `capture`.
#[derive(Debug, Args, Clone)]
pub struct DisplayArgs {
    /// Stop after N frames (counted after the BPF filter), like `tcpdump -c N`.
    #[arg(short = 'c', long = "count", value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// libpcap BPF filter expression, like tcpdump's, e.g. `-f 'udp port 4791 and host 10.0.0.1'`.
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,
    /// Show only packets to this destination QP (decimal or 0x hex), e.g. `--qp 0x11`. Reports
    /// (`--summary`, `--messages`, `--gaps`) still cover every flow.
    #[arg(long, value_name = "QPN", value_parser = parse_qpn)]
    pub qp: Option<u32>,
    /// Show only this opcode: a number (`--opcode 0x0a`), a full name (`RC_RDMA_WRITE_ONLY`) or an
    /// operation for every transport (`RDMA_WRITE_ONLY`, `ACKNOWLEDGE`, `CNP`). Reports still
    /// cover every packet.
    #[arg(long, value_name = "NAME|N", value_parser = parse_opcode)]
    pub opcode: Option<OpcodeSet>,
    /// Show only the packets this display filter passes: Wireshark's display-filter language
    /// on the `--json` keys joined by dots, e.g. `-Y 'bth.dest_qp == 0x11 && bth.psn > 100'`,
    /// `-Y 'aeth.nak || analysis.retransmission'` (--list-fields lists the fields). Reports
    /// still cover every packet.
    #[arg(short = 'Y', long = "display-filter", value_name = "EXPR", value_parser = parse_display_filter)]
    pub display_filter: Option<std::sync::Arc<crate::filter::DisplayFilter>>,
    /// Run the analysis alongside the packet lines and mark each packet with its verdicts
    /// (`[RETX]`, `[GAP n]`, `[NAKed]`, …; the `analysis` object in --json). Implied by a -Y
    /// filter that reads `analysis.*`.
    #[arg(long)]
    pub marks: bool,
    /// One JSON object per packet per line (NDJSON), for jq: `--json | jq .bth.psn`.
    #[arg(long)]
    pub json: bool,
    /// Output format, as tshark's -T: `fields` prints the -e fields of each packet, one line
    /// each (`-T fields -e frame -e bth.psn -e analysis.retransmission`).
    #[arg(short = 'T', value_name = "FORMAT", value_parser = ["fields"],
          conflicts_with_all = ["json", "verbose"])]
    pub format: Option<String>,
    /// A field printed by -T fields (repeatable, in order); --list-fields lists them.
    #[arg(short = 'e', value_name = "FIELD", requires = "format")]
    pub fields: Vec<String>,
    /// A -T fields option as tshark's -E (repeatable): `separator=,` (`/t` tab, `/s` space),
    /// `header=y`, `quote=d|s|n`, `aggregator=;`, `occurrence=f|l|a|N`.
    #[arg(short = 'E', value_name = "OPTION", requires = "format")]
    pub field_options: Vec<String>,
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
    #[arg(long = "roce-port", value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub roce_ports: Vec<u16>,
    /// Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable), e.g.
    /// `--vxlan-port 8472` for Linux's old default.
    #[arg(long = "vxlan-port", value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub vxlan_ports: Vec<u16>,
    /// Time mirrored frames by their ERSPAN type III hardware timestamp instead of the
    /// collector's capture time (frames without one keep the capture time).
    #[arg(long = "mirror-time")]
    pub mirror_time: bool,
    /// Analysis options.
    #[command(flatten)]
    pub report: ReportArgs,
}

impl Default for DisplayArgs {
    /// The options as `read FILE` has them when no flag is given: each default is the one its
    /// `#[arg]` attribute declares (clap parses an empty command line), so a flag added later
    /// has its default here too (`top` builds its summary's options from this).
    fn default() -> Self {
        use clap::FromArgMatches;
        let cmd = <DisplayArgs as Args>::augment_args(clap::Command::new("defaults"));
        // The declared defaults parse (tested below): a failure is a bug in the attributes.
        let m = cmd
            .try_get_matches_from(["defaults"])
            .expect("DisplayArgs' declared defaults parse");
        DisplayArgs::from_arg_matches(&m).expect("DisplayArgs' declared defaults parse")
    }
}

impl DisplayArgs {
    /// The `-T fields` layout, `None` without `-T fields`.
    ///
    /// # Errors
    /// `-T fields` without `-e`, an unknown field, a bad `-E` option (a usage error).
    pub fn fields_format(&self) -> Result<Option<crate::output::fields::FieldsFormat>, ArgError> {
        if self.format.is_none() {
            return Ok(None);
        }
        crate::output::fields::FieldsFormat::new(&self.fields, &self.field_options)
            .map(Some)
            .map_err(ArgError)
    }

    /// The run's output, resolved: the printer, the selection, the reports and files.
    ///
    /// # Errors
    /// A bad `-T fields` layout ([`DisplayArgs::fields_format`]; a usage error).
    pub fn plan(&self) -> Result<OutputPlan, ArgError> {
        let format = match self.fields_format()? {
            Some(f) => PacketFormat::Fields(f),
            None if self.json => PacketFormat::Json,
            None => PacketFormat::Text {
                color: self.color.enabled(),
                verbose: self.verbose,
            },
        };
        let marks = self.marks
            || self
                .display_filter
                .as_ref()
                .is_some_and(|f| f.reads_analysis())
            || (self.format.is_some() && self.fields.iter().any(|f| f.starts_with("analysis")));
        Ok(OutputPlan {
            format,
            count: self.count,
            filter: self.filter.clone(),
            qp: self.qp,
            opcodes: self.opcode.clone(),
            display_filter: self.display_filter.clone(),
            marks,
            all: self.all,
            roce_ports: self.roce_ports.clone(),
            vxlan_ports: self.vxlan_ports.clone(),
            mirror_time: self.mirror_time,
            report: self.report.plan(self.json, self.color.enabled()),
        })
    }
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
    #[arg(long, value_name = "BYTES", value_parser = parse_mtu, allow_negative_numbers = true)]
    pub mtu: Option<u32>,
    /// Most flows tracked at once; RoCE frames of further flows are counted as untracked, so
    /// memory stays bounded when QPNs are sprayed.
    #[arg(long = "max-flows", value_name = "N", default_value_t = 16384, value_parser = crate::cli::positive_usize,
          allow_negative_numbers = true)]
    pub max_flows: usize,
    /// Split flows by mirror session too: the ERSPAN session ID or VXLAN VNI the frame came
    /// through (one job mirrored from several ports).
    #[arg(long = "encap-session")]
    pub encap_session: bool,
    /// Also write a self-contained HTML report (tables, loss stories, congestion, plots) to
    /// FILE; without -q/--summary/--messages/--gaps nothing else is printed.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    /// Print every column of the report tables however wide they are (by default, on a
    /// terminal, the least important columns are hidden to fit its width).
    #[arg(long)]
    pub wide: bool,
    /// Findings shown at the top of the text report: `top` (the most severe, within 15
    /// lines) or `all` (every one, each with its cause and advice).
    #[arg(long, value_name = "WHICH", value_enum, default_value_t = crate::output::findings::FindingsShown::Top)]
    pub findings: crate::output::findings::FindingsShown,
}

impl ReportArgs {
    /// The reports asked for, printed as JSON when `json`, in colour when `color`.
    pub fn plan(&self, json: bool, color: bool) -> ReportPlan {
        ReportPlan {
            summary: self.summary,
            quiet: self.quiet,
            messages: self.messages,
            gaps: self.gaps,
            mtu: self.mtu,
            max_flows: self.max_flows,
            encap_session: self.encap_session,
            html: self.html.clone(),
            wide: self.wide,
            findings: self.findings,
            json,
            color,
        }
    }
}

/// `roce-inspect read FILE`: the arguments checked (`-T fields`, `-w` not the file read), then
/// the run.
///
/// # Errors
/// A usage error ([`ArgError`]), or the run's ([`crate::pipeline::read_file`]).
pub fn read(a: &ReadArgs) -> anyhow::Result<crate::pipeline::Outcome> {
    if a.list_fields {
        return crate::pipeline::list_fields();
    }
    let path = a.path();
    let plan = a.display.plan()?;
    if let Some(w) = a.write.as_deref()
        && same_file(w, path)
    {
        return Err(ArgError(format!("-w {w}: that is the file being read")).into());
    }
    crate::pipeline::read_file(path, &plan, a.threads(), a.write.as_deref())
}

pub(crate) fn parse_mtu(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(v @ (256 | 512 | 1024 | 2048 | 4096)) => Ok(v),
        _ => Err(format!(
            "'{s}' is not an IB path MTU (256, 512, 1024, 2048 or 4096)"
        )),
    }
}

/// Compile a `-Y` display filter.
fn parse_display_filter(s: &str) -> Result<std::sync::Arc<crate::filter::DisplayFilter>, String> {
    crate::filter::DisplayFilter::compile(s)
        .map(std::sync::Arc::new)
        .map_err(|e| e.to_string())
}

fn parse_opcode(s: &str) -> Result<OpcodeSet, String> {
    crate::decode::opcode::parse_opcode_selector(s).map(|a| OpcodeSet(Box::new(a)))
}

/// Parse a size: bytes, or a number with a K, M or G suffix (KiB, MiB, GiB accepted); at most
/// 2 GiB - 1 (libpcap takes an `int`).
fn parse_size(s: &str) -> Result<u32, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let (num, mult) = [
        ("gib", 1u64 << 30),
        ("g", 1 << 30),
        ("mib", 1 << 20),
        ("m", 1 << 20),
        ("kib", 1 << 10),
        ("k", 1 << 10),
    ]
    .iter()
    .find_map(|(suf, m)| lower.strip_suffix(suf).map(|n| (n.trim().to_string(), *m)))
    .unwrap_or((lower.clone(), 1));
    let v: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (bytes, or a number with K, M or G)"))?;
    let bytes = v
        .checked_mul(mult)
        .filter(|b| (1..=i32::MAX as u64).contains(b))
        .ok_or_else(|| format!("'{s}' is out of range (1 byte to 2 GiB - 1)"))?;
    Ok(bytes as u32)
}

/// Parse a positive, finite number of seconds.
fn parse_duration(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1e9 => Ok(v),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}

pub(crate) fn parse_qpn(s: &str) -> Result<u32, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("512k"), Ok(512 << 10));
        assert_eq!(parse_size("1000000"), Ok(1_000_000));
        assert!(parse_size("2G").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("lots").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2.5"), Ok(2.5));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("inf").is_err());
    }

    /// `DisplayArgs::default()` is what `read FILE` parses without a display flag (its
    /// `Debug` text: the type has no `PartialEq`).
    #[test]
    fn display_defaults_are_read_s() {
        let cli = Cli::try_parse_from(["roce-inspect", "read", "x.pcap"]).unwrap();
        let Command::Read(r) = cli.command else {
            panic!("not read")
        };
        let d = DisplayArgs::default();
        assert_eq!(format!("{d:?}"), format!("{:?}", r.display));
        assert_eq!(d.report.max_flows, 16384);
        assert!(!d.json && d.display_filter.is_none() && d.count.is_none());
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
