//! The client's send loop: keep `--tx-depth` WRITEs outstanding on each QP, poll the CQ,
//! measure completion latency, print progress.
//!
//! Every WRITE is signalled, so each has a completion and a latency sample (perftest signals
//! every 100th for its bandwidth tests; the difference is small on real NICs). RC completions
//! arrive in order per QP, so the post times are a FIFO per QP.

use std::collections::VecDeque;
use std::io::{IsTerminal, Write as _};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use super::verbs::{Cq, Qp, Wc, Write};
use super::wc_status;
use super::wire::QpInfo;

/// Completions polled per `ibv_poll_cq` call (perftest `CTX_POLL_BATCH`).
pub const POLL_BATCH: usize = 16;

/// Latency samples kept; past this a uniform reservoir sample is kept (bounded memory).
pub const MAX_SAMPLES: usize = 1 << 20;

const QP_SHIFT: u32 = 48;

/// What to send.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Bytes per WRITE.
    pub size: u32,
    /// WRITEs per QP, when no deadline.
    pub iters: u64,
    /// Stop posting after this long instead.
    pub duration: Option<Duration>,
    /// Outstanding WRITEs per QP.
    pub tx_depth: u32,
    /// WRITE WITH IMMEDIATE (the immediate is the per-QP sequence number).
    pub imm: bool,
    /// Print a progress line on a terminal.
    pub progress: bool,
}

/// What happened.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Successful completions.
    pub messages: u64,
    /// From the first post to the last completion.
    pub elapsed: Duration,
    /// Completion latencies (possibly a reservoir sample).
    pub latencies: Vec<Duration>,
}

struct PerQp {
    posted: u64,
    completed: u64,
    times: VecDeque<Instant>,
}

/// Bounded uniform sample (Algorithm R) with a small xorshift generator.
struct Reservoir {
    samples: Vec<Duration>,
    seen: u64,
    rng: u64,
}

impl Reservoir {
    fn new() -> Reservoir {
        Reservoir {
            samples: Vec::new(),
            seen: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
        }
    }

    fn add(&mut self, d: Duration) {
        self.seen += 1;
        if self.samples.len() < MAX_SAMPLES {
            self.samples.push(d);
            return;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let j = self.rng % self.seen;
        if let Ok(j) = usize::try_from(j) {
            if j < MAX_SAMPLES {
                self.samples[j] = d;
            }
        }
    }
}

/// Runs the traffic on connected QPs (in RTS). `remote[i]` is QP `i`'s target slice.
pub fn run(
    qps: &[Qp],
    cq: &Cq,
    local_addr: u64,
    lkey: u32,
    remote: &[QpInfo],
    plan: &Plan,
) -> Result<Outcome> {
    let mut st: Vec<PerQp> = qps
        .iter()
        .map(|_| PerQp {
            posted: 0,
            completed: 0,
            times: VecDeque::with_capacity(plan.tx_depth as usize),
        })
        .collect();
    let mut wcs: Vec<Wc> = (0..POLL_BATCH).map(|_| Wc::zeroed()).collect();
    let mut lat = Reservoir::new();
    let mut messages = 0u64;
    let start = Instant::now();
    let deadline = plan.duration.map(|d| start + d);
    let mut last_progress = start;
    let mut last_done = start;
    let progress = plan.progress && std::io::stderr().is_terminal();
    loop {
        let now = Instant::now();
        let stop = deadline.is_some_and(|d| now >= d);
        let limit = if plan.duration.is_some() {
            u64::MAX
        } else {
            plan.iters
        };
        for (i, (qp, s)) in qps.iter().zip(st.iter_mut()).enumerate() {
            while !stop && s.posted < limit && s.posted - s.completed < u64::from(plan.tx_depth) {
                qp.post_write(&Write {
                    wr_id: ((i as u64) << QP_SHIFT) | (s.posted & ((1 << QP_SHIFT) - 1)),
                    local_addr,
                    len: plan.size,
                    lkey,
                    remote_addr: remote[i].addr,
                    rkey: remote[i].rkey,
                    imm: plan.imm.then_some(s.posted as u32),
                    signaled: true,
                })?;
                s.times.push_back(Instant::now());
                s.posted += 1;
            }
        }
        let n = cq.poll(&mut wcs)?;
        let now = Instant::now();
        for wc in &wcs[..n] {
            let qi = (wc.wr_id() >> QP_SHIFT) as usize;
            if wc.status() != 0 {
                bail!(
                    "RDMA WRITE failed on QP {qi} (QPN {:#x}, WR {}): {} (vendor error {:#x})",
                    wc.qp_num(),
                    wc.wr_id() & ((1 << QP_SHIFT) - 1),
                    wc_status::describe(wc.status()),
                    wc.vendor_err()
                );
            }
            let Some(s) = st.get_mut(qi) else {
                bail!("completion with unknown wr_id {:#x}", wc.wr_id());
            };
            if let Some(t) = s.times.pop_front() {
                lat.add(now.duration_since(t));
            }
            s.completed += 1;
            messages += 1;
            last_done = now;
        }
        let finished = st
            .iter()
            .all(|s| s.completed == s.posted && (stop || s.posted >= limit));
        if finished {
            break;
        }
        if progress && now.duration_since(last_progress) >= Duration::from_secs(1) {
            last_progress = now;
            let secs = now.duration_since(start).as_secs_f64();
            let gbps = messages as f64 * f64::from(plan.size) * 8.0 / secs / 1e9;
            eprint!("\r{secs:7.1} s  {messages:>12} WRITEs  {gbps:8.3} Gb/s ");
            let _ = std::io::stderr().flush();
        }
    }
    if progress && last_progress != start {
        eprintln!();
    }
    Ok(Outcome {
        messages,
        elapsed: last_done.duration_since(start),
        latencies: lat.samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservoir_is_bounded_and_keeps_everything_below_the_cap() {
        let mut r = Reservoir::new();
        for i in 0..1000u64 {
            r.add(Duration::from_nanos(i));
        }
        assert_eq!(r.samples.len(), 1000);
        assert_eq!(r.samples[999], Duration::from_nanos(999));
        let mut r = Reservoir::new();
        for i in 0..(MAX_SAMPLES as u64 + 5000) {
            r.add(Duration::from_nanos(i));
        }
        assert_eq!(r.samples.len(), MAX_SAMPLES);
        assert_eq!(r.seen, MAX_SAMPLES as u64 + 5000);
        // Some late samples replaced early ones.
        assert!(
            r.samples
                .iter()
                .any(|d| d.as_nanos() >= MAX_SAMPLES as u128)
        );
    }
}
