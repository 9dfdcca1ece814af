//! tenferro's einsum front end, PyO3-free: the subscript parser ([`parse`]), the contraction
//! planners ([`path`]: opt_einsum's greedy, exact dynamic programming over all or over
//! connected subsets, explicit linear paths and nested-tuple trees) and the lowering of a path
//! to a [`Program`] of primitives ([`lower`]), cached in the executing engine's plan cache and
//! run by the eager core ([`Session::run_program`]: each step is one `Session::apply`-equivalent
//! call, so it records for autodiff and traces under graph mode unchanged).
//!
//! `tenferro-py` binds [`einsum`] and [`einsum_path`] (one crossing per call); nothing here
//! knows Python.

pub mod anneal;
pub mod cost;
pub mod info;
pub mod lower;
pub mod parse;
pub mod path;
pub mod slice;

use std::sync::Arc;

pub use anneal::AnnealOptions;
pub use cost::Cost;
pub use lower::{lower, Report, Row};
pub use parse::{parse, py_repr, Label, Parsed};
pub use path::{Minimize, Network, Tree, DP_BUDGET, DP_MAX, OPTIMAL_MAX};
use tenferro_eager::{EagerTensor, Host, ModeState, Operand, Session, Value};
use tenferro_runtime::Program;
use tenferro_tensor::dtype::{scalar_default_dtype, DType};
use tenferro_tensor::{Error, Result, Tensor};

/// Plan-cache key tag of einsum programs (GEMM plans use small non-negative leading codes).
pub const KEY_TAG: i64 = -0x4549_4E53;

/// `"auto"` plans exhaustively up to this many operands, with connected-subset DP up to
/// [`AUTO_DP_MAX`], greedily above.
pub const AUTO_OPTIMAL_MAX: usize = 8;
/// See [`AUTO_OPTIMAL_MAX`].
pub const AUTO_DP_MAX: usize = 24;
/// `"auto"` gives the connected-subset DP this much work (tens of milliseconds; see
/// [`DP_BUDGET`]), then plans greedily.
pub const AUTO_DP_BUDGET: u64 = 5_000_000;

/// The planner of a call (`optimize=`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Optimize {
    /// `False`/`None`: pairwise left to right.
    LeftToRight,
    /// `True`/`"greedy"`: opt_einsum's greedy.
    Greedy,
    /// `"optimal"`: exact over every tree, up to [`OPTIMAL_MAX`] operands (greedy above).
    Optimal,
    /// `"dp"`: exact over connected trees, up to [`DP_MAX`] operands and [`DP_BUDGET`] units of
    /// work (greedy above).
    Dp,
    /// `"auto"`: [`Optimize::Optimal`] up to [`AUTO_OPTIMAL_MAX`] operands, [`Optimize::Dp`] up
    /// to [`AUTO_DP_MAX`] operands and [`AUTO_DP_BUDGET`] units of work, [`Optimize::Greedy`]
    /// otherwise.
    Auto,
    /// An explicit linear path (validated against the operand count).
    Path(Vec<Vec<usize>>),
    /// A nested-tuple contraction tree.
    Tree(Tree),
    /// `"anneal"` / `tf.EinsumAnneal(...)`: simulated annealing over contraction trees
    /// ([`anneal`]).
    Anneal(AnnealOptions),
    /// NumPy's `(name, memory_limit)`: the named planner with every intermediate (the final
    /// result excepted) of at most this many elements; when none fits, the remaining operands
    /// are contracted in one step (NumPy, opt_einsum). Only the path is restricted: nothing is
    /// sliced.
    Limited(Box<Optimize>, u128),
}

/// The accepted `optimize=` names, for messages.
pub const ACCEPTED: &str =
    "False, True, 'greedy', 'optimal', 'dp', 'auto', 'anneal', tf.EinsumAnneal(...), a path, a \
     nested-tuple tree or an opt_einsum PathOptimizer; opt_einsum's other names map onto these";

