//! Scale-free planning costs: exact integers while they fit in a `u128`, log2 above.
//!
//! The planners compare and sum FLOP counts and tensor sizes that exceed every machine integer
//! on large networks (labels of size `2^60`: a matrix chain costs `2^180`). A saturating
//! integer makes every expensive candidate tie, so an exact planner can return a path far
//! worse than greedy's. [`Cost`] is exact below `2^128` (every comparison of a network whose
//! costs fit is the integer comparison, so such paths are unchanged) and carries `log2` of the
//! value as an `f64` from `2^128` on (53 bits of relative precision, no upper bound). The order
//! is total (every exact value below every logarithmic one), and `+` and `*` are monotone:
//! exact while the result fits, otherwise `log2(a + b) = max + log2(1 + 2^(min − max))` and
//! `log2(a·b) = log2 a + log2 b`, never below `2^128` nor below either operand.
//!
//! [`Delta`] is a signed difference of two costs (greedy's "memory removed"
//! `size(ab) − size(a) − size(b)`): exact as an `i128` when both costs are exact and the
//! difference fits, otherwise approximately, in one total order.

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, AddAssign, Mul};

/// `log2` of the smallest logarithmic cost (`2^128`).
const LOG_MIN: f64 = 128.0;

/// A non-negative cost: exact below `2^128`, `log2` above (module docs).
#[derive(Clone, Copy, Debug)]
pub struct Cost(Repr);

#[derive(Clone, Copy, Debug)]
enum Repr {
    Exact(u128),
    /// `log2` of the value, at least [`LOG_MIN`]; `+∞` is [`Cost::UNBOUNDED`].
    Log2(f64),
}

fn lg(x: u128) -> f64 {
    (x as f64).log2()
}

/// `log2(2^a + 2^b)`, never below `max(a, b)`.
fn log2_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::INFINITY || lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + ((lo - hi).exp2().ln_1p() / std::f64::consts::LN_2).max(0.0)
}

impl Cost {
    /// Zero.
    pub const ZERO: Cost = Cost(Repr::Exact(0));
    /// One.
    pub const ONE: Cost = Cost(Repr::Exact(1));
    /// Above every other cost (a limit that never applies).
    pub const UNBOUNDED: Cost = Cost(Repr::Log2(f64::INFINITY));

    /// The exact cost `x`.
    pub const fn exact(x: u128) -> Cost {
        Cost(Repr::Exact(x))
    }

    /// A limit of `x` elements: `u128::MAX` (the planners' "no limit") is [`Cost::UNBOUNDED`].
    pub fn limit(x: u128) -> Cost {
        if x == u128::MAX {
            Cost::UNBOUNDED
        } else {
            Cost::exact(x)
        }
    }

    /// The value when it is exact (below `2^128`).
    pub fn as_exact(self) -> Option<u128> {
        match self.0 {
            Repr::Exact(x) => Some(x),
            Repr::Log2(_) => None,
        }
    }

    /// `log2` of the value (`-∞` for zero).
    pub fn log2(self) -> f64 {
        match self.0 {
            Repr::Exact(x) => lg(x),
            Repr::Log2(l) => l,
        }
    }

    /// The value as the nearest `f64` (`+∞` beyond its range).
    pub fn to_f64(self) -> f64 {
        match self.0 {
            Repr::Exact(x) => x as f64,
            Repr::Log2(l) => l.exp2(),
        }
    }

    /// `self · m` for a small factor.
    pub fn mul_small(self, m: u64) -> Cost {
        self * Cost::exact(u128::from(m))
    }

    fn log(l: f64) -> Cost {
        Cost(Repr::Log2(l.max(LOG_MIN)))
    }
}

impl From<usize> for Cost {
    fn from(x: usize) -> Cost {
        Cost::exact(x as u128)
    }
}

impl Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        match (self.0, o.0) {
            (Repr::Exact(a), Repr::Exact(b)) => match a.checked_add(b) {
                Some(s) => Cost::exact(s),
                None => Cost::log(log2_add(lg(a), lg(b))),
            },
            (Repr::Exact(0), _) => o,
            (_, Repr::Exact(0)) => self,
            (a, b) => Cost::log(log2_add(Cost(a).log2(), Cost(b).log2())),
        }
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, o: Cost) {
        *self = *self + o;
    }
}

impl Mul for Cost {
    type Output = Cost;
    fn mul(self, o: Cost) -> Cost {
        match (self.0, o.0) {
            (Repr::Exact(a), Repr::Exact(b)) => match a.checked_mul(b) {
                Some(p) => Cost::exact(p),
                None => Cost::log(lg(a) + lg(b)),
            },
            (Repr::Exact(0), _) | (_, Repr::Exact(0)) => Cost::ZERO,
            // both at least 1: the sum of the logs is at least either
            (a, b) => Cost::log(Cost(a).log2() + Cost(b).log2()),
        }
    }
}

