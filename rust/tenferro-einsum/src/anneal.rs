//! `optimize="anneal"`: simulated annealing over binary contraction trees, as TreeSA
//! (Kalachev, Panteleev, Yung, "Multi-tensor contraction for XEB verification of quantum
//! circuits", arXiv:2108.05665, §III; omeco's `TreeSA`) and cotengra's `SA`.
//!
//! Each repeat starts from a tree (the first from [`path::greedy`]'s path, the others from a
//! randomised greedy: the next pair drawn with Boltzmann weights `exp(-cost / T)` over
//! opt_einsum's "memory removed" cost `size(ab) - α (size(a) + size(b))`, with `α` and `T`
//! drawn per repeat), then anneals it: [`STEPS`] inverse temperatures `β` rising linearly from
//! [`BETA_START`] to [`BETA_END`], at each [`SWEEPS`] sweeps over the internal nodes (pre-order
//! from the root), each node proposing one local rotation `((A, B), C) -> ((A, C), B)` or
//! `((C, B), A)` (of either child), accepted with Metropolis' rule `min(1, exp(-β ΔE))`. `ΔE`
//! is the change of the two changed nodes' local cost in log2 (TreeSA's scale-free energy):
//! their FLOPs (`"flops"`), FLOPs + 64 × elements (`"combo"`), or their largest result plus a
//! tenth of the FLOPs (`"size"`). Every tree is scored exactly at the end of each temperature
//! step by opt_einsum's `opt_cost` convention (as [`path::optimal`]: FLOPs, the largest
//! intermediate with FLOPs breaking ties, or FLOPs + 64 × elements written); the best tree of
//! all repeats is returned, greedy's own tree included, so the result is never worse than
//! greedy's.
//!
//! The search is deterministic for a given seed (one xoshiro256++ stream, seeded by
//! `seed`) unless `max_time` ends it first. A [`Probe`] reports progress and carries a stop
//! request; the Python binding runs the search through a [`Runner`] ([`set_runner`]) on a
//! helper thread with the GIL released, showing a progress bar and serving Ctrl-C.

use crate::cost::Cost;
use crate::path::{self, Minimize, Network};
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tenferro_tensor::Result;

/// Repeats (annealed trees) of `optimize="anneal"` without options.
pub const DEFAULT_REPEATS: u64 = 8;
/// Temperature steps per repeat.
pub const STEPS: u64 = 100;
/// Sweeps over the internal nodes per temperature step.
pub const SWEEPS: u64 = 10;
/// The first inverse temperature (per log2 unit of local cost).
pub const BETA_START: f64 = 0.01;
/// The last inverse temperature.
pub const BETA_END: f64 = 15.0;

/// The options of `optimize="anneal"` (`tf.EinsumAnneal`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AnnealOptions {
    /// Seed of the random stream.
    pub seed: u64,
    /// Wall-clock limit of the search (`None`: none); the best tree found by then is returned.
    pub max_time: Option<Duration>,
    /// Annealed trees (repeats), at least 1.
    pub max_repeats: u64,
}

impl Default for AnnealOptions {
    fn default() -> AnnealOptions {
        AnnealOptions {
            seed: 0,
            max_time: None,
            max_repeats: DEFAULT_REPEATS,
        }
    }
}

impl AnnealOptions {
    /// Sweeps of the whole search when no time limit ends it (for progress).
    pub fn total_sweeps(&self) -> u64 {
        self.max_repeats.saturating_mul(STEPS * SWEEPS)
    }
}

/// Progress of a running search and a stop request, shared with the thread watching it.
#[derive(Debug, Default)]
pub struct Probe {
    done: AtomicU64,
    stop: AtomicBool,
}

