"""Multinomial logistic regression on handwritten digits, trained with tenferro gradients.

The data set is scikit-learn's bundled copy of the UCI optical handwritten digits
(``sklearn.datasets.load_digits``: 1797 grey-scale 8x8 images, pixel values 0-16, ten classes),
so nothing is downloaded. Pixels are divided by 16; a stratified split keeps 25 % for testing.

Model: logits ``Z = X W + b`` (``X`` of shape ``(n, 64)``, ``W`` ``(64, 10)``, ``b`` ``(10,)``),
softmax probabilities, and the L2-regularised cross-entropy

    f(W, b) = (1/n) [ Σ_i ( logsumexp(Z_i) - Z_{i, y_i} ) + ||W||² / (2C) ]

— the objective of ``sklearn.linear_model.LogisticRegression(C=C)`` (multinomial, lbfgs; the
intercept is not penalised) divided by ``n``, so both have the same minimiser. ``f`` and its
gradient come from ``tf.func.value_and_grad``; ``scipy.optimize.minimize(method="L-BFGS-B")``
minimises it. ``main`` prints the test accuracy next to scikit-learn's on the same split and
regularisation (run ``python -m tenferro.examples.digits --help``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import tenferro as tf

__all__ = [
    "load_split",
    "softmax_objective",
    "fit_tenferro",
    "fit_sklearn",
    "Comparison",
    "compare",
    "main",
]


def load_split(
    test_size: float = 0.25, seed: int = 0, max_train: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The digits, scaled to ``[0, 1]``, split into train and test sets (stratified).

    Returns
    -------
    (X_train, X_test, y_train, y_test)
        float64 ``(n, 64)`` features and int64 labels in ``0..9``; with ``max_train`` the training
        set is cut to its first ``max_train`` rows (a reduced run for tests).
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = x.astype(np.float64) / 16.0
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=test_size, random_state=seed, stratify=y
    )
    if max_train is not None:
        x_tr, y_tr = x_tr[:max_train], y_tr[:max_train]
    return x_tr, x_te, y_tr.astype(np.int64), y_te.astype(np.int64)


def softmax_objective(w: Any, b: Any, x: Any, onehot: Any, C: float) -> Any:
    """The regularised mean cross-entropy ``f(W, b)`` of the module docstring (tenferro ops).

    Parameters
    ----------
    w : Tensor, shape (features, classes)
    b : Tensor, shape (classes,)
    x : Tensor, shape (n, features)
    onehot : Tensor, shape (n, classes), one-hot labels
    C : float
        Inverse regularisation strength, as scikit-learn's ``C``.

    Returns
    -------
    Tensor
        Shape ``()``, float64.
    """
    n = x.shape[0]
    z = x @ w + b
    m = tf.max(z.detach(), axis=1, keepdims=True)  # shift for a stable logsumexp (no gradient)
    lse = tf.log(tf.sum(tf.exp(z - m), axis=1)) + tf.reshape(m, (n,))
    ce = tf.sum(lse) - tf.sum(onehot * z)
    return (ce + tf.sum(w * w) * (0.5 / C)) / n


@dataclass
class Fit:
    """Weights ``(features, classes)``, intercept ``(classes,)``, seconds and L-BFGS iterations."""

    w: np.ndarray
    b: np.ndarray
    seconds: float
    iterations: int

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.argmax(x @ self.w + self.b, axis=1)


def fit_tenferro(
    x: np.ndarray,
    y: np.ndarray,
    C: float = 1.0,
    classes: int = 10,
    gtol: float = 1e-7,
    maxiter: int = 2000,
) -> Fit:
    """Minimise :func:`softmax_objective` with L-BFGS-B on tenferro gradients."""
    from scipy.optimize import minimize

    n, f = x.shape
    tx = tf.asarray(x)
    onehot = tf.asarray(np.eye(classes)[y])
    vg = tf.func.value_and_grad(lambda w, b: softmax_objective(w, b, tx, onehot, C), argnums=(0, 1))

    def fun(p: np.ndarray) -> tuple[float, np.ndarray]:
        val, (gw, gb) = vg(p[: f * classes].reshape(f, classes), p[f * classes :])
        return val.item(), np.concatenate([np.asarray(gw).ravel(), np.asarray(gb)])

    t0 = time.perf_counter()
    res = minimize(
        fun,
        np.zeros(f * classes + classes),
        method="L-BFGS-B",
        jac=True,
        options=dict(maxiter=maxiter, gtol=gtol, ftol=1e-14),
    )
    seconds = time.perf_counter() - t0
    return Fit(
        res.x[: f * classes].reshape(f, classes), res.x[f * classes :], seconds, int(res.nit)
    )


def fit_sklearn(x: np.ndarray, y: np.ndarray, C: float = 1.0) -> Fit:
    """scikit-learn's ``LogisticRegression(C=C)`` (multinomial, lbfgs) on the same data."""
    from sklearn.linear_model import LogisticRegression

    t0 = time.perf_counter()
    clf = LogisticRegression(C=C, max_iter=5000, tol=1e-8).fit(x, y)
    seconds = time.perf_counter() - t0
    return Fit(clf.coef_.T.copy(), clf.intercept_.copy(), seconds, int(np.max(clf.n_iter_)))


