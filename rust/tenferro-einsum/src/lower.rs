//! Lowering of a planned contraction to a [`Program`] of primitives:
//!
//! 1. per operand, `reduce_sum` of size-1 axes broadcast against a larger size, `transpose` +
//!    `extract_diag` for a label repeated within the operand, `reduce_sum` of labels that
//!    appear nowhere else;
//! 2. along the path, one `dot_general` per pair when labels are summed (labels shared by the
//!    pair and needed later are batch axes; `[lhs free, rhs free, batch]` out), else both
//!    operands broadcast to the result's shape and one `mul` (the result keeps the larger
//!    operand's memory order, so that it and the output are walked contiguously);
//! 3. at the end `transpose` to the output order, `broadcast_in_dim` for output axes no operand
//!    carries, `embed_diag` for labels repeated in the output (`i->ii`).
//!
//! All-bool contractions count in float64 and compare `!= 0` at the end (never wraps); bool
//! operands mixed with other dtypes convert to the promoted dtype (NumPy's `result_type`).

use crate::parse::Parsed;
use crate::Big;
use tenferro_ops::{BinaryOp, CompareDir, DotGeneralConfig, Op, ReduceOp};
use tenferro_runtime::{Instr, Program};
use tenferro_tensor::dtype::{promote, DType};
use tenferro_tensor::{Error, Result, Scalar};

/// One row of `info`: the operand positions taken, the equation of the lowered step, its
/// FLOP count (opt_einsum convention) and its result's element count.
pub type Row = (Vec<usize>, String, Big, Big);

/// What the lowering reports beside the program (`tf.einsum_path`'s info).
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The path's FLOP count: opt_einsum's `opt_cost` of the same path.
    pub opt_cost: Big,
    /// The largest tensor along the path (operands included), in elements.
    pub largest: Big,
    /// One row per path entry.
    pub rows: Vec<Row>,
}

fn reduce(axes: Vec<usize>) -> Op {
    Op::Reduce {
        op: ReduceOp::Sum,
        axes,
    }
}

fn big_size(labels: &[usize], sizes: &[usize]) -> Big {
    let mut b = Big::from(1u64);
    for &l in labels {
        b.mul_small(sizes[l] as u64);
    }
    b
}

/// Per-operand preparation: the ops and the labels left.
fn prep_operand(
    labels: &[usize],
    shape: &[usize],
    others: &dyn Fn(usize) -> bool,
    sizes: &[usize],
) -> (Vec<Op>, Vec<usize>) {
    let mut ops = Vec::new();
    let mut labels = labels.to_vec();
    let drop: Vec<usize> = (0..labels.len())
        .filter(|&k| shape[k] == 1 && sizes[labels[k]] != 1)
        .collect();
    if !drop.is_empty() {
        labels = (0..labels.len())
            .filter(|k| !drop.contains(k))
            .map(|k| labels[k])
            .collect();
        ops.push(reduce(drop));
    }
    loop {
        let rep = labels
            .iter()
            .copied()
            .find(|l| labels.iter().filter(|x| *x == l).count() > 1);
        let Some(rep) = rep else { break };
        let p = labels.iter().position(|&x| x == rep).unwrap_or(0);
        let q = p + 1 + labels[p + 1..].iter().position(|&x| x == rep).unwrap_or(0);
        let perm: Vec<usize> = [p, q]
            .into_iter()
            .chain((0..labels.len()).filter(|&k| k != p && k != q))
            .collect();
        if perm.iter().enumerate().any(|(i, &k)| i != k) {
            ops.push(Op::Transpose(perm.clone()));
        }
        ops.push(Op::ExtractDiag { a: 0, b: 1 });
        labels = std::iter::once(rep)
            .chain(perm[2..].iter().map(|&k| labels[k]))
            .collect();
    }
    let lone: Vec<usize> = (0..labels.len()).filter(|&k| !others(labels[k])).collect();
    if !lone.is_empty() {
        labels = (0..labels.len())
            .filter(|k| !lone.contains(k))
            .map(|k| labels[k])
            .collect();
        ops.push(reduce(lone));
    }
    (ops, labels)
}

fn pos(v: &[usize], l: usize) -> usize {
    v.iter().position(|&x| x == l).unwrap_or(usize::MAX)
}

