//! The eager core without Python: `Session::apply` (membership, weak scalars, recording),
//! explicit sessions, programs, and the runtime's AD transforms with slot accumulation.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tenferro_ad::{jvp_graph, live_nodes, vjp_graph, Ctx, Node, Var};
use tenferro_cpu::CpuEngine;
use tenferro_eager::{
    autodiff, Context, DirectHost, EagerTensor, Host, ModeState, Operand, Runtime, Session,
    IMPLICIT,
};
use tenferro_ops::{BinaryOp, LinalgOp, Op, ReduceOp, UnaryOp};
use tenferro_runtime::{Engine, Instr, Program};
use tenferro_tensor::{DType, Error, Scalar, Tensor};

/// Tests that record nodes run one at a time: one compares the process-wide live-node counter.
static NODE_TESTS: Mutex<()> = Mutex::new(());

fn exclusive() -> MutexGuard<'static, ()> {
    NODE_TESTS.lock().unwrap_or_else(PoisonError::into_inner)
}

fn host() -> DirectHost {
    DirectHost {
        engine: Arc::new(CpuEngine::new(Some(1)).unwrap()),
    }
}

fn t64(shape: &[usize], v: &[f64]) -> Tensor {
    Tensor::from_vec(shape, v.to_vec()).unwrap()
}

fn one(outs: Vec<EagerTensor>) -> EagerTensor {
    assert_eq!(outs.len(), 1);
    outs.into_iter().next().unwrap()
}

