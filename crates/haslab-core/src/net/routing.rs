//! Static shortest-path routing (fewest hops, as ns-3's global routing with unit metrics),
//! computed once before the run by a breadth-first search from every destination that some
//! flow uses. Ties between equal-length paths are broken by the lowest link-direction index,
//! which keeps routes deterministic.

/// An adjacency entry: the link direction that leaves `from` toward `to`.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub link_dir: u32,
}

pub const NO_ROUTE: u32 = u32::MAX;

/// Next-hop tables for a set of destinations.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    /// destination node → slot in `next_hop` (NO_ROUTE if not a destination)
    slot_of: Vec<u32>,
    /// next_hop[slot][node] = link direction to take from `node`
    next_hop: Vec<Vec<u32>>,
}

impl Routes {
    /// Routes toward each node in `dests` over a graph of `n_nodes` nodes.
    pub fn compute(n_nodes: usize, edges: &[Edge], dests: &[u32]) -> Routes {
        // incoming edges per node, sorted by link-direction index for deterministic ties
        let mut incoming: Vec<Vec<Edge>> = vec![Vec::new(); n_nodes];
        for e in edges {
            incoming[e.to as usize].push(*e);
        }
        for v in &mut incoming {
            v.sort_by_key(|e| e.link_dir);
        }
        let mut slot_of = vec![NO_ROUTE; n_nodes];
        let mut next_hop = Vec::new();
        let mut queue = std::collections::VecDeque::new();
        for &d in dests {
            if slot_of[d as usize] != NO_ROUTE {
                continue;
            }
            slot_of[d as usize] = next_hop.len() as u32;
            let mut table = vec![NO_ROUTE; n_nodes];
            let mut seen = vec![false; n_nodes];
            seen[d as usize] = true;
            queue.clear();
            queue.push_back(d);
            while let Some(v) = queue.pop_front() {
                for e in &incoming[v as usize] {
                    if !seen[e.from as usize] {
                        seen[e.from as usize] = true;
                        table[e.from as usize] = e.link_dir;
                        queue.push_back(e.from);
                    }
                }
            }
            next_hop.push(table);
        }
        Routes { slot_of, next_hop }
    }

    /// The link direction to take from `node` toward `dst` (NO_ROUTE if unreachable or `dst` is
    /// not a routed destination).
    #[inline]
    pub fn next_hop(&self, node: u32, dst: u32) -> u32 {
        match self.slot_of.get(dst as usize) {
            Some(&s) if s != NO_ROUTE => self.next_hop[s as usize][node as usize],
            _ => NO_ROUTE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bidir(links: &[(u32, u32)]) -> Vec<Edge> {
        links
            .iter()
            .enumerate()
            .flat_map(|(i, &(a, b))| {
                [
                    Edge {
                        from: a,
                        to: b,
                        link_dir: 2 * i as u32,
                    },
                    Edge {
                        from: b,
                        to: a,
                        link_dir: 2 * i as u32 + 1,
                    },
                ]
            })
            .collect()
    }

    #[test]
    fn dumbbell_routes_cross_the_bottleneck() {
        // 0,1 — 4 — 5 — 2,3
        let edges = bidir(&[(0, 4), (1, 4), (4, 5), (5, 2), (5, 3)]);
        let r = Routes::compute(6, &edges, &[2, 0]);
        assert_eq!(r.next_hop(0, 2), 0); // 0→4
        assert_eq!(r.next_hop(4, 2), 4); // 4→5
        assert_eq!(r.next_hop(5, 2), 6); // 5→2
        assert_eq!(r.next_hop(2, 0), 7); // 2→5
        assert_eq!(r.next_hop(0, 3), NO_ROUTE); // 3 not a destination
    }

    #[test]
    fn shortest_path_wins_over_a_longer_one() {
        // triangle 0-1-2 plus direct 0-2
        let edges = bidir(&[(0, 1), (1, 2), (0, 2)]);
        let r = Routes::compute(3, &edges, &[2]);
        assert_eq!(r.next_hop(0, 2), 4);
    }

    #[test]
    fn disconnected_nodes_have_no_route() {
        let edges = bidir(&[(0, 1)]);
        let r = Routes::compute(3, &edges, &[2]);
        assert_eq!(r.next_hop(0, 2), NO_ROUTE);
    }
}
