//! Cross-connection work: finding the two flows of a QP pair (issue 3, point 1) — by the
//! symmetric RoCEv2 UDP source port, by CM REQ/REP on QP1, by UD DETH source QPs, by AETH PSNs
//! echoing the reverse flow's requests — and the unpaired-flow indexes the CNP attribution uses.

use super::flow::{FlowKey, PairedBy};
use super::psn::psn_diff;
use super::{Analyzer, cm, two_mut};
use crate::decode::Address;

/// A set of flow indices kept as a count and the XOR of its members: when the count is 1, the
/// XOR is the member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct IdxSet {
    n: u32,
    xor: u32,
}

impl IdxSet {
    pub(super) fn insert(&mut self, j: usize) {
        self.n += 1;
        self.xor ^= j as u32;
    }
    pub(super) fn remove(&mut self, j: usize) {
        self.n -= 1;
        self.xor ^= j as u32;
    }
    /// (members other than `i`, the single one when exactly one), `i_in` saying whether `i`
    /// is a member.
    pub(super) fn without(self, i: usize, i_in: bool) -> (u32, Option<usize>) {
        let (n, x) = if i_in {
            (self.n - 1, self.xor ^ i as u32)
        } else {
            (self.n, self.xor)
        };
        (n, (n == 1).then_some(x as usize))
    }
}

/// Unpaired flows of one (source, destination) pair.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Unpaired {
    /// All of them.
    pub(super) all: IdxSet,
    /// Those with an unanswered CE mark.
    pub(super) ce: IdxSet,
}

/// Most CM REQs remembered while waiting for their REP, and most CM-announced pairs.
pub(super) const MAX_CM: usize = 4096;

impl Analyzer {
    /// A UD SEND to QP1 from `src` to `dst`: learn QP pairs from CM REQ / REP.
    pub(super) fn cm_mad(
        &mut self,
        src: Address,
        dst: Address,
        session: Option<u32>,
        payload: &[u8],
    ) {
        match cm::parse(payload) {
            Some(cm::CmMsg::Req { comm_id, qpn }) => {
                if self.cm_reqs.len() >= MAX_CM {
                    self.cm_reqs.pop_front();
                }
                self.cm_reqs.push_back((comm_id, src, dst, qpn));
            }
            Some(cm::CmMsg::Rep {
                remote_comm_id,
                qpn,
            }) => {
                let Some(k) = self
                    .cm_reqs
                    .iter()
                    .rposition(|r| r.0 == remote_comm_id && r.1 == dst && r.2 == src)
                else {
                    return;
                };
                let Some((_, active, passive, active_qpn)) = self.cm_reqs.remove(k) else {
                    return;
                };
                // Active → passive carries DestQP = the passive QPN, and the reverse.
                let a = FlowKey {
                    src: active,
                    dst: passive,
                    dest_qp: qpn,
                    session,
                };
                let b = FlowKey {
                    src: passive,
                    dst: active,
                    dest_qp: active_qpn,
                    session,
                };
                if self.cm_pairs.len() < MAX_CM {
                    self.cm_pairs.insert(a, b);
                    self.cm_pairs.insert(b, a);
                }
                if let (Some(i), Some(j)) = (
                    self.index.get(&self.flows, &a),
                    self.index.get(&self.flows, &b),
                ) && self.flows[i as usize].peer.is_none()
                    && self.flows[j as usize].peer.is_none()
                {
                    self.pair(i as usize, j as usize, PairedBy::Cm);
                }
            }
            None => {}
        }
    }

    /// Pair flow `i` by the symmetric UDP source port convention when exactly one unpaired
    /// reverse flow uses the same port. CNPs often use port 0, which is never used for pairing.
    pub(super) fn pair_by_sport(&mut self, i: usize, sport: u16) {
        let f = &mut self.flows[i];
        f.udp_sport = Some(sport);
        if f.peer.is_some() {
            return;
        }
        let (src, dst, session) = (f.key.src, f.key.dst, f.key.session);
        let Some(c) = self.hosts.get(&(dst, src)) else {
            return;
        };
        let mut found = None;
        let mut n = 0;
        for &j in c {
            let g = &self.flows[j as usize];
            if j as usize != i
                && g.peer.is_none()
                && g.udp_sport == Some(sport)
                && g.key.session == session
            {
                found = Some(j as usize);
                n += 1;
            }
        }
        if let (Some(j), 1) = (found, n) {
            self.pair(i, j, PairedBy::UdpSport);
        }
    }

