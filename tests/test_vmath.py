"""The vectorised real transcendental kernels (``rust/tenferro-cpu/src/vmath.rs``, issue 26).

* accuracy against an ``np.longdouble`` evaluation (``scipy.special.erf`` for ``erf``) on
  derandomised log-uniform samples, to the ulp bound each kernel holds (``tools/ulp_check.py``
  measures the same over 10**7 samples);
* special values (zeros with their sign, infinities, NaN, overflow and underflow thresholds,
  subnormals, huge ``sin``/``cos`` arguments) bit for bit as NumPy;
* the same bits whatever the layout: every offset and length 0..70, strided views, and engines
  of 1 and 2 threads (the vector body, its remainder and the per-element fallback agree).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.special as sps

import tenferro as tf

RNG = np.random.default_rng(2611)

#: name -> (tenferro, numpy (longdouble-capable), domain sampler, max ulp vs the reference)
FUNCS = {
    "exp": (tf.exp, np.exp, lambda n: _both(n, 1e-20, 745.0), 1.0),
    "log": (tf.log, np.log, lambda n: _lu(n, 1e-300, 1e300), 1.0),
    "sin": (tf.sin, np.sin, lambda n: _both(n, 1e-20, 1e6), 1.0),
    "cos": (tf.cos, np.cos, lambda n: _both(n, 1e-20, 1e6), 1.0),
    "tanh": (tf.tanh, np.tanh, lambda n: _both(n, 1e-20, 25.0), 1.5),
    "expm1": (tf.expm1, np.expm1, lambda n: _both(n, 1e-20, 709.0), 1.5),
    "log1p": (
        tf.log1p,
        np.log1p,
        lambda n: np.concatenate([_lu(n // 2, 1e-20, 1e300), -_lu(n - n // 2, 1e-20, 0.999)]),
        1.5,
    ),
}

SPECIAL = np.array(
    [
        0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
        -2.2250738585072014e-308, 1e-300, -1e-300, 1.0, -1.0, 0.5, 2.0**-28, 2.0**-29,
        708.0, 709.78, 709.79, 710.0, -708.0, -745.1, -745.2, -746.0, 22.0, -22.0, 6.0, -6.0,
        1e300, -1e300, 823549.6645826431, 823549.6645826432, 1e22, -0.999999, -1 + 2**-53,
        np.pi, np.pi / 2, -np.pi / 4,
    ]
)  # fmt: skip


def _lu(n: int, lo: float, hi: float) -> np.ndarray:
    return np.exp(RNG.uniform(np.log(lo), np.log(hi), size=n))


def _both(n: int, lo: float, hi: float) -> np.ndarray:
    return np.concatenate([_lu(n // 2, lo, hi), -_lu(n - n // 2, lo, hi)])


def _ulps(y: np.ndarray, ref: np.ndarray) -> float:
    """Max ``|y - ref| / ulp(ref)`` over finite nonzero references (ref in longdouble)."""
    with np.errstate(over="ignore"):
        ref64 = ref.astype(np.float64)
    keep = np.isfinite(ref64) & (ref64 != 0)
    mag = np.abs(ref[keep])
    down = np.where(mag.astype(np.float64) > mag, np.nextafter(mag.astype(np.float64), 0), mag)
    ulp = np.spacing(down.astype(np.float64)).astype(np.longdouble)
    return float((np.abs(y[keep].astype(np.longdouble) - ref[keep]) / ulp).max())


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a.view(np.uint64), b.view(np.uint64)))


@pytest.mark.parametrize("name", FUNCS)
def test_within_ulp_bound_of_longdouble_reference(name: str) -> None:
    ours, ref_fn, sample, bound = FUNCS[name]
    x = sample(20_000)
    y = np.asarray(ours(tf.asarray(x)))
    assert _ulps(y, ref_fn(x.astype(np.longdouble))) <= bound


def test_erf_against_scipy() -> None:
    x = np.concatenate([_both(20_000, 1e-20, 7.0), SPECIAL])
    y, ref = np.asarray(tf.prim.erf(tf.asarray(x))), sps.erf(x)
    # scipy's erf is itself within about 1 ulp: 2 between the two.
    assert _ulps(y, ref.astype(np.longdouble)) <= 2.0
    special = ~np.isfinite(ref) | (ref == 0) | (np.abs(ref) == 1)
    assert _same(y[special], ref[special])


@pytest.mark.parametrize("name", FUNCS)
def test_special_values_as_numpy(name: str) -> None:
    ours, ref_fn, _, _ = FUNCS[name]
    with np.errstate(all="ignore"):
        want = ref_fn(SPECIAL)
    got = np.asarray(ours(tf.asarray(SPECIAL)))
    exact = ~np.isfinite(want) | (want == 0) | np.isnan(want)
    assert _same(got[exact], want[exact]), (SPECIAL[exact], got[exact], want[exact])
    assert _ulps(got[~exact], ref_fn(SPECIAL[~exact].astype(np.longdouble))) <= 1.5


@pytest.mark.parametrize("name", [*FUNCS, "erf"])
def test_same_bits_for_every_layout_and_thread_count(name: str) -> None:
    fn = tf.prim.erf if name == "erf" else FUNCS[name][0]
    x = np.concatenate([_both(300, 1e-3, 30.0), SPECIAL, _both(200, 1e-300, 1e300)])
    RNG.shuffle(x)
    whole = np.asarray(fn(tf.asarray(x)))
    t = tf.asarray(x)
    for off in range(0, 9):
        for n in range(0, 71):
            part = np.asarray(fn(t[off : off + n]))
            assert _same(part, whole[off : off + n]), (off, n)
    assert _same(np.asarray(fn(t[1::3])), whole[1::3])
    assert _same(np.asarray(fn(tf.asarray(x.reshape(-1, 2)).T)), whole.reshape(-1, 2).T)
    # Large enough to be split across the workers of a 2-thread engine.
    big = np.tile(x, 400)
    outs = []
    for threads in (1, 2):
        rt = tf.ExecutionContext(tf.CpuEngine(threads=threads)).eager_runtime()
        outs.append(np.asarray(fn(rt.constant(big))))
    assert _same(outs[0], outs[1]) and _same(outs[0], np.tile(whole, 400))


@pytest.mark.parametrize("name", [*FUNCS, "erf"])
def test_float32_rounds_the_float64_result(name: str) -> None:
    fn = tf.prim.erf if name == "erf" else FUNCS[name][0]
    with np.errstate(over="ignore"):
        x = np.concatenate([_both(2000, 1e-3, 80.0), SPECIAL]).astype(np.float32)
    with np.errstate(all="ignore"):
        want = np.asarray(fn(tf.asarray(x.astype(np.float64)))).astype(np.float32)
    got = np.asarray(fn(tf.asarray(x)))
    assert got.dtype == np.float32
    assert _same(
        got.view(np.uint32).astype(np.uint64).view(np.float64),
        want.view(np.uint32).astype(np.uint64).view(np.float64),
    )


def test_tanh_small_and_moderate_arguments_accurate() -> None:
    # One formula on every |x| (no cancellation below 0.55, where fdlibm switched formulas).
    x = np.concatenate([_both(20_000, 1e-12, 1.0), 2.0 ** -np.arange(20.0, 60.0)])
    got = np.asarray(tf.tanh(tf.asarray(x)))
    assert _ulps(got, np.tanh(x.astype(np.longdouble))) <= 1.2
    tiny = np.array([2.0**-30, -(2.0**-40), 1e-300, -5e-324, 2.2250738585072014e-308])
    assert _same(np.asarray(tf.tanh(tf.asarray(tiny))), tiny)


def test_pow_table_intervals_and_exponent_edges() -> None:
    # Every interval of pow's log table (x = 2^k z: 128 ranges of z, 8 points each, in three
    # binades) with exponents up to |y log x| = 650, against the long-double reference.
    lo, hi = float.fromhex("0x1.69555p-1"), float.fromhex("0x1.69555p0")
    z = np.exp2(np.linspace(np.log2(lo), np.log2(hi), 1024, endpoint=False))
    x = np.concatenate([z, np.nextafter(z, 0), z * 2.0**-500, z * 2.0**300])
    y = RNG.uniform(-1.0, 1.0, x.size) * np.minimum(600.0, 650.0 / np.abs(np.log(x)))
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
    got = np.asarray(tf.pow(tf.asarray(x), tf.asarray(y)))
    assert _ulps(got, ref) <= 0.6


def test_pow_accuracy_special_values_and_same_bits() -> None:
    x = np.concatenate([_lu(20_000, 1e-3, 1e3), np.abs(SPECIAL), SPECIAL, SPECIAL])
    y = np.concatenate(
        [
            RNG.uniform(-50.0, 50.0, 20_000),
            np.full(SPECIAL.size, 2.0),
            SPECIAL,
            RNG.permutation(SPECIAL),
        ]
    )
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
        want = np.power(x, y)
    got = np.asarray(tf.pow(tf.asarray(x), tf.asarray(y)))
    assert _ulps(got, ref) <= 0.6
    exact = ~np.isfinite(want) | (want == 0) | (y == 2.0)
    assert _same(got[exact], want[exact]), (x[exact], y[exact], got[exact], want[exact])
    # x^0.5 and x^-1 are the correctly rounded sqrt(x) and 1/x for positive normal x (NumPy's
    # SVML power on AVX-512 hosts is not: 1e300^-1 comes out one ulp off 1/1e300).
    pos = (x > 2.2250738585072014e-308) & np.isfinite(x)
    for e, f in ((0.5, np.sqrt), (-1.0, np.reciprocal)):
        m = pos & (y == e)
        assert _same(got[m], f(x[m])), (x[m], got[m])
    tx, ty = tf.asarray(x), tf.asarray(y)
    for off in range(0, 5):
        for n in range(0, 71, 3):
            part = np.asarray(tf.pow(tx[off : off + n], ty[off : off + n]))
            assert _same(part, got[off : off + n]), (off, n)
    # A broadcast scalar exponent and a strided base give the same bits as the full arrays.
    assert _same(
        np.asarray(tf.pow(tx[::2], 1.7)),
        np.asarray(tf.pow(tx, tf.asarray(np.full(x.size, 1.7))))[::2],
    )


def test_tanh_of_tiny_arguments_is_the_argument() -> None:
    # Below 2**-27, tanh x rounds to x (the pair arithmetic returned x + 1 ulp for ~4 %).
    rng = np.random.default_rng(7)
    x = np.ldexp(rng.uniform(1.0, 2.0, 4000), rng.integers(-1074, -27, 4000))
    x[::2] *= -1
    got = np.asarray(tf.tanh(tf.asarray(x)))
    assert np.array_equal(got.view(np.int64), x.view(np.int64))


def test_pow_fallback_threshold_same_bits_on_every_path(tmp_path) -> None:
    # Around |y ln x| = 690, where pow hands an element to libm (its AVX-512 lanes decide that
    # with a mask, the other paths element by element), with x = 1 and exponent 0 among them:
    # the vector body, one element at a time and the AVX2 kernel (a fresh interpreter with
    # TENFERRO_SIMD=avx2) give the same bits, within 0.6 ulp of the long-double reference.
    x = np.concatenate([_lu(3000, 1e-300, 1e300), _lu(1000, 0.99, 1.01)])
    x = x[np.log(x) != 0]
    t = RNG.uniform(685.0, 695.0, x.size) * np.where(RNG.random(x.size) < 0.5, 1.0, -1.0)
    y = np.concatenate([t / np.log(x), [0.0, -0.0, 2.0, 1.0, 1e300]])
    x = np.concatenate([x, [3.0, 1.0, 1.0, 0.7, 1.0]])
    got = np.asarray(tf.pow(tf.asarray(x), tf.asarray(y)))
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
    assert _ulps(got, ref) <= 0.6
    assert np.array_equal(got[-5:], [1.0, 1.0, 1.0, 0.7, 1.0])
    idx = RNG.choice(x.size, 300, replace=False)
    one = [np.asarray(tf.pow(tf.asarray(x[i : i + 1]), tf.asarray(y[i : i + 1])))[0] for i in idx]
    assert _same(np.array(one), got[idx])
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    code = (
        "import sys, numpy as np, tenferro as tf\n"
        f"x = np.load({str(tmp_path / 'x.npy')!r}); y = np.load({str(tmp_path / 'y.npy')!r})\n"
        f"np.save({str(tmp_path / 'avx2.npy')!r}, np.asarray(tf.pow(tf.asarray(x), tf.asarray(y))))\n"
    )
    env = {**os.environ, "TENFERRO_SIMD": "avx2"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert _same(np.load(tmp_path / "avx2.npy"), got)