def objective_numpy(fit: Fit, x: np.ndarray, y: np.ndarray, C: float) -> float:
    """:func:`softmax_objective` in NumPy, to compare the two minimisers."""
    z = x @ fit.w + fit.b
    m = z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z - m).sum(axis=1)) + m[:, 0]
    return float((np.sum(lse - z[np.arange(len(y)), y]) + 0.5 / C * np.sum(fit.w**2)) / len(y))


@dataclass
class Comparison:
    """Test accuracies (fractions), training objectives and seconds of both fits."""

    n_train: int
    n_test: int
    C: float
    acc_tenferro: float
    acc_sklearn: float
    obj_tenferro: float
    obj_sklearn: float
    agreement: float
    tenferro: Fit
    sklearn: Fit


def compare(
    C: float = 1.0, test_size: float = 0.25, seed: int = 0, max_train: int | None = None
) -> Comparison:
    """Fit both models on the same split and regularisation; see :class:`Comparison`."""
    from .tfim import _single_threaded_blas  # small BLAS calls: threads only cost, for both

    x_tr, x_te, y_tr, y_te = load_split(test_size, seed, max_train)
    with _single_threaded_blas():
        ours = fit_tenferro(x_tr, y_tr, C)
        ref = fit_sklearn(x_tr, y_tr, C)
    p_ours, p_ref = ours.predict(x_te), ref.predict(x_te)
    return Comparison(
        n_train=len(y_tr),
        n_test=len(y_te),
        C=C,
        acc_tenferro=float(np.mean(p_ours == y_te)),
        acc_sklearn=float(np.mean(p_ref == y_te)),
        obj_tenferro=objective_numpy(ours, x_tr, y_tr, C),
        obj_sklearn=objective_numpy(ref, x_tr, y_tr, C),
        agreement=float(np.mean(p_ours == p_ref)),
        tenferro=ours,
        sklearn=ref,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; exit status 1 when the accuracies differ by more than 1 point."""
    p = argparse.ArgumentParser(
        prog="python -m tenferro.examples.digits", description=__doc__.splitlines()[0]
    )
    p.add_argument(
        "--C", type=float, default=1.0, help="inverse L2 strength, as sklearn (default 1)"
    )
    p.add_argument("--test-size", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=0, help="seed of the train/test split")
    p.add_argument("--max-train", type=int, default=None, help="use only this many training rows")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    r = compare(args.C, args.test_size, args.seed, args.max_train)
    print(f"digits: {r.n_train} train / {r.n_test} test images, 64 features, 10 classes, C={r.C:g}")
    print(f"{'':<28}{'test accuracy':>14}{'objective':>14}{'seconds':>9}{'iters':>7}")
    for name, acc, obj, fit in (
        ("tenferro + L-BFGS-B", r.acc_tenferro, r.obj_tenferro, r.tenferro),
        ("sklearn LogisticRegression", r.acc_sklearn, r.obj_sklearn, r.sklearn),
    ):
        print(f"{name:<28}{100 * acc:>13.2f}%{obj:>14.8f}{fit.seconds:>9.2f}{fit.iterations:>7}")
    diff = 100 * abs(r.acc_tenferro - r.acc_sklearn)
    ok = diff <= 1.0
    print(
        f"accuracy difference {diff:.2f} percentage points ({'within' if ok else 'MORE than'} 1), "
        f"same test predictions for {100 * r.agreement:.1f}% of images, "
        f"total {time.perf_counter() - t0:.1f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
