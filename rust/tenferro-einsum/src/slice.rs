//! Slicing a planned contraction to a memory limit (cotengra's `SliceFinder`).
//!
//! A sliced label is fixed to one value per *slice*: every slice is the same contraction tree
//! over the operands' sub-blocks, with that label of size 1, and the slices' results are summed
//! (contracted labels) or placed (output labels). Slicing shrinks every tensor of the tree that
//! carries the label, at the price of repeating the work on the tensors that do not (the FLOP
//! *overhead*).
//!
//! [`find`] searches greedily, as cotengra's `SliceFinder`: while some tensor of one slice
//! exceeds the limit, slice the label with the least FLOP increase per unit of *excess* removed
//! (excess: `Σ max(0, log2 size − log2 limit)` over the slice's tensors), with a little Gumbel
//! noise on the score in all but the first of several seeded repeats; then drop sliced labels
//! that are no longer needed (largest first) and keep the repeat of least total FLOPs.
//!
//! The tensors checked against the limit are the tensors a slice creates: the result of every
//! path entry, and the operands the lowering prepares (diagonals, single-operand sums, size-1
//! broadcast axes dropped). The operands themselves are read in place (sliced: views), so an
//! operand larger than the limit needs no slicing of its own; `largest_intermediate` of the
//! unsliced report counts the operands too.
//! Costs use opt_einsum's `flop_count` per entry with the sliced labels of size 1 (an entry that
//! sums a label still counts its addition when that label is sliced: the sum happens across the
//! slices), times the number of slices; so the sliced cost is never below the unsliced one.

use crate::cost::Cost;
use crate::path::{flop_count, Network};
use crate::Big;

/// The outcome of [`find`]; the counts are exact (the search compares [`Cost`]s).
#[derive(Clone, Debug, PartialEq)]
pub struct Sliced {
    /// The sliced label ids, ascending.
    pub labels: Vec<usize>,
    /// The number of slices (`Π sizes` of the sliced labels).
    pub nslices: Big,
    /// The unsliced path's FLOPs (opt_einsum convention).
    pub cost: Big,
    /// The FLOPs of all slices together.
    pub sliced_cost: Big,
    /// The largest tensor of one slice (elements).
    pub largest: Big,
    /// The largest tensor of the unsliced contraction (elements).
    pub unsliced_largest: Big,
    /// Every tensor of one slice together (elements): a bound on what one slice's forward
    /// pass holds at once.
    pub footprint: Big,
}

impl Sliced {
    /// `sliced_cost / cost` (1.0 when nothing is sliced or the cost is zero).
    pub fn overhead(&self) -> f64 {
        crate::info::speedup(&self.sliced_cost, &self.cost)
    }
}

/// Search settings: repeats (the first deterministic) and the noise of the others.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Number of greedy runs (at least 1).
    pub repeats: usize,
    /// Seed of the noise of runs after the first.
    pub seed: u64,
    /// Scale of the Gumbel noise on the log score.
    pub temperature: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            repeats: 16,
            seed: 0x5eed,
            temperature: 0.3,
        }
    }
}

/// The contraction tree of a path, as label sets.
#[derive(Clone, Debug)]
pub struct TreeCosts {
    /// Per path entry: the union of its operands' labels, the labels it sums away, and the
    /// number of operands.
    steps: Vec<(Vec<usize>, Vec<usize>, usize)>,
    /// The tensors of one slice checked against the limit.
    tensors: Vec<Vec<usize>>,
    sizes: Vec<usize>,
}

