//! Contraction planners over a network of label sets (opt_einsum's inputs: one set of labels per
//! operand, the output set and the label sizes) and opt_einsum's cost convention.
//!
//! * [`greedy`]: opt_einsum's `greedy` (`ssa_greedy_optimize`) step for step: Hadamard products
//!   first, then the candidate pair of least `size(result) - size(a) - size(b)` ("memory
//!   removed"; ties to the older operands by SSA id), one best candidate pushed per new operand,
//!   obsolete candidates recognised by their label sets, and the outer products of what is left
//!   smallest first. Its paths equal opt_einsum 3.4's.
//! * [`optimal`]: exact dynamic programming over all subsets (every binary tree, outer products
//!   included): the least opt_einsum `opt_cost` (or largest intermediate, or combo) of any path;
//!   up to [`OPTIMAL_MAX`] operands.
//! * [`dp`]: exact dynamic programming over connected subsets (trees without outer products
//!   inside a connected component, as opt_einsum's `dynamic_programming` with
//!   `search_outer=False`); components are joined by outer products, smallest first. Up to
//!   [`DP_MAX`] operands and [`DP_BUDGET`] units of work (about a second).
//!
//! Paths are opt_einsum's linear format: each entry names positions in the current operand
//! list, which are removed; their contraction is appended at the end.

use crate::cost::{Cost, Delta};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Exhaustive `"optimal"` is exact up to this many operands (`3^n` subset splits).
pub const OPTIMAL_MAX: usize = 12;
/// `"dp"` (connected subsets) is exact up to this many operands ...
pub const DP_MAX: usize = 64;
/// ... and this much work (one unit per pair of subsets tested, [`PAIR_WORK`] per pair
/// contracted, [`SUBSET_WORK`] per connected subset found; about a second on one core);
/// beyond, the planner falls back to greedy.
pub const DP_BUDGET: u64 = 100_000_000;
/// Work units of one contracted pair (see [`DP_BUDGET`]).
pub const PAIR_WORK: u64 = 64;
/// Work units of one new connected subset (see [`DP_BUDGET`]).
pub const SUBSET_WORK: u64 = 256;

/// The objective of the exact planners.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Minimize {
    /// opt_einsum's FLOP count (`opt_cost`).
    Flops,
    /// The largest intermediate (elements), ties broken by FLOPs.
    Size,
    /// FLOPs + 64 × elements written (opt_einsum/cotengra's `combo`).
    Combo,
}

/// Sorted, deduplicated label sets: the planners' view of a contraction.
#[derive(Clone, Debug)]
pub struct Network {
    /// Per operand, its labels (sorted, unique).
    pub inputs: Vec<Vec<usize>>,
    /// The output labels (sorted, unique).
    pub output: Vec<usize>,
    /// Size of each label.
    pub sizes: Vec<usize>,
}

/// `Π sizes[l]` over `set` (exact below `2^128`, see [`Cost`]).
pub fn size_of(set: &[usize], sizes: &[usize]) -> Cost {
    set.iter()
        .fold(Cost::ONE, |acc, &l| acc * Cost::from(sizes[l]))
}

