//! Rings and trees from the connections of one job: the hosts in data direction per channel.
//!
//! Channels are told apart by QP: NCCL connects each channel's peers with QPs of their own,
//! created channel by channel, so QP numbers order a host's connections by channel (see
//! [`find`]). Within a channel, a ring is a cycle of sender → receiver edges; a tree
//! (NCCL's tree algorithm) has data both ways on every edge — up to the parent while reducing,
//! down to the children while broadcasting — and no cycle among three or more hosts; the child
//! is the end that sent first.

use std::collections::{BTreeMap, BTreeSet};

use crate::decode::Address;

/// One directed connection for the topology: sender, receiver, a QP that orders it among the
/// pair's connections, and its first data time (ns, on its capture's clock).
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    /// Sender.
    pub from: Address,
    /// Receiver.
    pub to: Address,
    /// QP number that orders the pair's connections (CTS QP, else first data QP).
    pub qp: u32,
    /// First data packet, ns.
    pub first_ns: u64,
}

/// A ring: hosts in data direction, starting at the lowest address.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Ring {
    /// Channel (0 = each host pair's first connection by QP number).
    pub channel: usize,
    /// Hosts in data direction; the last sends to the first when `closed`.
    pub hosts: Vec<String>,
    /// Whether the cycle closes (every host's send to its successor was seen).
    pub closed: bool,
}

/// A tree: parent → children by data direction.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Tree {
    /// Channel, as for [`Ring`].
    pub channel: usize,
    /// The host with no parent.
    pub root: String,
    /// (parent, child) pairs.
    pub edges: Vec<(String, String)>,
}

/// Channel number of each edge: its rank by QP among the edges that `same` groups with it.
fn rank_by(edges: &[Edge], same: impl Fn(&Edge, &Edge) -> bool) -> Vec<usize> {
    edges
        .iter()
        .map(|e| edges.iter().filter(|o| same(e, o) && o.qp < e.qp).count())
        .collect()
}

/// The edges of channel `c` under the numbering `ch`.
fn channel(edges: &[Edge], ch: &[usize], c: usize) -> Vec<Edge> {
    edges
        .iter()
        .zip(ch)
        .filter(|&(_, &k)| k == c)
        .map(|(e, _)| *e)
        .collect()
}

/// Rings and trees of `edges`, and each edge's channel.
///
/// Trees first: the n-th connection of each host pair (by QP) makes channel n, and when every
/// channel is a tree the job ran trees. Otherwise rings: every ring gives each host one
/// connection to send on, so the n-th of a host's sending connections (by QP: its CTS QPs are
/// the sender's own, created channel by channel) is in channel n.
pub fn find(edges: &[Edge]) -> (Vec<Ring>, Vec<Tree>, Vec<usize>) {
    let per_pair = rank_by(edges, |a, b| a.from == b.from && a.to == b.to);
    let n = per_pair.iter().max().map_or(0, |m| m + 1);
    let trees: Option<Vec<Tree>> = (0..n)
        .map(|c| tree(&channel(edges, &per_pair, c), c))
        .collect();
    if let Some(trees) = trees.filter(|t| !t.is_empty()) {
        return (Vec::new(), trees, per_pair);
    }
    let per_sender = rank_by(edges, |a, b| a.from == b.from);
    let n = per_sender.iter().max().map_or(0, |m| m + 1);
    let rings = (0..n)
        .flat_map(|c| cycles(&channel(edges, &per_sender, c), c))
        .collect();
    (rings, Vec::new(), per_sender)
}

/// The tree of a channel's edges: data both ways on every edge, three hosts or more, no cycle.
fn tree(es: &[Edge], channel: usize) -> Option<Tree> {
    let pairs: BTreeSet<(Address, Address)> = es.iter().map(|e| (e.from, e.to)).collect();
    if pairs.iter().any(|&(a, b)| !pairs.contains(&(b, a))) {
        return None;
    }
    let hosts: BTreeSet<Address> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    let links: BTreeSet<(Address, Address)> =
        pairs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
    if hosts.len() < 3 || links.len() + components(&hosts, &links) != hosts.len() {
        return None;
    }
    let first = |a: Address, b: Address| {
        es.iter()
            .filter(|e| e.from == a && e.to == b)
            .map(|e| e.first_ns)
            .min()
    };
    let mut parent: BTreeMap<Address, Address> = BTreeMap::new();
    let mut out = Vec::new();
    for &(a, b) in &links {
        // The child sends first (the reduction goes up before the broadcast comes down).
        let (child, par) = if first(a, b) <= first(b, a) {
            (a, b)
        } else {
            (b, a)
        };
        parent.insert(child, par);
        out.push((par.to_string(), child.to_string()));
    }
    let root = hosts.iter().find(|h| !parent.contains_key(h))?;
    Some(Tree {
        channel,
        root: root.to_string(),
        edges: out,
    })
}