impl TreeCosts {
    /// The tree of the linear `path` over `net` (validated by the caller); `prepared` are the
    /// label sets of the operands the lowering prepares (checked against the limit with the
    /// entries' results).
    pub fn new(net: &Network, prepared: &[Vec<usize>], path: &[Vec<usize>]) -> TreeCosts {
        let nl = net.sizes.len();
        let mut out = vec![false; nl];
        for &l in &net.output {
            out[l] = true;
        }
        let mut sets = net.inputs.clone();
        let mut carried = vec![0usize; nl];
        for t in &sets {
            for &l in t {
                carried[l] += 1;
            }
        }
        let mut tensors: Vec<Vec<usize>> = prepared.to_vec();
        let mut steps = Vec::with_capacity(path.len());
        for entry in path {
            let mut sorted = entry.clone();
            sorted.sort_unstable();
            let mut union: Vec<usize> = Vec::new();
            for &k in &sorted {
                if let Some(s) = sets.get(k) {
                    union.extend_from_slice(s);
                    for &l in s {
                        carried[l] -= 1;
                    }
                }
            }
            union.sort_unstable();
            union.dedup();
            for &k in sorted.iter().rev() {
                if k < sets.len() {
                    sets.remove(k);
                }
            }
            let (keep, gone): (Vec<usize>, Vec<usize>) =
                union.iter().partition(|&&l| out[l] || carried[l] > 0);
            for &l in &keep {
                carried[l] += 1;
            }
            steps.push((union, gone, sorted.len()));
            tensors.push(keep.clone());
            sets.push(keep);
        }
        TreeCosts {
            steps,
            tensors,
            sizes: net.sizes.clone(),
        }
    }

    fn sliced_sizes(&self, sliced: &[bool]) -> Vec<usize> {
        self.sizes
            .iter()
            .enumerate()
            .map(|(l, &s)| if sliced[l] { 1 } else { s })
            .collect()
    }

    /// Total FLOPs of all slices (opt_einsum's `flop_count` per entry per slice).
    pub fn cost(&self, sliced: &[bool]) -> Cost {
        let sizes = self.sliced_sizes(sliced);
        let per = self
            .steps
            .iter()
            .map(|(union, gone, terms)| {
                // a summed label that is sliced is summed across the slices: still a sum
                flop_count(union, !gone.is_empty(), *terms, &sizes)
            })
            .fold(Cost::ZERO, |a, b| a + b);
        per * self.nslices(sliced)
    }

    /// The number of slices.
    pub fn nslices(&self, sliced: &[bool]) -> Cost {
        (0..self.sizes.len())
            .filter(|&l| sliced[l])
            .fold(Cost::ONE, |a, l| a * Cost::from(self.sizes[l]))
    }

    fn tensor_size(&self, t: &[usize], sliced: &[bool]) -> Cost {
        t.iter()
            .filter(|&&l| !sliced[l])
            .fold(Cost::ONE, |a, &l| a * Cost::from(self.sizes[l]))
    }

    /// The largest tensor of one slice (elements).
    pub fn largest(&self, sliced: &[bool]) -> Cost {
        self.tensors
            .iter()
            .map(|t| self.tensor_size(t, sliced))
            .max()
            .unwrap_or(Cost::ONE)
    }

    /// The elements of all tensors of one slice together.
    pub fn footprint(&self, sliced: &[bool]) -> Cost {
        self.tensors
            .iter()
            .map(|t| self.tensor_size(t, sliced))
            .fold(Cost::ZERO, |a, b| a + b)
    }

    /// `Π sizes[l]` over the labels of `t` that are not sliced, exactly.
    fn tensor_big(&self, t: &[usize], sliced: &[bool]) -> Big {
        let mut b = Big::from(1u64);
        for &l in t.iter().filter(|&&l| !sliced[l]) {
            b.mul_small(self.sizes[l] as u64);
        }
        b
    }

    /// [`TreeCosts::cost`], exactly.
    pub fn cost_exact(&self, sliced: &[bool]) -> Big {
        let sizes = self.sliced_sizes(sliced);
        let mut total = Big::from(0u64);
        for (union, gone, terms) in &self.steps {
            let mut f = Big::from(1u64);
            for &l in union {
                f.mul_small(sizes[l] as u64);
            }
            f.mul_small(terms.saturating_sub(1).max(1) as u64 + u64::from(!gone.is_empty()));
            total.add(&f);
        }
        total.mul_big(&self.nslices_exact(sliced));
        total
    }