impl Probe {
    /// Sweeps done so far (see [`AnnealOptions::total_sweeps`]).
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Ask the search to stop at its next sweep (it returns the best tree found so far).
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was requested.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// The search as a job: returns the linear path, polling the probe it is given.
pub type Search<'a> = dyn Fn(&Probe) -> Vec<Vec<usize>> + Sync + 'a;

/// Runs searches for a host (the Python binding: on a helper thread, the GIL released, with a
/// progress bar and Ctrl-C).
pub trait Runner: Send + Sync {
    /// Run `search` under `options` to its end.
    ///
    /// # Errors
    /// `Interrupted` when the host stopped it.
    fn run(&self, options: &AnnealOptions, search: &Search<'_>) -> Result<Vec<Vec<usize>>>;
}

static RUNNER: OnceLock<Box<dyn Runner>> = OnceLock::new();

/// Install the process's [`Runner`] (the first call wins; without one, searches run inline).
pub fn set_runner(runner: Box<dyn Runner>) {
    let _ = RUNNER.set(runner);
}

/// The annealed path of `net` (module docs), run through the installed [`Runner`].
///
/// # Errors
/// The runner's (`Interrupted`).
pub fn plan(net: &Network, options: &AnnealOptions, min: Minimize) -> Result<Vec<Vec<usize>>> {
    let search = |probe: &Probe| anneal(net, options, min, probe);
    match RUNNER.get() {
        Some(r) => r.run(options, &search),
        None => Ok(search(&Probe::default())),
    }
}

// ---------------------------------------------------------------------------------------------
// cost model

/// Per label: carriers among the operands, whether the output keeps it, log2 of its size.
struct Ctx {
    total: Vec<u32>,
    out: Vec<bool>,
    lg: Vec<f64>,
    sizes: Vec<Cost>,
}

/// A node's result: (label, operands below carrying it), sorted by label.
type Labels = Vec<(u32, u32)>;

impl Ctx {
    fn new(net: &Network) -> Ctx {
        let nl = net.sizes.len();
        let mut total = vec![0u32; nl];
        for t in &net.inputs {
            for &l in t {
                total[l] += 1;
            }
        }
        let mut out = vec![false; nl];
        for &l in &net.output {
            out[l] = true;
        }
        Ctx {
            total,
            out,
            lg: net.sizes.iter().map(|&s| (s as f64).log2()).collect(),
            sizes: net.sizes.iter().map(|&s| Cost::from(s)).collect(),
        }
    }

    /// Contract `a` with `b`: the result into `buf` (when given); returns (log2 size of the
    /// union, whether labels are summed, log2 size of the result).
    fn merge(
        &self,
        a: &[(u32, u32)],
        b: &[(u32, u32)],
        mut buf: Option<&mut Labels>,
    ) -> (f64, bool, f64) {
        if let Some(buf) = buf.as_deref_mut() {
            buf.clear();
        }
        let (mut lu, mut lr, mut removed) = (0.0, 0.0, false);
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let (l, c) = if j >= b.len() || (i < a.len() && a[i].0 < b[j].0) {
                i += 1;
                a[i - 1]
            } else if i >= a.len() || b[j].0 < a[i].0 {
                j += 1;
                b[j - 1]
            } else {
                i += 1;
                j += 1;
                (a[i - 1].0, a[i - 1].1 + b[j - 1].1)
            };
            let g = self.lg[l as usize];
            lu += g;
            if self.out[l as usize] || c < self.total[l as usize] {
                lr += g;
                if let Some(buf) = buf.as_deref_mut() {
                    buf.push((l, c));
                }
            } else {
                removed = true;
            }
        }
        (lu, removed, lr)
    }

    fn size(&self, labels: &[(u32, u32)]) -> Cost {
        labels
            .iter()
            .fold(Cost::ONE, |acc, &(l, _)| acc * self.sizes[l as usize])
    }
}

fn log2_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp2().ln_1p() / std::f64::consts::LN_2
}

// ---------------------------------------------------------------------------------------------
// trees

/// A binary contraction tree: leaves `0..n`, internal nodes `n..2n-1`.
#[derive(Clone)]
struct BTree {
    n: usize,
    ch: Vec<[u32; 2]>,
    labels: Vec<Labels>,
    /// log2 of each node's result size
    ls: Vec<f64>,
    /// log2 of each internal node's FLOPs
    lf: Vec<f64>,
    root: u32,
}

