//! Static shortest-path routing (fewest hops, as ns-3's global routing with unit metrics),
//! computed once before the run by a breadth-first search toward every destination that some
//! flow uses. Ties between equal-length paths are broken by the lowest link-direction index,
//! which keeps routes deterministic.
//!
//! Memory and set-up time stay linear in the hosts: a **leaf** (a node whose only link goes to
//! one neighbour, such as every host of a dumbbell) needs no table of its own. From a leaf, every
//! destination is reached through its one link; toward a leaf `d` hanging off node `r`, every
//! node other than `d` and `r` takes the same next hop as toward `r` (a search from `d` visits
//! `r` first and then proceeds exactly as a search from `r`), and `r` takes its link to `d`.
//! Tables are therefore kept only toward the non-leaf nodes that destinations hang off, each
//! covering only the non-leaf nodes: a dumbbell of N pairs needs 2 tables of 2 entries instead
//! of 2N tables of 2N + 2 entries. The answers are those of a full search from every
//! destination (tested against it).
//!
//! A small topology (at most [`DENSE_MAX_NODES`] nodes) also keeps every answer in one
//! node × node array, filled from the tables once: a packet's next hop is then one load
//! instead of the walk through roles and tables (the same answers; 64 KiB at most).

/// An adjacency entry: the link direction that leaves `from` toward `to`.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub link_dir: u32,
}

pub const NO_ROUTE: u32 = u32::MAX;

/// How a node is reached and left.
#[derive(Clone, Copy, Debug)]
enum Role {
    /// A node with links to more than one neighbour (or none): routed by the tables.
    Core { index: u32 },
    /// A node whose only neighbour is `parent`: `up` leaves toward it, `down` arrives from it.
    Leaf { parent: u32, up: u32, down: u32 },
}

/// Next-hop tables for a set of destinations.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    roles: Vec<Role>,
    /// whether each node is one of the destinations routes were computed for
    routed: Vec<bool>,
    /// core node → slot in `next_hop` (NO_ROUTE if no destination is routed through it)
    slot_of: Vec<u32>,
    /// next_hop[slot][core index] = link direction to take from that core node
    next_hop: Vec<Vec<u32>>,
    /// every answer, `dense[node * n_nodes + dst]`, for at most [`DENSE_MAX_NODES`] nodes
    /// (empty otherwise)
    dense: Vec<u32>,
    n_nodes: usize,
}

/// The largest topology whose answers are also kept in one node × node array (128² entries of
/// 4 bytes: 64 KiB).
pub const DENSE_MAX_NODES: usize = 128;

