//! `top`'s display filter (`/`, `top -Y EXPR`): which packets the flow table counts.
//!
//! As `read -Y` (whose reports cover every packet), the analysis still sees every frame: the
//! analysis columns (retx, gaps, NAKs, RNR, CE %, CNPs, ACK RTT) and the findings are the
//! whole flow's. The filter decides which flows have a row (those with at least one packet it
//! passes) and what the `packets` and `Gb/s` columns count (the packets it passes), and which
//! packets the detail view lists.
//!
//! A filter applied while `top` runs counts the frames still kept for `w` (`--keep`) again,
//! as Wireshark refilters a capture, then every new frame; when older frames were no longer
//! kept, its counts begin at the oldest kept one ([`Shown::from_frame`]).
//!
//! Fields are the display filter's (`crate::filter`, `--list-fields`), tested on each frame's
//! decoded form. A filter that reads `analysis.*` fields gets each frame's marks from an
//! analysis of its own ([`Marker`]) that starts with the first frame the filter tests: from
//! the start (`-Y`) they are `read -Y`'s marks; applied later, that analysis begins at the
//! oldest frame kept, so a PSN sent before it is not known as sent. A NAK's late mark
//! (`analysis.naked` on packets before the NAK) reaches only the packets after it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::analyze::flow::FlowKey;
use crate::analyze::live::LiveFlow;
use crate::analyze::marks::{MarkState, MarkTap, Marks};
use crate::analyze::{AnalyzeConfig, Analyzer};
use crate::decode::Frame;
use crate::filter::fields::Pkt;
use crate::filter::{DisplayFilter, FilterError};
use crate::output::FrameCtx;
use crate::source::Record;

/// Compile `expr` for `top`: the display filter's language, `read -Y`'s errors.
///
/// # Errors
/// The compiler's error (column and expectation, as `read -Y` reports it).
pub fn compile(expr: &str) -> Result<Arc<DisplayFilter>, FilterError> {
    DisplayFilter::compile(expr).map(Arc::new)
}

/// Each frame's analysis marks (`analysis.*`) for a filter that reads them: an analysis of
/// the frames the filter tests, tapped as `read --marks` taps its analysis.
pub struct Marker {
    analyzer: Analyzer,
    state: Arc<Mutex<MarkState>>,
}

impl Marker {
    /// A new analysis with settings `cfg` (messages not kept).
    pub fn new(cfg: &AnalyzeConfig) -> Marker {
        let mut analyzer = Analyzer::new(AnalyzeConfig {
            keep_messages: false,
            ..cfg.clone()
        });
        let state = Arc::new(Mutex::new(MarkState::default()));
        analyzer.set_tap(Box::new(MarkTap {
            state: Arc::clone(&state),
            inner: None,
        }));
        Marker { analyzer, state }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, MarkState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Analyse frame `number` (captured at `ts_ns`) and give its marks.
    pub fn marks(&mut self, number: u64, ts_ns: u64, frame: &Frame<'_>) -> Marks {
        self.state().begin(number);
        self.analyzer.push(number, ts_ns, frame);
        self.state().marks
    }
}

impl std::fmt::Debug for Marker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Marker")
    }
}

/// Counts of the packets of one flow the filter passed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Packets.
    pub packets: u64,
    /// Transport bytes (BTH through ICRC), bytes, as the analysis counts them.
    pub transport_bytes: u64,
    /// Payload bytes.
    pub payload_bytes: u64,
}

/// What an active filter passed so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shown {
    /// The filter as typed.
    pub expr: String,
    /// Frames it passed (RoCE or not).
    pub frames: u64,
    /// The first frame it was tested on, when frames before it were no longer kept when the
    /// filter was applied (`None`: it saw every frame).
    pub from_frame: Option<u64>,
    /// Per flow (the analysis's flow key), the packets it passed.
    pub flows: HashMap<FlowKey, Counts>,
}

impl Shown {
    /// `flow` as the table shows it under this filter: `None` when the filter passed none of
    /// its packets, else its counters with packets and bytes those of the packets passed (the
    /// analysis counters stay the whole flow's).
    pub fn restrict(&self, flow: &LiveFlow) -> Option<LiveFlow> {
        let c = self.flows.get(&flow.key)?;
        Some(LiveFlow {
            packets: c.packets,
            transport_bytes: c.transport_bytes,
            payload_bytes: c.payload_bytes,
            ..*flow
        })
    }
}