fn union(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

fn intersects(a: &[usize], b: &[usize]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// opt_einsum's `flop_count`: `size(contract) × max(1, terms − 1)`, plus one when labels are
/// summed.
pub fn flop_count(contract: &[usize], inner: bool, terms: usize, sizes: &[usize]) -> Cost {
    let factor = terms.saturating_sub(1).max(1) as u64 + u64::from(inner);
    size_of(contract, sizes).mul_small(factor)
}

/// Static-single-assignment entries (operand `n + k` is the result of entry `k`) to the linear
/// format (opt_einsum 3.4's `ssa_to_linear`: each entry's positions sorted).
pub fn ssa_to_linear(ssa: &[Vec<usize>], n: usize) -> Vec<Vec<usize>> {
    let mut ids: Vec<usize> = (0..n).collect(); // live SSA ids, ascending
    let mut path = Vec::with_capacity(ssa.len());
    for (next, entry) in (n..).zip(ssa) {
        let mut con: Vec<usize> = entry
            .iter()
            .map(|s| ids.partition_point(|x| x < s))
            .collect();
        con.sort_unstable();
        for &j in con.iter().rev() {
            if j < ids.len() {
                ids.remove(j);
            }
        }
        ids.push(next);
        path.push(con);
    }
    path
}

// ---------------------------------------------------------------------------------------------
// greedy

struct Cand {
    k1: usize,
    k2: usize,
    k12: usize,
}

/// A candidate's cost: (memory removed, larger SSA id, smaller SSA id) -- opt_einsum's heap key.
type CandKey = (Delta, usize, usize);

/// The state of opt_einsum's greedy: keys (label sets) interned to ids.
struct Greedy<'a> {
    sizes: &'a [usize],
    out: Vec<bool>,
    keys: Vec<Vec<usize>>,
    key_id: HashMap<Vec<usize>, usize>,
    /// The SSA id of the live operand with each key.
    remaining: Vec<Option<usize>>,
    footprint: Vec<Cost>,
    /// Per label, the live keys holding it (labels outside the output).
    dim_keys: Vec<Vec<usize>>,
    ref2: Vec<bool>,
    ref3: Vec<bool>,
    cands: Vec<Cand>,
    queue: BinaryHeap<Reverse<(CandKey, usize)>>,
    /// Candidates whose result exceeds this many elements are never pushed.
    limit: Cost,
}

impl Greedy<'_> {
    fn intern(&mut self, set: Vec<usize>) -> usize {
        if let Some(&k) = self.key_id.get(&set) {
            return k;
        }
        self.footprint.push(size_of(&set, self.sizes));
        self.keys.push(set.clone());
        self.remaining.push(None);
        self.key_id.insert(set, self.keys.len() - 1);
        self.keys.len() - 1
    }

    /// Push the best candidate of `k1` with each of `k2s` (opt_einsum's `_push_candidate`).
    fn push(&mut self, k1: usize, k2s: &[usize]) {
        let mut best: Option<(CandKey, usize, usize, Vec<usize>)> = None;
        for &k2 in k2s {
            let (a, b) = (&self.keys[k1], &self.keys[k2]);
            let mut k12 = Vec::new();
            let (mut i, mut j) = (0, 0);
            while i < a.len() || j < b.len() {
                let (l, two) = if j >= b.len() || (i < a.len() && a[i] < b[j]) {
                    i += 1;
                    (a[i - 1], false)
                } else if i >= a.len() || b[j] < a[i] {
                    j += 1;
                    (b[j - 1], false)
                } else {
                    i += 1;
                    j += 1;
                    (a[i - 1], true)
                };
                if self.out[l] || (two && self.ref3[l]) || (!two && self.ref2[l]) {
                    k12.push(l);
                }
            }
            let s12 = size_of(&k12, self.sizes);
            if s12 > self.limit {
                continue;
            }
            let cost = Delta::sub2(s12, self.footprint[k1], self.footprint[k2]);
            let (mut x1, mut x2) = (k1, k2);
            let (mut id1, mut id2) = (
                self.remaining[k1].unwrap_or(0),
                self.remaining[k2].unwrap_or(0),
            );
            if id1 > id2 {
                std::mem::swap(&mut x1, &mut x2);
                std::mem::swap(&mut id1, &mut id2);
            }
            let c = (cost, id2, id1);
            if best.as_ref().is_none_or(|b| c < b.0) {
                best = Some((c, x1, x2, k12));
            }
        }
        if let Some((c, x1, x2, k12)) = best {
            let k12 = self.intern(k12);
            self.cands.push(Cand {
                k1: x1,
                k2: x2,
                k12,
            });
            self.queue.push(Reverse((c, self.cands.len() - 1)));
        }
    }
}

/// opt_einsum's greedy path (see the module docs).
pub fn greedy(net: &Network) -> Vec<Vec<usize>> {
    greedy_limited(net, u128::MAX)
}

