//! `tf.einsum_path`'s printable table (opt_einsum's `PathInfo` layout), built only when the
//! `info` object is printed.

use crate::{Big, Label, Planned};

/// `n` as Python's `f"{n:.3e}"` of a float (`7.560e+03`); beyond 300 digits the leading digits
/// and the exponent of the decimal string (beyond the float range).
pub fn sci(n: &Big) -> String {
    let digits = n.to_string();
    if digits.len() > 300 {
        let rest = digits.get(1..4).unwrap_or("");
        return format!("{}.{rest}e+{:02}", &digits[..1], digits.len() - 1);
    }
    sci_f64(digits.parse::<f64>().unwrap_or(f64::INFINITY))
}

/// Python's `f"{x:.3e}"`.
pub fn sci_f64(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let s = format!("{x:.3e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    format!(
        "{mant}e{}{:02}",
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    )
}

/// `naive / opt` as a float (`1.0` when `opt` is zero).
pub fn speedup(naive: &Big, opt: &Big) -> f64 {
    let o: f64 = opt.to_string().parse().unwrap_or(f64::INFINITY);
    if o == 0.0 {
        return 1.0;
    }
    let n: f64 = naive.to_string().parse().unwrap_or(f64::INFINITY);
    n / o
}

/// The name `info.size_dict` gives a label (`…k` for the `k`-th ellipsis axis).
pub fn label_name(l: Label) -> String {
    match l {
        Label::Char(c) => c.to_string(),
        Label::Ell(r) => format!("\u{2026}{r}"),
    }
}

/// Python's `str` of a tuple of ints.
fn tuple_str(e: &[usize]) -> String {
    crate::fmt_tuple(e)
}

/// The table `str(info)` prints.
pub fn table(p: &Planned) -> String {
    let mut lines = vec![
        format!("  Complete contraction:  {}", p.parsed.equation()),
        format!("         Naive scaling:  {}", p.parsed.sizes.len()),
        format!("      Optimized method:  {}", p.method),
        format!("      Naive FLOP count:  {}", sci(&p.naive_cost)),
        format!("  Optimized FLOP count:  {}", sci(&p.report.opt_cost)),
        format!(
            "   Theoretical speedup:  {}",
            sci_f64(speedup(&p.naive_cost, &p.report.opt_cost))
        ),
        format!(
            "  Largest intermediate:  {} elements",
            sci(&p.report.largest)
        ),
    ];
    if !p.note.is_empty() {
        lines.push(format!("                  Note:  {}", p.note));
    }
    let rule = "-".repeat(74);
    lines.push(rule.clone());
    lines.push(format!(
        "{:>4}  {:<10} {:>12} {:>12}  contraction",
        "step", "indices", "flops", "size"
    ));
    lines.push(rule);
    for (k, (idx, eq, cost, size)) in p.report.rows.iter().enumerate() {
        lines.push(format!(
            "{k:>4}  {:<10} {:>12} {:>12}  {eq}",
            tuple_str(idx),
            cost.to_string(),
            size.to_string()
        ));
    }
    lines.join("\n")
}

/// A chosen, validated path and what it was chosen for: `tf.einsum_path`'s answer before the
/// costs are needed. [`PathPlan::lower`] lowers it (costs, table) when `info` is read.
#[derive(Clone, Debug)]
pub struct PathPlan {
    /// The parsed subscripts.
    pub parsed: crate::Parsed,
    /// Per operand, dtype and shape.
    pub metas: Vec<(crate::DType, Vec<usize>)>,
    /// The linear path (validated).
    pub path: Vec<Vec<usize>>,
    /// The planner that chose it.
    pub method: String,
    /// Why a planner fell back, or empty.
    pub note: String,
}

impl PathPlan {
    /// Parse and plan (no lowering).
    ///
    /// # Errors
    /// As [`crate::plan`].
    pub fn choose(
        subscripts: &str,
        metas: Vec<(crate::DType, Vec<usize>)>,
        optimize: &crate::Optimize,
        minimize: crate::Minimize,
    ) -> crate::Result<PathPlan> {
        let shapes: Vec<&[usize]> = metas.iter().map(|m| m.1.as_slice()).collect();
        let parsed = crate::parse(subscripts, &shapes)?;
        let (path, method, note) = crate::choose_path(&parsed, optimize, minimize)?;
        PathPlan::given(parsed, metas, path, method, note)
    }

    /// A plan of a path chosen elsewhere (validated here).
    ///
    /// # Errors
    /// [`crate::Error::Einsum`] for an invalid path.
    pub fn given(
        parsed: crate::Parsed,
        metas: Vec<(crate::DType, Vec<usize>)>,
        path: Vec<Vec<usize>>,
        method: String,
        note: String,
    ) -> crate::Result<PathPlan> {
        crate::validate_path(&parsed.subscripts, &path, metas.len())?;
        Ok(PathPlan {
            parsed,
            metas,
            path,
            method,
            note,
        })
    }

    /// Lower along the path: the costs and the table's rows.
    ///
    /// # Errors
    /// Only internal errors (the path is validated).
    pub fn lower(&self) -> crate::Result<Planned> {
        let metas: Vec<crate::Meta<'_>> = self
            .metas
            .iter()
            .map(|(d, s)| (*d, s.as_slice(), false))
            .collect();
        crate::plan_path(
            self.parsed.clone(),
            &metas,
            self.path.clone(),
            self.method.clone(),
            self.note.clone(),
        )
    }
}