impl Routes {
    /// Routes toward each node in `dests` over a graph of `n_nodes` nodes.
    pub fn compute(n_nodes: usize, edges: &[Edge], dests: &[u32]) -> Routes {
        // incoming and outgoing edges per node, sorted by link-direction index for
        // deterministic ties
        let mut incoming: Vec<Vec<Edge>> = vec![Vec::new(); n_nodes];
        let mut outgoing: Vec<Vec<Edge>> = vec![Vec::new(); n_nodes];
        for e in edges {
            incoming[e.to as usize].push(*e);
            outgoing[e.from as usize].push(*e);
        }
        for v in incoming.iter_mut().chain(outgoing.iter_mut()) {
            v.sort_by_key(|e| e.link_dir);
        }
        let mut roles = Vec::with_capacity(n_nodes);
        let mut n_core = 0u32;
        for v in 0..n_nodes {
            let (inc, out) = (&incoming[v], &outgoing[v]);
            let leaf = out.len() == 1 && inc.len() == 1 && out[0].to == inc[0].from;
            // a leaf whose neighbour is itself a leaf (two nodes joined by one link) stays core
            // for its neighbour's sake: roles are decided on the neighbour's degree too
            let parent_is_leaf = leaf && {
                let p = out[0].to as usize;
                outgoing[p].len() == 1 && incoming[p].len() == 1
            };
            if leaf && !parent_is_leaf {
                roles.push(Role::Leaf {
                    parent: out[0].to,
                    up: out[0].link_dir,
                    down: inc[0].link_dir,
                });
            } else {
                roles.push(Role::Core { index: n_core });
                n_core += 1;
            }
        }
        let core_nodes: Vec<u32> = (0..n_nodes as u32)
            .filter(|&v| matches!(roles[v as usize], Role::Core { .. }))
            .collect();
        let core_index = |v: u32| match roles[v as usize] {
            Role::Core { index } => index as usize,
            Role::Leaf { .. } => unreachable!("only core nodes are searched"),
        };
        let mut slot_of = vec![NO_ROUTE; n_nodes];
        let mut routed = vec![false; n_nodes];
        let mut next_hop = Vec::new();
        let mut queue = std::collections::VecDeque::new();
        let mut seen = vec![false; n_nodes];
        for &d in dests {
            routed[d as usize] = true;
            // a leaf destination is routed through its parent's table
            let target = match roles[d as usize] {
                Role::Leaf { parent, .. } => parent,
                Role::Core { .. } => d,
            };
            if slot_of[target as usize] != NO_ROUTE {
                continue;
            }
            slot_of[target as usize] = next_hop.len() as u32;
            let mut table = vec![NO_ROUTE; core_nodes.len()];
            seen.iter_mut().for_each(|s| *s = false);
            seen[target as usize] = true;
            queue.clear();
            queue.push_back(target);
            while let Some(v) = queue.pop_front() {
                for e in &incoming[v as usize] {
                    let from = e.from as usize;
                    // leaves are never transit nodes: a search only passes through core nodes
                    if seen[from] || matches!(roles[from], Role::Leaf { .. }) {
                        continue;
                    }
                    seen[from] = true;
                    table[core_index(e.from)] = e.link_dir;
                    queue.push_back(e.from);
                }
            }
            next_hop.push(table);
        }
        let mut routes = Routes {
            roles,
            routed,
            slot_of,
            next_hop,
            dense: Vec::new(),
            n_nodes,
        };
        if n_nodes <= DENSE_MAX_NODES {
            let dense = (0..n_nodes * n_nodes)
                .map(|i| routes.walk((i / n_nodes) as u32, (i % n_nodes) as u32))
                .collect();
            routes.dense = dense;
        }
        routes
    }

    /// The link direction to take from `node` toward `dst` (NO_ROUTE if unreachable or `dst` is
    /// not a routed destination).
    #[inline]
    pub fn next_hop(&self, node: u32, dst: u32) -> u32 {
        // with `dst` in range, `i` is within the array exactly when `node` is and the array is
        // kept (one comparison fewer than checking `node` and the array apart)
        let i = node as u64 * self.n_nodes as u64 + dst as u64;
        if (dst as usize) < self.n_nodes && i < self.dense.len() as u64 {
            return self.dense[i as usize];
        }
        if !self.dense.is_empty() {
            return NO_ROUTE;
        }
        self.walk(node, dst)
    }

