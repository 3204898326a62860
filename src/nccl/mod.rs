//! `nccl`: one NCCL job's collectives seen through NCCL's IB transport, from captures alone.
//!
//! Each capture is read with the same sources and decoder as `read`; [`track::Tracker`] finds
//! its NCCL connections (clear-to-send writes joined to the data written into the buffers they
//! grant, see [`cts`]); the connections of all captures are merged, and the job's rings and trees
//! ([`topology`]), the slowest connection of every step ([`straggler`]) and a per-host summary
//! are derived. [`text`] prints the tables; the [`Report`] is also the JSON document.

pub mod cts;
pub mod straggler;
pub mod text;
pub mod timeline;
pub mod topology;
pub mod track;

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use crate::decode::{Address, DecodeConfig, decode_frame};
use crate::source::FileSource;
use cts::{ImmOrder, Layout, Protocol};
use track::{Conn, Recognised, Tracker};

/// What to read and how.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Capture files (`-` is standard input).
    pub files: Vec<String>,
    /// libpcap BPF filter applied to every file.
    pub filter: Option<String>,
    /// Extra RoCEv2 UDP ports.
    pub roce_ports: Vec<u16>,
    /// Collective and rank count for the bus bandwidth factor.
    pub collective: Option<(Collective, u32)>,
}

/// A collective, for nccl-tests' bus bandwidth factor (NCCL tests doc/PERFORMANCE.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Collective {
    /// AllReduce: busbw = algbw × 2(n−1)/n.
    Allreduce,
    /// AllGather: × (n−1)/n.
    Allgather,
    /// ReduceScatter: × (n−1)/n.
    Reducescatter,
    /// AllToAll: × (n−1)/n.
    Alltoall,
    /// Broadcast: × 1.
    Broadcast,
    /// Reduce: × 1.
    Reduce,
}

impl Collective {
    /// busbw / algbw for `n` ranks.
    pub fn factor(self, n: u32) -> f64 {
        let n = f64::from(n.max(1));
        match self {
            Collective::Allreduce => 2.0 * (n - 1.0) / n,
            Collective::Allgather | Collective::Reducescatter | Collective::Alltoall => {
                (n - 1.0) / n
            }
            Collective::Broadcast | Collective::Reduce => 1.0,
        }
    }
}

/// One capture's counts.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CaptureSummary {
    /// File name (`<stdin>` for `-`).
    pub file: String,
    /// Frames read.
    pub frames: u64,
    /// RoCE packets with a BTH.
    pub roce: u64,
    /// Of them, NCCL CTS and data writes.
    pub nccl: u64,
    /// The others (ACKs, CNPs, other traffic), left alone.
    pub other: u64,
    /// NCCL connections seen.
    pub connections: usize,
    /// First and last frame's time stamp, ns since the Unix epoch (`None`: no frame).
    pub first_ns: Option<u64>,
    /// See [`CaptureSummary::first_ns`].
    pub last_ns: Option<u64>,
    /// Why the file ended early, if it did.
    pub read_error: Option<String>,
}

/// One step of a connection in the report (times in ns since the Unix epoch).
#[derive(Clone, Debug, serde::Serialize)]
pub struct StepOut {
    /// NCCL's request counter + 1 from the CTS (or the step's number).
    pub idx: u64,
    /// When the CTS was seen.
    pub cts_ns: Option<u64>,
    /// CTS → first data packet, ns.
    pub wait_ns: Option<u64>,
    /// First data packet.
    pub first_ns: u64,
    /// First → last data packet, ns.
    pub data_ns: u64,
    /// Data bytes.
    pub bytes: u64,
    /// bytes × 8 / data_ns, Gb/s (`None` for a one-packet step).
    pub gbps: Option<f64>,
    /// Retransmitted data packets, CNPs, CE marks.
    pub retransmitted: u32,
    /// See [`StepOut::retransmitted`].
    pub cnps: u32,
    /// See [`StepOut::retransmitted`].
    pub ce: u32,
}

