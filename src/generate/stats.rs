//! Results of a run: bandwidth, message rate and completion-latency percentiles, and the
//! per-QP lines printed before the traffic starts.
//!
//! Bandwidth is payload only, in Gb/s (10⁹ bit/s) as perftest's `--report_gbits` prints it;
//! headers (BTH, RETH, UDP/IP, Ethernet, ICRC) are not counted. Latency is per signalled work
//! request, from `ibv_post_send` to its completion being polled, so it includes the time the WR
//! waited behind up to `--tx-depth` others.

use std::time::Duration;

use crate::output::fit::{Cell, Grid};
use serde::Serialize;

use super::gid::Gid;
use super::mtu::Mtu;
use super::wire::QpInfo;

/// What a user looks for in the capture for one QP, before the traffic starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct QpLine {
    /// Index of the QP (0..`--qps`).
    pub qp: usize,
    /// Local QPN (the BTH DestQP of the packets the peer sends, e.g. ACKs).
    pub local_qpn: u32,
    /// Remote QPN (the BTH DestQP of our WRITE packets).
    pub remote_qpn: u32,
    /// First PSN this side sends.
    pub local_psn: u32,
    /// First PSN the peer sends.
    pub remote_psn: u32,
    /// Source GID (IP source address of our packets).
    pub local_gid: String,
    /// Destination GID.
    pub remote_gid: String,
    /// Path MTU in bytes.
    pub mtu: u32,
    /// The remote address our first WRITE targets (RETH VA).
    pub remote_addr: u64,
    /// The remote key (RETH R_Key).
    pub rkey: u32,
}

impl QpLine {
    /// Builds the line from the two sides' parameters.
    pub fn new(qp: usize, local: &QpInfo, remote: &QpInfo, mtu: Mtu) -> QpLine {
        QpLine {
            qp,
            local_qpn: local.qpn,
            remote_qpn: remote.qpn,
            local_psn: local.psn,
            remote_psn: remote.psn,
            local_gid: gid_text(local.gid),
            remote_gid: gid_text(remote.gid),
            mtu: mtu.bytes(),
            remote_addr: remote.addr,
            rkey: remote.rkey,
        }
    }

    /// One human-readable line.
    pub fn text(&self) -> String {
        format!(
            "qp {}: local QPN {:#08x} PSN {:#08x} GID {} -> remote QPN {:#08x} PSN {:#08x} GID {}, \
             MTU {}, rkey {:#010x}, remote addr {:#x}",
            self.qp,
            self.local_qpn,
            self.local_psn,
            self.local_gid,
            self.remote_qpn,
            self.remote_psn,
            self.remote_gid,
            self.mtu,
            self.rkey,
            self.remote_addr
        )
    }
}

fn gid_text(g: Gid) -> String {
    match g.to_ipv4_mapped() {
        Some(v4) => format!("{g} ({v4})"),
        None => g.to_string(),
    }
}

/// Completion-latency percentiles in microseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Latency {
    /// Smallest.
    pub min_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Largest.
    pub max_us: f64,
}

/// Nearest-rank percentile (`p` in 0..=100) of sorted samples; `None` when empty.
pub fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

impl Latency {
    /// Percentiles of `samples` (sorted in place); `None` when empty.
    pub fn from_samples(samples: &mut [Duration]) -> Option<Latency> {
        samples.sort_unstable();
        let us = |p: f64| percentile(samples, p).map_or(0.0, |d| d.as_secs_f64() * 1e6);
        if samples.is_empty() {
            return None;
        }
        Some(Latency {
            min_us: us(0.0),
            p50_us: us(50.0),
            p90_us: us(90.0),
            p99_us: us(99.0),
            p999_us: us(99.9),
            max_us: us(100.0),
        })
    }
}

