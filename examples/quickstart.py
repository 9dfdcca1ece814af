"""Quickstart: a Gaussian wave packet on a grid, computed with tenferro and checked against NumPy.

Run with ``make demo``. Every quantity is computed twice -- with tenferro (NumPy-named functions,
operators, views) and with NumPy -- and printed side by side; the script exits non-zero if any pair
disagrees. Units: hbar = m = 1, lengths in units of the packet width scale.
"""

import sys

import numpy as np
import tenferro as tf

N, L = 401, 20.0  # grid points, box length
x0, sigma, k0 = -2.0, 1.0, 3.0  # packet centre, width, mean wave number
x_np = np.linspace(-L / 2, L / 2, N)
dx = x_np[1] - x_np[0]

# tenferro side: build from NumPy data once, then stay in tenferro
x = tf.asarray(x_np)
psi = tf.exp(-((x - x0) ** 2) / (4 * sigma**2)) * tf.exp(1j * k0 * x)  # complex128
prob = tf.real(psi * tf.conj(psi))  # |psi|^2, float64
psi = psi / tf.sqrt(tf.sum(prob) * dx)  # normalise: sum |psi|^2 dx = 1
prob = tf.abs(psi) ** 2

# NumPy side: the same formulas
p_np = np.exp(-((x_np - x0) ** 2) / (4 * sigma**2)) * np.exp(1j * k0 * x_np)
p_np = p_np / np.sqrt(np.sum(np.abs(p_np) ** 2) * dx)
prob_np = np.abs(p_np) ** 2

checks = {}


def check(name, ours, ref):
    """Record and print one comparison (tensor or scalar vs NumPy)."""
    ours_np = np.asarray(ours.numpy() if hasattr(ours, "numpy") else ours)
    ok = ours_np.shape == np.shape(ref) and np.allclose(ours_np, ref, rtol=1e-10, atol=1e-12)
    checks[name] = ok

    def show(v):
        return f"{complex(v).real:.10g}" if np.ndim(v) == 0 else f"sum {np.sum(v).real:.6g}"

    print(f"{name:<34} {show(ours_np):>18} {show(ref):>18}  {'ok' if ok else 'MISMATCH'}")


print(f"{'quantity':<34} {'tenferro':>18} {'numpy':>18}")
check("norm  sum |psi|^2 dx", tf.sum(prob) * dx, np.sum(prob_np) * dx)
check("<x>  sum x |psi|^2 dx", tf.sum(x * prob) * dx, np.sum(x_np * prob_np) * dx)
var = tf.sum((x - tf.sum(x * prob) * dx) ** 2 * prob) * dx
mean_np = np.sum(x_np * prob_np) * dx
check("variance of x (= sigma^2)", var, np.sum((x_np - mean_np) ** 2 * prob_np) * dx)
check("max |psi|^2", tf.max(prob), np.max(prob_np))
check("Re psi, Im psi", tf.real(psi) + 2 * tf.imag(psi), p_np.real + 2 * p_np.imag)
check(
    "parity overlap (flip view)",
    tf.sum(prob * tf.flip(prob)) * dx,
    np.sum(prob_np * prob_np[::-1]) * dx,
)
# two independent particles: outer product by broadcasting, then reductions along axes
P2 = tf.expand_dims(prob, 1) * tf.reshape(prob, (1, N))  # (N, N)
P2_np = prob_np[:, None] * prob_np[None, :]
check("2-particle norm", tf.sum(P2) * dx * dx, np.sum(P2_np) * dx * dx)
check("marginal (sum over axis 0)", tf.sum(P2, axis=0) * dx, np.sum(P2_np, axis=0) * dx)
check("transposed view == original", tf.max(tf.abs(P2.T - P2)), np.max(np.abs(P2_np.T - P2_np)))
check("C-order reshape (N*N,)", tf.reshape(P2, (-1,)), P2_np.reshape(-1))
check(
    "mean over axis 1, keepdims",
    tf.mean(P2, axis=1, keepdims=True),
    P2_np.mean(axis=1, keepdims=True),
)
check("clip to [1e-3, 0.05]", tf.clip(prob, 1e-3, 0.05), np.clip(prob_np, 1e-3, 0.05))
check("floor division  x // 0.7", x // 0.7, x_np // 0.7)
check("remainder  x % 0.7 (sign of divisor)", x % 0.7, x_np % 0.7)

failed = [name for name, ok in checks.items() if not ok]
print(f"\n{len(checks) - len(failed)}/{len(checks)} checks agree with NumPy")
sys.exit(1 if failed else 0)