/// One NCCL connection in the report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Connection {
    /// Number in the report, from 0.
    pub id: usize,
    /// Sender address.
    pub sender: String,
    /// Receiver address.
    pub receiver: String,
    /// Destination QP of the data (the first data QP).
    pub data_qp: Option<u32>,
    /// Destination QP of the CTS writes.
    pub cts_qp: Option<u32>,
    /// Every data QP.
    pub qps: Vec<u32>,
    /// Channel (see [`topology::find`]).
    pub channel: usize,
    /// How it was recognised.
    pub recognised: Recognised,
    /// Captures that saw it; the counts are the first one's.
    pub captures: Vec<String>,
    /// RDMA WRITE messages with immediate.
    pub messages: u64,
    /// Data bytes.
    pub bytes: u64,
    /// CTS writes.
    pub cts: u64,
    /// CTS entries.
    pub cts_entries: u64,
    /// Messages whose immediate equals their length.
    pub imm_equals_length: u64,
    /// Completed steps.
    pub steps: u64,
    /// CTS entries whose data never completed.
    pub incomplete_steps: u64,
    /// First and last packet, ns since the Unix epoch.
    pub first_ns: u64,
    /// See [`Connection::first_ns`].
    pub last_ns: u64,
    /// CTS entry layout.
    pub cts_layout: Option<Layout>,
    /// Immediate byte order.
    pub immediate: Option<ImmOrder>,
    /// NCCL versions that fit the layout and immediate order.
    pub nccl_version: String,
    /// Protocol told from the payload.
    pub protocol: Option<Protocol>,
    /// NCCL's tag in the last CTS entry.
    pub tag: Option<u32>,
    /// (size in bytes, messages) pairs, by size.
    pub sizes: Vec<(u64, u64)>,
    /// Mean and largest CTS → first data wait, ns.
    pub wait_mean_ns: Option<f64>,
    /// See [`Connection::wait_mean_ns`].
    pub wait_max_ns: Option<u64>,
    /// Mean and largest step data duration, ns.
    pub data_mean_ns: Option<f64>,
    /// See [`Connection::data_mean_ns`].
    pub data_max_ns: Option<u64>,
    /// Bus bandwidth as nccl-tests defines it for a ring (the bytes a rank sends over the
    /// collective's time), GB/s (bytes per ns): the data bytes of the completed steps over
    /// their span, from the CTS of the first step (its first data packet when that CTS was not
    /// captured) to the last data packet of the last step, retransmissions included, on the
    /// clock of the capture whose counts are kept. `None` below two time stamps.
    pub busbw_gbs: Option<f64>,
    /// busbw / the collective's factor, GB/s (with `--collective` and `--ranks`).
    pub algbw_gbs: Option<f64>,
    /// Retransmitted data packets, CNPs, NAKs, CE-marked data packets.
    pub retransmitted: u64,
    /// See [`Connection::retransmitted`].
    pub cnps: u64,
    /// See [`Connection::retransmitted`].
    pub naks: u64,
    /// See [`Connection::retransmitted`].
    pub ce: u64,
    /// The first steps (at most [`track::MAX_STEPS_KEPT`]).
    pub step_list: Vec<StepOut>,
    /// Rounds in which this connection was the straggler.
    pub straggler_rounds: u64,
}

/// One host's summary.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HostSummary {
    /// Address.
    pub host: String,
    /// Connections it sends on / receives on.
    pub sends: usize,
    /// See [`HostSummary::sends`].
    pub receives: usize,
    /// Bytes it sent / received.
    pub sent_bytes: u64,
    /// See [`HostSummary::sent_bytes`].
    pub received_bytes: u64,
    /// Bus bandwidth of the host as a sender, GB/s: the data bytes of its sending connections'
    /// completed steps over the union of their spans (earliest first CTS to latest last data
    /// packet, as for [`Connection::busbw_gbs`]).
    pub busbw_gbs: Option<f64>,
    /// busbw / the collective's factor, GB/s.
    pub algbw_gbs: Option<f64>,
    /// Rounds where its outgoing connection was the straggler (as sender) or where it was the
    /// late receiver.
    pub straggler_rounds: u64,
}

/// The `nccl` report (also its JSON document).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// Per capture.
    pub captures: Vec<CaptureSummary>,
    /// NCCL versions the connections' CTS layout and immediate order fit.
    pub nccl_version: String,
    /// Collective and ranks given.
    pub collective: Option<(Collective, u32)>,
    /// Connections.
    pub connections: Vec<Connection>,
    /// Rings per channel.
    pub rings: Vec<topology::Ring>,
    /// Trees per channel.
    pub trees: Vec<topology::Tree>,
    /// The slowest connection of every step round.
    pub stragglers: Vec<straggler::Straggler>,
    /// Per host.
    pub hosts: Vec<HostSummary>,
}