/// [`greedy`] with NumPy's `memory_limit`: pairs whose result exceeds `limit` elements are never
/// candidates, and once no pair within the limit is left the remaining operands are contracted
/// in one step (as NumPy's and opt_einsum's planners do).
pub fn greedy_limited(net: &Network, limit: u128) -> Vec<Vec<usize>> {
    let limit = Cost::limit(limit);
    let n = net.inputs.len();
    if n == 1 {
        return vec![vec![0]];
    }
    let sizes = &net.sizes;
    let nl = sizes.len();
    // output ∪ the labels every operand carries
    let mut out = vec![false; nl];
    for &l in &net.output {
        out[l] = true;
    }
    let mut everywhere = vec![0usize; nl];
    for t in &net.inputs {
        for &l in t {
            everywhere[l] += 1;
        }
    }
    for (o, &c) in out.iter_mut().zip(&everywhere) {
        *o |= c == n;
    }
    let mut g = Greedy {
        sizes,
        out,
        keys: Vec::new(),
        key_id: HashMap::new(),
        remaining: Vec::new(),
        footprint: Vec::new(),
        dim_keys: vec![Vec::new(); nl],
        ref2: vec![false; nl],
        ref3: vec![false; nl],
        cands: Vec::new(),
        queue: BinaryHeap::new(),
        limit,
    };
    let mut order: Vec<usize> = Vec::new(); // distinct input keys, first appearance first
    let mut ssa_path: Vec<Vec<usize>> = Vec::new();
    let mut next_id = n;
    for (ssa_id, set) in net.inputs.iter().enumerate() {
        let k = g.intern(set.clone());
        match g.remaining[k] {
            Some(prev) => {
                // Hadamard products first
                ssa_path.push(vec![prev, ssa_id]);
                g.remaining[k] = Some(next_id);
                next_id += 1;
            }
            None => {
                g.remaining[k] = Some(ssa_id);
                order.push(k);
            }
        }
    }
    for &k in &order {
        for &l in &g.keys[k] {
            if !g.out[l] {
                g.dim_keys[l].push(k);
            }
        }
    }
    for l in 0..nl {
        let c = if g.out[l] { 0 } else { g.dim_keys[l].len() };
        g.ref2[l] = c >= 2;
        g.ref3[l] = c >= 3;
    }
    for l in 0..nl {
        if g.dim_keys[l].len() < 2 {
            continue;
        }
        let mut list = g.dim_keys[l].clone();
        list.sort_by_key(|&k| g.remaining[k]);
        for i in 0..list.len() - 1 {
            g.push(list[i], &list[i + 1..]);
        }
    }
    while let Some(Reverse((_, ci))) = g.queue.pop() {
        let Cand { k1, k2, k12 } = g.cands[ci];
        let (Some(s1), Some(s2)) = (g.remaining[k1], g.remaining[k2]) else {
            continue; // obsolete
        };
        g.remaining[k1] = None;
        g.remaining[k2] = None;
        for k in [k1, k2] {
            for i in 0..g.keys[k].len() {
                let l = g.keys[k][i];
                if !g.out[l] {
                    g.dim_keys[l].retain(|&x| x != k);
                }
            }
        }
        ssa_path.push(vec![s1, s2]);
        let id12 = next_id;
        next_id += 1;
        if let Some(prev) = g.remaining[k12] {
            // a Hadamard product with the live operand of the same labels
            ssa_path.push(vec![prev, id12]);
            g.remaining[k12] = Some(next_id);
            next_id += 1;
        } else {
            for i in 0..g.keys[k12].len() {
                let l = g.keys[k12][i];
                if !g.out[l] {
                    g.dim_keys[l].push(k12);
                }
            }
            g.remaining[k12] = Some(id12);
        }
        // ref counts of the labels of k1 and k2
        for k in [k1, k2] {
            for i in 0..g.keys[k].len() {
                let l = g.keys[k][i];
                let c = if g.out[l] { 0 } else { g.dim_keys[l].len() };
                g.ref2[l] = c >= 2;
                g.ref3[l] = c >= 3;
            }
        }
        let mut k2s: Vec<usize> = Vec::new();
        for &l in &g.keys[k12] {
            for &k in &g.dim_keys[l] {
                if k != k12 && !k2s.contains(&k) {
                    k2s.push(k);
                }
            }
        }
        if !k2s.is_empty() {
            g.push(k12, &k2s);
        }
    }
    if limit != Cost::UNBOUNDED && g.dim_keys.iter().any(|ks| ks.len() >= 2) {
        // pairs left that share summed labels: none fits the memory limit
        let mut all: Vec<usize> = g.remaining.iter().flatten().copied().collect();
        all.sort_unstable();
        ssa_path.push(all);
        return ssa_to_linear(&ssa_path, n);
    }
    // outer products of what is left, smallest (on the output labels) first
    let mut fq: BinaryHeap<Reverse<(Cost, usize, Vec<usize>)>> = BinaryHeap::new();
    for (k, r) in g.remaining.iter().enumerate() {
        if let Some(id) = *r {
            let kept: Vec<usize> = g.keys[k].iter().copied().filter(|&l| g.out[l]).collect();
            fq.push(Reverse((size_of(&kept, sizes), id, kept)));
        }
    }
    if let Some(Reverse((_, mut id1, mut k1))) = fq.pop() {
        while let Some(Reverse((_, id2, k2))) = fq.pop() {
            let k12: Vec<usize> = union(&k1, &k2).into_iter().filter(|&l| g.out[l]).collect();
            let cost = size_of(&k12, sizes);
            if cost > limit && !fq.is_empty() {
                // nothing fits the limit: everything left at once
                let mut all = vec![id1, id2];
                all.extend(fq.into_iter().map(|Reverse((_, id, _))| id));
                all.sort_unstable();
                ssa_path.push(all);
                break;
            }
            ssa_path.push(vec![id1.min(id2), id1.max(id2)]);
            let id12 = next_id;
            next_id += 1;
            fq.push(Reverse((cost, id12, k12)));
            let Reverse((_, a, b)) = fq.pop().unwrap_or(Reverse((Cost::ZERO, id12, Vec::new())));
            id1 = a;
            k1 = b;
        }
    }
    ssa_to_linear(&ssa_path, n)
}