impl BTree {
    /// From SSA pairs (node `n + k` contracts the pair of entry `k`).
    fn from_ssa(net: &Network, ctx: &Ctx, ssa: &[[u32; 2]]) -> BTree {
        let n = net.inputs.len();
        let m = n + ssa.len();
        let mut t = BTree {
            n,
            ch: vec![[0, 0]; m],
            labels: Vec::with_capacity(m),
            ls: vec![0.0; m],
            lf: vec![0.0; m],
            root: (m - 1) as u32,
        };
        for (k, inp) in net.inputs.iter().enumerate() {
            t.labels.push(inp.iter().map(|&l| (l as u32, 1)).collect());
            t.ls[k] = inp.iter().map(|&l| ctx.lg[l]).sum();
        }
        for (k, &[a, b]) in ssa.iter().enumerate() {
            let mut buf = Vec::new();
            let (lu, removed, lr) =
                ctx.merge(&t.labels[a as usize], &t.labels[b as usize], Some(&mut buf));
            t.labels.push(buf);
            t.ch[n + k] = [a, b];
            t.ls[n + k] = lr;
            t.lf[n + k] = lu + f64::from(u8::from(removed));
        }
        t
    }

    /// SSA pairs in post-order from the root.
    fn ssa(&self) -> Vec<Vec<usize>> {
        let mut ssa = Vec::with_capacity(self.n.saturating_sub(1));
        let mut id = vec![0usize; self.ch.len()];
        let mut stack = vec![(self.root, false)];
        while let Some((v, expanded)) = stack.pop() {
            let vu = v as usize;
            if vu < self.n {
                id[vu] = vu;
            } else if expanded {
                let [a, b] = self.ch[vu];
                ssa.push(vec![id[a as usize], id[b as usize]]);
                id[vu] = self.n + ssa.len() - 1;
            } else {
                let [a, b] = self.ch[vu];
                stack.push((v, true));
                stack.push((b, false));
                stack.push((a, false));
            }
        }
        ssa
    }

    /// The exact objective `(key, flops)` (as `path::optimal`'s).
    fn score(&self, ctx: &Ctx, min: Minimize) -> (Cost, Cost) {
        let (mut flops, mut size_max, mut written) = (Cost::ZERO, Cost::ZERO, Cost::ZERO);
        let mut labels: Vec<Labels> = self.labels.clone();
        let mut stack = vec![(self.root, false)];
        let mut buf = Vec::new();
        while let Some((v, expanded)) = stack.pop() {
            let vu = v as usize;
            if vu < self.n {
                continue;
            }
            let [a, b] = self.ch[vu];
            if !expanded {
                stack.push((v, true));
                stack.push((b, false));
                stack.push((a, false));
                continue;
            }
            ctx.merge(&labels[a as usize], &labels[b as usize], Some(&mut buf));
            // the union's size, exactly
            let (la, lb) = (&labels[a as usize], &labels[b as usize]);
            let (mut union, mut width) = (Cost::ONE, 0usize);
            let (mut i, mut j) = (0, 0);
            while i < la.len() || j < lb.len() {
                let l = if j >= lb.len() || (i < la.len() && la[i].0 < lb[j].0) {
                    i += 1;
                    la[i - 1].0
                } else if i >= la.len() || lb[j].0 < la[i].0 {
                    j += 1;
                    lb[j - 1].0
                } else {
                    i += 1;
                    j += 1;
                    la[i - 1].0
                };
                union = union * ctx.sizes[l as usize];
                width += 1;
            }
            let removed = width > buf.len();
            let f = if removed { union.mul_small(2) } else { union };
            let s = ctx.size(&buf);
            flops += f;
            size_max = size_max.max(s);
            written += s;
            labels[vu] = std::mem::take(&mut buf);
        }
        match min {
            Minimize::Flops => (flops, flops),
            Minimize::Size => (size_max, flops),
            Minimize::Combo => (flops + written.mul_small(64), flops),
        }
    }
}

/// SSA pairs of a linear path (entries of more than two operands contracted pairwise, in
/// order).
fn linear_to_ssa(path: &[Vec<usize>], n: usize) -> Vec<[u32; 2]> {
    let mut ids: Vec<u32> = (0..n as u32).collect();
    let mut ssa = Vec::with_capacity(n.saturating_sub(1));
    for e in path {
        let mut pos = e.clone();
        pos.sort_unstable();
        let taken: Vec<u32> = e.iter().map(|&p| ids[p]).collect();
        for &p in pos.iter().rev() {
            ids.remove(p);
        }
        let mut acc = taken[0];
        for &x in &taken[1..] {
            ssa.push([acc, x]);
            acc = (n + ssa.len() - 1) as u32;
        }
        ids.push(acc);
    }
    ssa
}