/// The end-of-run summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// "write" or "write_with_imm".
    pub operation: &'static str,
    /// Number of QPs.
    pub qps: usize,
    /// Bytes per WRITE.
    pub size: u64,
    /// WRITEs completed successfully.
    pub messages: u64,
    /// Payload bytes written.
    pub bytes: u64,
    /// Wall time from the first post to the last completion, in seconds.
    pub seconds: f64,
    /// Payload bandwidth in Gb/s (10⁹ bit/s).
    pub gbit_per_s: f64,
    /// Completed WRITEs per second, in millions.
    pub mmsg_per_s: f64,
    /// Completion latency, absent when nothing completed.
    pub latency: Option<Latency>,
}

impl Summary {
    /// Computes rates from totals. A zero duration gives zero rates.
    pub fn new(
        operation: &'static str,
        qps: usize,
        size: u64,
        messages: u64,
        elapsed: Duration,
        latencies: &mut [Duration],
    ) -> Summary {
        let seconds = elapsed.as_secs_f64();
        let bytes = messages.saturating_mul(size);
        let (gbit_per_s, mmsg_per_s) = if seconds > 0.0 {
            (
                bytes as f64 * 8.0 / seconds / 1e9,
                messages as f64 / seconds / 1e6,
            )
        } else {
            (0.0, 0.0)
        };
        Summary {
            operation,
            qps,
            size,
            messages,
            bytes,
            seconds,
            gbit_per_s,
            mmsg_per_s,
            latency: Latency::from_samples(latencies),
        }
    }

    /// The summary as a table.
    pub fn table(&self) -> Grid {
        let mut t = Grid::new(false, &["metric", "value"]);
        t.add_row(row("operation", self.operation.to_string()));
        t.add_row(row("QPs", self.qps.to_string()));
        t.add_row(row("message size (B)", self.size.to_string()));
        t.add_row(row("messages", self.messages.to_string()));
        t.add_row(row("bytes", self.bytes.to_string()));
        t.add_row(row("time (s)", format!("{:.3}", self.seconds)));
        t.add_row(row("bandwidth (Gb/s)", format!("{:.3}", self.gbit_per_s)));
        t.add_row(row(
            "message rate (Mmsg/s)",
            format!("{:.4}", self.mmsg_per_s),
        ));
        if let Some(l) = &self.latency {
            for (name, v) in [
                ("latency min (µs)", l.min_us),
                ("latency p50 (µs)", l.p50_us),
                ("latency p90 (µs)", l.p90_us),
                ("latency p99 (µs)", l.p99_us),
                ("latency p99.9 (µs)", l.p999_us),
                ("latency max (µs)", l.max_us),
            ] {
                t.add_row(row(name, format!("{v:.2}")));
            }
        }
        t
    }
}

/// A row of the summary table: a metric and its value, left-aligned.
fn row(metric: &str, value: String) -> Vec<Cell> {
    vec![Cell::new(metric), Cell::new(value)]
}

/// The `--json` document: the QP lines and the summary (client), or the QP lines and the
/// client's totals (server).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// "client" or "server".
    pub role: &'static str,
    /// RDMA device name.
    pub device: String,
    /// Port number.
    pub port: u8,
    /// GID index used.
    pub gid_index: u32,
    /// Where the buffer lives: "host" or "gpu N (dma-buf)" / "gpu N (peermem)".
    pub memory: String,
    /// One entry per QP.
    pub qps: Vec<QpLine>,
    /// The client's results (client only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// What the client reported at the end (server only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received: Option<Received>,
}

