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
//! decoded form; `analysis.*` fields are refused, as `top` keeps no per-packet analysis marks.

use std::collections::HashMap;
use std::sync::Arc;

use crate::analyze::flow::FlowKey;
use crate::analyze::live::LiveFlow;
use crate::decode::Frame;
use crate::filter::fields::Pkt;
use crate::filter::{DisplayFilter, FilterError};
use crate::output::FrameCtx;
use crate::source::Record;

/// Compile `expr` for `top`: the display filter's language, without `analysis.*` fields.
///
/// # Errors
/// The compiler's error (column and expectation, as `read -Y` reports it), or an `analysis.*`
/// field (at column 1).
pub fn compile(expr: &str) -> Result<Arc<DisplayFilter>, FilterError> {
    let f = DisplayFilter::compile(expr)?;
    if f.reads_analysis() {
        return Err(FilterError::at(
            0,
            "top cannot filter on analysis.* fields (it keeps no per-packet marks); use read -Y or capture -Y",
        ));
    }
    Ok(Arc::new(f))
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
#[derive(Clone, Debug)]
pub struct View {
    filter: Arc<DisplayFilter>,
    shown: Shown,
    /// Flow keys include the mirror session (`--encap-session`).
    encap_session: bool,
    /// Most flows counted (`--max-flows`): memory stays bounded.
    max_flows: usize,
}

impl View {
    /// A filter `expr` compiled as `filter`, no frame seen yet.
    pub fn new(
        expr: &str,
        filter: Arc<DisplayFilter>,
        encap_session: bool,
        max_flows: usize,
    ) -> View {
        View {
            filter,
            shown: Shown {
                expr: expr.to_string(),
                ..Shown::default()
            },
            encap_session,
            max_flows,
        }
    }

    /// Say that the frames before `number` were not tested.
    pub fn begin_at(&mut self, number: u64) {
        self.shown.from_frame = Some(number);
    }

    /// Whether `frame` (record `rec`, the capture's first frame at `first_ts_ns`) passes.
    pub fn passes(&self, rec: &Record<'_>, frame: &Frame<'_>, first_ts_ns: u64) -> bool {
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
            marks: None,
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
    use crate::decode::{Address, DecodeConfig, LinkType, decode_frame};
    use crate::synth::frame::{Bth, Packet};

    /// A SEND ONLY (opcode 0x04) of `payload` bytes from 10.0.0.1 to 10.0.0.2, DestQP `qp`.
    fn send(qp: u32, psn: u32, payload: usize) -> Vec<u8> {
        let mut p = Packet::v4(
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            Bth {
                opcode: 0x04,
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
        let mut v = View::new(expr, compile(expr).unwrap(), false, 16);
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
        let mut v = View::new("frame > 2", compile("frame > 2").unwrap(), false, 2);
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
    fn analysis_fields_and_bad_syntax_are_refused() {
        let e = compile("analysis.retransmission").unwrap_err();
        assert!(e.to_string().contains("analysis.* fields"), "{e}");
        // The same error read -Y reports.
        let e = compile("bth.dest_qp == ").unwrap_err();
        assert_eq!(e, DisplayFilter::compile("bth.dest_qp == ").unwrap_err());
    }
}
