//! `reduce_prod`'s gradient at a million elements with zeros (issue 19, reduce_prod line):
//! exact values against products of the others computed directly in f64, and the bytes held
//! during the backward pass within `C·R·8` (see [`C`] for the derivation).
//!
//! Bytes are measured by a counting global allocator (current and peak heap bytes of the
//! process): the engine pool counts storages (`live`/`peak_live`), not bytes, and the tree's
//! buffers have sizes `R, R/2, R/4, …`, so a count cannot express the bound. The pool's
//! retention limit is set to 0 for the measured pass, so every storage dropped is freed at
//! once and the allocator's count is the bytes actually held (nothing parked for reuse);
//! allocations outside the pool (graph nodes, shapes) are counted too, so the measure is an
//! upper bound on the tensors' bytes. All cases run in one test: the counters are
//! process-wide.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tenferro_cpu::CpuEngine;
use tenferro_eager::{autodiff, DirectHost, EagerTensor, ModeState, Operand, Runtime, IMPLICIT};
use tenferro_ops::{Op, ReduceOp};
use tenferro_runtime::Engine;
use tenferro_tensor::Tensor;

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only adds bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc` and `alloc`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
            let now = CURRENT.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The inputs, `[rows, cols]`: `R = 10⁶` elements, and `R = 999 999` to take every odd
/// branch of the tree (odd lengths at the top level and all axes).
const SHAPES: [(usize, usize); 2] = [(1000, 1000), (999, 1001)];
/// The most elements of an input.
const R: usize = 1_000_000;

/// Bound on the bytes held during the backward pass, in units of `R·8` (one f64 copy of the
/// input), over what was held before it. Derivation from `rules/reduce.rs` (`r` the reduced
/// length, `k` the outputs, `k·r = R`). Views cost nothing: slice, transpose, reverse,
/// broadcast, and a reshape of a compact tensor (so `flatten_reduced` of the compact input
/// and the interleaving reshape of `stacked` are views); mul and concatenate allocate.
///
/// * One scan level of input length `n` (its input held by its caller) computes `pairs`
///   (`n/2`), recurses on it and frees it once the recursion returned `odd` (`n/2`); it
///   then builds `rest` and `even` (`n/2` each, `rest` freed), pads `odd` for odd `n`
///   (the short one freed), and builds `stacked` (`n`): at most `odd + even + stacked =
///   2n` beyond its input. While a deeper level works, the levels above hold only their
///   `pairs`, which are the deeper levels' inputs (`n/2 + n/4 + … < n`), and the deeper
///   peak is `2·n/2`: together `< 2n`. So one scan holds at most `2r` per row beyond its
///   input, 2 units over all rows.
/// * `prod_partials` holds `prefix` (1) while the suffix scan runs on its concatenated
///   input `[1, x_{r-1} … x_1]` (1): `1 + 1 + 2 = 4`. Before it, the prefix scan's input
///   and working set are `1 + 2`; after it, `prefix`, `suffix`, the partials and the
///   gradient are at most 4 units at once.
///
/// So 4 units plus `O(k log r)` bytes of `[k, 1]` columns (the padded ones, per level) and
/// `O(log r)` small allocations (shapes, graph nodes): measured 4.0003 (`[1000, 1000]`) and
/// 4.0033 (`[999, 1001]`, odd lengths: a `[k, 1]` column per odd level). The bound
/// `C = 4.5` leaves half a copy for those lower-order terms. A tree that kept every
/// level's `pairs` until the weave (this rule before the fix) measures 4.5003 and fails;
/// one that kept all levels alive needs `log₂ r ≈ 20`, the old `[k, r, r]`
/// products-of-others block `r` (10⁶ at the full reduction).
const C: f64 = 4.5;

/// The gradient of `reduce_prod(x, axes)`: `backward` of the scalar `sum(reduce_prod(x))`,
/// not recorded (`create_graph = false`, as `loss.backward()`).
struct Measured {
    grad: Vec<f64>,
    /// Most heap bytes held at once during the backward pass, over those held before it.
    peak_bytes: usize,
    /// Most storages of the engine alive at once during the pass, over those before.
    peak_live: usize,
}

fn grad(
    engine: &Arc<dyn Engine>,
    rt: &Arc<Runtime>,
    (m, n): (usize, usize),
    xv: &[f64],
    axes: &[usize],
    retain: bool,
) -> Measured {
    let h = DirectHost {
        engine: engine.clone(),
    };
    let mode = ModeState::default();
    let x = autodiff::variable(rt, Tensor::from_vec(&[m, n], xv.to_vec()).unwrap()).unwrap();
    let apply = |op: Op, t: &EagerTensor| {
        let mut outs = IMPLICIT
            .apply(&op, &[Operand::Tensor(t)], &mode, &h)
            .unwrap();
        assert_eq!(outs.len(), 1);
        outs.pop().unwrap()
    };
    let p = apply(
        Op::Reduce {
            op: ReduceOp::Prod,
            axes: axes.to_vec(),
        },
        &x,
    );
    let all: Vec<usize> = (0..p.value.ndim()).collect();
    let loss = apply(
        Op::Reduce {
            op: ReduceOp::Sum,
            axes: all,
        },
        &p,
    );
    let pool = engine.buffer_pool();
    pool.set_limit(if retain {
        tenferro_tensor::storage::DEFAULT_POOL_LIMIT
    } else {
        0
    });
    pool.reset_peak_live();
    let before = pool.stats();
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let gs = autodiff::backward(&loss, None, false, &mode, &h).unwrap();
    let peak = PEAK.load(Ordering::Relaxed);
    let after = pool.stats();
    assert_eq!(gs.len(), 1);
    let g = gs[0].2.value.tensor("test").unwrap().to_vec::<f64>();
    rt.clear_grads();
    Measured {
        grad: g,
        peak_bytes: peak - base,
        peak_live: after.peak_live - before.live,
    }
}