impl Ord for Cost {
    fn cmp(&self, o: &Cost) -> Ordering {
        match (self.0, o.0) {
            (Repr::Exact(a), Repr::Exact(b)) => a.cmp(&b),
            (Repr::Exact(_), Repr::Log2(_)) => Ordering::Less,
            (Repr::Log2(_), Repr::Exact(_)) => Ordering::Greater,
            (Repr::Log2(a), Repr::Log2(b)) => a.total_cmp(&b),
        }
    }
}

impl PartialOrd for Cost {
    fn partial_cmp(&self, o: &Cost) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Cost {
    fn eq(&self, o: &Cost) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Cost {}

impl fmt::Display for Cost {
    /// The integer when exact, `2^L` (`L` with 3 decimals) above.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::Exact(x) => write!(f, "{x}"),
            Repr::Log2(l) => write!(f, "2^{l:.3}"),
        }
    }
}

/// A signed difference of two [`Cost`]s (module docs).
#[derive(Clone, Copy, Debug)]
pub struct Delta(DRepr);

#[derive(Clone, Copy, Debug)]
enum DRepr {
    Exact(i128),
    /// `sign(d) · log2(1 + |d|)`: the order of `d`, scale-free.
    Approx(f64),
}

/// `log2(1 + 2^m)` for `m = log2|d|`.
fn symlog_of_log(m: f64) -> f64 {
    if m > 64.0 {
        m // 1 is below the precision of 2^m
    } else {
        m.exp2().ln_1p() / std::f64::consts::LN_2
    }
}

impl Delta {
    /// `a − b`.
    pub fn sub(a: Cost, b: Cost) -> Delta {
        if let (Repr::Exact(x), Repr::Exact(y)) = (a.0, b.0) {
            if let (Ok(x), Ok(y)) = (i128::try_from(x), i128::try_from(y)) {
                return Delta(DRepr::Exact(x - y));
            }
        }
        let (la, lb) = (a.log2(), b.log2());
        let (sign, hi, lo) = match la.total_cmp(&lb) {
            Ordering::Equal => return Delta(DRepr::Approx(0.0)),
            Ordering::Greater => (1.0, la, lb),
            Ordering::Less => (-1.0, lb, la),
        };
        // log2(2^hi − 2^lo) = hi + log2(1 − 2^(lo − hi))
        let m = if hi == f64::INFINITY {
            hi
        } else {
            hi + (-(lo - hi).exp2()).ln_1p() / std::f64::consts::LN_2
        };
        Delta(DRepr::Approx(sign * symlog_of_log(m)))
    }

    /// `a − b − c` (greedy's "memory removed"): exact when `a`, `b`, `c` and the result fit
    /// an `i128`.
    pub fn sub2(a: Cost, b: Cost, c: Cost) -> Delta {
        if let (Repr::Exact(x), Repr::Exact(y), Repr::Exact(z)) = (a.0, b.0, c.0) {
            if let (Ok(x), Ok(y), Ok(z)) = (i128::try_from(x), i128::try_from(y), i128::try_from(z))
            {
                if let Some(d) = x.checked_sub(y).and_then(|d| d.checked_sub(z)) {
                    return Delta(DRepr::Exact(d));
                }
            }
        }
        Delta::sub(a, b + c)
    }

    /// The exact difference, when it is.
    pub fn as_exact(self) -> Option<i128> {
        match self.0 {
            DRepr::Exact(d) => Some(d),
            DRepr::Approx(_) => None,
        }
    }

    fn symlog(self) -> f64 {
        match self.0 {
            DRepr::Exact(d) => {
                let m = (d.unsigned_abs() as f64).ln_1p() / std::f64::consts::LN_2;
                if d < 0 {
                    -m
                } else {
                    m
                }
            }
            DRepr::Approx(s) => s,
        }
    }
}

impl Ord for Delta {
    /// Lexicographic on `(symlog, approximate before exact, exact value)`: a total order that is
    /// the integer order among exact differences.
    fn cmp(&self, o: &Delta) -> Ordering {
        match (self.0, o.0) {
            (DRepr::Exact(a), DRepr::Exact(b)) => a.cmp(&b),
            (DRepr::Approx(a), DRepr::Approx(b)) => a.total_cmp(&b),
            (DRepr::Approx(a), DRepr::Exact(_)) => a.total_cmp(&o.symlog()).then(Ordering::Less),
            (DRepr::Exact(_), DRepr::Approx(b)) => {
                self.symlog().total_cmp(&b).then(Ordering::Greater)
            }
        }
    }
}

