//! Grad of jit (`graph-mode.md`, "Automatic differentiation"): the derivative programs of a
//! compiled program. The reverse-mode split's backward part run on the forward part's
//! residuals, the recomputing VJP program and the joint program give the same cotangents, which
//! match central finite differences of the program; the JVP program matches the directional
//! difference quotient; the caches derive once per mask and count what they do.

use std::sync::Arc;
use tenferro_ad::{AdCaches, CompiledCall};
use tenferro_cpu::CpuEngine;
use tenferro_ops::{BinaryOp, DotGeneralConfig, Op, ReduceOp, UnaryOp};
use tenferro_runtime::{Engine, Program, ProgramBuilder, Symbol};
use tenferro_tensor::{DType, Tensor};

fn push1(b: &mut ProgramBuilder, op: Op, inputs: &[&Symbol]) -> Symbol {
    b.push(op, inputs).unwrap().remove(0)
}

/// `y0 = Σ_ij sin((x w)_ij) · c_ij`
/// (a constant `c`), `y1 = 3 · x` (a second output whose cotangent is independent of the
/// first), over `x: [2, 3]`, `w: [3, 2]`.
fn program() -> (Arc<Program>, Vec<(DType, Vec<usize>)>) {
    let mut b = ProgramBuilder::new();
    let x = b.input(DType::F64, &[2, 3]);
    let w = b.input(DType::F64, &[3, 2]);
    let c = b.constant(Tensor::from_vec(&[2, 2], vec![0.5, -1.0, 2.0, 0.25]).unwrap());
    let three = b.constant(Tensor::from_vec(&[], vec![3.0f64]).unwrap());
    let d = push1(
        &mut b,
        Op::DotGeneral(DotGeneralConfig {
            lhs_contracting_dims: vec![1],
            rhs_contracting_dims: vec![0],
            lhs_batch_dims: vec![],
            rhs_batch_dims: vec![],
        }),
        &[&x, &w],
    );
    let s = push1(&mut b, Op::Unary(UnaryOp::Sin), &[&d]);
    let m = push1(&mut b, Op::Binary(BinaryOp::Mul), &[&s, &c]);
    let y0 = push1(
        &mut b,
        Op::Reduce {
            op: ReduceOp::Sum,
            axes: vec![0, 1],
        },
        &[&m],
    );
    let three_b = push1(
        &mut b,
        Op::BroadcastInDim {
            shape: vec![2, 3],
            dims: vec![],
        },
        &[&three],
    );
    let y1 = push1(&mut b, Op::Binary(BinaryOp::Mul), &[&x, &three_b]);
    let p = b.finish(&[&y0, &y1]).unwrap();
    (
        Arc::new(p),
        vec![(DType::F64, vec![2, 3]), (DType::F64, vec![3, 2])],
    )
}

fn t(shape: &[usize], v: &[f64]) -> Tensor {
    Tensor::from_vec(shape, v.to_vec()).unwrap()
}

fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>()
}

/// `<ȳ, f(x, w)>` with `ȳ = (ct0, ct1)`.
fn pairing(engine: &dyn Engine, p: &Program, x: &Tensor, w: &Tensor, ct1: &[f64]) -> f64 {
    let out = p.run(engine, &[x.clone(), w.clone()]).unwrap();
    let y0 = f64s(&out[0])[0] * 0.7;
    let y1: f64 = f64s(&out[1]).iter().zip(ct1).map(|(a, b)| a * b).sum();
    y0 + y1
}

