//! Prepared graph plans (`graph-mode.md`, "Explicit layer"): preparing folds constant-only
//! subgraphs on the engine, values equal the unprepared program's, the work estimate sees the
//! shapes, and plans are cached per engine kind and thread setting under their own tag of the
//! engine's plan cache.

use tenferro_cpu::CpuEngine;
use tenferro_ops::{BinaryOp, DotGeneralConfig, Op, UnaryOp};
use tenferro_runtime::{
    prepared_key, Engine, PreparedGraph, Program, ProgramBuilder, Symbol, PREPARED_GRAPH_TAG,
};
use tenferro_tensor::{DType, Error, Tensor};

fn push1(b: &mut ProgramBuilder, op: Op, inputs: &[&Symbol]) -> Symbol {
    b.push(op, inputs).unwrap().remove(0)
}

fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>()
}

/// `out = x @ (exp(c1)ᵀ * 2) + sum(c2)` with `c1: [3, 2]`, `c2: [4]`: the constant-only part
/// (exp, transpose, mul, reduce) folds; the dot and the add read the input.
fn program() -> (Program, Vec<(DType, Vec<usize>)>) {
    let mut b = ProgramBuilder::new();
    let x = b.input(DType::F64, &[2, 2]);
    let c1 = b.constant(Tensor::from_vec(&[3, 2], vec![0.1, -0.2, 0.3, 0.4, -0.5, 0.6]).unwrap());
    let two = b.constant(Tensor::from_vec(&[], vec![2.0f64]).unwrap());
    let c2 = b.constant(Tensor::from_vec(&[4], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap());
    let e = push1(&mut b, Op::Unary(UnaryOp::Exp), &[&c1]);
    let t = push1(&mut b, Op::Transpose(vec![1, 0]), &[&e]);
    let two_b = push1(
        &mut b,
        Op::BroadcastInDim {
            shape: vec![2, 3],
            dims: vec![],
        },
        &[&two],
    );
    let m = push1(&mut b, Op::Binary(BinaryOp::Mul), &[&t, &two_b]);
    let d = push1(
        &mut b,
        Op::DotGeneral(DotGeneralConfig {
            lhs_contracting_dims: vec![1],
            rhs_contracting_dims: vec![0],
            lhs_batch_dims: vec![],
            rhs_batch_dims: vec![],
        }),
        &[&x, &m],
    );
    let s = push1(
        &mut b,
        Op::Reduce {
            op: tenferro_ops::ReduceOp::Sum,
            axes: vec![0],
        },
        &[&c2],
    );
    let s_b = push1(
        &mut b,
        Op::BroadcastInDim {
            shape: vec![2, 3],
            dims: vec![],
        },
        &[&s],
    );
    let out = push1(&mut b, Op::Binary(BinaryOp::Add), &[&d, &s_b]);
    (b.finish(&[&out]).unwrap(), vec![(DType::F64, vec![2, 2])])
}

#[test]
fn prepare_folds_constant_subgraphs_and_keeps_values() {
    let e = CpuEngine::new(Some(1)).unwrap();
    let (p, metas) = program();
    let plan = PreparedGraph::prepare(&p, &metas, &e).unwrap();
    assert_eq!(plan.source_instrs(), p.instrs().len());
    // Left: the dot, the add (and nothing constant-only).
    assert_eq!(plan.program().instrs().len(), 2, "{:#?}", plan.program());
    assert_eq!(plan.folded(), p.instrs().len() - 2);
    let x = Tensor::from_vec(&[2, 2], vec![1.0f64, -2.0, 0.5, 3.0]).unwrap();
    let want = p.run(&e, std::slice::from_ref(&x)).unwrap();
    let got = plan.program().run(&e, std::slice::from_ref(&x)).unwrap();
    assert_eq!(f64s(&want[0]), f64s(&got[0]), "bit for bit");
    // Oracle by hand (storage is column-major): out(i, j) = sum_k x(i, k) 2 exp(c1(j, k)) + 10.
    let c1 = [0.1f64, -0.2, 0.3, 0.4, -0.5, 0.6]; // c1(j, k) = c1[j + 3 k]
    let xs = [1.0f64, -2.0, 0.5, 3.0]; // x(i, k) = xs[i + 2 k]
    let out = f64s(&got[0]);
    for i in 0..2 {
        for j in 0..3 {
            let v: f64 = (0..2)
                .map(|k| xs[i + 2 * k] * 2.0 * c1[j + 3 * k].exp())
                .sum::<f64>()
                + 10.0;
            assert!((out[i + 2 * j] - v).abs() < 1e-12, "({i}, {j})");
        }
    }
    // The estimate sees the shapes: 2x2 @ 2x3 has 12 multiply-adds at least.
    assert!(plan.work() >= 12 && plan.work() < 1000, "{}", plan.work());
    assert!(!plan.factorises());
}

#[test]
fn a_failing_fold_stays_for_the_run_to_raise() {
    let e = CpuEngine::new(Some(1)).unwrap();
    let mut b = ProgramBuilder::new();
    let x = b.input(DType::I64, &[2]);
    let one = b.constant(Tensor::from_vec(&[2], vec![1i64, 1]).unwrap());
    let zero = b.constant(Tensor::from_vec(&[2], vec![0i64, 0]).unwrap());
    let q = push1(&mut b, Op::Binary(BinaryOp::Div), &[&one, &zero]);
    let out = push1(&mut b, Op::Binary(BinaryOp::Add), &[&x, &q]);
    let p = b.finish(&[&out]).unwrap();
    let plan = PreparedGraph::prepare(&p, &[(DType::I64, vec![2])], &e).unwrap();
    assert_eq!(plan.program().instrs().len(), 2, "the division is kept");
    let x = Tensor::from_vec(&[2], vec![3i64, 4]).unwrap();
    let err = plan.program().run(&e, &[x]).unwrap_err();
    assert!(matches!(err, Error::ZeroDivision { .. }), "{err:?}");
}

#[test]
fn plans_are_cached_per_engine_kind_and_thread_setting() {
    let serial = CpuEngine::new(Some(1)).unwrap();
    let pooled = CpuEngine::new(Some(2)).unwrap();
    assert_ne!(prepared_key(7, &serial), prepared_key(7, &pooled));
    assert_ne!(prepared_key(7, &serial), prepared_key(8, &serial));
    assert_eq!(prepared_key(7, &serial)[0], PREPARED_GRAPH_TAG);
    let (p, metas) = program();
    let mut builds = 0;
    for _ in 0..3 {
        let plan = serial
            .plan_cache()
            .try_get_or_build(prepared_key(1, &serial), PreparedGraph::bytes, || {
                builds += 1;
                PreparedGraph::prepare(&p, &metas, &serial)
            })
            .unwrap();
        assert_eq!(plan.program().instrs().len(), 2);
    }
    assert_eq!(
        builds, 1,
        "prepared once, then served from the engine's cache"
    );
    let s = serial.plan_cache().stats_for(PREPARED_GRAPH_TAG);
    assert_eq!((s.entries, s.hits, s.misses), (1, 2, 1));
    assert!(s.retained_bytes > 0);
    serial.plan_cache().clear_tag(PREPARED_GRAPH_TAG);
    assert_eq!(serial.plan_cache().stats_for(PREPARED_GRAPH_TAG).entries, 0);
}

#[test]
fn a_broken_engine_prepares_nothing() {
    let e = CpuEngine::new(Some(1)).unwrap();
    e.mark_broken("test".into());
    let (p, metas) = program();
    let err = PreparedGraph::prepare(&p, &metas, &e).unwrap_err();
    assert!(matches!(err, Error::EngineBroken { .. }), "{err:?}");
}

/// `PreparedGraph::run` with `apply_prepared` (the compiled-run loop: metadata inferred at
/// preparation) gives `Program::run`'s values bit for bit; products with constant ones of the
/// output's dtype and shape are dropped at preparation (`fold_unit_factors`), broadcasting or
/// complex ones are kept; inputs and constants are never written and intermediates return to
/// the pool.
#[test]
fn prepared_run_matches_program_run_and_folds_unit_factors() {
    let e = CpuEngine::new(Some(1)).unwrap();
    let mut b = ProgramBuilder::new();
    let x = b.input(DType::F64, &[4]);
    let ones = b.constant(Tensor::from_vec(&[4], vec![1.0f64; 4]).unwrap());
    let wide = b.constant(Tensor::from_vec(&[2, 4], vec![1.0f64; 8]).unwrap());
    let sq = push1(&mut b, Op::Binary(BinaryOp::Mul), &[&x, &x]);
    let g = push1(&mut b, Op::Binary(BinaryOp::Mul), &[&ones, &x]); // folded: x
    let h = push1(&mut b, Op::Binary(BinaryOp::Add), &[&g, &sq]);
    let k = push1(&mut b, Op::Unary(UnaryOp::Exp), &[&h]);
    let w = push1(
        &mut b,
        Op::BroadcastInDim {
            shape: vec![2, 4],
            dims: vec![1],
        },
        &[&k],
    );
    let kept = push1(&mut b, Op::Binary(BinaryOp::Mul), &[&w, &wide]); // same shape: folded
    let bx = push1(&mut b, Op::Binary(BinaryOp::Mul), &[&x, &wide]); // broadcasts: kept
    let p = b.finish(&[&kept, &g, &h, &bx]).unwrap();
    let metas = vec![(DType::F64, vec![4])];
    let plan = PreparedGraph::prepare(&p, &metas, &e).unwrap();
    // Left: x*x, the add, exp, the broadcast (a view) and the broadcasting product; the two
    // products with ones of the output's shape are gone.
    assert_eq!(plan.program().instrs().len(), 5, "{:#?}", plan.program());
    let vals = vec![1.5f64, -0.0, f64::INFINITY, f64::NAN];
    let xt = Tensor::from_vec(&[4], vals.clone()).unwrap();
    let want = p.run(&e, std::slice::from_ref(&xt)).unwrap();
    let got = plan
        .run("test", vec![xt.clone()], |_, ins, args, m| {
            tenferro_runtime::apply_prepared(&e, &ins.op, args, m)
        })
        .unwrap();
    assert_eq!(want.len(), got.len());
    for (a, b) in want.iter().zip(&got) {
        assert_eq!(a.shape(), b.shape());
        let bits = |t: &Tensor| f64s(t).iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(a), bits(b), "bit for bit");
    }
    assert_eq!(
        f64s(&xt).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        vals.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        "the input is only read"
    );
    // A product with complex ones is kept.
    let mut b = ProgramBuilder::new();
    let z = b.input(DType::C64, &[2]);
    let one = tenferro_tensor::Complex64::new(1.0, 0.0);
    let c = b.constant(Tensor::from_vec(&[2], vec![one; 2]).unwrap());
    let m = push1(&mut b, Op::Binary(BinaryOp::Mul), &[&z, &c]);
    let p = b.finish(&[&m]).unwrap();
    let plan = PreparedGraph::prepare(&p, &[(DType::C64, vec![2])], &e).unwrap();
    assert_eq!(plan.program().instrs().len(), 1);
}
