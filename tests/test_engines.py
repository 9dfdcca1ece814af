"""The CPU thread policy, pinning and buffer pools of engines.md.

The default worker count is fixed once per process, so its resolution order is tested in fresh
interpreters (``subprocess``). Worker affinity is read independently of what the engine reports,
with ``os.sched_getaffinity(tid)`` for each of ``engine.worker_tids``.
"""

from __future__ import annotations

import gc
import json
import math
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import tenferro as tf
from tenferro import _testing

E = tf.errors
LINUX = sys.platform.startswith("linux")
linux_only = pytest.mark.skipif(not LINUX, reason="CPU affinity is Linux-only")


def run_fresh(code: str, **env: str | None) -> dict:
    """Run ``code`` in a fresh interpreter with ``env`` changes (``None`` unsets); the code
    prints one JSON object as its last line."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("RAYON_")}
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    proc = subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def platform_default() -> int:
    """The available parallelism: the affinity mask, bounded by a cgroup v2 quota."""
    n = len(os.sched_getaffinity(0)) if LINUX else (os.cpu_count() or 1)
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return n


DEFAULT_THREADS = """
import json, tenferro as tf
e = tf.CpuEngine()
print(json.dumps({"n": e.num_threads, "tids": len(e.worker_tids), "default": tf.default_engine().num_threads}))
"""


@pytest.mark.parametrize(
    ("env", "want"),
    [
        ({}, None),
        ({"RAYON_NUM_THREADS": "3"}, 3),
        ({"RAYON_RS_NUM_CPUS": "3"}, 3),
        ({"RAYON_NUM_THREADS": "4", "RAYON_RS_NUM_CPUS": "3"}, 4),
        ({"RAYON_NUM_THREADS": "0", "RAYON_RS_NUM_CPUS": "3"}, None),  # 0: platform default
        ({"RAYON_NUM_THREADS": "lots"}, None),  # garbage: ignored
        ({"RAYON_NUM_THREADS": "lots", "RAYON_RS_NUM_CPUS": "3"}, 3),  # rayon: older var consulted
        ({"RAYON_RS_NUM_CPUS": "0"}, None),
        ({"RAYON_RS_NUM_CPUS": "-2"}, None),
        ({"RAYON_NUM_THREADS": "1"}, 1),
    ],
)
def test_default_thread_resolution_from_the_environment(
    env: dict[str, str], want: int | None
) -> None:
    want = platform_default() if want is None else want
    got = run_fresh(DEFAULT_THREADS, **env)
    assert got["n"] == want and got["default"] == want, (env, got)
    assert got["tids"] == (0 if want == 1 else want), got  # one thread: serial, no workers


def test_setter_beats_the_environment_and_is_fixed_by_the_first_default_engine() -> None:
    got = run_fresh(
        """
import json, tenferro as tf
out = {}
tf.set_default_cpu_threads(2)
tf.set_default_cpu_threads(3)          # last call before the first default engine wins
explicit = tf.CpuEngine(threads=2)     # an explicit count fixes nothing
tf.set_default_cpu_threads(3)
out["first"] = tf.CpuEngine().num_threads
out["second"] = tf.CpuEngine().num_threads
out["default"] = tf.default_engine().num_threads
try:
    tf.set_default_cpu_threads(2)
except tf.errors.AlreadyInitializedError as exc:
    out["err"] = [type(exc).__name__, isinstance(exc, RuntimeError), str(exc)]
try:
    tf.set_default_cpu_threads(0)
except tf.errors.CpuThreadError as exc:
    out["zero"] = exc.reason.name
print(json.dumps(out))
""",
        RAYON_NUM_THREADS="2",
    )
    assert got["first"] == got["second"] == got["default"] == 3, got
    assert got["err"][:2] == ["AlreadyInitializedError", True] and "3" in got["err"][2], got
    assert got["zero"] == "ZERO_THREADS"


def test_setter_after_the_default_engine_raises() -> None:
    got = run_fresh(
        """
import json, tenferro as tf
x = tf.asarray([1.0, 2.0]) + 1.0    # the implicit layer builds the default engine
try:
    tf.set_default_cpu_threads(1)
    out = "no error"
except tf.errors.AlreadyInitializedError:
    out = "raised"
print(json.dumps({"out": out, "n": tf.CpuEngine().num_threads}))
""",
        RAYON_NUM_THREADS="2",
    )
    assert got == {"out": "raised", "n": 2}


def test_one_thread_gives_a_serial_engine() -> None:
    got = run_fresh(
        """