    pub(super) fn pair(&mut self, i: usize, j: usize, by: PairedBy) {
        if i == j {
            // A hostile CM exchange can name one flow as its own peer.
            return;
        }
        for k in [i, j] {
            if self.flows[k].peer.is_none() {
                self.unlist(k);
            }
        }
        let (a, b) = two_mut(&mut self.flows, i, j);
        a.peer = Some(j as u32);
        b.peer = Some(i as u32);
        a.paired_by = Some(by);
        b.paired_by = Some(by);
    }

    /// Flow `k` is being paired: take it out of the unpaired indexes.
    fn unlist(&mut self, k: usize) {
        let f = &self.flows[k];
        let key = (f.key.src, f.key.dst);
        if let Some(u) = self.unpaired.get_mut(&key) {
            u.all.remove(k);
            if f.cong.unanswered_ce.is_some() {
                u.ce.remove(k);
            }
        }
        if let Some(q) = f.deth_src_qp
            && let Some(s) = self.unpaired_ud.get_mut(&(key.0, key.1, q))
        {
            s.remove(k);
        }
    }

    /// Pair two UD flows that name each other: A→B to QP X with DETH source QP Y, and B→A to
    /// QP Y with DETH source QP X (IBTA 9.2.3: DETH SrcQP is the sender's QP). One hash look-up
    /// per packet while the flow is unpaired.
    pub(super) fn pair_by_deth(&mut self, i: usize) {
        let f = &self.flows[i];
        let (Some(src_qp), None) = (f.deth_src_qp, f.peer) else {
            return;
        };
        let rev = FlowKey {
            src: f.key.dst,
            dst: f.key.src,
            dest_qp: src_qp,
            session: f.key.session,
        };
        let dest_qp = f.key.dest_qp;
        if let Some(j) = self.index.get(&self.flows, &rev) {
            let j = j as usize;
            let g = &self.flows[j];
            if j != i && g.peer.is_none() && g.deth_src_qp == Some(dest_qp) {
                self.pair(i, j, PairedBy::Deth);
            }
        }
    }

    /// Try to pair response-carrying flow `i` with the request flow whose PSNs `psn` echoes.
    pub(super) fn pair_by_psn(&mut self, i: usize, psn: u32) {
        let f = &mut self.flows[i];
        if f.peer.is_some() || f.pair_tries == 0 {
            return;
        }
        f.pair_tries -= 1;
        let (src, dst, sport) = (f.key.src, f.key.dst, f.udp_sport);
        let Some(c) = self.hosts.get(&(dst, src)) else {
            return;
        };
        let mut best: Option<(usize, bool)> = None;
        let mut n = 0;
        for &j in c {
            let j = j as usize;
            let g = &self.flows[j];
            if j == i
                || g.peer.is_some()
                || g.req_psn.first.is_none()
                || g.key.session != self.flows[i].key.session
            {
                continue;
            }
            let d = psn_diff(psn, g.req_psn.expected);
            if (-65_536..=0).contains(&d) {
                let sport_ok = sport.is_some() && g.udp_sport == sport;
                match best {
                    Some((_, true)) if !sport_ok => {}
                    Some((_, false)) if sport_ok => {
                        best = Some((j, true));
                        n = 1;
                    }
                    _ => {
                        if best.is_some_and(|(_, s)| s == sport_ok) {
                            n += 1;
                        } else {
                            n = 1;
                        }
                        best = Some((j, sport_ok));
                    }
                }
            }
        }
        if let (Some((j, _)), 1) = (best, n) {
            self.pair(i, j, PairedBy::Psn);
        }
    }
}
