//! Priority per flow (issue 11, point 4): the DSCP and 802.1Q PCP values a flow's packets carry,
//! CNPs apart, and the warnings RDMA engineers check first when PFC does not engage.
//!
//! PFC acts either on the PCP of the innermost 802.1Q tag ("L2 trust") or on the DSCP
//! ("L3 trust"); a flow whose data uses more than one value, or whose CNPs travel at the data's
//! priority (a CNP priority that was never configured), is worth a look (NVIDIA's RoCE
//! configuration notes, spec/roce.md §6).

use super::report::{CountMap, PriorityReport};
use super::warning::{PriorityField, Warning};

/// Small value → count table: a flow normally carries one value, kept inline so that the
/// per-packet path is one compare and one add; further values go to a short list. Used for a
/// flow's DSCP and PCP values and its opcodes.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    /// The first value seen and its count (0: none yet).
    first: (u8, u64),
    /// Other values, in first-seen order.
    more: Vec<(u8, u64)>,
}

impl Counts {
    /// Count one packet with value `v`.
    #[inline]
    pub fn add(&mut self, v: u8) {
        if self.first.1 != 0 && self.first.0 == v {
            self.first.1 += 1;
        } else {
            self.add_slow(v);
        }
    }

    #[cold]
    fn add_slow(&mut self, v: u8) {
        if self.first.1 == 0 {
            self.first = (v, 1);
        } else if let Some(e) = self.more.iter_mut().find(|e| e.0 == v) {
            e.1 += 1;
        } else {
            self.more.push((v, 1));
        }
    }

    /// (value, count) pairs, first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (u8, u64)> + '_ {
        std::iter::once(self.first)
            .filter(|e| e.1 != 0)
            .chain(self.more.iter().copied())
    }

    /// Distinct values seen.
    pub fn distinct(&self) -> usize {
        usize::from(self.first.1 != 0) + self.more.len()
    }

    /// The single value, when exactly one was seen.
    pub fn single(&self) -> Option<u8> {
        (self.first.1 != 0 && self.more.is_empty()).then_some(self.first.0)
    }

    fn map(&self) -> CountMap<u8> {
        self.iter().collect()
    }
}

/// DSCP / PCP values of one flow's packets.
#[derive(Clone, Debug, Default)]
pub struct Priority {
    /// DSCP of data packets.
    pub dscp: Counts,
    /// PCP of data packets.
    pub pcp: Counts,
    /// DSCP and PCP of CNPs, once there is one (boxed: most flows carry none).
    cnp: Option<Box<[Counts; 2]>>,
}

/// The CNP counts of a flow without CNPs.
static NO_COUNTS: Counts = Counts {
    first: (0, 0),
    more: Vec::new(),
};

impl Priority {
    /// Count one packet: `dscp` from the IP header, `pcp` from the innermost 802.1Q tag.
    #[inline]
    pub fn add(&mut self, cnp: bool, dscp: Option<u8>, pcp: Option<u8>) {
        let (d, p) = if cnp {
            let [d, p] = &mut **self.cnp.get_or_insert_default();
            (d, p)
        } else {
            (&mut self.dscp, &mut self.pcp)
        };
        if let Some(v) = dscp {
            d.add(v);
        }
        if let Some(v) = pcp {
            p.add(v);
        }
    }

    /// DSCP of CNPs.
    pub fn cnp_dscp(&self) -> &Counts {
        self.cnp.as_ref().map_or(&NO_COUNTS, |c| &c[0])
    }

    /// PCP of CNPs.
    pub fn cnp_pcp(&self) -> &Counts {
        self.cnp.as_ref().map_or(&NO_COUNTS, |c| &c[1])
    }

    /// The report's form.
    pub fn report(&self) -> PriorityReport {
        PriorityReport {
            dscp: self.dscp.map(),
            pcp: self.pcp.map(),
            cnp_dscp: self.cnp_dscp().map(),
            cnp_pcp: self.cnp_pcp().map(),
        }
    }

    /// Warnings about data flow `data` (flow `id`) and, when paired, the CNPs its sender
    /// received (carried by `cnp_flow`).
    pub fn warnings(id: usize, data: &Priority, cnps: Option<&Priority>, out: &mut Vec<Warning>) {
        for (field, c) in [
            (PriorityField::Dscp, &data.dscp),
            (PriorityField::Pcp, &data.pcp),
        ] {
            if c.distinct() > 1 {
                out.push(Warning::PriorityValues {
                    flow: id,
                    field,
                    values: c.iter().collect(),
                });
            }
        }
        let Some(cnp) = cnps else { return };
        for (field, d, c) in [
            (PriorityField::Dscp, &data.dscp, cnp.cnp_dscp()),
            (PriorityField::Pcp, &data.pcp, cnp.cnp_pcp()),
        ] {
            if let (Some(a), Some(b)) = (d.single(), c.single())
                && a == b
            {
                out.push(Warning::CnpPriority {
                    flow: id,
                    field,
                    value: a,
                });
            }
        }
    }
}