// ---------------------------------------------------------------------------------------------
// random streams

struct Rng(Xoshiro256PlusPlus);

impl Rng {
    fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.0.next_u64()) * n as u128) >> 64) as usize
    }

    /// A standard Gumbel variate.
    fn gumbel(&mut self) -> f64 {
        let u = self.uniform().max(f64::MIN_POSITIVE);
        -(-u.ln()).ln()
    }
}

/// A randomised greedy tree (module docs) as SSA pairs.
fn random_greedy(net: &Network, ctx: &Ctx, rng: &mut Rng, alpha: f64, temp: f64) -> Vec<[u32; 2]> {
    let n = net.inputs.len();
    let m = 2 * n - 1;
    let mut labels: Vec<Labels> = Vec::with_capacity(m);
    let mut ls: Vec<f64> = Vec::with_capacity(m);
    for inp in &net.inputs {
        labels.push(inp.iter().map(|&l| (l as u32, 1)).collect());
        ls.push(inp.iter().map(|&l| ctx.lg[l]).sum());
    }
    let mut live = vec![true; n];
    let nl = net.sizes.len();
    let mut holders: Vec<Vec<u32>> = vec![Vec::new(); nl];
    for (k, inp) in net.inputs.iter().enumerate() {
        for &l in inp {
            if !ctx.out[l] {
                holders[l].push(k as u32);
            }
        }
    }
    let exp2 = |x: f64| x.min(1000.0).exp2();
    let cost = |labels: &[Labels], ls: &[f64], a: u32, b: u32| -> f64 {
        let (_, _, lr) = ctx.merge(&labels[a as usize], &labels[b as usize], None);
        exp2(lr) - alpha * (exp2(ls[a as usize]) + exp2(ls[b as usize]))
    };
    let mut seen = std::collections::HashSet::new();
    let mut cands: Vec<(u32, u32, f64)> = Vec::new();
    for h in &holders {
        for i in 0..h.len() {
            for j in i + 1..h.len() {
                let (a, b) = (h[i].min(h[j]), h[i].max(h[j]));
                if seen.insert((a, b)) {
                    cands.push((a, b, cost(&labels, &ls, a, b)));
                }
            }
        }
    }
    let mut ssa = Vec::with_capacity(n - 1);
    let mut buf = Vec::new();
    while !cands.is_empty() {
        let cmin = cands.iter().map(|c| c.2).fold(f64::INFINITY, f64::min);
        let scale = temp * cmin.abs().max(1.0);
        let mut pick = 0;
        let mut best = f64::INFINITY;
        for (i, c) in cands.iter().enumerate() {
            let v = c.2 - scale * rng.gumbel();
            if v < best {
                best = v;
                pick = i;
            }
        }
        let (a, b, _) = cands[pick];
        let (_, _, lr) = ctx.merge(&labels[a as usize], &labels[b as usize], Some(&mut buf));
        let c = labels.len() as u32;
        labels.push(std::mem::take(&mut buf));
        ls.push(lr);
        live[a as usize] = false;
        live[b as usize] = false;
        live.push(true);
        ssa.push([a, b]);
        for x in [a, b] {
            for &(l, _) in &labels[x as usize] {
                holders[l as usize].retain(|&h| h != x);
            }
        }
        cands.retain(|&(p, q, _)| p != a && p != b && q != a && q != b);
        let mut nb: Vec<u32> = Vec::new();
        for &(l, _) in &labels[c as usize] {
            if ctx.out[l as usize] {
                continue;
            }
            for &h in &holders[l as usize] {
                if !nb.contains(&h) {
                    nb.push(h);
                }
            }
            holders[l as usize].push(c);
        }
        for h in nb {
            let v = cost(&labels, &ls, h, c);
            cands.push((h, c, v));
        }
    }
    // what is left (disconnected parts): outer products, smallest first
    let mut rest: Vec<u32> = (0..labels.len() as u32)
        .filter(|&k| live[k as usize])
        .collect();
    while rest.len() > 1 {
        rest.sort_by(|&x, &y| ls[y as usize].total_cmp(&ls[x as usize]).then(y.cmp(&x)));
        let a = rest.pop().unwrap_or(0);
        let b = rest.pop().unwrap_or(0);
        let (_, _, lr) = ctx.merge(&labels[a as usize], &labels[b as usize], Some(&mut buf));
        rest.push(labels.len() as u32);
        labels.push(std::mem::take(&mut buf));
        ls.push(lr);
        ssa.push([a.min(b), a.max(b)]);
    }
    ssa
}