    /// [`TreeCosts::nslices`], exactly.
    pub fn nslices_exact(&self, sliced: &[bool]) -> Big {
        let mut b = Big::from(1u64);
        for l in (0..self.sizes.len()).filter(|&l| sliced[l]) {
            b.mul_small(self.sizes[l] as u64);
        }
        b
    }

    /// [`TreeCosts::largest`], exactly.
    pub fn largest_exact(&self, sliced: &[bool]) -> Big {
        self.tensors
            .iter()
            .map(|t| self.tensor_big(t, sliced))
            .fold(Big::from(1u64), Big::max)
    }

    /// [`TreeCosts::footprint`], exactly.
    pub fn footprint_exact(&self, sliced: &[bool]) -> Big {
        let mut total = Big::from(0u64);
        for t in &self.tensors {
            total.add(&self.tensor_big(t, sliced));
        }
        total
    }

    /// `Σ max(0, log2 size − log2 limit)` over the tensors of one slice.
    fn excess(&self, sliced: &[bool], log_limit: f64) -> f64 {
        self.tensors
            .iter()
            .map(|t| {
                let lg: f64 = t
                    .iter()
                    .filter(|&&l| !sliced[l])
                    .map(|&l| (self.sizes[l] as f64).log2())
                    .sum();
                (lg - log_limit).max(0.0)
            })
            .sum()
    }
}

/// splitmix64: the noise of the randomised repeats (no dependency, reproducible).
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn gumbel(&mut self) -> f64 {
        -(-self.next_f64().ln()).ln()
    }
}

/// One greedy run; `None` when the sliceable labels cannot meet the limit.
fn greedy_run(
    tree: &TreeCosts,
    limit: u128,
    sliceable: &[bool],
    rng: Option<(&mut Rng, f64)>,
) -> Option<Vec<bool>> {
    let nl = tree.sizes.len();
    let log_limit = (limit as f64).log2();
    let limit = Cost::exact(limit);
    let mut sliced = vec![false; nl];
    let mut noise = rng;
    while tree.largest(&sliced) > limit {
        let ex0 = tree.excess(&sliced, log_limit);
        let c0 = tree.cost(&sliced).log2().max(0.0);
        // candidates: the labels of the tensors over the limit (no other label removes excess)
        let mut cand = vec![false; nl];
        for t in &tree.tensors {
            if tree.tensor_size(t, &sliced) > limit {
                for &l in t {
                    cand[l] = true;
                }
            }
        }
        let mut best: Option<(f64, usize)> = None;
        for l in 0..nl {
            if !cand[l] || sliced[l] || !sliceable[l] || tree.sizes[l] <= 1 {
                continue;
            }
            sliced[l] = true;
            let gain = ex0 - tree.excess(&sliced, log_limit);
            let dc = tree.cost(&sliced).log2().max(0.0) - c0;
            sliced[l] = false;
            if gain <= 1e-12 {
                continue;
            }
            // least cost increase per unit of excess removed; ties to the larger gain
            let mut score = (dc.max(0.0) + 1e-9) / gain - 1e-6 * gain;
            if let Some((r, t)) = noise.as_mut() {
                score -= *t * r.gumbel() * score.abs().max(1e-3);
            }
            if best.is_none_or(|(b, _)| score < b) {
                best = Some((score, l));
            }
        }
        let (_, l) = best?;
        sliced[l] = true;
    }
    // Drop labels no longer needed, the costliest to keep first.
    loop {
        let mut best: Option<(Cost, usize)> = None;
        for l in 0..nl {
            if !sliced[l] {
                continue;
            }
            sliced[l] = false;
            if tree.largest(&sliced) <= limit {
                let c = tree.cost(&sliced);
                if best.is_none_or(|(b, _)| c < b) {
                    best = Some((c, l));
                }
            }
            sliced[l] = true;
        }
        match best {
            Some((_, l)) => sliced[l] = false,
            None => break,
        }
    }
    Some(sliced)
}