/// The NCCL versions that write `layout` and send immediates in `imm` order.
pub fn version_text(layout: Option<Layout>, imm: Option<ImmOrder>) -> String {
    match (layout, imm) {
        (Some(Layout::Size64), Some(ImmOrder::BigEndian)) => ">= 2.29".into(),
        (Some(Layout::Size64), Some(ImmOrder::LittleEndian)) => "2.26-2.28".into(),
        (Some(l), _) => l.versions().into(),
        (None, Some(o)) => o.versions().into(),
        (None, None) => "unknown".into(),
    }
}

/// Read one capture into a tracker.
fn read_capture(
    path: &str,
    cfg: &Config,
    dcfg: &DecodeConfig,
) -> Result<(CaptureSummary, Vec<Conn>)> {
    let shown = crate::source::file::shown(path);
    let mut src = FileSource::open(path).with_context(|| shown.to_string())?;
    if let Some(f) = &cfg.filter {
        src.set_filter(f).with_context(|| shown.to_string())?;
    }
    let linktype = src.linktype();
    let mut t = Tracker::default();
    let mut frames = 0;
    let (mut first_ns, mut last_ns) = (None, None);
    let read_error = loop {
        match src.next_record() {
            Ok(Some(rec)) => {
                frames += 1;
                first_ns.get_or_insert(rec.ts_ns);
                last_ns = Some(rec.ts_ns);
                let f = decode_frame(linktype, rec.data, rec.len, dcfg);
                if let Some(p) = f.roce() {
                    t.packet(p, rec.ts_ns);
                }
            }
            Ok(None) => break None,
            Err(e) => {
                let at = crate::source::file::after_frame(shown, src.frames_read());
                break Some(format!("{:#}", anyhow::Error::new(e).context(at)));
            }
        }
    };
    let (conns, counts) = t.finish_all();
    Ok((
        CaptureSummary {
            file: shown.to_string(),
            frames,
            roce: counts.roce,
            nccl: counts.nccl,
            other: counts.roce.saturating_sub(counts.nccl),
            connections: conns.len(),
            first_ns,
            last_ns,
            read_error,
        },
        conns,
    ))
}

/// Read every capture of `cfg` and build the report.
///
/// # Errors
/// A file that cannot be opened or read from its start, or a bad filter (one line naming it).
pub fn analyze(cfg: &Config) -> Result<Report> {
    let dcfg = DecodeConfig::with_ports(&cfg.roce_ports);
    let mut captures = Vec::new();
    // Merged by (sender, receiver, CTS or first data QP): the first capture's view is kept.
    let mut merged: Vec<(Conn, Vec<String>)> = Vec::new();
    let mut index: BTreeMap<(Address, Address, bool, u32), usize> = BTreeMap::new();
    for f in &cfg.files {
        let (summary, conns) = read_capture(f, cfg, &dcfg)?;
        for c in conns {
            let Some(qp) = c.cts_qp.or(c.data_qps.first().copied()) else {
                continue;
            };
            let key = (c.sender, c.receiver, c.cts_qp.is_some(), qp);
            match index.get(&key) {
                Some(&i) => merged[i].1.push(summary.file.clone()),
                None => {
                    index.insert(key, merged.len());
                    merged.push((c, vec![summary.file.clone()]));
                }
            }
        }
        captures.push(summary);
    }
    Ok(build(captures, merged, cfg.collective))
}

/// GB/s of `bytes` over `first..last` ns.
fn gbs(bytes: u64, first: u64, last: u64) -> Option<f64> {
    (last > first).then(|| bytes as f64 / (last - first) as f64)
}

fn build(
    captures: Vec<CaptureSummary>,
    merged: Vec<(Conn, Vec<String>)>,
    collective: Option<(Collective, u32)>,
) -> Report {
    let edges: Vec<topology::Edge> = merged
        .iter()
        .map(|(c, _)| topology::Edge {
            from: c.sender,
            to: c.receiver,
            qp: c.cts_qp.or(c.data_qps.first().copied()).unwrap_or(0),
            first_ns: c.steps.first().map_or(c.first_ns, |s| s.first_ns),
        })
        .collect();
    let (rings, trees, channels) = topology::find(&edges);
    let conns: Vec<&Conn> = merged.iter().map(|(c, _)| c).collect();
    let stragglers = straggler::rounds(&conns);
    let factor = collective.map(|(c, n)| c.factor(n));
    let mut connections: Vec<Connection> = merged
        .iter()
        .enumerate()
        .map(|(id, (c, caps))| connection(id, c, caps, channels[id], factor, &stragglers))
        .collect();
    connections.sort_by_key(|c| c.id);
    let hosts = hosts(&merged, &connections, factor, &stragglers);
    let layout = merged.iter().find_map(|(c, _)| c.layout);
    let imm = merged.iter().find_map(|(c, _)| c.imm);
    Report {
        captures,
        nccl_version: version_text(layout, imm),
        collective,
        connections,
        rings,
        trees,
        stragglers,
        hosts,
    }
}

