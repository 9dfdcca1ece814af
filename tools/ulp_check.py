"""Maximum ulp error of tenferro's real transcendental functions (not part of CI).

For each function: ``N`` log-uniform samples of the argument's magnitude over the function's
domain (both signs where it has them) plus edge cases (zeros, the overflow and underflow
thresholds, subnormals, near multiples of pi/2, points around 1), evaluated by tenferro in
float64 and compared with an ``np.longdouble`` (x87 80-bit, 64-bit significand) evaluation of
the same function, rounded to nothing: the error is ``|ours - ref| / ulp(ref)`` with ``ulp``
the spacing of float64 at ``|ref|``. NumPy's own float64 error on the same samples is shown
beside it. Non-finite and zero references must match exactly (sign included) and are counted
as mismatches otherwise.

``pow`` pairs log-uniform bases in [1e-3, 1e3] with uniform exponents in [-50, 50] (and the
edge cases with exponents 2, 0.5, -1, 3); ``erf`` has no longdouble version in NumPy/SciPy, so
it is compared with ``scipy.special.erf`` (itself within about 1 ulp): its row bounds the
difference between the two, not the error.

Usage: ``python tools/ulp_check.py [N]`` (default 10**7; about a minute per function).
"""

from __future__ import annotations

import sys

import numpy as np

import tenferro as tf


def loguniform(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    return np.exp(rng.uniform(np.log(lo), np.log(hi), size=n))


def ulp_err(y: np.ndarray, ref: np.ndarray) -> tuple[float, int]:
    """Max ulp error over finite nonzero references; count of special-value mismatches."""
    ref64 = ref.astype(np.float64)
    special = ~np.isfinite(ref64) | (ref64 == 0)
    bad = 0
    if special.any():
        a, b = y[special], ref64[special]
        same = (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
        bad = int((~same).sum())
    f = ~special
    if not f.any():
        return 0.0, bad
    # ulp of the float64 binade holding |ref| (spacing of the value rounded toward zero).
    mag = np.abs(ref[f])
    low = np.nextafter(mag.astype(np.float64), 0.0)
    down = np.where(mag.astype(np.float64) > mag, low, mag.astype(np.float64))
    ulp = np.spacing(down).astype(np.longdouble)
    err = np.abs(y[f].astype(np.longdouble) - ref[f]) / ulp
    return float(err.max()), bad


def edges() -> np.ndarray:
    k = np.arange(1, 2**19, 4099, dtype=np.float64)
    near_pio2 = k * (np.pi / 2)
    vals = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        5e-324,
        -5e-324,
        2.2250738585072014e-308,
        -2.2250738585072014e-308,
        1e-300,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1 - 2**-53,
        1 + 2**-52,
        708.0,
        709.78,
        709.79,
        710.0,
        -708.0,
        -745.1,
        -745.2,
        -746.0,
        22.0,
        -22.0,
        1e300,
        -1e300,
        823549.6645826431,
        823549.6645826432,
        1e6,
        1e22,
        -0.999999,
        -1 + 2**-53,
    ]
    return np.concatenate(
        [
            np.array(vals),
            near_pio2,
            -near_pio2,
            np.nextafter(near_pio2, 0),
            np.nextafter(near_pio2, np.inf),
        ]
    )


def cases(rng: np.random.Generator, n: int) -> dict[str, tuple[np.ndarray, object, object]]:
    h = n // 2

    def both(lo: float, hi: float) -> np.ndarray:
        return np.concatenate([loguniform(rng, h, lo, hi), -loguniform(rng, n - h, lo, hi)])

    return {
        "exp": (both(1e-30, 745.2), np.exp, tf.exp),
        "log": (loguniform(rng, n, 5e-324, 1.7e308), np.log, tf.log),
        "sin": (both(1e-30, 1e7), np.sin, tf.sin),
        "cos": (both(1e-30, 1e7), np.cos, tf.cos),
        "tanh": (both(1e-30, 30.0), np.tanh, tf.tanh),
        "expm1": (both(1e-30, 710.0), np.expm1, tf.expm1),
        "log1p": (
            np.concatenate(
                [loguniform(rng, h, 1e-30, 1.7e308), -loguniform(rng, n - h, 1e-30, 1.0)]
            ),
            np.log1p,
            tf.log1p,
        ),
    }


def main() -> int:
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**7
    rng = np.random.default_rng(2026)
    print(
        f"samples per function: {n} log-uniform + {edges().size} edge cases; "
        f"reference np.longdouble ({np.finfo(np.longdouble).nmant + 1}-bit significand)"
    )
    print(
        f"{'function':8s} {'tenferro max ulp':>17s} {'numpy max ulp':>14s} {'special mismatches':>19s}"
    )
    for name, (x, npf, tff) in cases(rng, n).items():
        x = np.concatenate([x, edges()])
        if name == "log":
            x = x[~(x < 0)]
        if name == "log1p":
            x = x[~(x < -1)]
        with np.errstate(all="ignore"):
            ref = npf(x.astype(np.longdouble))
            ours = np.asarray(tff(tf.asarray(x)))
            theirs = npf(x)
        e_ours, bad_ours = ulp_err(ours, ref)
        e_np, _ = ulp_err(theirs, ref)
        print(f"{name:8s} {e_ours:17.3f} {e_np:14.3f} {bad_ours:19d}")
    # pow: bases x exponents.
    e = edges()
    x = np.concatenate([loguniform(rng, n, 1e-3, 1e3), np.abs(e), np.abs(e), np.abs(e), e])
    y = np.concatenate(
        [rng.uniform(-50.0, 50.0, n), np.full(e.size, 2.0), np.full(e.size, 0.5),
         np.full(e.size, -1.0), np.full(e.size, 3.0)]
    )  # fmt: skip
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
        ours = np.asarray(tf.pow(tf.asarray(x), tf.asarray(y)))
        theirs = np.power(x, y)
    e_ours, bad_ours = ulp_err(ours, ref)
    e_np, _ = ulp_err(theirs, ref)
    print(f"{'pow':8s} {e_ours:17.3f} {e_np:14.3f} {bad_ours:19d}")
    import scipy.special as sps

    x = np.concatenate([rng.uniform(-7.0, 7.0, n // 2), loguniform(rng, n - n // 2, 1e-30, 7.0), e])
    ref = sps.erf(x).astype(np.longdouble)
    e_ours, bad_ours = ulp_err(np.asarray(tf.prim.erf(tf.asarray(x))), ref)
    print(f"{'erf':8s} {e_ours:17.3f} {'(vs scipy)':>14s} {bad_ours:19d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