// ---------------------------------------------------------------------------------------------
// exact planners

/// Result labels of a subset: its labels that the output or an operand outside it carries.
struct Counts {
    total: Vec<usize>,
    out: Vec<bool>,
}

impl Counts {
    fn new(net: &Network) -> Counts {
        let mut total = vec![0usize; net.sizes.len()];
        for t in &net.inputs {
            for &l in t {
                total[l] += 1;
            }
        }
        let mut out = vec![false; net.sizes.len()];
        for &l in &net.output {
            out[l] = true;
        }
        Counts { total, out }
    }

    fn result(&self, net: &Network, members: impl Iterator<Item = usize>) -> Vec<usize> {
        let mut seen: HashMap<usize, usize> = HashMap::new();
        for k in members {
            for &l in &net.inputs[k] {
                *seen.entry(l).or_insert(0) += 1;
            }
        }
        let mut r: Vec<usize> = seen
            .into_iter()
            .filter(|&(l, c)| self.out[l] || self.total[l] > c)
            .map(|(l, _)| l)
            .collect();
        r.sort_unstable();
        r
    }
}

#[derive(Clone)]
struct Best {
    /// (objective, flops) compared lexicographically
    key: (Cost, Cost),
    split: Option<(u64, u64)>,
    result: Vec<usize>,
    size: Cost,
}

fn combine(min: Minimize, a: &Best, b: &Best, flops: Cost, size: Cost) -> (Cost, Cost) {
    combine_keys(min, a.key, b.key, flops, size)
}

fn step_flops(a: &[usize], b: &[usize], r: &[usize], sizes: &[usize]) -> Cost {
    let contract = union(a, b);
    flop_count(&contract, contract.len() > r.len(), 2, sizes)
}

/// A leaf: its labels as given (opt_einsum counts a label only this operand carries in the
/// FLOPs of the operand's first contraction).
fn leaf(net: &Network, k: usize) -> Best {
    let result = net.inputs[k].clone();
    let size = size_of(&result, &net.sizes);
    Best {
        key: (Cost::ZERO, Cost::ZERO),
        split: None,
        result,
        size,
    }
}

fn members(m: u64) -> impl Iterator<Item = usize> {
    (0..64).filter(move |k| m >> k & 1 == 1)
}

/// The tree stored in `best` below `m`, as SSA entries; returns `m`'s SSA id.
fn walk(best: &HashMap<u64, Best>, m: u64, ssa: &mut Vec<Vec<usize>>, n: usize) -> usize {
    match best[&m].split {
        None => m.trailing_zeros() as usize,
        Some((a, b)) => {
            let x = walk(best, a, ssa, n);
            let y = walk(best, b, ssa, n);
            ssa.push(vec![x, y]);
            n + ssa.len() - 1
        }
    }
}