import json, threading, numpy as np, tenferro as tf
tf.set_default_cpu_threads(1)
e = tf.CpuEngine()
rt = tf.Runtime()
x = rt.constant(np.arange(1 << 18, dtype=np.float64))
with rt.session(e) as s:
    total = float(s.reduce_sum(s.exp(s.mul(x, 0.0))))
print(json.dumps({"n": e.num_threads, "tids": e.worker_tids, "cpus": e.worker_cpus,
                  "total": total, "threads": threading.active_count()}))
"""
    )
    assert got["n"] == 1 and got["tids"] == [] and got["cpus"] == []
    assert got["total"] == float(1 << 18)


def test_pool_failure_falls_back_to_serial_without_fixing_the_default() -> None:
    got = run_fresh(
        """
import json, tenferro as tf
from tenferro import _testing
_testing.fail_next_pool_build()
fallback = tf.CpuEngine()
tf.set_default_cpu_threads(2)          # still allowed: the fallback fixed nothing
retry = tf.CpuEngine()
print(json.dumps({"fallback": fallback.num_threads, "tids": fallback.worker_tids,
                  "retry": retry.num_threads}))
""",
        RAYON_NUM_THREADS="3",
    )
    assert got == {"fallback": 1, "tids": [], "retry": 2}


@linux_only
def test_pools_span_the_import_time_snapshot_and_default_honours_affinity() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs at least 2 allowed CPUs")
    got = run_fresh(
        f"""
import json, os
os.sched_setaffinity(0, {{{cpus[-1]}}})   # the importing thread has one CPU
import tenferro as tf
d = tf.CpuEngine()
os.sched_setaffinity(0, {{{cpus[0]}}})    # change after import: the snapshot stays
e = tf.CpuEngine(threads=2)
print(json.dumps({{"allowed": tf.allowed_cpus(), "default": d.num_threads,
                  "workers": [sorted(os.sched_getaffinity(t)) for t in e.worker_tids]}}))