// ---------------------------------------------------------------------------------------------
// annealing

/// The local energy of two nodes' log2 FLOPs and log2 result sizes (module docs).
fn energy(min: Minimize, fx: f64, fp: f64, sx: f64, sp: f64) -> f64 {
    match min {
        Minimize::Flops => log2_add(fx, fp),
        Minimize::Combo => log2_add(log2_add(fx, fp), 6.0 + log2_add(sx, sp)),
        Minimize::Size => sx.max(sp) + 0.1 * log2_add(fx, fp),
    }
}

struct Annealer<'a> {
    ctx: &'a Ctx,
    min: Minimize,
    rng: &'a mut Rng,
    buf: Labels,
}

impl Annealer<'_> {
    /// Propose one rotation at internal node `p` (module docs).
    fn rotate(&mut self, t: &mut BTree, p: usize, beta: f64) {
        let [l, r] = t.ch[p];
        let n = t.n as u32;
        let mut opts = [(0u32, 0u32, 0usize); 4];
        let mut k = 0;
        for (x, c) in [(l, r), (r, l)] {
            if x >= n {
                for j in 0..2 {
                    opts[k] = (x, c, j);
                    k += 1;
                }
            }
        }
        if k == 0 {
            return;
        }
        let (x, c, j) = opts[self.rng.below(k)];
        let xu = x as usize;
        let keep = t.ch[xu][1 - j];
        let out = t.ch[xu][j];
        let (lux, rx, lrx) = self.ctx.merge(
            &t.labels[keep as usize],
            &t.labels[c as usize],
            Some(&mut self.buf),
        );
        let fx = lux + f64::from(u8::from(rx));
        let (lup, rp, _) = self.ctx.merge(&self.buf, &t.labels[out as usize], None);
        let fp = lup + f64::from(u8::from(rp));
        let de = energy(self.min, fx, fp, lrx, t.ls[p])
            - energy(self.min, t.lf[xu], t.lf[p], t.ls[xu], t.ls[p]);
        if de <= 0.0 || self.rng.uniform() < (-beta * de).exp() {
            t.ch[xu] = [keep, c];
            t.ch[p] = [x, out];
            std::mem::swap(&mut t.labels[xu], &mut self.buf);
            t.ls[xu] = lrx;
            t.lf[xu] = fx;
            t.lf[p] = fp;
        }
    }

    /// One sweep: pre-order from the root, one proposal per internal node.
    fn sweep(&mut self, t: &mut BTree, beta: f64, stack: &mut Vec<u32>) {
        stack.clear();
        stack.push(t.root);
        while let Some(v) = stack.pop() {
            let vu = v as usize;
            if vu < t.n {
                continue;
            }
            self.rotate(t, vu, beta);
            let [a, b] = t.ch[vu];
            stack.push(b);
            stack.push(a);
        }
    }
}