/// The server's end-of-run totals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Received {
    /// WRITEs the client completed.
    pub messages: u64,
    /// Payload bytes the client wrote.
    pub bytes: u64,
    /// WRITE WITH IMMEDIATE receive completions counted here (with `--imm` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immediates: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: u64) -> Duration {
        Duration::from_micros(v)
    }

    #[test]
    fn nearest_rank() {
        let s: Vec<Duration> = (1..=100).map(us).collect();
        assert_eq!(percentile(&s, 0.0), Some(us(1)));
        assert_eq!(percentile(&s, 50.0), Some(us(50)));
        assert_eq!(percentile(&s, 90.0), Some(us(90)));
        assert_eq!(percentile(&s, 99.0), Some(us(99)));
        assert_eq!(percentile(&s, 99.9), Some(us(100)));
        assert_eq!(percentile(&s, 100.0), Some(us(100)));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[us(7)], 99.9), Some(us(7)));
    }

    #[test]
    fn summary_rates() {
        let mut lat: Vec<Duration> = (1..=1000).rev().map(us).collect();
        let s = Summary::new("write", 2, 65536, 10_000, Duration::from_secs(2), &mut lat);
        assert_eq!(s.bytes, 655_360_000);
        assert!((s.gbit_per_s - 2.62144).abs() < 1e-9, "{}", s.gbit_per_s);
        assert!((s.mmsg_per_s - 0.005).abs() < 1e-12);
        let l = s.latency.clone().unwrap();
        assert_eq!(
            (l.min_us, l.p50_us, l.p99_us, l.max_us),
            (1.0, 500.0, 990.0, 1000.0)
        );
        let text = s.table().to_string();
        assert!(text.contains("bandwidth (Gb/s)"), "{text}");
        assert!(text.contains("2.621"), "{text}");
        assert!(text.contains("latency p99 (µs)"), "{text}");
        let j = serde_json::to_value(&s).unwrap();
        assert_eq!(j["messages"], 10_000);
        assert_eq!(j["latency"]["p50_us"], 500.0);
    }

    #[test]
    fn zero_time_and_no_samples() {
        let s = Summary::new("write_with_imm", 1, 8, 0, Duration::ZERO, &mut []);
        assert_eq!((s.gbit_per_s, s.mmsg_per_s), (0.0, 0.0));
        assert_eq!(s.latency, None);
        assert!(!s.table().to_string().contains("latency"));
    }

    #[test]
    fn report_json_shapes() {
        let server = Report {
            role: "server",
            device: "rxe0".into(),
            port: 1,
            gid_index: 3,
            memory: "host".into(),
            qps: vec![],
            summary: None,
            received: Some(Received {
                messages: 5000,
                bytes: 5000 * 65536,
                immediates: None,
            }),
        };
        let j = serde_json::to_value(&server).unwrap();
        assert_eq!(j["role"], "server");
        assert_eq!(j["gid_index"], 3);
        assert_eq!(j["received"]["messages"], 5000);
        assert!(j["received"].get("immediates").is_none());
        assert!(j.get("summary").is_none());
        let client = Report {
            role: "client",
            received: None,
            summary: Some(Summary::new(
                "write",
                1,
                8,
                1,
                Duration::from_secs(1),
                &mut [],
            )),
            ..server
        };
        let j = serde_json::to_value(&client).unwrap();
        assert_eq!(j["summary"]["operation"], "write");
        assert_eq!(j["summary"]["latency"], serde_json::Value::Null);
        assert!(j.get("received").is_none());
    }

    #[test]
    fn qp_line_text() {
        let local = QpInfo {
            qpn: 0x11,
            psn: 0xabcdef,
            rkey: 0,
            addr: 0,
            len: 0,
            gid: "::ffff:192.168.1.1".parse().unwrap(),
        };
        let remote = QpInfo {
            qpn: 0x12,
            psn: 0x1,
            rkey: 0x1234,
            addr: 0x7f00_0000_1000,
            len: 4096,
            gid: "::ffff:192.168.1.2".parse().unwrap(),
        };
        let l = QpLine::new(0, &local, &remote, Mtu::M1024);
        assert_eq!(
            l.text(),
            "qp 0: local QPN 0x000011 PSN 0xabcdef GID 0000:0000:0000:0000:0000:ffff:c0a8:0101 \
             (192.168.1.1) -> remote QPN 0x000012 PSN 0x000001 GID \
             0000:0000:0000:0000:0000:ffff:c0a8:0102 (192.168.1.2), MTU 1024, rkey 0x00001234, \
             remote addr 0x7f0000001000"
        );
    }
}
