//! The program runner's memory contract (issue 19, `Program` IR): a chain of 1 000 elementwise
//! steps over 1 MiB inputs keeps at most 3 intermediate buffers alive (the engine pool's
//! `live`/`peak_live` counters: storages handed out and not yet dropped), recycles them through
//! the pool, and leaves its inputs bitwise unchanged.

use std::sync::Arc;
use tenferro_cpu::CpuEngine;
use tenferro_eager::{autodiff, DirectHost, EagerTensor, ModeState, Operand, Runtime, IMPLICIT};
use tenferro_ops::{BinaryOp, Op};
use tenferro_runtime::{Engine, Instr, Program};
use tenferro_tensor::Tensor;

/// 1 MiB of f64.
const N: usize = 131_072;
const STEPS: usize = 1_000;
/// The added constant (slot 2, a 0-d tensor).
const C: f64 = 0.25;

/// `x ← x·b` on even steps, `x ← x + c` on odd ones, starting from `x = a`; slots: `a` 0,
/// `b` 1, `c` 2, step `k` writes slot `3 + k` and reads slot `3 + k - 1` (`a` for step 0).
fn chain() -> Program {
    let instrs = (0..STEPS)
        .map(|k| {
            let prev = if k == 0 { 0 } else { 2 + k };
            if k % 2 == 0 {
                Instr {
                    op: Op::Binary(BinaryOp::Mul),
                    inputs: vec![prev, 1],
                }
            } else {
                Instr {
                    op: Op::Binary(BinaryOp::Add),
                    inputs: vec![prev, 2],
                }
            }
        })
        .collect();
    let c = Tensor::from_vec(&[], vec![C]).unwrap();
    Program::new(2, vec![c], instrs, vec![2 + STEPS]).unwrap()
}

/// The same chain in plain f64 arithmetic (each step rounds once, as the kernels do).
fn reference(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(&a, &b)| {
            let mut x = a;
            for k in 0..STEPS {
                if k % 2 == 0 {
                    x *= b;
                } else {
                    x += C;
                }
            }
            x
        })
        .collect()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Measured over one run of the program.
struct Run {
    out: EagerTensor,
    /// Most storages of the engine alive at once during the run, minus those alive before.
    peak_intermediates: usize,
    /// Storages of the engine alive after the run (result included), minus those before.
    live_after: usize,
    /// Fresh allocations during the run.
    misses: u64,
}

fn run(
    engine: &Arc<dyn Engine>,
    h: &DirectHost,
    rt: &Arc<Runtime>,
    a: &EagerTensor,
    b: &EagerTensor,
    mode: &ModeState,
) -> Run {
    let program = chain();
    let pool = engine.buffer_pool();
    let exec = IMPLICIT.resolve("program", Some(rt), mode, h).unwrap();
    pool.reset_peak_live();
    let before = pool.stats();
    let out = IMPLICIT
        .run_program(
            "program",
            &exec,
            &program,
            &[Operand::Tensor(a), Operand::Tensor(b)],
            mode,
            h,
        )
        .unwrap();
    drop(exec);
    let after = pool.stats();
    Run {
        out,
        peak_intermediates: after.peak_live - before.live,
        live_after: after.live - before.live,
        misses: after.misses - before.misses,
    }
}

#[test]
fn a_chain_of_1000_elementwise_steps_keeps_three_buffers_and_its_inputs() {
    let engine: Arc<dyn Engine> = Arc::new(CpuEngine::new(Some(1)).unwrap());
    let h = DirectHost {
        engine: engine.clone(),
    };
    let rt = Runtime::new();
    // Values of b in [0.5, 1) keep the chain bounded; a spans signs and magnitudes.
    let av: Vec<f64> = (0..N)
        .map(|i| ((i as f64) * 0.37).sin() * 1e3 + (i % 7) as f64)
        .collect();
    let bv: Vec<f64> = (0..N)
        .map(|i| 0.5 + 0.49 * ((i as f64) * 0.11).cos().abs())
        .collect();
    let want = bits(&reference(&av, &bv));
    // The inputs live in the engine's pool (as adopted host arrays do), so a runner that
    // recycled or overwrote them would show in the values below.
    let adopt = |v: &[f64]| {
        engine
            .contiguous_copy(&Tensor::from_vec(&[N], v.to_vec()).unwrap())
            .unwrap()
    };
    let (a_bits, b_bits) = (bits(&av), bits(&bv));
    let cases = [
        // A tracked input under no_grad: nothing recorded.
        (
            "untracked (grad mode off)",
            autodiff::variable(&rt, adopt(&av)).unwrap(),
            ModeState {
                grad_enabled: false,
                ..ModeState::default()
            },
        ),
        // Grad mode on, constant inputs: the active-edge rule records nothing either.
        (
            "recorded-off (constant inputs)",
            EagerTensor::of_data(adopt(&av), rt.clone(), None),
            ModeState::default(),
        ),
    ];
    for (what, a, mode) in cases {
        let b = EagerTensor::of_data(adopt(&bv), rt.clone(), None);
        for round in 0..2 {
            let r = run(&engine, &h, &rt, &a, &b, &mode);
            assert!(r.out.node().is_none(), "{what}: the result is untracked");
            assert_eq!(
                bits(&r.out.value.tensor("test").unwrap().to_vec::<f64>()),
                want,
                "{what}, round {round}: the result differs from the plain recomputation"
            );
            assert_eq!(
                bits(&a.value.tensor("test").unwrap().to_vec::<f64>()),
                a_bits,
                "{what}: a changed"
            );
            assert_eq!(
                bits(&b.value.tensor("test").unwrap().to_vec::<f64>()),
                b_bits,
                "{what}: b changed"
            );
            eprintln!(
                "{what}, round {round}: peak live intermediates {}, misses {}",
                r.peak_intermediates, r.misses
            );
            assert!(
                r.peak_intermediates <= 3,
                "{what}: {} intermediate buffers alive at once",
                r.peak_intermediates
            );
            assert_eq!(r.live_after, 1, "{what}: only the result outlives the run");
            // Recycling: the fresh allocations of a run are its peak at most (none once the
            // pool is warm), not one per step.
            assert!(
                r.misses <= r.peak_intermediates as u64,
                "{what}: {} fresh allocations",
                r.misses
            );
            if round > 0 {
                assert_eq!(r.misses, 0, "{what}: a warm pool serves every step");
            }
        }
    }
}
