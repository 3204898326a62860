//! The plots' view of a capture: a [`Tap`] that keeps, per flow, the analysis events the plots
//! draw, within fixed memory bounds (ordinary points are thinned by a doubling stride, rate bins
//! are coarsened by doubling their width, marker lists are capped and the cap is reported).

use crate::analyze::message::MessageStatus;
use crate::analyze::psn::PsnVerdict;
use crate::analyze::tap::{PsnSpace, Tap, TapEvent};
use crate::decode::{AethKind, NakCode};

/// Most ordinary points (first transmissions, ACKs) kept per flow and series.
const MAX_POINTS: usize = 1 << 16;
/// Most markers of one kind kept per flow; further ones are counted in `dropped`.
pub const MAX_MARKS: usize = 1 << 18;
/// Most rate bins across the capture before all bins double their width (bins are stored
/// sparsely, only where a flow sent something): fine enough that a decimal `--bin` is a whole
/// number of them in practice.
const MAX_BINS: u64 = 65_536;
/// Most latency samples or messages kept per flow.
const MAX_SAMPLES: usize = 1 << 14;

/// A series of (time ns, value) points thinned to at most `MAX_POINTS` (65,536) by keeping every
/// `stride`-th point, the stride doubling when the series is full.
#[derive(Clone, Debug, Default)]
pub struct Thinned {
    /// The kept points, in arrival order.
    pub pts: Vec<(u64, u32)>,
    /// Keep one point in `stride` (1 at first).
    pub stride: u64,
    /// Points still to skip before the next one kept.
    skip: u64,
    /// Points pushed, kept or not.
    pub seen: u64,
}

impl Thinned {
    fn push(&mut self, ts: u64, v: u32) {
        self.seen += 1;
        if self.skip > 0 {
            self.skip -= 1;
            return;
        }
        if self.pts.len() >= MAX_POINTS {
            let mut k = 0;
            self.pts.retain(|_| {
                k += 1;
                k % 2 == 1
            });
            self.stride = self.stride.max(1) * 2;
        }
        self.pts.push((ts, v));
        self.skip = self.stride.max(1) - 1;
    }
}

/// Markers of one kind, capped at [`MAX_MARKS`].
#[derive(Clone, Debug)]
pub struct Marks<T> {
    /// The kept markers.
    pub v: Vec<T>,
    /// Markers not kept because of the cap.
    pub dropped: u64,
}

impl<T> Default for Marks<T> {
    fn default() -> Self {
        Marks {
            v: Vec::new(),
            dropped: 0,
        }
    }
}

impl<T> Marks<T> {
    fn push(&mut self, t: T) {
        if self.v.len() < MAX_MARKS {
            self.v.push(t);
        } else {
            self.dropped += 1;
        }
    }
}

/// One rate bin of a flow.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bin {
    /// Bin index (`(ts − t0) / width`).
    pub idx: u64,
    /// Payload bytes.
    pub payload: u64,
    /// Transport bytes (BTH through ICRC).
    pub transport: u64,
    /// Packets with an ECN field… counted here: all non-CNP packets.
    pub packets: u32,
    /// CE-marked packets.
    pub ce: u32,
}

/// A NAK or RNR NAK marker.
#[derive(Clone, Copy, Debug)]
pub struct NakMark {
    /// Time, ns.
    pub ts: u64,
    /// AETH PSN (24 bits).
    pub psn: u32,
    /// NAK code 0–4 (IBTA Table 43), 5 for reserved codes, [`RNR`] for an RNR NAK.
    pub code: u8,
}

/// [`NakMark::code`] of an RNR NAK.
pub const RNR: u8 = 6;

/// One message bar.
#[derive(Clone, Copy, Debug)]
pub struct MsgBar {
    /// First packet (READ: the request) time, ns.
    pub start: u64,
    /// Last packet time, ns.
    pub end: u64,
    /// Payload bytes.
    pub bytes: u64,
    /// `SEND`, `WRITE`, `READ`, `ATOMIC`.
    pub kind: &'static str,
    /// PSN of the message's first packet (24 bits), to find it again when a later fatal NAK
    /// settles its status.
    pub psn: u32,
    /// Refused by the responder (a fatal NAK), incomplete, or DMA length mismatch.
    pub failed: bool,
}