fn connection(
    id: usize,
    c: &Conn,
    caps: &[String],
    channel: usize,
    factor: Option<f64>,
    stragglers: &[straggler::Straggler],
) -> Connection {
    let busbw = c.busy.and_then(|(a, b)| gbs(c.busbw_bytes, a, b));
    let mut sizes = c.sizes.clone();
    sizes.sort_unstable();
    Connection {
        id,
        sender: c.sender.to_string(),
        receiver: c.receiver.to_string(),
        data_qp: c.data_qps.first().copied(),
        cts_qp: c.cts_qp,
        qps: c.data_qps.clone(),
        channel,
        recognised: c.recognised,
        captures: caps.to_vec(),
        messages: c.messages,
        bytes: c.bytes,
        cts: c.cts,
        cts_entries: c.cts_entries,
        imm_equals_length: c.imm_equals_length,
        steps: c.steps_total,
        incomplete_steps: c.steps_incomplete,
        first_ns: c.first_ns,
        last_ns: c.last_ns,
        cts_layout: c.layout,
        immediate: c.imm,
        nccl_version: version_text(c.layout, c.imm),
        protocol: c.protocol,
        tag: c.tag,
        sizes,
        wait_mean_ns: c.wait.mean(),
        wait_max_ns: (c.wait.n > 0).then_some(c.wait.max),
        data_mean_ns: c.data.mean(),
        data_max_ns: (c.data.n > 0).then_some(c.data.max),
        busbw_gbs: busbw,
        algbw_gbs: busbw.zip(factor).map(|(b, f)| b / f),
        retransmitted: c.retransmitted,
        cnps: c.cnps,
        naks: c.naks,
        ce: c.ce,
        step_list: c.steps.iter().map(step_out).collect(),
        straggler_rounds: stragglers.iter().filter(|s| s.connection == id).count() as u64,
    }
}

fn step_out(s: &track::Step) -> StepOut {
    let data_ns = s.last_ns.saturating_sub(s.first_ns);
    StepOut {
        idx: s.idx,
        cts_ns: s.cts_ns,
        wait_ns: s.cts_ns.map(|c| s.first_ns.saturating_sub(c)),
        first_ns: s.first_ns,
        data_ns,
        bytes: s.bytes,
        gbps: (data_ns > 0).then(|| s.bytes as f64 * 8.0 / data_ns as f64),
        retransmitted: s.retransmitted,
        cnps: s.cnps,
        ce: s.ce,
    }
}

fn hosts(
    merged: &[(Conn, Vec<String>)],
    conns: &[Connection],
    factor: Option<f64>,
    stragglers: &[straggler::Straggler],
) -> Vec<HostSummary> {
    let mut all: Vec<Address> = merged
        .iter()
        .flat_map(|(c, _)| [c.sender, c.receiver])
        .collect();
    all.sort_unstable();
    all.dedup();
    all.iter()
        .map(|&h| {
            let out: Vec<&Conn> = merged
                .iter()
                .map(|(c, _)| c)
                .filter(|c| c.sender == h)
                .collect();
            let inn = merged.iter().filter(|(c, _)| c.receiver == h);
            let sent: u64 = out.iter().map(|c| c.bytes).sum();
            let done: u64 = out.iter().map(|c| c.busbw_bytes).sum();
            let first = out.iter().filter_map(|c| c.busy).map(|b| b.0).min();
            let last = out.iter().filter_map(|c| c.busy).map(|b| b.1).max();
            let busbw = first.zip(last).and_then(|(f, l)| gbs(done, f, l));
            let name = h.to_string();
            HostSummary {
                sends: out.len(),
                receives: inn.clone().count(),
                sent_bytes: sent,
                received_bytes: inn.map(|(c, _)| c.bytes).sum(),
                busbw_gbs: busbw,
                algbw_gbs: busbw.zip(factor).map(|(b, f)| b / f),
                straggler_rounds: stragglers
                    .iter()
                    .filter(|s| {
                        let c = &conns[s.connection];
                        match s.cause {
                            straggler::Cause::Receiver => c.receiver == name,
                            _ => c.sender == name,
                        }
                    })
                    .count() as u64,
                host: name,
            }
        })
        .collect()
}