/// `∏_{j ≠ i} v_j` in plain f64, left to right.
fn others(v: &[f64], i: usize) -> f64 {
    v.iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .map(|(_, &x)| x)
        .product()
}

/// The values of the `[N, N]` input: near 1 (so a product of 10⁶ stays normal), some
/// negative, and exact zeros at `zeros` (flat column-major positions, as `Tensor` stores).
fn input(len: usize, zeros: &[usize]) -> Vec<f64> {
    let mut v: Vec<f64> = (0..len)
        .map(|i| {
            let s = 1.0 + 1e-3 * ((i as f64) * 0.7).sin();
            if i % 9973 == 0 {
                -s
            } else {
                s
            }
        })
        .collect();
    for &z in zeros {
        v[z] = 0.0;
    }
    v
}

/// Relative tolerance of two products of the same `R - 1` factors rounded in different
/// orders (a sequence here, a tree in the rule): each is within `(R-1)·u` of the exact
/// product to first order (Higham, Accuracy and Stability, Lemma 3.1), so they differ by
/// at most `2(R-1)·u < R·ε` (`ε = 2u`).
const TOL: f64 = (R as f64) * f64::EPSILON;

fn check(what: &str, got: f64, want: f64) {
    if want == 0.0 {
        assert_eq!(
            got.to_bits() & !(1 << 63),
            0,
            "{what}: {got} is not an exact 0"
        );
    } else {
        let rel = ((got - want) / want).abs();
        assert!(rel <= TOL, "{what}: {got} vs {want} (relative {rel:e})");
    }
}

#[test]
fn the_gradient_of_a_million_element_product_with_zeros_is_exact_within_4_5_copies() {
    let engine: Arc<dyn Engine> = Arc::new(CpuEngine::new(Some(1)).unwrap());
    let rt = Runtime::new();
    let mut worst = 0.0f64;
    for (rows, cols) in SHAPES {
        let len = rows * cols;
        // Zero positions (column-major flat, as `Tensor` stores: row `i % rows`, column
        // `i / rows`): row 500 of column 3; rows 0 and `rows - 1` of column 7.
        let (z1, z2a, z2b) = (3 * rows + 500, 7 * rows, 7 * rows + rows - 1);
        for zeros in [vec![], vec![z1], vec![z2a, z2b]] {
            let xv = input(len, &zeros);
            // Positions checked against the oracle: the zeros, their neighbours, the ends.
            let mut probe: Vec<usize> =
                vec![0, 1, 2, rows - 1, rows, len / 2 + 17, len - 2, len - 1];
            for &z in &zeros {
                probe.extend([z, z - 1, z + 1]);
            }
            for (axes, name) in [
                (vec![0, 1], "all"),
                (vec![1], "axis 1"),
                (vec![0], "axis 0"),
            ] {
                // Without retention the bound is checked; with the default retention the
                // values are checked again on recycled buffers and the heap bytes (parked
                // buffers included) are reported.
                for retain in [false, true] {
                    let m = grad(&engine, &rt, (rows, cols), &xv, &axes, retain);
                    let what = format!(
                        "[{rows}, {cols}], {} zero(s), axes {name}, pool retention {retain}",
                        zeros.len()
                    );
                    // The reduced group of a flat position and its index in the group.
                    let group = |i: usize| -> (Vec<f64>, usize) {
                        let (row, col) = (i % rows, i / rows);
                        match axes.as_slice() {
                            [0, 1] => (xv.clone(), i),
                            [1] => ((0..cols).map(|c| xv[row + c * rows]).collect(), col),
                            _ => (xv[col * rows..(col + 1) * rows].to_vec(), row),
                        }
                    };
                    for &i in &probe {
                        let (v, j) = group(i);
                        check(&format!("{what}, position {i}"), m.grad[i], others(&v, j));
                    }
                    // Exact zeros: a group with two zeros has an all-zero gradient, a group
                    // with one zero is zero off the zero; counted over all elements.
                    let nonzero = m.grad.iter().filter(|g| **g != 0.0).count();
                    let want_nonzero = match (axes.as_slice(), zeros.len()) {
                        (_, 0) => len,
                        ([0, 1], 1) => 1,
                        ([0, 1], _) => 0,
                        // Row 500 keeps 1; rows 0 and `rows - 1` each hold one zero.
                        ([1], 1) => len - cols + 1,
                        ([1], _) => len - 2 * cols + 2,
                        // Column 3 keeps 1, column 7 none; the other columns keep all.
                        (_, 1) => len - rows + 1,
                        (_, _) => len - rows,
                    };
                    assert_eq!(nonzero, want_nonzero, "{what}: nonzero gradient entries");
                    let ratio = m.peak_bytes as f64 / (len * 8) as f64;
                    if !retain {
                        worst = worst.max(ratio);
                    }
                    eprintln!(
                        "{what}: peak {} bytes = {ratio:.4}·R·8, peak live storages {}",
                        m.peak_bytes, m.peak_live
                    );
                    if !retain {
                        let bound = C * (len * 8) as f64;
                        assert!(
                            m.peak_bytes as f64 <= bound,
                            "{what}: {} bytes held at once, over {C}·R·8 = {bound}",
                            m.peak_bytes
                        );
                    }
                }
            }
        }
    }
    eprintln!("worst peak without retention: {worst:.4}·R·8 (bound {C}·R·8)");
}
