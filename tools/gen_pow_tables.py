"""Print the tables of ``pow`` in ``rust/tenferro-cpu/src/vmath.rs`` (not part of CI).

The design is the one of ARM optimized-routines' ``pow`` (Szabolcs Nagy, 2018; glibc's ``pow``
since 2.28), the values computed here with Python's ``decimal`` at 60 digits:

* log: ``x = 2^k z`` with ``z`` in [0x1.69555p-1, 0x1.69555p0) cut into N = 128 intervals by the
  bits of ``x - 0x3fe6955500000000``; per interval ``invc = 1/c`` with few bits
  (``round(N/center)/N`` below 1, ``round(2N/center)/(2N)`` above) so that ``z invc - 1`` is
  exact with one fused multiply-add, ``logc = log(c)`` rounded to a multiple of 2^-43 (so that
  ``k ln2_hi + logc`` is exact) and ``logctail = log(c) - logc``;
* exp: ``2^(i/N) = s_i (1 + tail_i)``, ``s_i`` stored as its bits minus ``i << 45`` so that adding
  ``k << 45`` for ``k = i (mod N)`` makes ``2^(k/N)``.

Usage: ``python tools/gen_pow_tables.py`` (also checks the Fast2Sum condition the log uses).
"""

from __future__ import annotations

import struct
from decimal import Decimal, getcontext

getcontext().prec = 60
N = 128
OFF = 0x3FE6955500000000


def bits(v: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", v))[0])


def double(b: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", b))[0])


def main() -> None:
    ln2 = Decimal(2).ln()
    ln2_hi = float(round(ln2 * 2**42)) / 2**42
    print(f"// ln2_hi {ln2_hi!r}, ln2_lo {float(ln2 - Decimal(ln2_hi))!r}")
    hi_n = float(round(ln2 / N * 2**43)) / 2**43
    print(f"// ln2/N hi {hi_n!r}, lo {float(ln2 / N - Decimal(hi_n))!r}, N/ln2 {float(N / ln2)!r}")
    invc, logc, tail, rmax = [], [], [], 0.0
    for i in range(N):
        zl, zh = double(OFF + (i << 45)), double(OFF + ((i + 1) << 45))
        center = (zl + zh) / 2
        ic = round(N / center) / N if center < 1 else round(2 * N / center) / N / 2
        lc = (Decimal(1) / Decimal(ic)).ln()
        c = float(round(lc * 2**43)) / 2**43
        r = max(abs(zl * ic - 1), abs(zh * ic - 1))
        rmax = max(rmax, r)
        # t1 + r as Fast2Sum needs |t1| >= |r| wherever t1 = logc != 0 (k = 0).
        assert c == 0 or abs(c) >= r, (i, c, r)
        invc.append(ic)
        logc.append(c)
        tail.append(float(lc - Decimal(c)))
    print(f"// max |r| {rmax.hex()}")
    etail, sbits = [], []
    for i in range(N):
        v = Decimal(2) ** (Decimal(i) / N)
        s = float(v)
        etail.append(float((v - Decimal(s)) / Decimal(s)))
        sbits.append(bits(s) - (i << 45))

    def rows(name: str, ty: str, vals: list[str]) -> None:
        print(f"const {name}: [{ty}; {N}] = [")
        for j in range(0, N, 4):
            print("    " + " ".join(v + "," for v in vals[j : j + 4]))
        print("];")

    rows("POW_INVC", "f64", [repr(v) for v in invc])
    rows("POW_LOGC", "f64", [repr(v) for v in logc])
    rows("POW_LOGC_TAIL", "f64", [repr(v) for v in tail])
    rows("POW_EXP_TAIL", "f64", [repr(v) for v in etail])
    rows("POW_EXP_BITS", "u64", [f"0x{b:016x}" for b in sbits])


if __name__ == "__main__":
    main()