/// The search itself (module docs): the best linear path, polling `probe`.
pub fn anneal(
    net: &Network,
    options: &AnnealOptions,
    min: Minimize,
    probe: &Probe,
) -> Vec<Vec<usize>> {
    let n = net.inputs.len();
    if n <= 2 {
        return vec![(0..n).collect()];
    }
    let greedy = path::greedy(net);
    if net.sizes.contains(&0) {
        return greedy; // every path costs nothing
    }
    let start = Instant::now();
    let deadline = options.max_time.and_then(|d| start.checked_add(d));
    let ctx = Ctx::new(net);
    let mut rng = Rng(Xoshiro256PlusPlus::seed_from_u64(options.seed));
    let g = BTree::from_ssa(net, &ctx, &linear_to_ssa(&greedy, n));
    let mut best_key = g.score(&ctx, min);
    let mut best: Option<BTree> = None;
    let mut stack = Vec::new();
    let over =
        |probe: &Probe| probe.stop_requested() || deadline.is_some_and(|d| Instant::now() >= d);
    'repeats: for rep in 0..options.max_repeats.max(1) {
        let mut t = if rep == 0 {
            g.clone()
        } else {
            let alpha = 0.5 + 1.5 * rng.uniform();
            let temp = (0.001f64.ln() + rng.uniform() * 1000f64.ln()).exp();
            BTree::from_ssa(net, &ctx, &random_greedy(net, &ctx, &mut rng, alpha, temp))
        };
        let mut an = Annealer {
            ctx: &ctx,
            min,
            rng: &mut rng,
            buf: Vec::new(),
        };
        for step in 0..STEPS {
            let beta = BETA_START + (BETA_END - BETA_START) * step as f64 / (STEPS - 1) as f64;
            let mut stopped = false;
            for _ in 0..SWEEPS {
                an.sweep(&mut t, beta, &mut stack);
                probe.done.fetch_add(1, Ordering::Relaxed);
                if over(probe) {
                    stopped = true;
                    break;
                }
            }
            let key = t.score(&ctx, min);
            if key < best_key {
                best_key = key;
                best = Some(t.clone());
            }
            if stopped {
                break 'repeats;
            }
        }
    }
    match best {
        Some(t) => path::ssa_to_linear(&t.ssa(), n),
        None => greedy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded random 3-regular graph of `n` tensors with bonds of size 2.
    fn regular3(n: usize, seed: u64) -> Network {
        let mut rng = Rng(Xoshiro256PlusPlus::seed_from_u64(seed));
        loop {
            let mut stubs: Vec<usize> = (0..3 * n).map(|k| k / 3).collect();
            for i in (1..stubs.len()).rev() {
                let j = rng.below(i + 1);
                stubs.swap(i, j);
            }
            let mut inputs = vec![Vec::new(); n];
            let mut ok = true;
            let mut edges = std::collections::HashSet::new();
            for (e, p) in stubs.chunks(2).enumerate() {
                if p[0] == p[1] || !edges.insert((p[0].min(p[1]), p[0].max(p[1]))) {
                    ok = false;
                    break;
                }
                inputs[p[0]].push(e);
                inputs[p[1]].push(e);
            }
            if ok {
                for s in &mut inputs {
                    s.sort_unstable();
                }
                return Network {
                    inputs,
                    output: Vec::new(),
                    sizes: vec![2; 3 * n / 2],
                };
            }
        }
    }

    fn cost(net: &Network, path: &[Vec<usize>], min: Minimize) -> (Cost, Cost) {
        let ctx = Ctx::new(net);
        BTree::from_ssa(net, &ctx, &linear_to_ssa(path, net.inputs.len())).score(&ctx, min)
    }

    #[test]
    fn never_worse_than_greedy_and_deterministic() {
        for seed in 0..3 {
            let net = regular3(40, seed);
            let opts = AnnealOptions {
                seed,
                max_time: None,
                max_repeats: 2,
            };
            let p = anneal(&net, &opts, Minimize::Flops, &Probe::default());
            assert_eq!(p, anneal(&net, &opts, Minimize::Flops, &Probe::default()));
            let g = path::greedy(&net);
            assert!(cost(&net, &p, Minimize::Flops) <= cost(&net, &g, Minimize::Flops));
        }
    }

    #[test]
    fn score_matches_opt_einsum_convention() {
        // ab,bc,cd->ad with sizes 2,3,4,5: ((0,1),2): 2*3*4*2 + 2*4*5*2 = 48 + 80
        let net = Network {
            inputs: vec![vec![0, 1], vec![1, 2], vec![2, 3]],
            output: vec![0, 3],
            sizes: vec![2, 3, 4, 5],
        };
        let p = vec![vec![0, 1], vec![0, 1]];
        let c = Cost::exact;
        assert_eq!(cost(&net, &p, Minimize::Flops), (c(128), c(128)));
        assert_eq!(cost(&net, &p, Minimize::Size), (c(10), c(128)));
        assert_eq!(
            cost(&net, &p, Minimize::Combo),
            (c(128 + 64 * (8 + 10)), c(128))
        );
    }
}
