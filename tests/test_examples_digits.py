"""The digits example (``tenferro.examples.digits``) against scikit-learn, on a reduced training set.

Oracles: ``sklearn.metrics.log_loss`` for the objective and ``LogisticRegression`` (same split,
same C) for the fitted model and its test accuracy.
"""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf

pytest.importorskip("sklearn", reason="the digits example needs scikit-learn")
from sklearn.metrics import log_loss  # noqa: E402

from tenferro.examples import digits  # noqa: E402


def test_objective_matches_sklearn_log_loss() -> None:
    x, _, y, _ = digits.load_split(max_train=200)
    rng = np.random.default_rng(0)
    w, b, C = rng.standard_normal((64, 10)) * 0.1, rng.standard_normal(10) * 0.1, 0.5
    val = digits.softmax_objective(
        tf.asarray(w), tf.asarray(b), tf.asarray(x), tf.asarray(np.eye(10)[y]), C
    ).item()
    z = x @ w + b
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    ref = log_loss(y, p, labels=np.arange(10)) + 0.5 / C * np.sum(w**2) / len(y)
    np.testing.assert_allclose(val, ref, rtol=1e-12)


def test_reduced_fit_matches_sklearn() -> None:
    r = digits.compare(C=1.0, max_train=400)
    assert r.n_train == 400 and r.n_test == 450
    # Same objective, so the same minimiser: accuracies within 1 point, objectives equal.
    assert abs(r.acc_tenferro - r.acc_sklearn) <= 0.01, (r.acc_tenferro, r.acc_sklearn)
    assert r.acc_tenferro >= 0.85
    assert r.obj_tenferro <= r.obj_sklearn * (1 + 1e-6), (r.obj_tenferro, r.obj_sklearn)
    np.testing.assert_allclose(r.tenferro.w, r.sklearn.w, atol=2e-3)
    assert r.agreement >= 0.99


def test_main_reports_both_accuracies(capsys) -> None:
    assert digits.main(["--max-train", "300"]) == 0
    out = capsys.readouterr().out
    assert "tenferro" in out and "sklearn" in out and "percentage points" in out