/// Choose labels to slice so that every tensor of one slice has at most `limit` elements,
/// minimising the total FLOPs (see the module docs). `sliceable[l]` says whether label `l`
/// may be sliced.
///
/// # Errors
/// A message saying how close the sliceable labels come, when no slicing meets the limit.
pub fn find(
    tree: &TreeCosts,
    limit: u128,
    sliceable: &[bool],
    opts: Options,
) -> Result<Sliced, String> {
    let nl = tree.sizes.len();
    if limit == 0 {
        return Err("memory_limit=0 cannot be met by slicing (at least 1 element)".to_string());
    }
    let none = vec![false; nl];
    let unsliced_largest = tree.largest(&none);
    let mut best: Option<(Cost, Vec<bool>)> = None;
    let mut rng = Rng(opts.seed);
    for r in 0..opts.repeats.max(1) {
        let noise = (r > 0).then_some((&mut rng, opts.temperature));
        let Some(s) = greedy_run(tree, limit, sliceable, noise) else {
            let all: Vec<bool> = (0..nl).map(|l| sliceable[l]).collect();
            return Err(format!(
                "memory_limit={limit} cannot be met by slicing: the smallest reachable largest \
                 intermediate is {} elements (labels repeated in the output cannot be sliced)",
                tree.largest_exact(&all)
            ));
        };
        let c = tree.cost(&s);
        if best.as_ref().is_none_or(|(b, _)| c < *b) {
            best = Some((c, s));
        }
        if unsliced_largest <= Cost::exact(limit) {
            break;
        }
    }
    let s = best.map_or(none.clone(), |(_, s)| s);
    Ok(Sliced {
        labels: (0..nl).filter(|&l| s[l]).collect(),
        nslices: tree.nslices_exact(&s),
        cost: tree.cost_exact(&none),
        sliced_cost: tree.cost_exact(&s),
        largest: tree.largest_exact(&s),
        unsliced_largest: tree.largest_exact(&none),
        footprint: tree.footprint_exact(&s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain() -> (Network, Vec<Vec<usize>>) {
        // ab,bc,cd->ad with sizes a=2 b=64 c=64 d=2, path ((0,1),(0,1))
        let net = Network {
            inputs: vec![vec![0, 1], vec![1, 2], vec![2, 3]],
            output: vec![0, 3],
            sizes: vec![2, 64, 64, 2],
        };
        (net, vec![vec![0, 1], vec![0, 1]])
    }

    #[test]
    fn no_slicing_when_it_fits() {
        let (net, path) = chain();
        let tree = TreeCosts::new(&net, &net.inputs, &path);
        let s = find(&tree, 1 << 20, &[true; 4], Options::default()).unwrap();
        assert!(s.labels.is_empty());
        assert_eq!(s.nslices, Big::from(1u64));
        assert_eq!(s.sliced_cost, s.cost);
        assert_eq!(s.largest, Big::from(4096u64));
    }

    #[test]
    fn slices_to_the_limit_and_counts_overhead() {
        let (net, path) = chain();
        let tree = TreeCosts::new(&net, &net.inputs, &path);
        let s = find(&tree, 128, &[true; 4], Options::default()).unwrap();
        assert!(
            s.largest.clone().max(Big::from(128u64)) == Big::from(128u64),
            "{s:?}"
        );
        assert_eq!(
            s.nslices,
            Big::from(
                s.labels
                    .iter()
                    .map(|&l| net.sizes[l] as u64)
                    .product::<u64>()
            )
        );
        // brute force: the best single or pair of labels meeting the limit
        let mut best = Cost::UNBOUNDED;
        for m in 1u32..16 {
            let sl: Vec<bool> = (0..4).map(|l| m >> l & 1 == 1).collect();
            if tree.largest(&sl) <= Cost::exact(128) {
                best = best.min(tree.cost(&sl));
            }
        }
        assert_eq!(s.sliced_cost.to_string(), best.to_string());
    }

    #[test]
    fn unreachable_limit_is_an_error() {
        let (net, path) = chain();
        let tree = TreeCosts::new(&net, &net.inputs, &path);
        let e = find(&tree, 0, &[true; 4], Options::default()).unwrap_err();
        assert!(e.contains("memory_limit=0"), "{e}");
        let e = find(&tree, 100, &[false, false, true, false], Options::default()).unwrap_err();
        assert!(e.contains("memory_limit=100"), "{e}");
    }
}

/// Operand `k`'s labels after [`crate::lower`]'s preparation: size-1 axes broadcast against a
/// larger size dropped, repeats merged, labels no other operand nor the output carries summed.
pub fn prepared(net: &Network, inputs: &[Vec<usize>], shapes: &[&[usize]]) -> Vec<Vec<usize>> {
    let nl = net.sizes.len();
    let mut held = vec![0usize; nl];
    for t in &net.inputs {
        for &l in t {
            held[l] += 1;
        }
    }
    for &l in &net.output {
        held[l] += 1;
    }
    inputs
        .iter()
        .zip(shapes)
        .map(|(t, shape)| {
            let mut s: Vec<usize> = t
                .iter()
                .zip(shape.iter())
                .filter(|(&l, &n)| !(n == 1 && net.sizes[l] != 1))
                .map(|(&l, _)| l)
                .collect();
            s.sort_unstable();
            s.dedup();
            s.retain(|&l| held[l] > 1);
            s
        })
        .collect()
}

/// A planned contraction's slicing, with where each sliced label sits.
#[derive(Clone, Debug)]
pub struct SlicePlan {
    /// The chosen labels and costs.
    pub sliced: Sliced,
    /// Per operand, `(axis, j)`: the axis carries sliced label `sliced.labels[j]` (size-1 axes
    /// broadcast against a larger size are not sliced).
    pub operand_axes: Vec<Vec<(usize, usize)>>,
    /// `(axis, j)` of the output.
    pub output_axes: Vec<(usize, usize)>,
}

/// Slice `planned` (its path as the tree) so that every tensor of one slice has at most
/// `memory_limit` elements. `shapes` are the operands' shapes.
///
/// # Errors
/// [`tenferro_tensor::Error::Einsum`] naming `memory_limit` when no slicing meets it.
pub fn plan_slices(
    planned: &crate::Planned,
    shapes: &[&[usize]],
    memory_limit: u128,
    opts: Options,
) -> tenferro_tensor::Result<SlicePlan> {
    let parsed = &planned.parsed;
    let net = crate::network(parsed);
    // an operand the lowering leaves as it is (no diagonal, broadcast or lone sum) is read in
    // place (sliced: a view), not a tensor of the slice
    let prep: Vec<Vec<usize>> = prepared(&net, &parsed.inputs, shapes)
        .into_iter()
        .zip(&parsed.inputs)
        .filter(|(p, raw)| p.len() != raw.len())
        .map(|(p, _)| p)
        .collect();
    let tree = TreeCosts::new(&net, &prep, &planned.path);
    let nl = net.sizes.len();
    let mut sliceable = vec![true; nl];
    for (i, &l) in parsed.output.iter().enumerate() {
        if parsed.output[..i].contains(&l) {
            sliceable[l] = false;
        }
    }
    let sliced = find(&tree, memory_limit, &sliceable, opts).map_err(|m| {
        tenferro_tensor::Error::einsum(
            "einsum",
            format!("subscripts {}: {m}", crate::py_repr(&parsed.subscripts)),
        )
    })?;
    let j_of = |l: usize| sliced.labels.iter().position(|&x| x == l);
    let operand_axes = parsed
        .inputs
        .iter()
        .zip(shapes)
        .map(|(t, shape)| {
            t.iter()
                .enumerate()
                .filter_map(|(ax, &l)| {
                    let j = j_of(l)?;
                    (shape[ax] == net.sizes[l]).then_some((ax, j))
                })
                .collect()
        })
        .collect();
    let output_axes = parsed
        .output
        .iter()
        .enumerate()
        .filter_map(|(ax, &l)| j_of(l).map(|j| (ax, j)))
        .collect();
    Ok(SlicePlan {
        sliced,
        operand_axes,
        output_axes,
    })
}
