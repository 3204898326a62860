//! UD senders' PSNs (issue 11, point 7).
//!
//! A UD QP numbers its packets in one PSN sequence across all its destinations (the PSN is
//! a send-queue counter, rxe `qp->req.psn`), so a flow keyed by destination sees jumps wherever the
//! sender talked to another host. The sequence is tracked per sending QP — source address and
//! DETH source QP — instead: a jump is PSNs not seen in this capture (they may have gone to
//! hosts outside it; UD never retransmits), a repeated PSN is a duplicate. QP0 (subnet
//! management: directed-route SMPs from different managers all use the permissive LID on QP0)
//! is not tracked at all.

use super::Sink;
use super::flow::Flow;
use super::psn::{PSN_HALF, PsnVerdict, psn_add, psn_distance};
use super::report::{GapReport, GapVerdict};
use super::tap::{PsnSpace, TapEvent};
use crate::decode::Address;
use rustc_hash::FxHashMap;

/// Next expected PSN of each UD sender, bounded to `cap` senders.
#[derive(Debug, Default)]
pub struct UdSenders {
    next: FxHashMap<(Address, u32), u32>,
}

impl UdSenders {
    /// Account one UD packet with `psn` from `src` whose DETH names source QP `src_qp`, seen in
    /// flow `f` (index `fi`); at most `cap` senders are tracked.
    #[allow(clippy::too_many_arguments)]
    pub fn packet(
        &mut self,
        f: &mut Flow,
        fi: usize,
        sink: &mut Sink,
        (src, src_qp): (Address, u32),
        psn: u32,
        (frame, ts): (u64, u64),
        cap: usize,
    ) {
        f.req_psn.packets += 1;
        f.req_psn.first.get_or_insert(psn);
        f.req_psn.last = psn;
        let key = (src, src_qp);
        let Some(next) = self.next.get_mut(&key) else {
            if self.next.len() < cap {
                self.next.insert(key, psn_add(psn, 1));
            }
            emit(sink, fi, ts, psn, PsnVerdict::Start);
            return;
        };
        let expected = *next;
        let d = psn_distance(psn, expected);
        let verdict = if d == 0 {
            PsnVerdict::InOrder
        } else if d < PSN_HALF {
            PsnVerdict::Ahead {
                expected,
                missing: d,
            }
        } else {
            PsnVerdict::Behind { expected }
        };
        emit(sink, fi, ts, psn, verdict);
        if d == 0 {
            *next = psn_add(psn, 1);
        } else if d < PSN_HALF {
            f.cold_mut().ud_unseen.0 += 1;
            f.cold_mut().ud_unseen.1 += u64::from(d);
            sink.gap(GapReport {
                flow: fi,
                frame,
                ts_ns: ts,
                space: PsnSpace::Ud,
                expected_psn: *next,
                received_psn: psn,
                missing: d,
                nak: None,
                retransmission: None,
                ack_frame: None,
                verdict: GapVerdict::UdUnseen,
            });
            *next = psn_add(psn, 1);
        } else {
            f.cold_mut().ud_duplicates += 1;
        }
    }
}

/// Hand the verdict on a UD packet to the tap (the plots' PSN markers).
fn emit(sink: &mut Sink, flow: usize, ts_ns: u64, psn: u32, verdict: PsnVerdict) {
    sink.emit(|| TapEvent::Psn {
        flow,
        ts_ns,
        psn,
        space: PsnSpace::Ud,
        verdict,
    });
}