/// Exact DP over every subset (module docs); `None` above [`OPTIMAL_MAX`] operands.
pub fn optimal(net: &Network, min: Minimize) -> Option<Vec<Vec<usize>>> {
    optimal_limited(net, min, u128::MAX)
}

/// Label sets as bitsets of `w` words.
fn bits_of(set: &[usize], w: usize) -> Vec<u64> {
    let mut b = vec![0u64; w];
    for &l in set {
        b[l / 64] |= 1 << (l % 64);
    }
    b
}

/// `Π sizes[l]` over the labels of a bitset.
fn bits_size(b: &[u64], sizes: &[usize]) -> Cost {
    let mut acc = Cost::ONE;
    for (i, &word) in b.iter().enumerate() {
        let mut x = word;
        while x != 0 {
            let l = i * 64 + x.trailing_zeros() as usize;
            acc = acc * Cost::from(sizes[l]);
            x &= x - 1;
        }
    }
    acc
}

/// [`optimal`] with every intermediate (the final result excepted) of at most `limit` elements
/// (NumPy's `memory_limit`); `None` above [`OPTIMAL_MAX`] operands or when no tree stays within
/// the limit.
pub fn optimal_limited(net: &Network, min: Minimize, limit: u128) -> Option<Vec<Vec<usize>>> {
    let limit = Cost::limit(limit);
    let n = net.inputs.len();
    if n > OPTIMAL_MAX {
        return None;
    }
    if n == 1 {
        return Some(vec![vec![0]]);
    }
    let sizes = &net.sizes;
    let w = sizes.len().div_ceil(64).max(1);
    let full: usize = (1usize << n) - 1;
    // union of the operands' labels per subset, then the result labels per subset: those the
    // output or an operand outside carries (a leaf keeps its labels as given)
    let mut uni = vec![0u64; (full + 1) * w];
    for m in 1..=full {
        let k = m.trailing_zeros() as usize;
        let rest = m & (m - 1);
        let kb = bits_of(&net.inputs[k], w);
        for i in 0..w {
            uni[m * w + i] = uni[rest * w + i] | kb[i];
        }
    }
    let outb = bits_of(&net.output, w);
    let mut res = vec![0u64; (full + 1) * w];
    let mut res_size = vec![Cost::ZERO; full + 1];
    let mut res_len = vec![0u32; full + 1];
    for m in 1..=full {
        let comp = full ^ m;
        for i in 0..w {
            res[m * w + i] = if m.is_power_of_two() {
                uni[m * w + i]
            } else {
                uni[m * w + i] & (outb[i] | uni[comp * w + i])
            };
        }
        let r = &res[m * w..(m + 1) * w];
        res_size[m] = bits_size(r, sizes);
        res_len[m] = r.iter().map(|x| x.count_ones()).sum();
    }
    // per subset: (objective, flops) and the split (the part holding the lowest operand)
    let mut key: Vec<Option<(Cost, Cost)>> = vec![None; full + 1];
    let mut split = vec![0usize; full + 1];
    for k in 0..n {
        key[1 << k] = Some((Cost::ZERO, Cost::ZERO));
    }
    let mut contract = vec![0u64; w];
    for m in 1..=full {
        if m.is_power_of_two() || (m != full && res_size[m] > limit) {
            continue;
        }
        let size = res_size[m];
        let low = m & m.wrapping_neg();
        let mut cand: Option<((Cost, Cost), usize)> = None;
        let mut sub = (m - 1) & m;
        while sub != 0 {
            if sub & low != 0 {
                let rest = m ^ sub;
                if let (Some(ka), Some(kb)) = (key[sub], key[rest]) {
                    let mut len = 0u32;
                    for i in 0..w {
                        contract[i] = res[sub * w + i] | res[rest * w + i];
                        len += contract[i].count_ones();
                    }
                    let flops = flop_count_bits(&contract, len > res_len[m], sizes);
                    let c = combine_keys(min, ka, kb, flops, size);
                    if cand.is_none_or(|(best, _)| c < best) {
                        cand = Some((c, sub));
                    }
                }
            }
            sub = (sub - 1) & m;
        }
        if let Some((c, s)) = cand {
            key[m] = Some(c);
            split[m] = s;
        }
    }
    key[full]?;
    fn go(split: &[usize], m: usize, ssa: &mut Vec<Vec<usize>>, n: usize) -> usize {
        if m.is_power_of_two() {
            return m.trailing_zeros() as usize;
        }
        let x = go(split, split[m], ssa, n);
        let y = go(split, m ^ split[m], ssa, n);
        ssa.push(vec![x, y]);
        n + ssa.len() - 1
    }
    let mut ssa = Vec::new();
    go(&split, full, &mut ssa, n);
    Some(ssa_to_linear(&ssa, n))
}