/// The engine's side: the compiled filter and its counts.
#[derive(Debug)]
pub struct View {
    filter: Arc<DisplayFilter>,
    shown: Shown,
    /// The marks for a filter that reads `analysis.*` fields.
    marker: Option<Marker>,
    /// Flow keys include the mirror session (`--encap-session`).
    encap_session: bool,
    /// Most flows counted (`--max-flows`): memory stays bounded.
    max_flows: usize,
}

impl View {
    /// A filter `expr` compiled as `filter`, no frame seen yet; `cfg` the analysis settings
    /// (flow keys, the flows counted, and the marks' analysis).
    pub fn new(expr: &str, filter: Arc<DisplayFilter>, cfg: &AnalyzeConfig) -> View {
        View {
            marker: filter.reads_analysis().then(|| Marker::new(cfg)),
            filter,
            shown: Shown {
                expr: expr.to_string(),
                ..Shown::default()
            },
            encap_session: cfg.encap_session,
            max_flows: cfg.max_flows,
        }
    }

    /// Say that the frames before `number` were not tested.
    pub fn begin_at(&mut self, number: u64) {
        self.shown.from_frame = Some(number);
    }

    /// Whether `frame` (record `rec`, the capture's first frame at `first_ts_ns`) passes.
    /// Frames must come in capture order, each once (a filter on `analysis.*` analyses them).
    pub fn passes(&mut self, rec: &Record<'_>, frame: &Frame<'_>, first_ts_ns: u64) -> bool {
        let marks = self
            .marker
            .as_mut()
            .map(|m| m.marks(rec.number, rec.ts_ns, frame));
        let ctx = FrameCtx {
            number: rec.number,
            ts_ns: rec.ts_ns,
            rel_ns: rec.ts_ns.wrapping_sub(first_ts_ns) as i64,
            caplen: rec.caplen,
            len: rec.len,
        };
        self.filter.matches(&Pkt {
            ctx: &ctx,
            frame,
            marks: marks.as_ref(),
        })
    }

    /// Test `frame` as [`View::passes`] does and count it when it passes; whether it passed.
    pub fn offer(&mut self, rec: &Record<'_>, frame: &Frame<'_>, first_ts_ns: u64) -> bool {
        if !self.passes(rec, frame, first_ts_ns) {
            return false;
        }
        self.shown.frames += 1;
        if let Some(k) = self.key(frame) {
            let full = self.shown.flows.len() >= self.max_flows;
            if let Some(c) = count_into(&mut self.shown.flows, k, full) {
                add(c, frame);
            }
        }
        true
    }

    /// The analysis's key of `frame`'s flow (source, destination, DestQP, and the mirror
    /// session under `--encap-session`), `None` without a BTH.
    fn key(&self, frame: &Frame<'_>) -> Option<FlowKey> {
        let p = frame.roce()?;
        let bth = p.bth?;
        Some(FlowKey {
            src: p.src,
            dst: p.dst,
            dest_qp: bth.dest_qp,
            session: frame.encap.session().filter(|_| self.encap_session),
        })
    }

    /// The compiled filter.
    pub fn filter(&self) -> Arc<DisplayFilter> {
        Arc::clone(&self.filter)
    }

    /// The counts so far.
    pub fn shown(&self) -> &Shown {
        &self.shown
    }
}

/// The counts of flow `k`, made when new unless the table is `full`.
fn count_into(flows: &mut HashMap<FlowKey, Counts>, k: FlowKey, full: bool) -> Option<&mut Counts> {
    if full && !flows.contains_key(&k) {
        return None;
    }
    Some(flows.entry(k).or_default())
}

