"""Automatic differentiation against finite differences and the worked values of autodiff.md."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
from reference import REFERENCE
from tenferro import _testing
from tenferro.testing import assert_close, check_grads

RNG = np.random.default_rng(0)


def _arr(shape: tuple[int, ...], dtype: str, positive: bool = False) -> np.ndarray:
    a = RNG.uniform(0.5, 1.5, size=shape) if positive else RNG.normal(size=shape)
    if dtype == "complex128":
        a = a + 1j * (RNG.uniform(0.1, 0.5, size=shape) if positive else RNG.normal(size=shape))
    return a.astype(dtype)


#: The catalog's unary primitives with a derivative rule (``sign``'s is symbolically zero), with
#: the dtypes of float64/complex128 they admit. Inputs are positive where the reference's domain
#: is (``log``, ``sqrt``, ``rsqrt``, ``log1p``) and for ``abs`` (not differentiable at 0).
RULES = _testing.ad_rules()
UNARY = {
    row.name: tuple(d for d in ("float64", "complex128") if np.dtype(d) in row.dtypes)
    for row in tf.prim.CATALOG
    if row.family == "unary" and RULES[row.name] == "linearize"
}
UNARY_PARAMS = [
    pytest.param(name, d, id=f"{name}-{d}")
    for name, dtypes in sorted(UNARY.items())
    for d in dtypes
]


def _positive_inputs(name: str) -> bool:
    return name == "abs" or getattr(REFERENCE.get(name), "domain", "any") in ("positive", "log1p")


def test_unary_rules_cover_the_catalog() -> None:
    assert len(UNARY) >= 13 and "erf" in UNARY and "sign" not in UNARY, sorted(UNARY)
    assert all(UNARY.values()), UNARY


@pytest.mark.parametrize(("name", "dtype"), UNARY_PARAMS)
def test_unary_rules(name: str, dtype: str) -> None:
    fn = getattr(tf.prim, name)
    x = _arr((3, 2), dtype, positive=_positive_inputs(name))
    check_grads(lambda t: fn(t), [x], order=2)


def test_erf_rule() -> None:
    check_grads(lambda t: tf.prim.erf(t), [_arr((4,), "float64")], order=2)


BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "rem"]


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_rules_with_broadcasting(name: str, dtype: str) -> None:
    if dtype == "complex128" and name in {"maximum", "minimum", "rem"}:
        pytest.skip(reason=f"{name} rejects complex operands (ops.md)")
    fn = getattr(tf.prim, name)
    positive = name in {"pow", "div"}
    x = _arr((3, 2), dtype, positive=positive)
    y = _arr((2,), dtype, positive=positive)
    check_grads(lambda a, b: fn(a, b), [x, y], order=2)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_reductions_layout_and_structure(dtype: str) -> None:
    x = _arr((3, 4), dtype)
    check_grads(lambda t: tf.prim.reduce_sum(t, (1,)), [x])
    check_grads(lambda t: tf.prim.transpose(t, (1, 0)) * 2.0, [x])
    check_grads(lambda t: tf.prim.reshape(t, (2, 6)), [x])
    check_grads(lambda t: tf.prim.broadcast_in_dim(t, (3, 5, 4), (0, 2)), [x])
    check_grads(lambda t: tf.prim.reverse(t, (0,)), [x])
    check_grads(
        lambda t: tf.prim.slice(t, tf.SliceConfig(starts=(0, 1), limits=(3, 4), strides=(2, 2))),
        [x],
    )
    check_grads(
        lambda t: tf.prim.pad(
            t,
            tf.PadConfig(
                edge_padding_low=(1, -1), edge_padding_high=(0, 2), interior_padding=(1, 0)
            ),
        ),
        [x],
    )
    check_grads(lambda t: tf.prim.concatenate([t, t * 2.0], 1), [x])
    check_grads(lambda t: tf.prim.extract_diag(t), [x])
    check_grads(lambda t: tf.prim.embed_diag(tf.prim.extract_diag(t)), [x])
    check_grads(lambda t: tf.prim.tril(t, 1), [x])
    check_grads(lambda t: tf.prim.dynamic_slice(t, [1, 1], [2, 2]), [x])


def test_real_reductions() -> None:
    x = _arr((3, 4), "float64")
    check_grads(lambda t: tf.prim.reduce_sum_squares(t, (0,)), [x])
    check_grads(lambda t: tf.prim.reduce_max(t, (1,)), [x])
    check_grads(lambda t: tf.prim.reduce_min(t, None), [x])
    check_grads(lambda t: tf.prim.clamp(t, -0.5, 0.5), [x])
    pred = x > 0
    check_grads(lambda a, b: tf.prim.select(a.runtime.constant(pred), a, b), [x, x[::-1].copy()])


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_contractions(dtype: str) -> None:
    a, b = _arr((3, 4, 2), dtype), _arr((4, 5, 2), dtype)
    cfg = tf.DotGeneralConfig(
        lhs_contracting_dims=(1,),
        rhs_contracting_dims=(0,),
        lhs_batch_dims=(2,),
        rhs_batch_dims=(2,),
    )
    check_grads(lambda x, y: tf.prim.dot_general(x, y, cfg), [a, b])
    for lc in (False, True):
        for rc in (False, True):
            check_grads(
                lambda x, y: tf.prim.dot_general_with_conj(x, y, cfg, lc, rc), [a, b], order=1
            )
    m, n = _arr((3, 4), dtype), _arr((4, 2), dtype)
    check_grads(lambda x, y: tf.prim.matmul(x, y), [m, n])
    check_grads(lambda x: tf.prim.scale_real(x, 2.5), [m])


def test_worked_complex_values() -> None:
    rt = tf.Runtime()
    z = rt.variable([3 + 4j])
    (z * z.conj()).real.sum().backward()
    assert_close(z.grad, np.array([6 + 8j]))
    w = rt.variable(np.array([1j * np.pi / 2, np.log(2.0)]))
    g = rt.grad(tf.exp(w).sum().real, w)
    assert_close(g, np.array([-1j, 2.0]), atol=1e-12)
    g2 = rt.grad((w * w.conj()).real.sum(), w)
    assert_close(g2, 2 * np.asarray(w))
    v = rt.vjp(tf.prim.exp(w), w, rt.constant(np.array([2 - 3j, 0.0])))
    assert_close(np.asarray(v)[0], np.complex128(-3 - 2j), atol=1e-12)


def test_accumulation_clear_and_gradients_mapping() -> None:
    rt = tf.Runtime()
    x = rt.variable([1.0, 2.0])
    y = rt.variable([3.0])
    grads = ((x * 2.0).sum() + (y * y).sum()).backward()
    assert x in grads and y in grads and len(grads) == 2
    assert_close(grads[x], np.array([2.0, 2.0]))
    (x * 2.0).sum().backward()
    assert_close(x.grad, np.array([4.0, 4.0]))
    x.clear_grad()
    assert x.grad is None
    rt.clear_grads()
    assert y.grad is None


def test_higher_order_hessian_vector_product() -> None:
    rt = tf.Runtime()
    x = rt.variable([0.3, -0.7])
    f = (tf.exp(x) * x).sum()
    g = rt.grad(f, x)
    assert g.requires_grad
    v = np.array([1.0, 2.0])
    hv = rt.grad((g * rt.constant(v)).sum(), x)
    xv = np.asarray(x)
    assert_close(hv, (2 * np.exp(xv) + xv * np.exp(xv)) * v)
    fwd = rt.jvp(g, x, rt.constant(v))
    assert_close(fwd, np.asarray(hv))


def test_modes_and_errors() -> None:
    rt = tf.Runtime()
    x = rt.variable([1.0, 2.0])
    with tf.no_grad():
        assert not (x * 2.0).requires_grad

    @tf.no_grad
    def f(t: tf.Tensor) -> tf.Tensor:
        return t * 2.0

    assert not f(x).requires_grad
    with pytest.raises(tf.errors.NonScalarGradError, match="backward"):
        (x * 2.0).backward()
    with pytest.raises(tf.errors.NoGradientError):
        rt.constant([1.0]).sum().backward()
    with pytest.raises(tf.errors.DTypeError, match="variable"):
        rt.variable([1, 2])
    with pytest.raises(tf.errors.InactiveError):
        rt.grad((x * 2.0).sum(), rt.variable([1.0]))
    assert rt.grad_optional((x * 2.0).sum(), rt.variable([1.0])) is None
    with tf.capture_trace():
        c = rt.constant([2.0])
        y = (c * c).sum()
    assert not y.requires_grad
    assert_close(rt.grad(y, c), np.array([4.0]))


def test_deep_chain_neither_leaks_nor_overflows() -> None:
    rt = tf.Runtime()
    x = rt.variable([1.0])
    y = x
    for _ in range(20000):
        y = y * 1.0
    y.sum().backward()
    assert_close(x.grad, np.array([1.0]))
    del y


def test_basic_indexing_and_transpose_of_tracked_tensors_are_differentiable() -> None:
    x = np.arange(6.0).reshape(2, 3)
    check_grads(lambda t: (t[::-1, 1:] * t.T[1:, ::-2].T).sum() + t[0, None, ...].sum(), [x])
    rt = tf.Runtime()
    v = rt.variable(x)
    assert v[0].requires_grad and v.T.requires_grad
    with tf.no_grad():
        assert not v.T.requires_grad


def test_rule_manifest_every_differentiable_primitive_has_both_rules() -> None:
    from tenferro import _testing

    rules = _testing.ad_rules()
    catalog = {r.name for r in tf.prim.CATALOG}
    assert set(rules) == catalog
    assert {n for n, k in rules.items() if k == "missing"} == set()
    assert rules["sign"] == "zero" and rules["compare"] == "cut"


def test_reduce_prod_exact_at_zeros_and_gather_scatter() -> None:
    rt = tf.Runtime()
    x = rt.variable([2.0, 0.0, 3.0])
    g = rt.grad(tf.prim.reduce_prod(x), x)
    assert_close(g, np.array([0.0, 6.0, 0.0]))
    rows = [rt.grad((g * rt.constant(np.eye(3)[i])).sum(), x) for i in range(3)]
    assert_close(
        np.stack([np.asarray(r) for r in rows]), np.array([[0, 3, 0], [3, 0, 2], [0, 2, 0.0]])
    )
    check_grads(
        lambda t: tf.prim.reduce_prod(t, (1,)), [np.array([[2.0, 0.0, 3.0], [1.0, 2.0, 3.0]])]
    )
    gc = tf.GatherConfig(
        offset_dims=(1,),
        collapsed_slice_dims=(0,),
        start_index_map=(0,),
        index_vector_dim=1,
        slice_sizes=(1, 3),
    )
    idx = np.array([[2], [0], [9], [-4]])
    check_grads(lambda t: tf.prim.gather(t, t.runtime.constant(idx), gc), [RNG.normal(size=(4, 3))])
    sc = tf.ScatterConfig(
        update_window_dims=(1,),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
        index_vector_dim=1,
    )
    sidx = np.array([[1], [1], [7]])
    check_grads(
        lambda a, u: tf.prim.scatter(a, a.runtime.constant(sidx), u, sc),
        [RNG.normal(size=(4, 3)), RNG.normal(size=(3, 3))],
    )


def test_sign_only_leaf_gets_zeros_and_leaks_return_to_baseline() -> None:
    from tenferro import _testing

    rt = tf.Runtime()
    base = _testing.live_counts(rt)
    x = rt.variable([1.0, -2.0])
    y = (tf.prim.sign(x) * 2.0).sum()
    grads = y.backward()
    assert_close(grads[x], np.zeros(2))
    assert rt.grad_optional(y, x) is None
    assert tf.tensor([1.0], requires_grad=True).requires_grad
    del x, y, grads
    import gc

    gc.collect()
    assert _testing.live_counts(rt)[1:] == base[1:]