fn flop_count_bits(contract: &[u64], inner: bool, sizes: &[usize]) -> Cost {
    let s = bits_size(contract, sizes);
    if inner {
        s.mul_small(2)
    } else {
        s
    }
}

/// [`combine`] on bare keys.
fn combine_keys(
    min: Minimize,
    a: (Cost, Cost),
    b: (Cost, Cost),
    flops: Cost,
    size: Cost,
) -> (Cost, Cost) {
    let f = a.1 + b.1 + flops;
    match min {
        Minimize::Flops => (f, f),
        Minimize::Size => (a.0.max(b.0).max(size), f),
        Minimize::Combo => (a.0 + b.0 + flops + size.mul_small(64), f),
    }
}

/// Exact DP over connected subsets (module docs); `None` above [`DP_MAX`] operands or
/// [`DP_BUDGET`] units of work.
pub fn dp(net: &Network, min: Minimize) -> Option<Vec<Vec<usize>>> {
    dp_within(net, min, DP_BUDGET)
}

/// [`dp`] within `budget` units of work (see [`DP_BUDGET`]; `None` beyond).
pub fn dp_within(net: &Network, min: Minimize, budget: u64) -> Option<Vec<Vec<usize>>> {
    dp_limited(net, min, budget, u128::MAX)
}