/// Lower `parsed` along `path` (validated: entries of distinct in-range positions contracting
/// to one operand). `metas[k]` is operand `k`'s dtype, shape and whether it is laid out
/// row-major (NumPy memory read in place: products with nothing summed then keep that order).
///
/// # Errors
/// [`Error::Internal`] if the path is not valid (the callers validate it first).
pub fn lower(
    parsed: &Parsed,
    metas: &[(DType, &[usize], bool)],
    path: &[Vec<usize>],
) -> Result<(Program, Report)> {
    let n = metas.len();
    let sizes = &parsed.sizes;
    let nl = sizes.len();
    let mut out_set = vec![false; nl];
    for &l in &parsed.output {
        out_set[l] = true;
    }
    let mut held = vec![0usize; nl];
    for t in &parsed.inputs {
        let mut seen: Vec<usize> = t.clone();
        seen.sort_unstable();
        seen.dedup();
        for l in seen {
            held[l] += 1;
        }
    }
    let bool_out = n > 0 && metas.iter().all(|m| m.0 == DType::Bool);
    let consts = if bool_out {
        vec![tenferro_eager::scalar_tensor(
            "einsum",
            Scalar::Float(0.0),
            DType::F64,
        )?]
    } else {
        Vec::new()
    };
    let base = n + consts.len();
    let mut instrs: Vec<Instr> = Vec::new();
    let emit = |instrs: &mut Vec<Instr>, op: Op, inputs: Vec<usize>| -> usize {
        instrs.push(Instr { op, inputs });
        base + instrs.len() - 1
    };
    let to = if bool_out {
        DType::F64
    } else {
        metas
            .iter()
            .map(|m| m.0)
            .reduce(promote)
            .unwrap_or(DType::F64)
    };
    // Every operand is converted to the result dtype first, as NumPy's einsum promotes before it
    // computes: a label summed within one operand, or two narrow operands contracted before they
    // meet a wider one, would otherwise wrap (int32) or overflow (float32) in the narrow dtype.
    let mut xs: Vec<usize> = (0..n).collect();
    for (k, x) in xs.iter_mut().enumerate() {
        if metas[k].0 != to {
            *x = emit(&mut instrs, Op::Convert(to), vec![*x]);
        }
    }
    let mut terms: Vec<Vec<usize>> = Vec::with_capacity(n);
    let mut prepped = vec![false; n];
    for k in 0..n {
        let others = |l: usize| out_set[l] || held[l] > 1;
        let (ops, labs) = prep_operand(&parsed.inputs[k], metas[k].1, &others, sizes);
        prepped[k] = !ops.is_empty();
        for op in ops {
            xs[k] = emit(&mut instrs, op, vec![xs[k]]);
        }
        terms.push(labs);
    }

    // opt_einsum's cost of each entry, on the label sets of the operands as given
    let mut sets: Vec<Vec<usize>> = parsed
        .inputs
        .iter()
        .map(|t| {
            let mut s = t.clone();
            s.sort_unstable();
            s.dedup();
            s
        })
        .collect();
    let mut carried = vec![0usize; nl]; // how many of `sets` hold each label
    for t in &sets {
        for &l in t {
            carried[l] += 1;
        }
    }
    let mut report = Report::default();
    let mut largest = Big::from(0u64);
    for t in &terms {
        largest = largest.max(big_size(t, sizes));
    }
    let mut cur = terms;
    let mut cur_c: Vec<bool> = (0..n).map(|k| metas[k].2 && !prepped[k]).collect();
    let mut live = vec![0usize; nl];
    for t in &cur {
        for &l in t {
            live[l] += 1;
        }
    }
    let bad = || Error::internal("einsum", "an invalid path reached the lowering");
    for entry in path {
        let mut sorted = entry.clone();
        sorted.sort_unstable();
        if sorted.is_empty() || sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(bad());
        }
        if *sorted.last().unwrap_or(&0) >= cur.len() {
            return Err(bad());
        }
        // cost (opt_einsum's find_contraction + flop_count)
        let mut contract: Vec<usize> = Vec::new();
        for &k in &sorted {
            contract.extend_from_slice(&sets[k]);
            for &l in &sets[k] {
                carried[l] -= 1;
            }
        }
        contract.sort_unstable();
        contract.dedup();
        for &k in sorted.iter().rev() {
            sets.remove(k);
        }
        let keep: Vec<usize> = contract
            .iter()
            .copied()
            .filter(|&l| out_set[l] || carried[l] > 0)
            .collect();
        let mut cost = big_size(&contract, sizes);
        let summed = keep.len() < contract.len();
        cost.mul_small(sorted.len().saturating_sub(1).max(1) as u64 + u64::from(summed));
        report.opt_cost.add(&cost);
        for &l in &keep {
            carried[l] += 1;
        }
        sets.push(keep);

        let group: Vec<Vec<usize>> = sorted.iter().map(|&k| cur[k].clone()).collect();
        let group_c: Vec<bool> = sorted.iter().map(|&k| cur_c[k]).collect();
        let mut slots: Vec<usize> = sorted.iter().map(|&k| xs[k]).collect();
        for &k in sorted.iter().rev() {
            for &l in &cur[k] {
                live[l] -= 1;
            }
            cur.remove(k);
            cur_c.remove(k);
            xs.remove(k);
        }
        let mut acc = group[0].clone();
        let mut acc_slot = slots[0];
        let mut eq_terms: Vec<String> = vec![parsed.term(&group[0])];
        for g in 1..group.len() {
            let b = &group[g];
            eq_terms.push(parsed.term(b));
            let mut b_slot = slots[g];
            let later = |l: usize| group[g + 1..].iter().any(|t| t.contains(&l));
            let a_c = if g == 1 { group_c[0] } else { false };
            let b_c = group_c[g];
            let need = |l: usize| out_set[l] || live[l] > 0 || later(l);
            let pre_a: Vec<usize> = (0..acc.len())
                .filter(|&k| !b.contains(&acc[k]) && !need(acc[k]))
                .collect();
            let pre_b: Vec<usize> = (0..b.len())
                .filter(|&k| !acc.contains(&b[k]) && !need(b[k]))
                .collect();
            let a2: Vec<usize> = (0..acc.len())
                .filter(|k| !pre_a.contains(k))
                .map(|k| acc[k])
                .collect();
            let b2: Vec<usize> = (0..b.len())
                .filter(|k| !pre_b.contains(k))
                .map(|k| b[k])
                .collect();
            if !pre_a.is_empty() {
                acc_slot = emit(&mut instrs, reduce(pre_a.clone()), vec![acc_slot]);
            }
            if !pre_b.is_empty() {
                b_slot = emit(&mut instrs, reduce(pre_b.clone()), vec![b_slot]);
            }
            let shared: Vec<usize> = a2.iter().copied().filter(|l| b2.contains(l)).collect();
            let batch: Vec<usize> = shared.iter().copied().filter(|&l| need(l)).collect();
            let contr: Vec<usize> = shared.iter().copied().filter(|&l| !need(l)).collect();
            let res: Vec<usize>;
            if !contr.is_empty() {
                res = a2
                    .iter()
                    .copied()
                    .filter(|l| !shared.contains(l))
                    .chain(b2.iter().copied().filter(|l| !shared.contains(l)))
                    .chain(batch.iter().copied())
                    .collect();
                let cfg = DotGeneralConfig {
                    lhs_contracting_dims: contr.iter().map(|&l| pos(&a2, l)).collect(),
                    rhs_contracting_dims: contr.iter().map(|&l| pos(&b2, l)).collect(),
                    lhs_batch_dims: batch.iter().map(|&l| pos(&a2, l)).collect(),
                    rhs_batch_dims: batch.iter().map(|&l| pos(&b2, l)).collect(),
                };
                acc_slot = emit(&mut instrs, Op::DotGeneral(cfg), vec![acc_slot, b_slot]);
            } else {
                let rev = |v: &[usize], c: bool, pre: &[usize]| -> Vec<usize> {
                    if c && pre.is_empty() {
                        v.iter().rev().copied().collect()
                    } else {
                        v.to_vec()
                    }
                };
                let mem_a = rev(&a2, a_c, &pre_a);
                let mem_b = rev(&b2, b_c, &pre_b);
                let (big, small) = if size_of(&a2, sizes) >= size_of(&b2, sizes) {
                    (mem_a, mem_b)
                } else {
                    (mem_b, mem_a)
                };
                res = big
                    .iter()
                    .copied()
                    .chain(small.iter().copied().filter(|l| !big.contains(l)))
                    .collect();
                let shape: Vec<usize> = res.iter().map(|&l| sizes[l]).collect();
                let mut xy = Vec::with_capacity(2);
                for (labs, slot) in [(&a2, acc_slot), (&b2, b_slot)] {
                    let mut order: Vec<usize> = (0..labs.len()).collect();
                    order.sort_by_key(|&k| pos(&res, labs[k]));
                    let dims: Vec<usize> = order.iter().map(|&k| pos(&res, labs[k])).collect();
                    let mut x = slot;
                    if order.iter().enumerate().any(|(i, &k)| i != k) {
                        x = emit(&mut instrs, Op::Transpose(order), vec![x]);
                    }
                    xy.push(emit(
                        &mut instrs,
                        Op::BroadcastInDim {
                            shape: shape.clone(),
                            dims,
                        },
                        vec![x],
                    ));
                }
                acc_slot = emit(&mut instrs, Op::Binary(BinaryOp::Mul), xy);
            }
            largest = largest.max(big_size(&res, sizes));
            acc = res;
        }
        slots.clear();
        report.rows.push((
            sorted.clone(),
            format!("{}->{}", eq_terms.join(","), parsed.term(&acc)),
            cost,
            big_size(&acc, sizes),
        ));
        for &l in &acc {
            live[l] += 1;
        }
        cur.push(acc);
        cur_c.push(false);
        xs.push(acc_slot);
    }
    if cur.len() != 1 {
        return Err(bad());
    }
    let mut final_labels = cur.pop().unwrap_or_default();
    let mut out = xs[0];
    let output = &parsed.output;
    let extra: Vec<usize> = (0..final_labels.len())
        .filter(|&k| !output.contains(&final_labels[k]))
        .collect();
    if !extra.is_empty() {
        final_labels = (0..final_labels.len())
            .filter(|k| !extra.contains(k))
            .map(|k| final_labels[k])
            .collect();
        out = emit(&mut instrs, reduce(extra), vec![out]);
    }
    let mut uniq: Vec<usize> = Vec::new();
    for &l in output {
        if !uniq.contains(&l) {
            uniq.push(l);
        }
    }
    let present: Vec<usize> = uniq
        .iter()
        .copied()
        .filter(|l| final_labels.contains(l))
        .collect();
    let perm: Vec<usize> = present.iter().map(|&l| pos(&final_labels, l)).collect();
    if perm.iter().enumerate().any(|(i, &k)| i != k) {
        out = emit(&mut instrs, Op::Transpose(perm), vec![out]);
    }
    if present.len() != uniq.len() {
        let shape = uniq.iter().map(|&l| sizes[l]).collect();
        let dims = present.iter().map(|&l| pos(&uniq, l)).collect();
        out = emit(&mut instrs, Op::BroadcastInDim { shape, dims }, vec![out]);
    }
    let mut labs = uniq.clone();
    for (k, &l) in output.iter().enumerate() {
        if output[..k].contains(&l) {
            let p = pos(&labs, l);
            out = emit(&mut instrs, Op::EmbedDiag { a: p, b: p + 1 }, vec![out]);
            labs.insert(p + 1, l);
        }
    }
    if labs != *output {
        let mut used = vec![false; labs.len()];
        let mut perm2 = Vec::with_capacity(output.len());
        for &l in output {
            let j = (0..labs.len())
                .find(|&j| labs[j] == l && !used[j])
                .ok_or_else(bad)?;
            used[j] = true;
            perm2.push(j);
        }
        out = emit(&mut instrs, Op::Transpose(perm2), vec![out]);
    }
    if bool_out {
        out = emit(&mut instrs, Op::Compare(CompareDir::Ne), vec![out, n]);
    }
    report.largest = largest;
    let program = Program::new(n, consts, instrs, vec![out])?;
    Ok((program, report))
}

fn size_of(labels: &[usize], sizes: &[usize]) -> crate::Cost {
    crate::path::size_of(labels, sizes)
}