impl Optimize {
    /// The planner of an `optimize=` name: tenferro's own and opt_einsum's (`"auto-hq"`,
    /// `"branch-2"`, `"dynamic-programming"`, ... map to the closest planner here).
    pub fn from_name(name: &str) -> Option<Optimize> {
        Some(match name {
            "greedy" | "eager" | "opportunistic" | "random-greedy" | "random-greedy-128" => {
                Optimize::Greedy
            }
            "optimal" | "branch-all" => Optimize::Optimal,
            "dp" | "dynamic-programming" | "auto-hq" => Optimize::Dp,
            "auto" | "branch-2" | "branch-1" => Optimize::Auto,
            "anneal" => Optimize::Anneal(AnnealOptions::default()),
            _ => return None,
        })
    }

    /// Integer encoding for the plan-cache key.
    fn encode(&self, key: &mut Vec<i64>) {
        match self {
            Optimize::LeftToRight => key.push(0),
            Optimize::Greedy => key.push(1),
            Optimize::Optimal => key.push(2),
            Optimize::Dp => key.push(4),
            Optimize::Auto => key.push(5),
            Optimize::Path(p) => {
                key.push(3);
                for e in p {
                    key.push(e.len() as i64);
                    key.extend(e.iter().map(|&k| k as i64));
                }
            }
            Optimize::Tree(t) => {
                fn enc(t: &Tree, key: &mut Vec<i64>) {
                    match t {
                        Tree::Leaf(k) => key.push(*k as i64),
                        Tree::Node(ch) => {
                            key.push(-3);
                            for c in ch {
                                enc(c, key);
                            }
                            key.push(-4);
                        }
                    }
                }
                key.push(6);
                enc(t, key);
            }
            Optimize::Anneal(o) => {
                let t = o
                    .max_time
                    .map_or(-1, |d| d.as_nanos().min(i64::MAX as u128) as i64);
                key.extend([7, o.seed as i64, o.max_repeats as i64, t]);
            }
            Optimize::Limited(inner, limit) => {
                key.push(8);
                key.push(*limit as i64);
                key.push((*limit >> 64) as i64);
                inner.encode(key);
            }
        }
    }
}

/// A non-negative integer of any size (FLOP counts of large networks exceed every machine
/// type; `info` reports them exactly, as opt_einsum's Python ints).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Big(Vec<u32>);

impl From<u64> for Big {
    fn from(v: u64) -> Big {
        let mut b = Big(vec![v as u32, (v >> 32) as u32]);
        b.trim();
        b
    }
}

impl Big {
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// `self *= m`.
    pub fn mul_small(&mut self, m: u64) {
        let (lo, hi) = (m & 0xffff_ffff, m >> 32);
        let mut lo_part = self.mul32(lo);
        if hi != 0 {
            let mut hi_part = self.mul32(hi);
            hi_part.0.insert(0, 0);
            lo_part.add(&hi_part);
        }
        *self = lo_part;
    }

    fn mul32(&self, m: u64) -> Big {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        let mut carry = 0u64;
        for &d in &self.0 {
            let v = d as u64 * m + carry;
            out.push(v as u32);
            carry = v >> 32;
        }
        out.push(carry as u32);
        let mut b = Big(out);
        b.trim();
        b
    }

    /// `self *= other`.
    pub fn mul_big(&mut self, other: &Big) {
        let mut acc = Big::default();
        for (k, &d) in other.0.iter().enumerate() {
            let mut part = self.mul32(u64::from(d));
            if !part.0.is_empty() {
                part.0.splice(0..0, std::iter::repeat_n(0, k));
            }
            acc.add(&part);
        }
        *self = acc;
    }

    /// `self += other`.
    pub fn add(&mut self, other: &Big) {
        let n = self.0.len().max(other.0.len());
        self.0.resize(n + 1, 0);
        let mut carry = 0u64;
        for i in 0..n + 1 {
            let v = self.0[i] as u64 + other.0.get(i).copied().unwrap_or(0) as u64 + carry;
            self.0[i] = v as u32;
            carry = v >> 32;
        }
        self.trim();
    }

    /// The larger of two.
    pub fn max(self, other: Big) -> Big {
        let ord = self
            .0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()));
        if ord == std::cmp::Ordering::Less {
            other
        } else {
            self
        }
    }
}

