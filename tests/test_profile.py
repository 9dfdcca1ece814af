"""TENFERRO_PROFILE_EAGER_OP_AGG / _PRINT_EVERY (autodiff.md, Caches and introspection)."""

import os
import subprocess
import sys

SCRIPT = """
import tenferro as tf
from tenferro import _testing
rt = tf.Runtime()
x = rt.variable([1.0, 2.0])
for _ in range(3):
    y = (tf.exp(x) * x).sum()
    y.backward()
table = _testing.profile()
assert table["exp"]["forward"][0] == 3, table["exp"]
assert table["exp"]["recording"][0] == 3, table["exp"]
assert table["exp"]["backward"][0] == 3, table["exp"]
assert table["mul"]["forward"][1] > 0.0
print("ok")
"""


def _run(env: dict[str, str], script: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", script], env=full, capture_output=True, text=True, timeout=120
    )


def test_aggregation_separates_forward_recording_and_backward() -> None:
    r = _run({"TENFERRO_PROFILE_EAGER_OP_AGG": "1"}, SCRIPT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_print_every_writes_the_table_to_stderr() -> None:
    r = _run(
        {"TENFERRO_PROFILE_EAGER_OP_AGG": "1", "TENFERRO_PROFILE_EAGER_OP_PRINT_EVERY": "2"},
        "import tenferro as tf\nx = tf.asarray([1.0])\nfor _ in range(4): x = x + 1.0\n",
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("tenferro eager-op profile") == 2
    assert "add" in r.stderr


def test_profile_is_empty_when_disabled() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENFERRO_PROFILE")}
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import tenferro as tf\nfrom tenferro import _testing\n(tf.asarray([1.0]) + 1.0)\nprint(_testing.profile())",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "{}"