/// Everything kept of one flow.
#[derive(Clone, Debug, Default)]
pub struct FlowTrace {
    /// PSNs of packets in sequence (first transmissions), both PSN spaces.
    pub sent: Thinned,
    /// Retransmitted packets (PSN verdict `Behind`): time, PSN.
    pub retx: Marks<(u64, u32)>,
    /// Packets revealing a gap (verdict `Ahead`): time, expected PSN, received PSN.
    pub gaps: Marks<(u64, u32, u32)>,
    /// CE-marked packets: time, PSN.
    pub ce: Marks<(u64, u32)>,
    /// ACKs answering this flow: time, AETH PSN.
    pub acks: Thinned,
    /// NAKs answering this flow (or carried by it when its requester is unknown).
    pub naks: Marks<NakMark>,
    /// CNP arrival times for this flow as the notified sender (or as the CNP flow when the
    /// target is unknown), ns.
    pub cnps: Marks<u64>,
    /// Rate bins in time order.
    pub bins: Vec<Bin>,
    /// ACK RTT samples, ns.
    pub rtt: Marks<u64>,
    /// READ latencies (request → last response), ns.
    pub read_latency: Marks<u64>,
    /// Completed messages.
    pub msgs: Marks<MsgBar>,
}

/// The recorded trace of a whole capture.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Per flow, by flow index.
    pub flows: Vec<FlowTrace>,
    /// Time of the first event, ns.
    pub t0: Option<u64>,
    /// Rate bin width, ns (a power of two times 1 µs).
    pub bin_ns: u64,
}

impl Trace {
    fn flow(&mut self, i: usize) -> &mut FlowTrace {
        if self.flows.len() <= i {
            self.flows.resize_with(i + 1, FlowTrace::default);
        }
        &mut self.flows[i]
    }

    fn bin(&mut self, flow: usize, ts: u64, payload: u32, transport: u64, ce: bool) {
        let t0 = *self.t0.get_or_insert(ts);
        if self.bin_ns == 0 {
            self.bin_ns = 1000;
        }
        while ts.saturating_sub(t0) / self.bin_ns >= MAX_BINS {
            self.coarsen();
        }
        let idx = ts.saturating_sub(t0) / self.bin_ns;
        let bins = &mut self.flow(flow).bins;
        let b = match bins.last_mut() {
            Some(b) if b.idx >= idx => b,
            _ => {
                bins.push(Bin {
                    idx,
                    ..Bin::default()
                });
                bins.last_mut().expect("just pushed")
            }
        };
        b.payload += u64::from(payload);
        b.transport += transport;
        b.packets += 1;
        b.ce += u32::from(ce);
    }

    /// Double the bin width, merging neighbours.
    fn coarsen(&mut self) {
        self.bin_ns *= 2;
        for f in &mut self.flows {
            let mut out: Vec<Bin> = Vec::with_capacity(f.bins.len());
            for b in &f.bins {
                let idx = b.idx / 2;
                match out.last_mut() {
                    Some(o) if o.idx == idx => {
                        o.payload += b.payload;
                        o.transport += b.transport;
                        o.packets += b.packets;
                        o.ce += b.ce;
                    }
                    _ => out.push(Bin { idx, ..*b }),
                }
            }
            f.bins = out;
        }
    }

    fn nak(&mut self, flow: usize, ts: u64, psn: u32, kind: AethKind) {
        let code = match kind {
            AethKind::Ack { .. } => return,
            AethKind::RnrNak { .. } => RNR,
            AethKind::Nak(NakCode::PsnSeqErr) => 0,
            AethKind::Nak(NakCode::InvalidRequest) => 1,
            AethKind::Nak(NakCode::RemoteAccess) => 2,
            AethKind::Nak(NakCode::RemoteOp) => 3,
            AethKind::Nak(NakCode::InvalidRd) => 4,
            AethKind::Nak(NakCode::Reserved(_)) | AethKind::Reserved => 5,
        };
        self.flow(flow).naks.push(NakMark { ts, psn, code });
    }