impl PartialOrd for Delta {
    fn partial_cmp(&self, o: &Delta) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Delta {
    fn eq(&self, o: &Delta) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Delta {}

#[cfg(test)]
mod tests {
    use super::*;

    const P128: f64 = 128.0;

    #[test]
    fn exact_below_2_128() {
        let a = Cost::exact(u128::MAX - 5);
        assert_eq!((a + Cost::exact(5)).as_exact(), Some(u128::MAX));
        assert_eq!(
            (Cost::exact(1 << 64) * Cost::exact((1 << 64) - 1)).as_exact(),
            Some(u128::MAX - (1 << 64) + 1)
        );
        assert!(Cost::exact(7) < Cost::exact(8));
        assert_eq!(Cost::exact(3) + Cost::ZERO, Cost::exact(3));
    }

    #[test]
    fn saturation_boundary_is_ordered() {
        let max = Cost::exact(u128::MAX);
        let over = max + Cost::ONE;
        assert_eq!(over.as_exact(), None);
        assert_eq!(over.log2(), P128);
        // every exact value is below every logarithmic one
        assert!(max < over);
        let sq = Cost::exact(1 << 64) * Cost::exact(1 << 64);
        assert_eq!(sq.log2(), P128);
        assert!(max < sq);
        // beyond 2^128 costs keep their order instead of tying
        let big = Cost::exact(1 << 100) * Cost::exact(1 << 100); // 2^200
        let bigger = big * Cost::exact(3);
        assert!(big < bigger);
        assert!((big.log2() - 200.0).abs() < 1e-12);
        assert!((bigger.log2() - (200.0 + 3f64.log2())).abs() < 1e-12);
        // sums: 2^200 + 2^200 = 2^201; adding something never lowers a cost
        assert!(((big + big).log2() - 201.0).abs() < 1e-12);
        assert!(big + Cost::ONE >= big);
        assert!(big + Cost::exact(u128::MAX) >= big);
        assert_eq!(Cost::ZERO * big, Cost::ZERO);
        assert_eq!(big * Cost::ZERO, Cost::ZERO);
        assert!(Cost::UNBOUNDED > big * big * big);
        assert_eq!(Cost::limit(u128::MAX), Cost::UNBOUNDED);
    }

    #[test]
    fn monotone_and_total() {
        // a grid of values across the boundary: a <= b implies a + c <= b + c and a * c <= b * c
        let mut vals = vec![
            Cost::ZERO,
            Cost::ONE,
            Cost::exact(2),
            Cost::exact(u128::MAX / 2),
        ];
        vals.push(Cost::exact(u128::MAX - 1));
        vals.push(Cost::exact(u128::MAX));
        for k in [0u32, 1, 2, 50, 63] {
            vals.push(Cost::exact(u128::MAX) + Cost::exact(1u128 << (64 + k)));
        }
        let pow2 = |e: u32| (0..e).fold(Cost::ONE, |c, _| c.mul_small(2));
        for e in [130u32, 190, 1000] {
            vals.push(pow2(e));
        }
        assert_eq!(pow2(1000).log2(), 1000.0);
        vals.sort();
        for w in vals.windows(2) {
            assert!(w[0] <= w[1]);
        }
        for (i, a) in vals.iter().enumerate() {
            for b in &vals[i..] {
                for c in &vals {
                    assert!(*a + *c <= *b + *c, "{a} {b} {c}");
                    assert!(*a * *c <= *b * *c, "{a} {b} {c}");
                    assert!(*a + *c >= (*a).max(*c));
                }
            }
        }
    }

    #[test]
    fn delta_order() {
        let e = |x: i128| {
            Delta::sub2(
                Cost::exact(x.max(0) as u128),
                Cost::exact((-x).max(0) as u128),
                Cost::ZERO,
            )
        };
        assert_eq!(e(-5).as_exact(), Some(-5));
        assert!(e(-5) < e(-4) && e(-4) < e(0) && e(0) < e(3));
        let huge = Cost::exact(1 << 100) * Cost::exact(1 << 100);
        let d_pos = Delta::sub(huge, Cost::exact(5));
        let d_neg = Delta::sub(Cost::exact(5), huge);
        assert!(d_neg < e(i128::MIN + 1) && e(i128::MAX) < d_pos);
        assert!(d_neg < e(0) && e(0) < d_pos);
        // larger removals rank first, as with exact integers
        let d_neg2 = Delta::sub(Cost::exact(5), huge + huge);
        assert!(d_neg2 < d_neg);
        assert_eq!(Delta::sub(huge, huge), Delta::sub(huge, huge));
        // exact differences keep the integer order even where their symlogs round together
        let a = e(1 << 100);
        let b = e((1 << 100) + 1);
        assert!(a < b);
    }
}
