//! Graph mode's value errors (`graph-mode.md`, "Values Python asks for"): a traced tensor asked
//! for data raises `Concretization` naming the request, the op that made it, its shape and
//! dtype; once its trace has ended (finished, or ended after the traced function raised) the
//! same request and any emission are `TracerLeak`.

use tenferro_ad::Emitter;
use tenferro_eager::{concretization_because, default_runtime, EagerTensor, Value};
use tenferro_ops::{Op, UnaryOp};
use tenferro_tensor::{DType, Error};

fn symbol(v: &Value) -> &tenferro_runtime::Symbol {
    match v {
        Value::Symbol(s) => s,
        Value::Tensor(_) => panic!("expected a symbol"),
    }
}

#[test]
fn value_requests_are_concretization_while_the_trace_runs_and_leaks_after_it_ended() {
    let em = Emitter::new();
    let x = em.input_value(DType::F64, &[2, 3]);
    let y = em.emit(&Op::Unary(UnaryOp::Sin), &[&x]).unwrap().remove(0);
    let t = EagerTensor::new(y.clone(), default_runtime().clone(), None);
    match t.data("buffer protocol") {
        Err(Error::Concretization { op, message }) => {
            assert_eq!(op, "buffer protocol");
            assert!(message.contains("made by op sin"), "{message}");
            assert!(
                message.contains("shape [2, 3]") && message.contains("dtype float64"),
                "{message}"
            );
            assert!(
                message.contains("tf.where") && message.contains("static_argnames"),
                "{message}"
            );
        }
        other => panic!("expected Concretization, got {other:?}"),
    }
    let e = concretization_because("take", symbol(&x), Some("a reason"));
    assert!(
        matches!(&e, Error::Concretization { message, .. } if message.ends_with(": a reason") && message.contains("an argument of the traced function")),
        "{e}"
    );
    assert!(!symbol(&y).trace_ended());
    let _program = em.finish_values(&[&y]).unwrap();
    assert!(symbol(&y).trace_ended() && symbol(&x).trace_ended());
    match t.data("__array__") {
        Err(Error::TracerLeak { op, message }) => {
            assert_eq!(op, "__array__");
            assert!(
                message.contains("trace ended") && message.contains("made by op sin"),
                "{message}"
            );
        }
        other => panic!("expected TracerLeak, got {other:?}"),
    }
    assert!(matches!(
        em.emit(&Op::Unary(UnaryOp::Cos), &[&y]),
        Err(Error::TracerLeak { .. })
    ));
}

#[test]
fn an_ended_trace_without_a_program_leaks_its_tensors() {
    let em = Emitter::new();
    let x = em.input_value(DType::F32, &[]);
    let t = EagerTensor::new(x.clone(), default_runtime().clone(), None);
    assert!(matches!(
        t.data("bool()"),
        Err(Error::Concretization { .. })
    ));
    em.end();
    em.end(); // idempotent
    assert!(matches!(t.data("bool()"), Err(Error::TracerLeak { .. })));
    assert!(matches!(
        em.emit(&Op::Unary(UnaryOp::Sin), &[&x]),
        Err(Error::TracerLeak { .. })
    ));
    // a symbol of another trace is a leak in this one
    let other = Emitter::new();
    assert!(matches!(
        other.emit(&Op::Unary(UnaryOp::Sin), &[&x]),
        Err(Error::TracerLeak { .. })
    ));
}