/// Count `frame`'s packet (as the analysis counts a flow's bytes: BTH + extended headers +
/// payload + pad + 4 ICRC bytes).
fn add(c: &mut Counts, frame: &Frame<'_>) {
    let Some(p) = frame.roce() else { return };
    let Some(bth) = p.bth else { return };
    c.packets += 1;
    c.payload_bytes += u64::from(p.payload_len);
    c.transport_bytes += p.hdr_len as u64 + u64::from(p.payload_len) + u64::from(bth.pad) + 4;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Opcode;
    use crate::decode::{Address, DecodeConfig, LinkType, decode_frame};
    use crate::synth::frame::{Bth, Packet};

    /// A SEND ONLY (opcode 0x04) of `payload` bytes from 10.0.0.1 to 10.0.0.2, DestQP `qp`.
    fn send(qp: u32, psn: u32, payload: usize) -> Vec<u8> {
        let mut p = Packet::v4(
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            Bth {
                opcode: Opcode(0x04),
                dest_qp: qp,
                psn,
                ..Bth::default()
            },
        );
        p.payload_len = payload;
        p.build()
    }

    fn offer(v: &mut View, n: u64, data: &[u8]) -> bool {
        let rec = Record {
            number: n,
            ts_ns: 1_000 * n,
            base_ts_ns: 0,
            caplen: data.len() as u32,
            len: data.len() as u32,
            data,
        };
        let f = decode_frame(LinkType::ETHERNET, data, rec.len, &DecodeConfig::default());
        v.offer(&rec, &f, 1_000)
    }

    fn key(qp: u32) -> FlowKey {
        FlowKey {
            src: Address::V4([10, 0, 0, 1]),
            dst: Address::V4([10, 0, 0, 2]),
            dest_qp: qp,
            session: None,
        }
    }

    #[test]
    fn counts_what_passes() {
        let expr = "bth.dest_qp == 0x22 && bth.psn >= 2";
        let mut v = View::new(expr, compile(expr).unwrap(), &cfg(16));
        let mut passed = 0;
        for psn in 0..5 {
            for qp in [0x11, 0x22] {
                passed += u32::from(offer(&mut v, u64::from(psn) * 2 + 1, &send(qp, psn, 100)));
            }
        }
        assert_eq!(passed, 3);
        let s = v.shown();
        assert_eq!(s.frames, 3);
        assert_eq!(s.flows.len(), 1);
        // BTH 12 bytes + 100 payload + 4 ICRC (IBTA Vol 1 §9.2, §7.8): 116 per packet.
        assert_eq!(
            s.flows[&key(0x22)],
            Counts {
                packets: 3,
                transport_bytes: 3 * 116,
                payload_bytes: 300
            }
        );
    }

    #[test]
    fn frame_fields_and_bounded_flows() {
        // `frame` is the record's number; at most 2 flows counted.
        let mut v = View::new("frame > 2", compile("frame > 2").unwrap(), &cfg(2));
        for (n, qp) in [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 3)] {
            offer(&mut v, n, &send(qp, 0, 8));
        }
        let s = v.shown();
        assert_eq!(s.frames, 4);
        let mut qps: Vec<(u32, u64)> = s
            .flows
            .iter()
            .map(|(k, c)| (k.dest_qp, c.packets))
            .collect();
        qps.sort_unstable();
        assert_eq!(qps, [(3, 2), (4, 1)]);
    }

    #[test]
    fn analysis_fields_read_the_marks() {
        // QP 0x11: PSN 0, 1, 2, then 1 again (a resend: IBTA Vol 1 §9.7.5.1.1, the PSN was
        // sent before) and 5 (two PSNs missing).
        let expr = "analysis.retransmission || analysis.gap";
        let mut v = View::new(expr, compile(expr).unwrap(), &cfg(16));
        let passed: Vec<bool> = [0, 1, 2, 1, 5]
            .iter()
            .enumerate()
            .map(|(i, &psn)| offer(&mut v, i as u64 + 1, &send(0x11, psn, 8)))
            .collect();
        assert_eq!(passed, [false, false, false, true, true]);
        assert_eq!(v.shown().flows[&key(0x11)].packets, 2);
    }

    #[test]
    fn bad_syntax_is_read_y_s_error() {
        let e = compile("bth.dest_qp == ").unwrap_err();
        assert_eq!(e, DisplayFilter::compile("bth.dest_qp == ").unwrap_err());
    }

    fn cfg(max_flows: usize) -> AnalyzeConfig {
        AnalyzeConfig {
            max_flows,
            ..AnalyzeConfig::default()
        }
    }
}