fn apply(op: Op, operands: &[Operand<'_>], mode: &ModeState, h: &dyn Host) -> EagerTensor {
    one(IMPLICIT.apply(&op, operands, mode, h).unwrap())
}

#[test]
fn apply_runs_the_op_and_records_nothing_for_constants() {
    let h = host();
    let rt = Runtime::new();
    let mode = ModeState::default();
    let a = EagerTensor::of_data(t64(&[3], &[1.0, 2.0, 3.0]), rt.clone(), None);
    let b = EagerTensor::of_data(t64(&[3], &[10.0, 20.0, 30.0]), rt.clone(), None);
    let c = apply(
        Op::Binary(BinaryOp::Add),
        &[Operand::Tensor(&a), Operand::Tensor(&b)],
        &mode,
        &h,
    );
    assert_eq!(
        c.value.tensor("test").unwrap().to_vec::<f64>(),
        vec![11.0, 22.0, 33.0]
    );
    assert!(c.node().is_none());
    assert!(Arc::ptr_eq(&c.runtime, &rt));
    // A host array is adopted as a constant of the op's runtime.
    let d = apply(
        Op::Binary(BinaryOp::Mul),
        &[
            Operand::Tensor(&a),
            Operand::Array(t64(&[3], &[2.0, 2.0, 2.0])),
        ],
        &mode,
        &h,
    );
    assert_eq!(
        d.value.tensor("test").unwrap().to_vec::<f64>(),
        vec![2.0, 4.0, 6.0]
    );
}

#[test]
fn weak_scalars_take_the_tensor_dtype() {
    let h = host();
    let rt = Runtime::new();
    let mode = ModeState::default();
    let x = EagerTensor::of_data(Tensor::from_vec(&[2], vec![1.5f32, 2.5]).unwrap(), rt, None);
    let y = apply(
        Op::Binary(BinaryOp::Mul),
        &[Operand::Tensor(&x), Operand::Scalar(Scalar::Float(2.0))],
        &mode,
        &h,
    );
    assert_eq!(y.value.dtype(), DType::F32);
    assert_eq!(
        y.value.tensor("test").unwrap().to_vec::<f32>(),
        vec![3.0, 5.0]
    );
    // Alone, a Python int is int64; an int combined with int32 that does not fit overflows.
    let z = apply(
        Op::Unary(UnaryOp::Neg),
        &[Operand::Scalar(Scalar::Int(3))],
        &mode,
        &h,
    );
    assert_eq!(z.value.dtype(), DType::I64);
    let i = EagerTensor::of_data(
        Tensor::from_vec(&[1], vec![1i32]).unwrap(),
        Runtime::new(),
        None,
    );
    let err = IMPLICIT
        .apply(
            &Op::Binary(BinaryOp::Add),
            &[Operand::Tensor(&i), Operand::Scalar(Scalar::Int(1 << 40))],
            &mode,
            &h,
        )
        .err();
    assert!(matches!(err, Some(Error::Overflow { .. })), "{err:?}");
}

#[test]
fn operands_of_another_runtime_are_a_context_mismatch() {
    let h = host();
    let mode = ModeState::default();
    let a = EagerTensor::of_data(t64(&[1], &[1.0]), Runtime::new(), None);
    let b = EagerTensor::of_data(t64(&[1], &[1.0]), Runtime::new(), None);
    let err = IMPLICIT
        .apply(
            &Op::Binary(BinaryOp::Add),
            &[Operand::Tensor(&a), Operand::Tensor(&b)],
            &mode,
            &h,
        )
        .err()
        .unwrap();
    assert!(matches!(err, Error::ContextMismatch { .. }), "{err:?}");
    assert!(
        err.to_string().contains("operand 1 belongs to runtime"),
        "{err}"
    );
}

#[test]
fn recording_follows_the_mode_state() {
    let _serial = exclusive();
    let h = host();
    let rt = Runtime::new();
    let x = autodiff::variable(&rt, t64(&[2], &[1.0, 2.0])).unwrap();
    let c = EagerTensor::of_data(t64(&[2], &[3.0, 4.0]), rt.clone(), None);
    let on = ModeState::default();
    let y = apply(
        Op::Binary(BinaryOp::Mul),
        &[Operand::Tensor(&x), Operand::Tensor(&c)],
        &on,
        &h,
    );
    assert!(y.is_tracked());
    let off = ModeState {
        grad_enabled: false,
        ..ModeState::default()
    };
    let z = apply(
        Op::Binary(BinaryOp::Mul),
        &[Operand::Tensor(&x), Operand::Tensor(&c)],
        &off,
        &h,
    );
    assert!(z.node().is_none());
    // Under capture_trace constants get identifiable, untracked leaves and outputs a node.
    let capture = ModeState {
        capture_trace: true,
        ..ModeState::default()
    };
    let w = apply(
        Op::Unary(UnaryOp::Exp),
        &[Operand::Tensor(&c)],
        &capture,
        &h,
    );
    assert!(w.node().is_some() && !w.is_tracked());
    assert!(c.node().is_some_and(|n| !n.tracked));
    // Integer outputs are never recorded.
    let k = apply(Op::Cast(DType::I64), &[Operand::Tensor(&x)], &on, &h);
    assert!(k.node().is_none());
}

fn sum_all(x: &EagerTensor, mode: &ModeState, h: &dyn Host) -> EagerTensor {
    let axes: Vec<usize> = (0..x.value.ndim()).collect();
    apply(
        Op::Reduce {
            op: ReduceOp::Sum,
            axes,
        },
        &[Operand::Tensor(x)],
        mode,
        h,
    )
}

#[test]
fn backward_accumulates_into_the_slots() {
    let _serial = exclusive();
    let h = host();
    let rt = Runtime::new();
    let mode = ModeState::default();
    let x = autodiff::variable(&rt, t64(&[2], &[1.0, -2.0])).unwrap();
    let sq = apply(
        Op::Binary(BinaryOp::Mul),
        &[Operand::Tensor(&x), Operand::Tensor(&x)],
        &mode,
        &h,
    );
    let s = sum_all(&sq, &mode, &h);
    let g1 = autodiff::backward(&s, None, false, &mode, &h).unwrap();
    assert_eq!(g1.len(), 1);
    assert_eq!(
        g1[0].2.value.tensor("test").unwrap().to_vec::<f64>(),
        vec![2.0, -4.0]
    );
    assert!(g1[0].1.as_ref().is_some_and(autodiff::is_leaf));
    autodiff::backward(&s, None, false, &mode, &h).unwrap();
    let g = autodiff::grad_of(&x).unwrap();
    assert_eq!(
        g.value.tensor("test").unwrap().to_vec::<f64>(),
        vec![4.0, -8.0]
    );
    rt.clear_grads();
    assert!(autodiff::grad_of(&x).is_none());
    assert_eq!(rt.registry_len(), 1);
    // A non-scalar output needs a cotangent; an output no leaf reaches has no gradient.
    let err = autodiff::backward(&sq, None, false, &mode, &h)
        .err()
        .unwrap();
    assert!(err.to_string().contains("needs a scalar output"), "{err}");
    let c = EagerTensor::of_data(t64(&[], &[1.0]), rt.clone(), None);
    let err = autodiff::backward(&c, None, false, &mode, &h)
        .err()
        .unwrap();
    assert!(err.to_string().contains("no tracked leaf"), "{err}");
}

#[test]
fn vjp_and_jvp_agree_and_compose() {
    let _serial = exclusive();
    let h = host();
    let rt = Runtime::new();
    let mode = ModeState::default();
    // f(x) = sum(sin(x) * x); f'(x) = cos(x)·x + sin(x).
    let xs = [0.3, -1.1, 2.0];
    let x = autodiff::variable(&rt, t64(&[3], &xs)).unwrap();
    let s = apply(Op::Unary(UnaryOp::Sin), &[Operand::Tensor(&x)], &mode, &h);
    let p = apply(
        Op::Binary(BinaryOp::Mul),
        &[Operand::Tensor(&s), Operand::Tensor(&x)],
        &mode,
        &h,
    );
    let f = sum_all(&p, &mode, &h);
    let g = autodiff::vjp(&f, &[&x], None, &mode, &h).unwrap();
    let g = g[0].as_ref().unwrap();
    let want: Vec<f64> = xs.iter().map(|x| x.cos() * x + x.sin()).collect();
    for (a, b) in g
        .value
        .tensor("test")
        .unwrap()
        .to_vec::<f64>()
        .iter()
        .zip(&want)
    {
        assert!((a - b).abs() < 1e-14, "{a} vs {b}");
    }
    // The gradient is recorded: its own gradient (of sum(g)) is f''.
    assert!(g.is_tracked());
    let sg = sum_all(g, &mode, &h);
    let h2 = autodiff::vjp(&sg, &[&x], None, &mode, &h).unwrap();
    let want2: Vec<f64> = xs.iter().map(|x| 2.0 * x.cos() - x * x.sin()).collect();
    for (a, b) in h2[0]
        .as_ref()
        .unwrap()
        .value
        .tensor("test")
        .unwrap()
        .to_vec::<f64>()
        .iter()
        .zip(&want2)
    {
        assert!((a - b).abs() < 1e-13, "{a} vs {b}");
    }
    // jvp along e = (1, 1, 1) is <f', e>.
    let e = EagerTensor::of_data(t64(&[3], &[1.0, 1.0, 1.0]), rt.clone(), None);
    let t = autodiff::jvp(&f, &[&x], &[&e], &mode, &h).unwrap().unwrap();
    let dot: f64 = want.iter().sum();
    assert!((t.value.tensor("test").unwrap().to_vec::<f64>()[0] - dot).abs() < 1e-13);
    // A tangent of the wrong shape is a shape error naming jvp.
    let bad = EagerTensor::of_data(t64(&[2], &[1.0, 1.0]), rt.clone(), None);
    let err = autodiff::jvp(&f, &[&x], &[&bad], &mode, &h).err().unwrap();
    assert!(matches!(err, Error::Shape { .. }) && err.to_string().starts_with("jvp:"));
}

#[test]
fn explicit_sessions_lend_their_engine() {
    let h = host();
    let rt = Runtime::new();
    let engine: Arc<dyn Engine> = Arc::new(CpuEngine::new(Some(1)).unwrap());
    let s = Arc::new(Session::explicit(rt.clone(), engine.clone(), None));
    let mode = ModeState::default();
    let x = EagerTensor::of_data(t64(&[2], &[1.0, 2.0]), rt.clone(), None);
    // Outside its with-block a session refuses ops.
    assert!(s
        .apply(&Op::Unary(UnaryOp::Neg), &[Operand::Tensor(&x)], &mode, &h)
        .is_err());
    s.enter(&h).unwrap();
    assert!(engine.lending().is_held());
    assert!(matches!(s.enter(&h), Err(Error::Reentered { .. })));
    // Implicit ops inside the session's scope run on its runtime and engine.
    let inside = ModeState {
        sessions: vec![s.clone()],
        ..ModeState::default()
    };
    let y = apply(
        Op::Unary(UnaryOp::Neg),
        &[Operand::Scalar(Scalar::Float(2.0))],
        &inside,
        &h,
    );
    assert!(Arc::ptr_eq(&y.runtime, &rt));
    s.exit();
    assert!(!engine.lending().is_held());
    // The implicit session cannot be entered.
    assert!(matches!(IMPLICIT.enter(&h), Err(Error::Unsupported { .. })));
}

#[test]
fn a_context_routes_its_runtime_until_retired() {
    let rt = Runtime::new();
    let engine: Arc<dyn Engine> = Arc::new(CpuEngine::new(Some(1)).unwrap());
    let ctx = Context::new(rt.clone(), engine.clone());
    assert!(rt.owner_engine().is_some_and(|e| Arc::ptr_eq(&e, &engine)));
    // A second context does not take the runtime over.
    let other: Arc<dyn Engine> = Arc::new(CpuEngine::new(Some(1)).unwrap());
    let _ctx2 = Context::new(rt.clone(), other);
    assert!(rt.owner_engine().is_some_and(|e| Arc::ptr_eq(&e, &engine)));
    ctx.retire();
    assert!(rt.owner_engine().is_none());
    drop(ctx);
    assert!(rt.owner_engine().is_none());
}

#[test]
fn programs_run_step_by_step_and_record() {
    let _serial = exclusive();
    let h = host();
    let rt = Runtime::new();
    let mode = ModeState::default();
    // out = sum(a * b) with the constant 2 added: a·b + 2.
    let program = Program::new(
        2,
        vec![t64(&[], &[2.0])],
        vec![
            Instr {
                op: Op::Binary(BinaryOp::Mul),
                inputs: vec![0, 1],
            },
            Instr {
                op: Op::Reduce {
                    op: ReduceOp::Sum,
                    axes: vec![0],
                },
                inputs: vec![3],
            },
            Instr {
                op: Op::Binary(BinaryOp::Add),
                inputs: vec![4, 2],
            },
        ],
        vec![5],
    )
    .unwrap();
    let a = autodiff::variable(&rt, t64(&[3], &[1.0, 2.0, 3.0])).unwrap();
    let b = EagerTensor::of_data(t64(&[3], &[4.0, 5.0, 6.0]), rt.clone(), None);
    let exec = IMPLICIT.resolve("program", Some(&rt), &mode, &h).unwrap();
    let out = IMPLICIT
        .run_program(
            "program",
            &exec,
            &program,
            &[Operand::Tensor(&a), Operand::Tensor(&b)],
            &mode,
            &h,
        )
        .unwrap();
    drop(exec);
    assert_eq!(
        out.value.tensor("test").unwrap().to_vec::<f64>(),
        vec![34.0]
    );
    let g = autodiff::vjp(&out, &[&a], None, &mode, &h).unwrap();
    assert_eq!(
        g[0].as_ref()
            .unwrap()
            .value
            .tensor("test")
            .unwrap()
            .to_vec::<f64>(),
        vec![4.0, 5.0, 6.0]
    );
    // A step reading a later slot is rejected when the program is built.
    let bad = Program::new(
        1,
        vec![],
        vec![Instr {
            op: Op::Unary(UnaryOp::Neg),
            inputs: vec![1],
        }],
        vec![1],
    );
    assert!(matches!(bad, Err(Error::Internal { .. })));
}

/// Rule context over a fresh engine (as the backward pass builds it).
fn with_ctx<R>(record: bool, f: impl FnOnce(&Ctx<'_>) -> R) -> R {
    let h = host();
    let rt = Runtime::new();
    let exec = IMPLICIT
        .resolve("test", Some(&rt), &ModeState::default(), &h)
        .unwrap();
    let rules = exec.rules(&h);
    let ctx = Ctx {
        exec: &rules,
        record,
    };
    f(&ctx)
}

#[test]
fn multi_output_nodes_reverse_forward_and_teardown() {
    let _serial = exclusive();
    let before = live_nodes();
    with_ctx(true, |rec| {
        let a = t64(&[2, 2], &[3.0, 1.0, 1.0, 3.0]);
        let leaf = Var {
            value: a.clone().into(),
            node: Some(Node::leaf(&a.clone().into())),
        };
        let outs = rec
            .apply_multi(Op::Linalg(LinalgOp::Eigh { eps: 1e-12 }), &[&leaf])
            .unwrap();
        // Only the eigenvalues are used: d(sum w)/dA = I (lower-triangle convention).
        let s = tenferro_ad::rules::ops::reduce_sum(rec, &outs[0], &[0]).unwrap();
        let seed = Var::constant(t64(&[], &[1.0]));
        let targets = [leaf.node.clone().unwrap()];
        let g = vjp_graph(rec, &s, seed, &targets).unwrap();
        let g = g[0]
            .as_ref()
            .unwrap()
            .value
            .tensor("test")
            .unwrap()
            .to_vec::<f64>();
        assert!((g[0] - 1.0).abs() < 1e-12 && g[1].abs() < 1e-12 && (g[3] - 1.0).abs() < 1e-12);
        let tangent = Var::constant(t64(&[2, 2], &[1.0, 0.0, 0.0, 1.0]));
        let t = jvp_graph(rec, &s, &[(targets[0].clone(), tangent)])
            .unwrap()
            .unwrap();
        assert!((t.value.tensor("test").unwrap().to_vec::<f64>()[0] - 2.0).abs() < 1e-12);
    });
    assert_eq!(live_nodes(), before);
}

/// A target listed twice gets the full cotangent at both positions; the tangents of a source
/// listed twice add (torch.autograd.grad's semantics).
#[test]
fn repeated_targets_and_sources() {
    let _serial = exclusive();
    with_ctx(true, |rec| {
        let x = t64(&[2], &[1.0, 2.0]);
        let leaf = Var {
            value: x.clone().into(),
            node: Some(Node::leaf(&x.clone().into())),
        };
        let sq = rec
            .apply(Op::Binary(BinaryOp::Mul), &[&leaf, &leaf])
            .unwrap();
        let s = tenferro_ad::rules::ops::reduce_sum(rec, &sq, &[0]).unwrap();
        let seed = Var::constant(t64(&[], &[1.0]));
        let n = leaf.node.clone().unwrap();
        let gs = vjp_graph(rec, &s, seed, &[n.clone(), n.clone()]).unwrap();
        for g in &gs {
            assert_eq!(
                g.as_ref()
                    .unwrap()
                    .value
                    .tensor("test")
                    .unwrap()
                    .to_vec::<f64>(),
                vec![2.0, 4.0]
            );
        }
        let e1 = Var::constant(t64(&[2], &[1.0, 0.0]));
        let e2 = Var::constant(t64(&[2], &[1.0, 1.0]));
        let t = jvp_graph(rec, &s, &[(n.clone(), e1), (n, e2)])
            .unwrap()
            .unwrap();
        // <2x, e1 + e2> = 2·1·2 + 2·2·1
        assert_eq!(t.value.tensor("test").unwrap().to_vec::<f64>(), vec![8.0]);
    });
}