impl std::fmt::Display for Big {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("0");
        }
        let mut digits: Vec<u32> = self.0.clone();
        let mut chunks: Vec<u32> = Vec::new(); // base 10^9, least significant first
        while !digits.is_empty() {
            let mut rem = 0u64;
            for d in digits.iter_mut().rev() {
                let v = (rem << 32) | *d as u64;
                *d = (v / 1_000_000_000) as u32;
                rem = v % 1_000_000_000;
            }
            chunks.push(rem as u32);
            while digits.last() == Some(&0) {
                digits.pop();
            }
        }
        let mut s = format!("{}", chunks.last().copied().unwrap_or(0));
        for c in chunks.iter().rev().skip(1) {
            s.push_str(&format!("{c:09}"));
        }
        f.write_str(&s)
    }
}

/// The planners' network of `parsed`: each operand's label set as given (opt_einsum's
/// `input_sets`), the output set and the sizes.
pub fn network(parsed: &Parsed) -> Network {
    let set = |t: &[usize]| {
        let mut s = t.to_vec();
        s.sort_unstable();
        s.dedup();
        s
    };
    Network {
        inputs: parsed.inputs.iter().map(|t| set(t)).collect(),
        output: set(&parsed.output),
        sizes: parsed.sizes.clone(),
    }
}

