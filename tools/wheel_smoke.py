"""Smoke test of an installed tenferro wheel (``make wheel-check``), run from outside the source tree.

Checks that the installed package imports from site-packages (not from a checkout), that its
version comes from the package metadata, that the compiled extension, the stub and the data the
package ships are present, and that eager ops, gradients, ``einsum``, ``linalg`` and ``tf.jit``
give NumPy's answers. The installed package's doctests run after it (``pytest --pyargs``).
"""

from __future__ import annotations

import importlib.metadata
import pathlib
import sys

import numpy as np

import tenferro as tf


def main() -> int:
    pkg = pathlib.Path(tf.__file__).parent
    assert "site-packages" in pkg.parts, (
        f"tenferro imported from {pkg}, not from an installed wheel"
    )
    assert tf.__version__ == importlib.metadata.version("tenferro"), tf.__version__
    shipped = {p.name for p in pkg.iterdir()}
    for needed in ("_tenferro.pyi", "py.typed"):
        assert needed in shipped, f"{needed} is not in the wheel ({sorted(shipped)})"
    assert any(name.startswith("_tenferro.") and name.endswith(".so") for name in shipped)

    rng = np.random.default_rng(0)
    a = rng.normal(size=(5, 4))
    b = rng.normal(size=(4, 3))
    x = tf.tensor(a, requires_grad=True)
    loss = tf.einsum("ij,jk->", x, tf.asarray(b))
    loss.backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.tile(b.sum(axis=1), (5, 1)), rtol=1e-12)

    s = tf.linalg.svdvals(tf.asarray(a))
    np.testing.assert_allclose(np.asarray(s), np.linalg.svd(a, compute_uv=False), rtol=1e-12)

    vg = tf.jit(tf.func.value_and_grad(lambda w: (tf.sin(w) * w).sum()))
    w = np.linspace(0.0, 1.0, 8)
    value, grad = vg(tf.asarray(w))
    np.testing.assert_allclose(float(value), np.sum(np.sin(w) * w), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(grad), np.cos(w) * w + np.sin(w), rtol=1e-12)
    print(f"wheel smoke test passed: tenferro {tf.__version__} from {pkg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
