//! The run's output, resolved once from the command line: which printer, which frames are
//! shown, which reports are printed and which files written. `cli` builds an [`OutputPlan`]
//! from its arguments (checking them there) and hands it to [`crate::pipeline::Run`]; the
//! pipeline reads plain data only.

use std::sync::Arc;

use crate::decode::opcode::OpcodeSet;
use crate::filter::DisplayFilter;
use crate::output::fields::FieldsFormat;
use crate::output::findings::FindingsShown;

/// How each shown packet is printed.
#[derive(Clone, Debug)]
pub enum PacketFormat {
    /// One line per packet (`-V`: the full header tree), coloured or not.
    Text {
        /// Colour on (`--color`, resolved against the terminal and NO_COLOR).
        color: bool,
        /// `-V`: every header's fields.
        verbose: bool,
    },
    /// One JSON object per packet per line (`--json`).
    Json,
    /// `-T fields`: the `-e` fields of each packet, laid out as `-E` says.
    Fields(FieldsFormat),
}

/// Which frames are shown and how; which reports and files the run ends with.
#[derive(Clone, Debug)]
pub struct OutputPlan {
    /// The packet printer.
    pub format: PacketFormat,
    /// `-c N`: stop after N frames (counted after the BPF filter).
    pub count: Option<u64>,
    /// `-f EXPR`: the libpcap BPF filter expression.
    pub filter: Option<String>,
    /// `--qp QPN`: only packets to this destination QP (24 bits).
    pub qp: Option<u32>,
    /// `--opcode`: only these BTH opcodes.
    pub opcodes: Option<OpcodeSet>,
    /// `-Y EXPR`: only the packets this display filter passes.
    pub display_filter: Option<Arc<DisplayFilter>>,
    /// Analysis marks on the packet lines: `--marks`, or a `-Y` / `-e` that reads `analysis.*`.
    pub marks: bool,
    /// `--all`: non-RoCE frames too.
    pub all: bool,
    /// `--roce-port N`: further UDP destination ports decoded as RoCEv2.
    pub roce_ports: Vec<u16>,
    /// `--vxlan-port N`: the UDP destination ports decapsulated as VXLAN (none: 4789).
    pub vxlan_ports: Vec<u16>,
    /// `--mirror-time`: frames timed by their ERSPAN type III hardware timestamp.
    pub mirror_time: bool,
    /// The reports at the end.
    pub report: ReportPlan,
}

impl OutputPlan {
    /// Whether packets (and reports) print as JSON.
    pub fn json(&self) -> bool {
        matches!(self.format, PacketFormat::Json)
    }
}

/// The analysis reports asked for, and how they print.
#[derive(Clone, Debug, Default)]
pub struct ReportPlan {
    /// `--summary`: the analysis report.
    pub summary: bool,
    /// `-q`: the reports only, not the packets (alone: the summary).
    pub quiet: bool,
    /// `--messages`: the reassembled messages per flow.
    pub messages: bool,
    /// `--gaps`: the PSN gaps with their NAK and retransmission.
    pub gaps: bool,
    /// `--mtu BYTES`: the path MTU, instead of inferring it.
    pub mtu: Option<u32>,
    /// `--max-flows N`: most flows tracked at once.
    pub max_flows: usize,
    /// `--encap-session`: flows split by mirror session too.
    pub encap_session: bool,
    /// `--html FILE`: the HTML report's path.
    pub html: Option<String>,
    /// `--wide`: every column of the report tables.
    pub wide: bool,
    /// `--findings`: the findings at the top of the text report.
    pub findings: FindingsShown,
    /// Reports as JSON (`--json`) rather than text tables.
    pub json: bool,
    /// Colour in the text reports.
    pub color: bool,
}

impl ReportPlan {
    /// Whether any report was asked for (and so the analyzer must run).
    pub fn wanted(&self) -> bool {
        self.text_wanted() || self.html.is_some()
    }

    /// Whether a report is printed (text or JSON), not only written as HTML.
    pub fn text_wanted(&self) -> bool {
        self.summary || self.quiet || self.messages || self.gaps
    }

    /// Whether the summary (with its warnings) is printed: `--summary`, or `-q` without
    /// `--messages` or `--gaps`.
    pub fn summary_shown(&self) -> bool {
        self.summary || (self.quiet && !(self.messages || self.gaps))
    }
}