/// Check an explicit linear path over `n` operands.
///
/// # Errors
/// [`Error::Einsum`] naming the first invalid entry (indices must be distinct and in range of
/// the operands left) or the number of operands a path leaves uncontracted.
pub fn validate_path(subscripts: &str, path: &[Vec<usize>], n: usize) -> Result<()> {
    let mut remaining = n;
    for (p, e) in path.iter().enumerate() {
        let mut s = e.clone();
        s.sort_unstable();
        s.dedup();
        if e.is_empty() || s.len() != e.len() || e.iter().any(|&k| k >= remaining) {
            return Err(Error::einsum(
                "einsum",
                format!(
                    "subscripts {}: invalid path entry {p}: {} (distinct indices in [0, {remaining}) \
                     expected)",
                    py_repr(subscripts),
                    fmt_tuple(e)
                ),
            ));
        }
        remaining = remaining + 1 - e.len();
    }
    if remaining != 1 {
        let entries: Vec<String> = path.iter().map(|e| fmt_tuple(e)).collect();
        return Err(Error::einsum(
            "einsum",
            format!(
                "subscripts {}: path [{}] leaves {remaining} operands uncontracted",
                py_repr(subscripts),
                entries.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Python's repr of a tuple of ints.
pub fn fmt_tuple(e: &[usize]) -> String {
    match e {
        [k] => format!("({k},)"),
        _ => format!(
            "({})",
            e.iter()
                .map(|k| k.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The path `optimize` chooses for `parsed`: `(path, method, note)`.
///
/// # Errors
/// [`Error::Einsum`] for an invalid explicit path or tree.
pub fn choose_path(
    parsed: &Parsed,
    optimize: &Optimize,
    minimize: Minimize,
) -> Result<(Vec<Vec<usize>>, String, String)> {
    let n = parsed.inputs.len();
    let net = network(parsed);
    let single = || vec![if n == 1 { vec![0] } else { vec![0, 1] }];
    let mut note = String::new();
    let (path, method) = match optimize {
        Optimize::LeftToRight => (
            if n == 1 {
                vec![vec![0]]
            } else {
                vec![vec![0, 1]; n - 1]
            },
            "left to right",
        ),
        Optimize::Greedy if n == 2 => (single(), "greedy"),
        Optimize::Greedy => (path::greedy(&net), "greedy"),
        Optimize::Optimal => match path::optimal(&net, minimize) {
            Some(p) => (p, "optimal"),
            None => {
                note = format!(
                    "'optimal' falls back to greedy above {OPTIMAL_MAX} operands ({n} given)"
                );
                (path::greedy(&net), "greedy")
            }
        },
        Optimize::Dp => match path::dp(&net, minimize) {
            Some(p) => (p, "dp"),
            None => {
                note = format!(
                    "'dp' falls back to greedy above {DP_MAX} operands or {DP_BUDGET} units of \
                     work ({n} operands given)"
                );
                (path::greedy(&net), "greedy")
            }
        },
        Optimize::Auto => {
            if n <= 2 {
                (single(), "auto (optimal)")
            } else if n <= AUTO_OPTIMAL_MAX {
                (
                    path::optimal(&net, minimize).unwrap_or_else(|| path::greedy(&net)),
                    "auto (optimal)",
                )
            } else if let Some(p) = (n <= AUTO_DP_MAX)
                .then(|| path::dp_within(&net, minimize, AUTO_DP_BUDGET))
                .flatten()
            {
                (p, "auto (dp)")
            } else {
                (path::greedy(&net), "auto (greedy)")
            }
        }
        Optimize::Anneal(o) => (anneal::plan(&net, o, minimize)?, "anneal"),
        Optimize::Path(p) => {
            validate_path(&parsed.subscripts, p, n)?;
            (p.clone(), "explicit path")
        }
        Optimize::Tree(t) => {
            let p = path::tree_to_path(t, n).map_err(|m| {
                Error::einsum(
                    "einsum",
                    format!(
                        "subscripts {}: invalid contraction tree: {m}",
                        py_repr(&parsed.subscripts)
                    ),
                )
            })?;
            (p, "explicit tree")
        }
        Optimize::Limited(inner, limit) => {
            let lim = *limit;
            let (p, m) = match **inner {
                Optimize::Optimal => path::optimal_limited(&net, minimize, lim)
                    .map(|p| (p, "optimal"))
                    .unwrap_or_else(|| (path::greedy_limited(&net, lim), "greedy")),
                Optimize::Dp => path::dp_limited(&net, minimize, DP_BUDGET, lim)
                    .map(|p| (p, "dp"))
                    .unwrap_or_else(|| (path::greedy_limited(&net, lim), "greedy")),
                Optimize::Auto if n <= AUTO_DP_MAX => {
                    path::dp_limited(&net, minimize, AUTO_DP_BUDGET, lim)
                        .map(|p| (p, "auto (dp)"))
                        .unwrap_or_else(|| (path::greedy_limited(&net, lim), "auto (greedy)"))
                }
                Optimize::LeftToRight => (choose_path(parsed, inner, minimize)?.0, "left to right"),
                _ => (path::greedy_limited(&net, lim), "greedy"),
            };
            return Ok((p, format!("{m}, memory_limit={lim}"), note));
        }
    };
    Ok((path, method.to_string(), note))
}

/// A planned contraction: the program and what `einsum_path` reports.
pub struct Planned {
    /// The program (operands in slots `0..n`).
    pub program: Program,
    /// The parsed subscripts.
    pub parsed: Parsed,
    /// The linear path.
    pub path: Vec<Vec<usize>>,
    /// The planner that chose it.
    pub method: String,
    /// Why a planner fell back, or empty.
    pub note: String,
    /// Costs along the path.
    pub report: Report,
    /// opt_einsum's `naive_cost`.
    pub naive_cost: Big,
}

/// What the planner reads of an operand: dtype, shape, and whether it is stored row-major.
pub type Meta<'a> = (DType, &'a [usize], bool);

/// Parse, plan and lower one contraction.
///
/// # Errors
/// [`Error::Einsum`] for malformed subscripts, operand mismatches and invalid paths.
pub fn plan(
    subscripts: &str,
    metas: &[Meta<'_>],
    optimize: &Optimize,
    minimize: Minimize,
) -> Result<Planned> {
    let shapes: Vec<&[usize]> = metas.iter().map(|m| m.1).collect();
    let parsed = parse(subscripts, &shapes)?;
    let (path, method, note) = choose_path(&parsed, optimize, minimize)?;
    plan_path(parsed, metas, path, method, note)
}

/// Lower `parsed` along a chosen `path` (validated here).
///
/// # Errors
/// As [`plan`].
pub fn plan_path(
    parsed: Parsed,
    metas: &[Meta<'_>],
    path: Vec<Vec<usize>>,
    method: String,
    note: String,
) -> Result<Planned> {
    validate_path(&parsed.subscripts, &path, metas.len())?;
    let (program, report) = lower(&parsed, metas, &path)?;
    let net = network(&parsed);
    let mut all: Vec<usize> = net.inputs.concat();
    all.sort_unstable();
    all.dedup();
    let total: usize = net.inputs.iter().map(|s| s.len()).sum();
    let mut naive = Big::from(1u64);
    for &l in &all {
        naive.mul_small(parsed.sizes[l] as u64);
    }
    let n = metas.len();
    naive.mul_small(n.saturating_sub(1).max(1) as u64 + u64::from(total > all.len()));
    Ok(Planned {
        program,
        parsed,
        path,
        method,
        note,
        report,
        naive_cost: naive,
    })
}

/// Whether `t`'s axes (those longer than 1, at least two) have strictly decreasing strides:
/// NumPy's C order read in place.
pub fn row_major_like(t: &Tensor) -> bool {
    let s: Vec<usize> = t
        .shape()
        .iter()
        .zip(t.strides())
        .filter(|(&n, _)| n > 1)
        .map(|(_, &st)| st.unsigned_abs())
        .collect();
    s.len() >= 2 && s.windows(2).all(|w| w[0] > w[1])
}

/// The plan-cache key of a call.
pub fn plan_key(
    subscripts: &str,
    metas: &[Meta<'_>],
    optimize: &Optimize,
    minimize: Minimize,
) -> Vec<i64> {
    let mut key = Vec::with_capacity(8 + 4 * metas.len() + subscripts.len());
    key.push(KEY_TAG);
    key.push(metas.len() as i64);
    for &(dtype, shape, c_order) in metas {
        key.push(dtype as i64);
        key.push(i64::from(c_order));
        key.push(shape.len() as i64);
        key.extend(shape.iter().map(|&d| d as i64));
    }
    optimize.encode(&mut key);
    key.push(minimize as i64);
    key.push(-2);
    key.extend(subscripts.chars().map(|c| c as i64));
    key
}

/// `einsum(subscripts, *operands, optimize=..., minimize=...)` on `session`: parse, plan and
/// lower once per (subscripts, shapes, dtypes, layouts, optimize, minimize) — the program is
/// cached in the executing engine's plan cache — then run it through the eager core.
/// Weak scalars are adopted as rank-0 arrays of their default dtype.
///
/// # Errors
/// [`Error::Einsum`] for malformed subscripts, operand mismatches and invalid paths; the
/// errors of [`Session::prepare`] and of the primitives.
pub fn einsum(
    session: &Session,
    subscripts: &str,
    operands: Vec<Operand<'_>>,
    optimize: &Optimize,
    minimize: Minimize,
    mode: &ModeState,
    host: &dyn Host,
) -> Result<EagerTensor> {
    let ops: Vec<Operand<'_>> = operands
        .into_iter()
        .map(|o| match o {
            Operand::Scalar(s) => {
                tenferro_eager::scalar_tensor("einsum", s, scalar_default_dtype(s.kind()))
                    .map(Operand::Array)
            }
            o => Ok(o),
        })
        .collect::<Result<_>>()?;
    let metas: Vec<Meta<'_>> = ops
        .iter()
        .map(|o| match o {
            Operand::Tensor(t) => match &t.value {
                Value::Tensor(d) => (d.dtype(), d.shape(), row_major_like(d)),
                Value::Symbol(s) => (s.dtype, s.shape.as_slice(), false),
            },
            Operand::Array(t) => (t.dtype(), t.shape(), row_major_like(t)),
            Operand::Scalar(_) => (DType::F64, &[][..], false),
        })
        .collect();
    let exec = session.prepare("einsum", &ops, mode, host)?;
    let key = plan_key(subscripts, &metas, optimize, minimize);
    let program: Arc<Program> =
        exec.engine()
            .plan_cache()
            .try_get_or_build(key, Program::bytes, || {
                plan(subscripts, &metas, optimize, minimize).map(|p| p.program)
            })?;
    session.run_program("einsum", &exec, &program, &ops, mode, host)
}