#[test]
fn split_vjp_joint_and_jvp_programs_agree_with_finite_differences() {
    let engine: Arc<dyn Engine> = Arc::new(CpuEngine::new(Some(1)).unwrap());
    let e = engine.as_ref();
    let (p, inputs) = program();
    let call = CompiledCall::new("f", p.clone(), inputs).unwrap();
    let caches = AdCaches::new();
    let xv = [0.3, -0.2, 0.9, 1.1, -0.7, 0.4];
    let wv = [0.5, -0.1, 0.2, 0.8, -0.6, 0.3];
    let (x, w) = (t(&[2, 3], &xv), t(&[3, 2], &wv));
    let ct1v = [1.0, -2.0, 0.5, 0.25, 3.0, -1.5];
    let (ct0, ct1) = (t(&[], &[0.7]), t(&[2, 3], &ct1v));
    let mask = [true, true];

    // Split: forward with residuals, backward on them.
    let split = caches.split(&call, &mask).unwrap();
    let fwd = split.fwd.program().run(e, &[x.clone(), w.clone()]).unwrap();
    let plain = p.run(e, &[x.clone(), w.clone()]).unwrap();
    assert_eq!(split.n_outputs, 2);
    assert_eq!(f64s(&fwd[0]), f64s(&plain[0]));
    assert_eq!(f64s(&fwd[1]), f64s(&plain[1]));
    let mut bwd_in: Vec<Tensor> = fwd[2..].to_vec();
    bwd_in.extend([ct0.clone(), ct1.clone()]);
    let g_split = split.bwd.program().run(e, &bwd_in).unwrap();

    // Recomputing VJP and the joint program.
    let vjp = caches.vjp(&call, &mask).unwrap();
    let g_vjp = vjp
        .program()
        .run(e, &[x.clone(), w.clone(), ct0.clone(), ct1.clone()])
        .unwrap();
    let joint = caches.joint(&call, &mask).unwrap();
    let j = joint
        .program()
        .run(e, &[x.clone(), w.clone(), ct0.clone(), ct1.clone()])
        .unwrap();
    assert_eq!(j.len(), 4);
    assert_eq!(f64s(&j[0]), f64s(&plain[0]));
    for k in 0..2 {
        assert_eq!(f64s(&g_split[k]), f64s(&g_vjp[k]));
        let (a, b) = (f64s(&g_split[k]), f64s(&j[2 + k]));
        for (u, v) in a.iter().zip(&b) {
            assert!((u - v).abs() <= 1e-14 * (1.0 + u.abs()), "{u} {v}");
        }
    }

    // Finite differences of the pairing <ȳ, f>.
    let h = 1e-6;
    for (k, (base, shape)) in [(&xv[..], [2usize, 3]), (&wv[..], [3, 2])]
        .iter()
        .enumerate()
    {
        let g = f64s(&g_split[k]);
        for i in 0..base.len() {
            let (mut up, mut dn) = (base.to_vec(), base.to_vec());
            up[i] += h;
            dn[i] -= h;
            let (xu, wu, xd, wd) = if k == 0 {
                (t(shape, &up), w.clone(), t(shape, &dn), w.clone())
            } else {
                (x.clone(), t(shape, &up), x.clone(), t(shape, &dn))
            };
            let fd =
                (pairing(e, &p, &xu, &wu, &ct1v) - pairing(e, &p, &xd, &wd, &ct1v)) / (2.0 * h);
            assert!(
                (fd - g[i]).abs() <= 1e-7,
                "input {k} entry {i}: fd {fd} vjp {}",
                g[i]
            );
        }
    }

    // JVP along (dx, dw) against the difference quotient.
    let dxv = [1.0, 0.5, -0.5, 0.25, 2.0, -1.0];
    let dwv = [-0.3, 0.1, 0.7, -0.2, 0.4, 0.9];
    let jvp = caches.jvp(&call, &mask).unwrap();
    let tj = jvp
        .program()
        .run(
            e,
            &[x.clone(), w.clone(), t(&[2, 3], &dxv), t(&[3, 2], &dwv)],
        )
        .unwrap();
    let shift = |s: f64| {
        let xs: Vec<f64> = xv.iter().zip(&dxv).map(|(a, b)| a + s * b).collect();
        let ws: Vec<f64> = wv.iter().zip(&dwv).map(|(a, b)| a + s * b).collect();
        f64s(&p.run(e, &[t(&[2, 3], &xs), t(&[3, 2], &ws)]).unwrap()[0])[0]
    };
    let fd = (shift(h) - shift(-h)) / (2.0 * h);
    assert!(
        (fd - f64s(&tj[0])[0]).abs() <= 1e-7,
        "{fd} {:?}",
        f64s(&tj[0])
    );
    let want1: Vec<f64> = dxv.iter().map(|d| 3.0 * d).collect();
    assert_eq!(f64s(&tj[1]), want1);

    // The caches: one derivation per (kind, mask) — split, VJP, joint (the split and the VJP are
    // cut from it) and JVP; a second lookup hits; clear empties and advances the epoch.
    let before = caches.transform_stats();
    assert_eq!(before.misses, 4);
    caches.split(&call, &mask).unwrap();
    assert_eq!(caches.transform_stats().hits, before.hits + 1);
    // Another mask: its joint program, then its split.
    caches.split(&call, &[true, false]).unwrap();
    assert_eq!(caches.transform_stats().misses, 6);
    let epoch = caches.epoch();
    caches.clear();
    assert_eq!(caches.epoch(), epoch + 1);
    assert_eq!(caches.transform_stats().entries, 0);
    caches.split(&call, &mask).unwrap();
    assert_eq!(caches.transform_stats().misses, 8);
}

#[test]
fn only_active_inputs_get_cotangents() {
    let engine: Arc<dyn Engine> = Arc::new(CpuEngine::new(Some(1)).unwrap());
    let (p, inputs) = program();
    let call = CompiledCall::new("f", p, inputs).unwrap();
    let caches = AdCaches::new();
    let x = t(&[2, 3], &[0.3, -0.2, 0.9, 1.1, -0.7, 0.4]);
    let w = t(&[3, 2], &[0.5, -0.1, 0.2, 0.8, -0.6, 0.3]);
    let cts = [t(&[], &[1.0]), t(&[2, 3], &[0.0; 6])];
    let only_w = caches.vjp(&call, &[false, true]).unwrap();
    let g = only_w
        .program()
        .run(
            engine.as_ref(),
            &[x.clone(), w.clone(), cts[0].clone(), cts[1].clone()],
        )
        .unwrap();
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].shape(), &[3, 2]);
    let both = caches.vjp(&call, &[true, true]).unwrap();
    let g2 = both
        .program()
        .run(engine.as_ref(), &[x, w, cts[0].clone(), cts[1].clone()])
        .unwrap();
    assert_eq!(f64s(&g[0]), f64s(&g2[1]));
}