/// [`dp_within`] with every intermediate (the final result excepted) of at most `limit`
/// elements (NumPy's `memory_limit`); `None` also when no tree stays within the limit. Up to
/// [`OPTIMAL_MAX`] operands this is [`optimal_limited`] (outer products between intermediates
/// included: exact), above it the connected-subset search.
pub fn dp_limited(
    net: &Network,
    min: Minimize,
    budget: u64,
    limit: u128,
) -> Option<Vec<Vec<usize>>> {
    let n = net.inputs.len();
    if n > DP_MAX {
        return None;
    }
    if n == 1 {
        return Some(vec![vec![0]]);
    }
    if n <= OPTIMAL_MAX {
        // 3^n / 2 pair tests at most (265 720 at 12 operands: milliseconds)
        let work = 3u64.pow(n as u32) / 2;
        budget.checked_sub(work)?;
        return optimal_limited(net, min, limit);
    }
    let counts = Counts::new(net);
    let limit = Cost::limit(limit);
    // operands sharing a label with each operand
    let mut adj = vec![0u64; n];
    for i in 0..n {
        for j in i + 1..n {
            if intersects(&net.inputs[i], &net.inputs[j]) {
                adj[i] |= 1 << j;
                adj[j] |= 1 << i;
            }
        }
    }
    // connected components
    let mut comps: Vec<u64> = Vec::new();
    let mut seen = 0u64;
    for s in 0..n {
        if seen >> s & 1 == 1 {
            continue;
        }
        let mut mask = 1u64 << s;
        loop {
            let grown = members(mask).fold(mask, |m, k| m | adj[k]);
            if grown == mask {
                break;
            }
            mask = grown;
        }
        seen |= mask;
        comps.push(mask);
    }
    let nbr = |m: u64| members(m).fold(0u64, |acc, k| acc | adj[k]);
    let mut best: HashMap<u64, Best> = HashMap::new();
    let mut budget = budget;
    for k in 0..n {
        best.insert(1 << k, leaf(net, k));
    }
    for &cm in &comps {
        let members_c: Vec<usize> = members(cm).collect();
        // per size, the connected subsets and their neighbours
        let mut levels: Vec<Vec<(u64, u64)>> = vec![
            Vec::new(),
            members_c.iter().map(|&k| (1u64 << k, adj[k])).collect(),
        ];
        for m in 2..=members_c.len() {
            let mut found: HashMap<u64, Best> = HashMap::new();
            for k in 1..=m / 2 {
                let (la, lb) = (&levels[k], &levels[m - k]);
                for (ia, &(a, na)) in la.iter().enumerate() {
                    let start = if k == m - k { ia + 1 } else { 0 };
                    budget = budget.checked_sub(lb.len().saturating_sub(start) as u64)?;
                    for &(b, _) in &lb[start..] {
                        if a & b != 0 || na & b == 0 {
                            continue;
                        }
                        budget = budget.checked_sub(PAIR_WORK)?;
                        let (ba, bb) = (&best[&a], &best[&b]);
                        let u = a | b;
                        if let Some(e) = found.get_mut(&u) {
                            let flops = step_flops(&ba.result, &bb.result, &e.result, &net.sizes);
                            let key = combine(min, ba, bb, flops, e.size);
                            if key < e.key {
                                e.key = key;
                                e.split = Some((a, b));
                            }
                        } else {
                            budget = budget.checked_sub(SUBSET_WORK)?;
                            let result = counts.result(net, members(u));
                            let size = size_of(&result, &net.sizes);
                            if size > limit && u != cm {
                                continue;
                            }
                            let flops = step_flops(&ba.result, &bb.result, &result, &net.sizes);
                            let key = combine(min, ba, bb, flops, size);
                            found.insert(
                                u,
                                Best {
                                    key,
                                    split: Some((a, b)),
                                    result,
                                    size,
                                },
                            );
                        }
                    }
                }
            }
            let mut level: Vec<(u64, u64)> = found.keys().map(|&u| (u, nbr(u))).collect();
            level.sort_unstable();
            best.extend(found);
            levels.push(level);
        }
    }
    // components joined by outer products, smallest result first
    let mut ssa = Vec::new();
    let mut heap: BinaryHeap<Reverse<(Cost, usize, Vec<usize>)>> = BinaryHeap::new();
    for &cm in &comps {
        best.get(&cm)?;
        let id = walk(&best, cm, &mut ssa, n);
        let b = &best[&cm];
        heap.push(Reverse((b.size, id, b.result.clone())));
    }
    while heap.len() > 1 {
        let Reverse((_, x, ra)) = heap.pop()?;
        let Reverse((_, y, rb)) = heap.pop()?;
        ssa.push(vec![x.min(y), x.max(y)]);
        let r = union(&ra, &rb);
        let size = size_of(&r, &net.sizes);
        if size > limit && !heap.is_empty() {
            return None;
        }
        heap.push(Reverse((size, n + ssa.len() - 1, r)));
    }
    Some(ssa_to_linear(&ssa, n))
}

/// A contraction tree (opt_einsum's nested-tuple form): a leaf operand or a node contracting
/// its children at once.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tree {
    Leaf(usize),
    Node(Vec<Tree>),
}

/// The linear path of `tree` over `n` operands (every leaf exactly once), or a message.
pub fn tree_to_path(tree: &Tree, n: usize) -> Result<Vec<Vec<usize>>, String> {
    let mut seen = vec![false; n];
    let mut ssa = Vec::new();
    fn go(
        t: &Tree,
        n: usize,
        seen: &mut [bool],
        ssa: &mut Vec<Vec<usize>>,
    ) -> Result<usize, String> {
        match t {
            Tree::Leaf(k) => {
                if *k >= n || seen[*k] {
                    return Err(format!(
                        "leaf {k} repeated or out of range (each of 0..{n} exactly once)"
                    ));
                }
                seen[*k] = true;
                Ok(*k)
            }
            Tree::Node(ch) => {
                if ch.is_empty() {
                    return Err("an empty node".to_string());
                }
                let ids = ch
                    .iter()
                    .map(|c| go(c, n, seen, ssa))
                    .collect::<Result<Vec<_>, _>>()?;
                ssa.push(ids);
                Ok(n + ssa.len() - 1)
            }
        }
    }
    let root = go(tree, n, &mut seen, &mut ssa)?;
    if let Some(k) = seen.iter().position(|s| !s) {
        return Err(format!("operand {k} is not a leaf of the tree"));
    }
    if ssa.is_empty() {
        // a single leaf: contract it alone
        let _ = root;
        ssa.push(vec![0]);
    }
    Ok(ssa_to_linear(&ssa, n))
}