    /// [`Routes::next_hop`] through the roles and tables.
    fn walk(&self, node: u32, dst: u32) -> u32 {
        if node == dst || !self.routed.get(dst as usize).copied().unwrap_or(false) {
            return NO_ROUTE;
        }
        let Some(&dst_role) = self.roles.get(dst as usize) else {
            return NO_ROUTE;
        };
        let (target, last) = match dst_role {
            Role::Leaf { parent, down, .. } => (parent, Some(down)),
            Role::Core { .. } => (dst, None),
        };
        let slot = self.slot_of[target as usize];
        if slot == NO_ROUTE {
            return NO_ROUTE;
        }
        let table = &self.next_hop[slot as usize];
        match self.roles[node as usize] {
            Role::Leaf { parent, up, .. } => {
                // out through the one link, if the far side can reach the destination
                let reachable = parent == target
                    || matches!(self.roles[parent as usize], Role::Core { index } if table[index as usize] != NO_ROUTE);
                if reachable {
                    up
                } else {
                    NO_ROUTE
                }
            }
            Role::Core { index } => {
                if node == target {
                    last.unwrap_or(NO_ROUTE)
                } else {
                    table[index as usize]
                }
            }
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

    /// The routes of a full breadth-first search from every destination, node by node (what
    /// [`Routes::compute`] must equal).
    fn full_search(n: usize, edges: &[Edge], dests: &[u32]) -> Vec<Vec<u32>> {
        let mut incoming: Vec<Vec<Edge>> = vec![Vec::new(); n];
        for e in edges {
            incoming[e.to as usize].push(*e);
        }
        for v in &mut incoming {
            v.sort_by_key(|e| e.link_dir);
        }
        let mut all = vec![vec![NO_ROUTE; n]; n];
        for &d in dests {
            let table = &mut all[d as usize];
            let mut seen = vec![false; n];
            seen[d as usize] = true;
            let mut q = std::collections::VecDeque::from([d]);
            while let Some(v) = q.pop_front() {
                for e in &incoming[v as usize] {
                    if !seen[e.from as usize] {
                        seen[e.from as usize] = true;
                        table[e.from as usize] = e.link_dir;
                        q.push_back(e.from);
                    }
                }
            }
        }
        all
    }

    #[test]
    fn contracted_routes_equal_a_full_search_on_random_graphs() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        for case in 0..300 {
            let n = rng.random_range(2..24usize);
            // a few routers with random links among them, hosts hanging off them, some
            // isolated nodes and some two-node islands
            let routers = rng.random_range(1..=n.min(6));
            let mut links = Vec::new();
            for _ in 0..rng.random_range(0..routers * 2 + 1) {
                let (a, b) = (rng.random_range(0..routers), rng.random_range(0..routers));
                if a != b {
                    links.push((a as u32, b as u32));
                }
            }
            for h in routers..n {
                match rng.random_range(0..10) {
                    0 => {}                                                   // isolated
                    1 if h + 1 < n => links.push((h as u32, (h + 1) as u32)), // island
                    2 => {
                        // a multi-homed host
                        links.push((h as u32, rng.random_range(0..routers) as u32));
                        links.push((h as u32, rng.random_range(0..routers) as u32));
                    }
                    _ => links.push((h as u32, rng.random_range(0..routers) as u32)),
                }
            }
            let edges = bidir(&links);
            let dests: Vec<u32> = (0..n as u32).filter(|_| rng.random_bool(0.6)).collect();
            let r = Routes::compute(n, &edges, &dests);
            let full = full_search(n, &edges, &dests);
            for dst in 0..n as u32 {
                for node in 0..n as u32 {
                    // the node × node array of a small topology, and the tables behind it
                    assert!(!r.dense.is_empty());
                    for answer in [r.next_hop(node, dst), r.walk(node, dst)] {
                        assert_eq!(
                            answer, full[dst as usize][node as usize],
                            "case {case}: node {node} → {dst}, links {links:?}, dests {dests:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_dumbbell_keeps_one_table_per_router() {
        // pairs 0..k on the left of router L, k..2k on the right of router R
        let k = 1000u32;
        let (l, rr) = (2 * k, 2 * k + 1);
        let mut links = vec![(l, rr)];
        links.extend((0..k).map(|i| (i, l)));
        links.extend((k..2 * k).map(|i| (i, rr)));
        let dests: Vec<u32> = (0..2 * k).collect();
        let r = Routes::compute(2 * k as usize + 2, &bidir(&links), &dests);
        // too large for the node × node array: answered from the tables
        assert!(r.dense.is_empty());
        assert_eq!(r.next_hop.len(), 2);
        assert!(r.next_hop.iter().all(|t| t.len() == 2));
        // left host 3 → right host k + 5: up to L, across, down to the host
        assert_eq!(r.next_hop(3, k + 5), 2 * (1 + 3) as u32);
        assert_eq!(r.next_hop(l, k + 5), 0);
        assert_eq!(r.next_hop(rr, k + 5), 2 * (1 + k + 5) + 1);
    }

    #[test]
    fn disconnected_nodes_have_no_route() {
        let edges = bidir(&[(0, 1)]);
        let r = Routes::compute(3, &edges, &[2]);
        assert_eq!(r.next_hop(0, 2), NO_ROUTE);
    }
}