    /// Account one event.
    pub fn event(&mut self, ev: &TapEvent<'_>) {
        match *ev {
            TapEvent::Packet {
                flow,
                ts_ns,
                psn,
                payload_bytes,
                transport_bytes,
                ce,
                cnp,
            } => {
                if !cnp {
                    self.bin(flow, ts_ns, payload_bytes, transport_bytes, ce);
                }
                if ce {
                    self.flow(flow).ce.push((ts_ns, psn));
                }
            }
            TapEvent::Psn {
                flow,
                ts_ns,
                psn,
                space,
                verdict,
            } => {
                let f = self.flow(flow);
                match verdict {
                    // A UD duplicate is not a retransmission (UD never retransmits).
                    PsnVerdict::Behind { .. } if space != PsnSpace::Ud => f.retx.push((ts_ns, psn)),
                    PsnVerdict::Ahead { expected, .. } => {
                        f.gaps.push((ts_ns, expected, psn));
                        f.sent.push(ts_ns, psn);
                    }
                    _ => f.sent.push(ts_ns, psn),
                }
            }
            TapEvent::Aeth {
                flow,
                requester,
                ts_ns,
                psn,
                kind,
                acknowledge,
            } => {
                let owner = requester.unwrap_or(flow);
                if matches!(kind, AethKind::Ack { .. }) {
                    if acknowledge && requester.is_some() {
                        self.flow(owner).acks.push(ts_ns, psn);
                    }
                } else {
                    self.nak(owner, ts_ns, psn, kind);
                }
            }
            TapEvent::Cnp {
                flow,
                target,
                ts_ns,
            } => self.flow(target.unwrap_or(flow)).cnps.push(ts_ns),
            TapEvent::AckRtt { flow, rtt_ns, .. } => {
                let f = self.flow(flow);
                if f.rtt.v.len() < MAX_SAMPLES {
                    f.rtt.push(rtt_ns);
                }
            }
            TapEvent::InMessage { .. } => {}
            TapEvent::MessageStatus {
                flow,
                first_psn,
                status,
            } => {
                let f = self.flow(flow);
                if let Some(b) = f.msgs.v.iter_mut().rev().find(|b| b.psn == first_psn) {
                    b.failed = status != MessageStatus::Ok;
                }
            }
            TapEvent::Message(m) => {
                let f = self.flow(m.flow);
                if let Some(l) = m.read_latency_ns
                    && f.read_latency.v.len() < MAX_SAMPLES
                {
                    f.read_latency.push(l);
                }
                if f.msgs.v.len() < MAX_SAMPLES {
                    f.msgs.push(MsgBar {
                        start: m.request_ts_ns.unwrap_or(m.start_ts_ns),
                        end: m.end_ts_ns,
                        bytes: m.bytes,
                        kind: m.kind.name(),
                        psn: m.first_psn,
                        failed: m.status != MessageStatus::Ok || !m.complete || m.dma_len_mismatch,
                    });
                } else {
                    f.msgs.dropped += 1;
                }
            }
        }
    }
}

/// A [`Tap`] filling a [`Trace`]: set it on the analyzer, then take it back with
/// [`Recorder::from_tap`].
#[derive(Clone, Debug, Default)]
pub struct Recorder(pub Trace);

impl Recorder {
    /// The trace of a tap taken back from the analyzer (`Analyzer::take_tap`); an empty one
    /// when the tap is not a `Recorder`.
    pub fn from_tap(tap: Option<Box<dyn Tap>>) -> Trace {
        tap.and_then(|t| t.into_any().downcast::<Recorder>().ok())
            .map(|r| r.0)
            .unwrap_or_default()
    }
}

impl Tap for Recorder {
    fn event(&mut self, ev: &TapEvent<'_>) {
        self.0.event(ev);
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_is_bounded_and_even() {
        let mut t = Thinned::default();
        let n = 10 * MAX_POINTS as u64 + 7;
        for i in 0..n {
            t.push(i, i as u32);
        }
        assert!(
            t.pts.len() <= MAX_POINTS && t.pts.len() > MAX_POINTS / 2,
            "{}",
            t.pts.len()
        );
        assert_eq!(t.pts[0], (0, 0), "the first point is kept");
        assert_eq!(t.stride, 16);
        // Kept points stay in order, at most two strides apart, and reach the end.
        assert!(
            t.pts
                .windows(2)
                .all(|w| w[1].0 > w[0].0 && w[1].0 - w[0].0 <= 2 * t.stride)
        );
        assert!(t.pts.last().is_some_and(|p| n - p.0 <= t.stride));
    }

    #[test]
    fn bins_coarsen_and_keep_every_byte() {
        let mut tr = Trace::default();
        let span = 3 * MAX_BINS * 1000;
        for k in 0..1000u64 {
            tr.bin(0, k * span / 1000, 10, 20, k % 2 == 0);
        }
        assert!(tr.bin_ns >= 4000, "{}", tr.bin_ns);
        let b = &tr.flows[0].bins;
        assert_eq!(b.iter().map(|b| b.payload).sum::<u64>(), 10_000);
        assert_eq!(b.iter().map(|b| b.transport).sum::<u64>(), 20_000);
        assert_eq!(b.iter().map(|b| u64::from(b.ce)).sum::<u64>(), 500);
        assert!(b.windows(2).all(|w| w[0].idx < w[1].idx));
        assert!(b.last().is_some_and(|l| l.idx < MAX_BINS));
    }
}
