"""``tf.fft`` against ``numpy.fft``: values (relative 2-norm error ≤ 1e-12 in double precision)
over odd/even lengths, ``n``/``s`` padding and cropping, several axes, strided and transposed
inputs, zero-size inputs and every ``norm``; dtypes; typed errors where NumPy raises;
``check_grads(order=2)`` for every transform; ``tf.jit`` equal to eager."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import AxisError, DTypeError
from tenferro.testing import check_grads

NORMS = (None, "backward", "ortho", "forward")

# NumPy 2 deprecates `s` without `axes` (the cases pin its current meaning, which tf.fft keeps).
pytestmark = pytest.mark.filterwarnings("ignore:`axes` should not be `None`:DeprecationWarning")


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _real(shape: tuple[int, ...], seed: int = 0, dtype: Any = np.float64) -> np.ndarray:
    return _rng(seed).standard_normal(shape).astype(dtype)


def _cplx(shape: tuple[int, ...], seed: int = 0, dtype: Any = np.complex128) -> np.ndarray:
    r = _rng(seed)
    return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)


def _close(got: Any, want: np.ndarray, tol: float = 1e-12) -> None:
    g = np.asarray(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    den = max(float(np.linalg.norm(want)), 1e-300)
    err = float(np.linalg.norm(g - want)) / den if want.size else 0.0
    assert err <= tol, f"relative error {err:.3e}"


# 1-D transforms: (name, input maker). NumPy's functions take the same arguments.
ONE_D = {
    "fft": _cplx,
    "ifft": _cplx,
    "rfft": _real,
    "irfft": _cplx,
    "hfft": _cplx,
    "ihfft": _real,
}

ONE_D_CASES = [
    # (shape, axis, n)
    ((8,), -1, None),
    ((7,), -1, None),
    ((9,), 0, 12),
    ((10,), -1, 5),
    ((6,), -1, 7),
    ((5, 6), 0, None),
    ((5, 6), 1, 4),
    ((3, 4, 5), 1, None),
    ((3, 4, 5), -1, 9),
    ((2, 1), 0, 3),
    ((1,), -1, 1),
]


@pytest.mark.parametrize("name", sorted(ONE_D))
@pytest.mark.parametrize("norm", NORMS)
def test_one_dimensional_matches_numpy(name: str, norm: str | None) -> None:
    make = ONE_D[name]
    for i, (shape, axis, n) in enumerate(ONE_D_CASES):
        if name in ("irfft", "hfft") and n is None and shape[axis] == 1:
            continue  # n = 0: the error test below
        x = make(shape, seed=i)
        want = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
        got = getattr(tf.fft, name)(tf.asarray(x), n=n, axis=axis, norm=norm)
        _close(got, want)


NDIM_CASES = [
    # (shape, s, axes)
    ((6, 5), None, None),
    ((4, 5, 3), None, (0, 2)),
    ((4, 5, 3), (3, 8), (2, 0)),
    ((4, 5, 3), (6, 4), None),
    ((5, 4), (-1, 6), (0, 1)),
    ((3, 4, 5), None, (1,)),
    ((2, 3, 4, 3), (4, 3, 5), (0, 1, 3)),
    ((7, 3), (5, 2), (1, 0)),
]


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("norm", NORMS)
def test_n_dimensional_matches_numpy(name: str, norm: str | None) -> None:
    make = _real if name == "rfftn" else _cplx
    for i, (shape, s, axes) in enumerate(NDIM_CASES):
        x = make(shape, seed=10 + i)
        want = getattr(np.fft, name)(x, s=s, axes=axes, norm=norm)
        got = getattr(tf.fft, name)(tf.asarray(x), s=s, axes=axes, norm=norm)
        _close(got, want)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
def test_two_dimensional_matches_numpy(name: str) -> None:
    make = _real if name == "rfft2" else _cplx
    x = make((3, 6, 5), seed=3)
    for s, axes in [(None, (-2, -1)), ((4, 8), (-2, -1)), (None, (0, 2)), ((5, 3), (2, 1))]:
        for norm in NORMS:
            want = getattr(np.fft, name)(x, s=s, axes=axes, norm=norm)
            got = getattr(tf.fft, name)(tf.asarray(x), s=s, axes=axes, norm=norm)
            _close(got, want)


def test_repeated_axes_transform_again_as_numpy() -> None:
    x = _cplx((4, 6), seed=5)
    _close(tf.fft.fftn(tf.asarray(x), axes=(1, 1)), np.fft.fftn(x, axes=(1, 1)))
    r = _real((4, 6), seed=6)
    _close(tf.fft.rfftn(tf.asarray(r), axes=(0, 1, 0)), np.fft.rfftn(r, axes=(0, 1, 0)))


def test_strided_and_transposed_inputs() -> None:
    x = _cplx((6, 9, 4), seed=7)
    t = tf.asarray(x)
    views = [
        (t.T, x.T),
        (t[::2, ::-1], x[::2, ::-1]),
        (tf.transpose(t, (1, 2, 0))[:, 1:3], np.transpose(x, (1, 2, 0))[:, 1:3]),
    ]
    for tv, xv in views:
        assert tuple(tv.shape) == xv.shape
        for axes in [(0,), (1,), (2,), (0, 2), (2, 1, 0)]:
            _close(tf.fft.fftn(tv, axes=axes), np.fft.fftn(xv, axes=axes))
            _close(tf.fft.ifftn(tv, axes=axes), np.fft.ifftn(xv, axes=axes))
            _close(tf.fft.irfftn(tv, axes=axes), np.fft.irfftn(xv, axes=axes))
        r = tf.asarray(x.real)
        for rv, xr in [(r.T, x.real.T), (r[::-2, 1::2], x.real[::-2, 1::2])]:
            for axes in [(0,), (1,), (2, 0), (0, 1, 2)]:
                _close(tf.fft.rfftn(rv, axes=axes), np.fft.rfftn(xr, axes=axes))


def test_large_batched_transforms_on_the_workers() -> None:
    """Sizes past the parallel threshold (lines split over the engine's workers), power-of-two
    and prime lengths."""
    x = _cplx((64, 1031), seed=8)
    _close(tf.fft.fft(tf.asarray(x)), np.fft.fft(x))
    _close(tf.fft.fft(tf.asarray(x), axis=0), np.fft.fft(x, axis=0))
    r = _real((256, 256), seed=9)
    _close(tf.fft.rfft2(tf.asarray(r)), np.fft.rfft2(r))
    _close(tf.fft.irfft2(tf.asarray(np.fft.rfft2(r))), np.fft.irfft2(np.fft.rfft2(r)))
    big = _cplx((1 << 16,), seed=10)
    _close(tf.fft.ifft(tf.asarray(big)), np.fft.ifft(big))
    # Column-major rows (the real passes gather strided lines in tiles into padded buffers):
    # line counts off the chunk size, lines of a 3-D tensor that are not neighbours, float32.
    for shape, axes in [
        ((37, 40), (1,)),
        ((5, 33, 8), (1,)),
        ((5, 33, 8), (2, 1)),
        ((19, 512), (0, 1)),
    ]:
        for dtype, tol in [(np.float64, 1e-12), (np.float32, 1e-5)]:
            r = _real(shape, seed=11, dtype=dtype)
            _close(tf.fft.rfftn(tf.asarray(r), axes=axes), np.fft.rfftn(r, axes=axes), tol)
            c = np.fft.rfftn(r, axes=axes)
            n = [shape[a] for a in axes]
            got = tf.fft.irfftn(tf.asarray(c), s=n, axes=axes)
            _close(got, np.fft.irfftn(c, s=n, axes=axes), tol)


@pytest.mark.parametrize(
    "name,dtype,out",
    [
        ("fft", np.float32, np.complex64),
        ("fft", np.complex64, np.complex64),
        ("fft", np.float64, np.complex128),
        ("fft", np.int32, np.complex128),
        ("ifft", np.complex128, np.complex128),
        ("rfft", np.float32, np.complex64),
        ("rfft", np.int64, np.complex128),
        ("irfft", np.complex64, np.float32),
        ("irfft", np.float64, np.float64),
        ("hfft", np.complex64, np.float32),
        ("ihfft", np.float32, np.complex64),
        ("fftn", np.float32, np.complex64),
        ("rfftn", np.float32, np.complex64),
        ("irfftn", np.complex64, np.float32),
    ],
)
def test_dtypes_follow_numpy(name: str, dtype: Any, out: Any) -> None:
    x = (
        (_cplx((4, 6), seed=11) * 3).astype(dtype)
        if np.dtype(dtype).kind == "c"
        else (_real((4, 6), seed=11) * 3).astype(dtype)
    )
    got = getattr(tf.fft, name)(tf.asarray(x))
    want = getattr(np.fft, name)(x)
    assert got.dtype == np.dtype(out) == want.dtype
    tol = 1e-5 if np.dtype(out) in (np.complex64, np.float32) else 1e-12
    _close(got, want.astype(out), tol)


def test_zero_size_inputs() -> None:
    x = np.zeros((0, 4), np.complex128)
    _close(tf.fft.fft(tf.asarray(x)), np.fft.fft(x))
    _close(tf.fft.rfft(tf.asarray(x.real)), np.fft.rfft(x.real))
    _close(tf.fft.irfft(tf.asarray(x)), np.fft.irfft(x))
    _close(
        tf.fft.fftn(tf.asarray(np.zeros((3, 0, 4))), axes=(0, 2)),
        np.fft.fftn(np.zeros((3, 0, 4)), axes=(0, 2)),
    )
    # A zero-size transformed axis with no length given: NumPy raises ValueError.
    for name in ("fft", "ifft", "rfft"):
        with pytest.raises(ValueError):
            getattr(np.fft, name)(np.zeros(0))
        with pytest.raises(ValueError, match="invalid number of data points"):
            getattr(tf.fft, name)(tf.asarray(np.zeros(0)))
    # ... unless n pads it.
    _close(tf.fft.fft(tf.asarray(np.zeros(0)), n=3), np.fft.fft(np.zeros(0), n=3))


def test_errors_are_typed_and_name_the_function() -> None:
    x = tf.asarray(_cplx((4,)))
    with pytest.raises(DTypeError, match="rfft"):
        tf.fft.rfft(x)
    with pytest.raises(TypeError):
        np.fft.rfft(_cplx((4,)))
    with pytest.raises(ValueError, match="norm"):
        tf.fft.fft(x, norm="bogus")
    with pytest.raises(ValueError, match=r"fft\.fft.*\(0\)"):
        tf.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="irfft"):
        tf.fft.irfft(tf.asarray(_cplx((1,))))  # n = 2·(1 − 1) = 0, as NumPy
    with pytest.raises(AxisError):
        tf.fft.fft(x, axis=1)
    with pytest.raises(ValueError):
        tf.fft.fftn(tf.asarray(_cplx((3, 4))), s=(2, 2, 2), axes=(0, 1))
    with pytest.raises(DTypeError, match="fftfreq"):
        tf.fft.fftfreq(4, dtype=np.int32)
    with pytest.raises(ValueError, match="device"):
        tf.fft.fftfreq(4, device="gpu")


def test_primitive_checks_its_config() -> None:
    x = tf.asarray(_cplx((4, 6)))
    with pytest.raises(ValueError, match="fft"):
        tf.prim.fft(x, "FFT", (5,))  # size 6 on the last axis
    with pytest.raises(DTypeError, match="RFFT"):
        tf.prim.fft(x, "RFFT", (6,))
    with pytest.raises(ValueError, match="fft_type"):
        tf.prim.fft(x, "DCT", (6,))
    with pytest.raises(AxisError):
        tf.prim.fft(x, "FFT", (4, 4), (0, 0))
    # StableHLO's default axes: the trailing ones; IRFFT needs n//2 + 1 frequencies.
    _close(tf.prim.fft(x, "FFT", (4, 6)), np.fft.fft2(np.asarray(x)))
    _close(tf.prim.fft(x, "IRFFT", (4, 10)), np.fft.irfft2(np.asarray(x), s=(4, 10)))


def test_frequencies_and_shifts() -> None:
    for n in (1, 4, 7):
        for d in (1.0, 0.25):
            _close(tf.fft.fftfreq(n, d=d), np.fft.fftfreq(n, d=d), 1e-15)
            _close(tf.fft.rfftfreq(n, d=d), np.fft.rfftfreq(n, d=d), 1e-15)
    assert tf.fft.fftfreq(5, dtype=np.float32).dtype == np.float32
    x = _real((4, 5, 3))
    for axes in (None, 0, (1,), (0, 2), (-1, 1)):
        _close(tf.fft.fftshift(tf.asarray(x), axes=axes), np.fft.fftshift(x, axes=axes), 0)
        _close(tf.fft.ifftshift(tf.asarray(x), axes=axes), np.fft.ifftshift(x, axes=axes), 0)


# Every transform's derivatives, to second order, forward and reverse.
GRAD_CASES = [
    ("fft", lambda x: tf.fft.fft(x, n=7, norm="ortho"), _cplx((3, 6))),
    ("ifft", lambda x: tf.fft.ifft(x, axis=0), _cplx((4, 3))),
    ("fftn", lambda x: tf.fft.fftn(x, s=(3, 5)), _cplx((4, 4))),
    ("ifftn", lambda x: tf.fft.ifftn(x, norm="forward"), _cplx((3, 4))),
    ("fft2", lambda x: tf.fft.fft2(x), _cplx((2, 3, 4))),
    ("ifft2", lambda x: tf.fft.ifft2(x, s=(2, 5)), _cplx((3, 3))),
    ("rfft-even", lambda x: tf.fft.rfft(x), _real((3, 8))),
    ("rfft-odd", lambda x: tf.fft.rfft(x, n=7, norm="ortho"), _real((2, 6))),
    ("rfftn", lambda x: tf.fft.rfftn(x, axes=(1, 0)), _real((4, 6))),
    ("rfft2", lambda x: tf.fft.rfft2(x, s=(3, 5)), _real((4, 4))),
    ("irfft-even", lambda x: tf.fft.irfft(x), _cplx((2, 5))),
    ("irfft-odd", lambda x: tf.fft.irfft(x, n=7, axis=0), _cplx((4, 2))),
    ("irfftn", lambda x: tf.fft.irfftn(x, s=(4, 6), norm="ortho"), _cplx((4, 4))),
    ("irfft2", lambda x: tf.fft.irfft2(x), _cplx((3, 4))),
    ("hfft", lambda x: tf.fft.hfft(x, n=6), _cplx((5,))),
    ("ihfft", lambda x: tf.fft.ihfft(x), _real((7,))),
    ("real-into-fft", lambda x: tf.fft.fft(x), _real((5,))),
]


@pytest.mark.parametrize("label,f,x", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_check_grads_order_2(label: str, f: Any, x: np.ndarray) -> None:
    check_grads(f, [x], order=2, modes=("fwd", "rev"))


def test_rfft_gradient_matches_the_dense_adjoint() -> None:
    """``grad`` of ``Re Σ conj(c)·rfft(x)`` is ``Re(Rᴴ c)`` with ``R`` the first ``n//2 + 1``
    rows of the DFT matrix (an independent, dense oracle for the Hermitian weights)."""
    for n in (6, 7):
        x = _real((n,), seed=n)
        c = _cplx((n // 2 + 1,), seed=n + 1)
        F = np.exp(-2j * np.pi * np.outer(np.arange(n), np.arange(n)) / n)[: n // 2 + 1]
        want = np.real(F.conj().T @ c)
        xt = tf.asarray(x)
        g = tf.func.grad(lambda v: tf.real(tf.sum(tf.conj(tf.asarray(c)) * tf.fft.rfft(v))))(xt)
        _close(g, want)
        # IRFFT: L = Σ w·irfft(z); dL/dRe z + i dL/dIm z by finite differences on the dense map.
        z = _cplx((n // 2 + 1,), seed=n + 2)
        w = _real((n,), seed=n + 3)
        g = tf.func.grad(lambda v: tf.sum(tf.asarray(w) * tf.fft.irfft(v, n=n)))(tf.asarray(z))
        eps = 1e-6
        num = np.zeros_like(z)
        for k in range(z.size):
            for unit in (1.0, 1j):
                dz = np.zeros_like(z)
                dz[k] = eps * unit
                d = (
                    np.sum(w * np.fft.irfft(z + dz, n=n)) - np.sum(w * np.fft.irfft(z - dz, n=n))
                ) / (2 * eps)
                num[k] += d * unit
        _close(g, num, 1e-8)


def test_jit_equals_eager() -> None:
    def f(x: Any, r: Any) -> Any:
        a = tf.fft.fftn(x, s=(5, 4), norm="ortho")
        b = tf.fft.irfft2(tf.fft.rfft2(r, s=(3, 6)), s=(3, 6))
        c = tf.fft.fftshift(tf.fft.ihfft(r[0]))
        return tf.sum(tf.abs(a)) + tf.sum(b) + tf.sum(tf.real(c)), a

    x, r = tf.asarray(_cplx((4, 6))), tf.asarray(_real((3, 5)))
    got, want = tf.jit(f)(x, r), f(x, r)
    for g, w in zip(got, want):
        _close(g, np.asarray(w))
    # Gradients through the compiled call.
    gf = tf.func.grad(lambda v: tf.sum(tf.abs(tf.fft.rfftn(v, s=(4, 7))) ** 2))
    _close(tf.jit(gf)(r), np.asarray(gf(r)))


def test_jit_is_bit_identical_to_eager_on_the_chunked_passes() -> None:
    """The same kernels under ``tf.jit``: the same bits, past the parallel threshold too."""
    r = tf.asarray(_real((96, 512), seed=12))
    x = tf.asarray(_cplx((1 << 14,), seed=13))
    for f, a in [
        (tf.fft.rfft2, r),
        (lambda v: tf.fft.irfft2(tf.fft.rfft2(v)), r),
        (tf.fft.fft, x),
        (lambda v: tf.fft.fft(v.reshape(128, 128), axis=0), x),
    ]:
        np.testing.assert_array_equal(np.asarray(tf.jit(f)(a)), np.asarray(f(a)))


def test_minus_one_in_s_keeps_the_input_size_on_the_real_axis_too() -> None:
    """numpy.fft: ``-1`` in ``s`` is the input's size on every axis, the real one of irfftn too."""
    z = np.arange(12.0).reshape(3, 4) + 1j
    for got, want in [
        (
            tf.fft.irfftn(tf.asarray(z), s=(-1, -1), axes=(0, 1)),
            np.fft.irfftn(z, s=(-1, -1), axes=(0, 1)),
        ),
        (tf.fft.irfft2(tf.asarray(z), s=(-1, -1)), np.fft.irfft2(z, s=(-1, -1))),
    ]:
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, atol=1e-12)