"""
    )
    assert got["allowed"] == [cpus[-1]]
    assert got["default"] == 1  # available parallelism under the mask
    assert got["workers"] == [[cpus[-1]], [cpus[-1]]]


# --- threads= and pin= ---------------------------------------------------------------------------


def test_explicit_threads() -> None:
    for n in (1, 2, 3):
        e = tf.CpuEngine(threads=n)
        assert e.num_threads == n
        assert len(e.worker_tids) == len(e.worker_cpus) == (0 if n == 1 else n)
    for bad in (0, -1):
        with pytest.raises(E.CpuThreadError) as info:
            tf.CpuEngine(threads=bad)
        assert info.value.reason is E.CpuThreadReason.ZERO_THREADS


def test_allowed_cpus_is_the_main_thread_mask() -> None:
    allowed = tf.allowed_cpus()
    assert allowed == sorted(set(allowed)) and allowed
    if LINUX:
        assert set(allowed) == os.sched_getaffinity(0)


@linux_only
def test_unpinned_workers_span_the_allowed_set() -> None:
    e = tf.CpuEngine(threads=2)
    allowed = tf.allowed_cpus()
    assert e.worker_cpus == [allowed, allowed]
    assert [sorted(os.sched_getaffinity(t)) for t in e.worker_tids] == [allowed, allowed]
    assert len(set(e.worker_tids)) == 2 and threading.get_native_id() not in e.worker_tids


@linux_only
@pytest.mark.parametrize("order", ["single", "all", "reversed"])
def test_pinned_workers_run_on_their_cpu(order: str) -> None:
    allowed = tf.allowed_cpus()
    if order != "single" and len(allowed) < 2:
        pytest.skip("needs at least 2 allowed CPUs")
    pins = {"single": [[c] for c in allowed], "all": [allowed], "reversed": [allowed[::-1]]}[order]
    for pin in pins:
        e = tf.CpuEngine(pin=pin)
        assert e.num_threads == len(pin)
        assert e.worker_cpus == [[c] for c in pin]
        # Read independently of the engine's report.
        assert [os.sched_getaffinity(t) for t in e.worker_tids] == [{c} for c in pin]
        rt = tf.Runtime()
        x = rt.constant(np.linspace(0.0, 1.0, 1 << 18))
        with rt.session(e) as s:
            np.testing.assert_allclose(np.asarray(s.exp(x)), np.exp(np.linspace(0.0, 1.0, 1 << 18)))


@linux_only
def test_pin_errors() -> None:
    allowed = tf.allowed_cpus()
    c = allowed[0]
    cases = [
        ([], E.CpuThreadReason.EMPTY_CPU_LIST),
        ([c, c], E.CpuThreadReason.DUPLICATE_CPU),
        ([max(allowed) + 1], E.CpuThreadReason.CPU_NOT_ALLOWED),
        ([100_000], E.CpuThreadReason.CPU_NOT_ALLOWED),  # beyond a 1024-CPU mask
        ([-1], E.CpuThreadReason.CPU_NOT_ALLOWED),
    ]
    for pin, reason in cases:
        with pytest.raises(E.CpuThreadError) as info:
            tf.CpuEngine(pin=pin)
        assert info.value.reason is reason, (pin, info.value)
        assert isinstance(info.value, ValueError)
    _testing.fail_next_affinity_handshake()
    with pytest.raises(E.CpuThreadError) as info:
        tf.CpuEngine(pin=[c])
    assert info.value.reason is E.CpuThreadReason.AFFINITY
    assert f"pinned to CPU {c}" in str(info.value)
    _testing.fail_next_pool_build()
    with pytest.raises(E.CpuThreadError) as info:
        tf.CpuEngine(pin=[c])
    assert info.value.reason is E.CpuThreadReason.POOL
    _testing.fail_next_pool_build()
    with pytest.raises(E.CpuThreadError) as info:
        tf.CpuEngine(threads=2)
    assert info.value.reason is E.CpuThreadReason.POOL
    with pytest.raises(ValueError, match="len\\(pin\\)"):
        tf.CpuEngine(threads=2, pin=[c])
    assert tf.CpuEngine(pin=[c]).worker_cpus == [[c]]  # the hooks were one-shot


@pytest.mark.skipif(LINUX, reason="pinning is supported on Linux")
def test_pin_is_unsupported_off_linux() -> None:
    with pytest.raises(E.CpuThreadError) as info:
        tf.CpuEngine(pin=[0])
    assert info.value.reason is E.CpuThreadReason.UNSUPPORTED_PLATFORM


@linux_only
def test_engine_built_from_a_pinned_thread_spans_the_allowed_set() -> None:
    allowed = tf.allowed_cpus()
    result: dict[str, object] = {}

    def pinned_thread() -> None:
        os.sched_setaffinity(0, {allowed[-1]})  # this thread only
        e = tf.CpuEngine(threads=2)
        result["own"] = sorted(os.sched_getaffinity(0))
        result["workers"] = [sorted(os.sched_getaffinity(t)) for t in e.worker_tids]

    t = threading.Thread(target=pinned_thread)
    t.start()
    t.join(30)
    assert result["own"] == [allowed[-1]]
    assert result["workers"] == [allowed, allowed]


# --- buffer pool ---------------------------------------------------------------------------------


def test_repeated_same_shape_ops_reuse_buffers_within_the_limit() -> None:
    rt, engine = tf.Runtime(), tf.CpuEngine(threads=2)
    n = 1 << 16
    nbytes = n * 8
    x = rt.constant(np.linspace(0.0, 1.0, n))
    engine.set_buffer_pool_limit(3 * nbytes)
    assert engine.buffer_pool_stats().capacity_bytes == 3 * nbytes
    before = engine.buffer_pool_stats()
    with rt.session(engine) as s:
        for i in range(20):
            y = s.exp(s.mul(x, float(i)))
            del y
            stats = engine.buffer_pool_stats()
            assert stats.retained_bytes <= 3 * nbytes, stats
    after = engine.buffer_pool_stats()
    assert after.hits - before.hits >= 30, (before, after)
    assert after.misses - before.misses <= 4, (before, after)
    engine.set_buffer_pool_limit(0)  # frees everything now
    assert engine.buffer_pool_stats().retained_bytes == 0


def test_reset_empties_the_pool_and_ops_still_run() -> None:
    ctx = tf.ExecutionContext(tf.CpuEngine(threads=2))
    rt = ctx.eager_runtime()
    x = rt.constant(np.arange(1 << 16, dtype=np.float64))
    with ctx.session() as s:
        for _ in range(3):
            del_me = s.add(x, x)
            del del_me
    assert ctx.buffer_pool_stats().buffers > 0
    ctx.reset_buffer_pool()
    stats = ctx.buffer_pool_stats()
    assert stats.buffers == 0 and stats.retained_bytes == 0
    with ctx.session() as s:
        np.testing.assert_array_equal(
            np.asarray(s.add(x, x)), 2 * np.arange(1 << 16, dtype=np.float64)
        )
    ctx.engine.reset_buffer_pool()
    assert ctx.engine.buffer_pool_stats() == ctx.buffer_pool_stats()


def test_a_buffer_held_by_a_numpy_view_is_never_reused() -> None:
    ctx = tf.ExecutionContext(tf.CpuEngine(threads=2))
    rt = ctx.eager_runtime()
    n = 1 << 16
    x = rt.constant(np.linspace(0.0, 1.0, n))
    y = x * 3.0  # implicit: the context's engine
    view = np.asarray(y)
    want = view.copy()
    del y
    gc.collect()
    hits = ctx.buffer_pool_stats().hits
    for i in range(8):  # same-size results: would land in the exported buffer if recycled
        z = x + float(i)
        del z
    assert ctx.buffer_pool_stats().hits > hits  # the pool is in use, just not that buffer
    np.testing.assert_array_equal(view, want)
    assert not view.flags.writeable


def _worker_cpu_seconds(engine: tf.CpuEngine) -> float:
    """User + system CPU time of the engine's workers, read from the OS (Linux ``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for tid in engine.worker_tids:
        with open(f"/proc/self/task/{tid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / tick


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/task")
def test_workers_poll_briefly_after_a_parallel_op_then_go_idle() -> None:
    # Workers keep polling for ~2 ms after a parallel op (docs/engines.md), and must then park:
    # an idle process uses no CPU. A 0.5 s idle window would cost ~1 s of CPU if they spun on.
    e = tf.CpuEngine(threads=2)
    rt = tf.Runtime()
    a = np.random.default_rng(0).standard_normal((256, 256))
    with rt.session(e) as s:
        x = s.constant(a)
        for _ in range(20):
            y = s.matmul(x, x)
    np.testing.assert_allclose(y.numpy(), a @ a, rtol=1e-12, atol=1e-10)
    import time

    time.sleep(0.05)
    before = _worker_cpu_seconds(e)
    time.sleep(0.5)
    assert _worker_cpu_seconds(e) - before < 0.05


def test_parking_at_once_gives_the_same_results() -> None:
    a = np.random.default_rng(1).standard_normal((64, 300, 40))
    try:
        _testing.set_linger_us(0)
        e = tf.CpuEngine(threads=2)
        with tf.Runtime().session(e) as s:
            t = s.constant(a)
            for _ in range(3):
                r = s.reduce_sum(s.exp(t), axes=[1]).numpy()
                np.testing.assert_allclose(r, np.exp(a).sum(axis=1), rtol=1e-12)
    finally:
        _testing.set_linger_us(2000)


FORK_CHILD = r"""
import os, sys, numpy as np, tenferro as tf
x = np.linspace(0.0, 1.0, 1_000_000)
t = tf.asarray(x)
np.testing.assert_allclose(tf.exp(t).numpy(), np.exp(x))  # the default engine's pool is up
pid = os.fork()
if pid == 0:  # child: the parent's workers do not exist here
    try:
        ok = np.allclose(tf.exp(t).numpy(), np.exp(x))
        with tf.Runtime().session(tf.CpuEngine(threads=2)) as s:  # a pool built in the child
            ok = ok and np.allclose(s.exp(s.constant(x)).numpy(), np.exp(x))
    finally:
        os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
np.testing.assert_allclose(tf.exp(t).numpy(), np.exp(x))  # the parent's pool still works
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork detection is Linux-only")
def test_engines_built_before_fork_run_inline_in_the_child() -> None:
    # A forked child has none of the parent's worker threads: an engine built before the fork
    # must run its ops inline there (it used to wait forever on the missing workers).
    r = subprocess.run(
        [sys.executable, "-c", FORK_CHILD], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr


# --- Engine faults: timeouts, the thread-count cap on every route, replacing the default engine.


@pytest.mark.parametrize("bad", [math.nan, -1.0, -1e-9, -math.inf])
def test_a_nan_or_negative_timeout_is_a_value_error(bad: float) -> None:
    engine = tf.CpuEngine(threads=1)
    with pytest.raises(ValueError, match="timeout"):
        tf.Runtime().session(engine, timeout=bad)
    with pytest.raises(ValueError, match="timeout"):
        tf.ExecutionContext(engine).session(timeout=bad)


@pytest.mark.parametrize("forever", [1e300, math.inf, 1e9 + 1, None])
def test_a_huge_or_infinite_timeout_waits_for_the_engine(forever: float | None) -> None:
    # Was: PanicException (a BaseException) from Duration::from_secs_f64(1e300).
    engine = tf.CpuEngine(threads=1)
    rt = tf.Runtime()
    with rt.session(engine, timeout=forever) as s:  # free: enters at once
        assert float(s.reduce_sum(s.constant([1.0, 2.0]))) == 3.0
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with rt.session(engine):
            held.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    assert held.wait(10)
    threading.Timer(0.2, release.set).start()
    try:
        with rt.session(engine, timeout=forever) as s:  # waits for the holder, then runs
            assert float(s.reduce_sum(s.constant([4.0]))) == 4.0
    finally:
        release.set()
        t.join()


def test_a_finite_timeout_still_gives_up() -> None:
    engine = tf.CpuEngine(threads=1)
    rt = tf.Runtime()
    with rt.session(engine):
        box: list[BaseException] = []

        def other() -> None:
            try:
                with rt.session(engine, timeout=0.05):
                    pass
            except BaseException as exc:  # noqa: BLE001 - the test inspects it
                box.append(exc)

        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert len(box) == 1 and isinstance(box[0], E.EngineBusyError), box
    assert "0.050 s" in str(box[0])


@pytest.mark.parametrize("n", [1025, 100000, 2**62])
def test_thread_counts_above_the_cap_are_refused_on_every_explicit_route(n: int) -> None:
    with pytest.raises(E.CpuThreadError, match="1024") as exc:
        tf.set_default_cpu_threads(n)
    assert exc.value.reason is E.CpuThreadReason.POOL and str(n) in str(exc.value)
    with pytest.raises(E.CpuThreadError, match="1024") as exc:
        tf.CpuEngine(threads=n)
    assert exc.value.reason is E.CpuThreadReason.POOL
    for bad in (0, -3):
        with pytest.raises(E.CpuThreadError) as exc:
            tf.set_default_cpu_threads(bad)
        assert exc.value.reason is E.CpuThreadReason.ZERO_THREADS and str(bad) in str(exc.value)


CLAMPED = """
import json, time, warnings, tenferro as tf
t0 = time.perf_counter()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    y = tf.asarray([1.0, 2.0]) + 1.0          # the first implicit op builds the default engine
    again = tf.CpuEngine().num_threads      # the count is fixed: no second warning
print(json.dumps({
    "n": tf.default_engine().num_threads, "again": again, "y": y.tolist(),
    "warnings": [[w.category.__name__, str(w.message)] for w in caught],
    "seconds": time.perf_counter() - t0,
}))
"""


@pytest.mark.parametrize("var", ["RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"])
def test_an_environment_count_above_the_cap_is_clamped_with_one_warning(var: str) -> None:
    got = run_fresh(CLAMPED, **{var: "100000"})
    assert got["n"] == got["again"] == 1024, got
    assert got["y"] == [2.0, 3.0]
    assert len(got["warnings"]) == 1, got["warnings"]
    category, message = got["warnings"][0]
    assert category == "RuntimeWarning" and var in message and "100000" in message, message
    assert "1024" in message
    print(f"{var}=100000: first implicit op (1024 workers) took {got['seconds']:.2f} s")


RESET = """
import json, numpy as np, tenferro as tf
from tenferro import _testing
out = {}
ctx = tf.default_context()                       # the default runtime is now owned by it
x = tf.asarray(np.arange(4.0))
w = tf.default_runtime().variable(np.array([1.0, 2.0, 3.0, 4.0]))
old = tf.default_engine()
_testing.panic_on_next_op(old)
for _ in range(2):
    try:
        x + x
    except tf.errors.EngineBrokenError as exc:
        out.setdefault("broken", []).append(str(exc))
new = tf.reset_default_engine()
out["new_is_default"] = new is tf.default_engine() and new is not old
out["ctx"] = tf.default_context() is not ctx and tf.default_context().engine is new
out["same_runtime"] = tf.default_context().eager_runtime() is tf.default_runtime()
out["sum"] = (x + x).tolist()
loss = (w * x).sum()
loss.backward()
out["grad"] = w.grad.tolist()
try:
    with tf.default_runtime().session(old) as s:
        s.add(x, x)
except tf.errors.EngineBrokenError:
    out["old_still_broken"] = True
# A second reset also works, before any default context is asked for again.
tf.reset_default_engine()
out["again"] = (x * 2.0).tolist()
print(json.dumps(out))
"""


def test_a_broken_default_engine_is_replaced_without_restarting() -> None:
    got = run_fresh(RESET)
    assert len(got["broken"]) == 2 and "reset_default_engine" in got["broken"][1], got
    assert got["new_is_default"] and got["ctx"] and got["same_runtime"], got
    assert got["sum"] == [0.0, 2.0, 4.0, 6.0]
    assert got["grad"] == [0.0, 1.0, 2.0, 3.0]
    assert got["old_still_broken"]
    assert got["again"] == [0.0, 2.0, 4.0, 6.0]
