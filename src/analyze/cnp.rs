//! Cross-connection work: attributing each CNP to the data flow whose sender it notifies
//! (issue 3, point 6), also before the flows are paired, and flagging CNPs near NAKs (issue 11,
//! point 5).

use super::Analyzer;
use super::flow::PairedBy;

impl Analyzer {
    /// The UD pairing candidate of CNP flow `i` by scanning (debug builds: checks the index).
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    fn ud_hit_scan(&self, i: usize) -> Option<usize> {
        let f = &self.flows[i];
        let (src, dst, qp) = (f.key.src, f.key.dst, f.key.dest_qp);
        self.hosts.get(&(dst, src)).and_then(|c| {
            let mut it = c.iter().map(|&j| j as usize).filter(|&j| {
                j != i && self.flows[j].peer.is_none() && self.flows[j].deth_src_qp == Some(qp)
            });
            let first = it.next();
            if it.next().is_some() { None } else { first }
        })
    }

    /// The notified sender of unpaired CNP flow `i` by scanning (debug builds: checks the
    /// index): the single unpaired reverse flow with an unanswered CE mark, else the single
    /// unpaired reverse flow.
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    fn cnp_target_scan(&self, i: usize) -> Option<usize> {
        let f = &self.flows[i];
        let c = self.hosts.get(&(f.key.dst, f.key.src))?;
        let unpaired = |j: &&u32| self.flows[**j as usize].peer.is_none() && **j as usize != i;
        let with_ce: Vec<usize> = c
            .iter()
            .filter(unpaired)
            .filter(|j| self.flows[**j as usize].cong.unanswered_ce.is_some())
            .map(|j| *j as usize)
            .take(2)
            .collect();
        let any: Vec<usize> = c
            .iter()
            .filter(unpaired)
            .map(|j| *j as usize)
            .take(2)
            .collect();
        match (with_ce.as_slice(), any.as_slice()) {
            ([j], _) | ([], [j]) => Some(*j),
            _ => None,
        }
    }

    /// Count CNP `i`'s arrival and attribute it; the notified sender's data flow, when known.
    pub(super) fn cnp(&mut self, i: usize, frame_no: u64, ts: u64) -> Option<usize> {
        {
            let f = &mut self.flows[i];
            f.cong.cnps += 1;
            if f.cong.cnps == 1 {
                f.cong.reaction_mut().first_cnp_frame = Some(frame_no);
            }
            let r = f.cong.reaction_mut();
            let negative = r
                .last_cnp
                .is_some_and(|prev| !r.cnp_gap.add_interval(prev, ts));
            r.last_cnp = Some(ts);
            if negative {
                f.cold_mut().negative_intervals += 1;
            }
        }
        if self.flows[i].peer.is_none() {
            // A UD sender: the CNP's DestQP is the DETH source QP of the reverse flow.
            let f = &self.flows[i];
            let (src, dst, qp) = (f.key.src, f.key.dst, f.key.dest_qp);
            // The single unpaired reverse flow whose DETH source QP is the CNP's DestQP (flow
            // `i` itself is a member only when source and destination are one host).
            let i_in = src == dst && f.deth_src_qp == Some(qp);
            let hit = self
                .unpaired_ud
                .get(&(dst, src, qp))
                .and_then(|s| s.without(i, i_in).1);
            debug_assert_eq!(hit, self.ud_hit_scan(i), "unpaired UD index");
            if let Some(j) = hit {
                self.pair(i, j, PairedBy::Cnp);
            }
        }
        let target = match self.flows[i].peer {
            Some(t) => t as usize,
            None => {
                // Not paired yet (the first ACK may come later): the notified sender is the
                // single unpaired reverse flow, preferring one with an unanswered CE mark
                // (Lumina matches CNPs by IP pair the same way).
                let f = &self.flows[i];
                let (src, dst) = (f.key.src, f.key.dst);
                let found = self.unpaired.get(&(dst, src)).and_then(|u| {
                    // Flow `i` (unpaired here) is a member only when source and destination
                    // are one host.
                    let same = src == dst;
                    let i_ce = same && f.cong.unanswered_ce.is_some();
                    match (u.ce.without(i, i_ce), u.all.without(i, same)) {
                        ((1, j), _) | ((0, _), (1, j)) => j,
                        _ => None,
                    }
                });
                debug_assert_eq!(found, self.cnp_target_scan(i), "unpaired index");
                found?
            }
        };
        let paired = self.flows[target].peer.is_some();
        let t = &mut self.flows[target];
        if let Some(ce) = t.cong.unanswered_ce.take() {
            if !t.cong.reaction_mut().ce_to_cnp.add_interval(ce, ts) {
                t.cold_mut().negative_intervals += 1;
            }
            if !paired && let Some(u) = self.unpaired.get_mut(&(t.key.src, t.key.dst)) {
                u.ce.remove(target);
            }
        }
        let rtt = t.rtt();
        let t = &mut t.cong;
        t.rate.cnp(ts, frame_no);
        t.cnp_seen(ts, rtt);
        Some(target)
    }
}