/// Connected components of an undirected graph.
fn components(hosts: &BTreeSet<Address>, links: &BTreeSet<(Address, Address)>) -> usize {
    let mut seen = BTreeSet::new();
    let mut n = 0;
    for &h in hosts {
        if !seen.insert(h) {
            continue;
        }
        n += 1;
        let mut stack = vec![h];
        while let Some(x) = stack.pop() {
            for &(a, b) in links {
                let y = if a == x {
                    b
                } else if b == x {
                    a
                } else {
                    continue;
                };
                if seen.insert(y) {
                    stack.push(y);
                }
            }
        }
    }
    n
}

/// The cycles of a channel's directed edges, each walked from its lowest host, preferring
/// hosts not yet on the walk so that a ring through every host is found first.
fn cycles(es: &[Edge], channel: usize) -> Vec<Ring> {
    let mut unused: BTreeSet<(Address, Address)> = es.iter().map(|e| (e.from, e.to)).collect();
    let mut rings = Vec::new();
    while let Some(&(start, _)) = unused.iter().next() {
        let mut path = vec![start];
        let mut cur = start;
        let closed = loop {
            let outs: Vec<Address> = unused
                .iter()
                .filter(|&&(a, _)| a == cur)
                .map(|&(_, b)| b)
                .collect();
            let next = outs
                .iter()
                .find(|b| !path.contains(b))
                .or_else(|| outs.iter().find(|&&b| b == start))
                .copied();
            let Some(next) = next else { break false };
            unused.remove(&(cur, next));
            if next == start {
                break true;
            }
            path.push(next);
            cur = next;
        };
        rings.push(Ring {
            channel,
            hosts: path.iter().map(|a| a.to_string()).collect(),
            closed,
        });
    }
    rings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(a: u8, b: u8, qp: u32, t: u64) -> Edge {
        Edge {
            from: Address::V4([10, 0, 0, a]),
            to: Address::V4([10, 0, 0, b]),
            qp,
            first_ns: t,
        }
    }

    #[test]
    fn rings_per_channel() {
        // Channel 0: 1 → 3 → 2 → 1; channel 1 (higher QPs): 1 → 2 → 3 → 1.
        let es = [
            e(1, 3, 5, 0),
            e(3, 2, 5, 0),
            e(2, 1, 5, 0),
            e(1, 2, 9, 0),
            e(2, 3, 9, 0),
            e(3, 1, 9, 0),
        ];
        let (rings, trees, _) = find(&es);
        assert!(trees.is_empty());
        let hosts: Vec<(usize, Vec<String>, bool)> = rings
            .into_iter()
            .map(|r| (r.channel, r.hosts, r.closed))
            .collect();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            hosts,
            vec![
                (0, s(&["10.0.0.1", "10.0.0.3", "10.0.0.2"]), true),
                (1, s(&["10.0.0.1", "10.0.0.2", "10.0.0.3"]), true)
            ]
        );
    }

    #[test]
    fn a_chain_tree() {
        // 2 is the root; 1 and 3 send to it first, it answers later.
        let es = [
            e(1, 2, 1, 10),
            e(2, 1, 1, 50),
            e(3, 2, 1, 12),
            e(2, 3, 1, 60),
        ];
        let (rings, trees, _) = find(&es);
        assert!(rings.is_empty());
        assert_eq!(trees.len(), 1);
        assert_eq!(trees[0].root, "10.0.0.2");
        assert_eq!(trees[0].edges.len(), 2);
        // Two hosts both ways are a ring of two.
        let (rings, trees, _) = find(&es[..2]);
        assert!(trees.is_empty());
        assert_eq!(rings[0].hosts.len(), 2);
        assert!(rings[0].closed);
    }
}
