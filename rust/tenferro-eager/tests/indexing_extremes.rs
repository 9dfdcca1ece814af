//! `basic_index` at the ends of the `i64` range (the binding saturates Python ints such as
//! `10**30` to `i64::MIN`/`i64::MAX`): NumPy's answers, and no arithmetic overflow (this test
//! runs with overflow checks in the default test profile).

use std::sync::Arc;
use tenferro_cpu::CpuEngine;
use tenferro_eager::{
    basic_index, BasicIndex, DirectHost, EagerTensor, ModeState, Runtime, IMPLICIT,
};
use tenferro_tensor::Tensor;

/// `(start, stop, step)` of a slice and Python's answer for `list(range(5))[start:stop:step]`.
type Case = (Option<i64>, Option<i64>, Option<i64>, &'static [f64]);

fn values(t: &EagerTensor) -> (Vec<usize>, Vec<f64>) {
    let shape = t.value.shape().to_vec();
    let n: usize = shape.iter().product();
    let flat = t.value.tensor("test").unwrap().to_vec::<f64>();
    assert_eq!(flat.len(), n);
    (shape, flat)
}

#[test]
fn extreme_slice_bounds_and_steps_match_python() {
    let h = DirectHost {
        engine: Arc::new(CpuEngine::new(Some(1)).unwrap()),
    };
    let x = EagerTensor::of_data(
        Tensor::from_vec(&[5], vec![0.0, 1.0, 2.0, 3.0, 4.0]).unwrap(),
        Runtime::new(),
        None,
    );
    let mode = ModeState::default();
    let (min, max) = (i64::MIN, i64::MAX);
    let cases: [Case; 7] = [
        (None, None, Some(min), &[4.0]),
        (None, None, Some(-max), &[4.0]),
        (Some(max), None, Some(min), &[4.0]),
        (Some(3), Some(min), Some(min), &[3.0]),
        (Some(min), Some(max), Some(max), &[0.0]),
        (Some(min), Some(max), Some(-1), &[]),
        (Some(max), Some(min), Some(-2), &[4.0, 2.0, 0.0]),
    ];
    for (start, stop, step, want) in cases {
        let key = [BasicIndex::Slice { start, stop, step }];
        let out = basic_index(&IMPLICIT, &x, &key, &mode, &h).unwrap();
        let (shape, got) = values(&out);
        assert_eq!(shape, vec![want.len()], "{start:?}:{stop:?}:{step:?}");
        assert_eq!(got, want, "{start:?}:{stop:?}:{step:?}");
    }
}
