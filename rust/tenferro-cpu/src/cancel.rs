//! Cooperative cancellation of one op (engines.md, "Interrupting an op").
//!
//! A caller that may want to stop a long op runs it inside [`with_cancel_flag`]: the flag is
//! the calling thread's for the duration. Kernels read it once on entry ([`Cancel::current`],
//! on the op's thread), hand the handle to their workers, and poll it between chunks of at
//! least [`CHECK_WORK`] work units, so a tiny op never reads it and a large one pays one relaxed
//! load per ~64 Ki elements. A kernel that sees the flag stops early and leaves its output
//! partly written; [`with_cancel_flag`] then returns [`Error::Interrupted`] instead of what the
//! ops computed, so no partial result escapes, and the engine stays usable. (A later stage of
//! the same op, fed a partial tensor, sees the same flag and stops at its first check; the
//! decompositions check before each matrix, so faer never reads a partial operand.)
//!
//! Where each kernel checks: elementwise ops, conversions and copies (every `drive` chunk,
//! split into runs of [`CHECK_WORK`] elements), reductions (inside each fold, every
//! [`CHECK_WORK`] elements, also within one huge broadcast run), transposing copies (between
//! tiles), gather/scatter (every [`CHECK_WORK`] positions), GEMM (between batches and between
//! column blocks of one large product) and decompositions and solves (between the matrices of a
//! batch; one matrix runs to completion: faer offers no hook inside a factorisation).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tenferro_tensor::{Error, Result};

/// Work units (elements × relative cost) between two looks at the flag: 64 Ki elements of an
/// add, 0.5 MiB of f64 data, about 20–60 µs on one core.
pub const CHECK_WORK: usize = 1 << 16;

thread_local! {
    /// The flag of the op this thread runs: a pointer into the `Arc` that [`with_cancel_flag`]
    /// borrows for its whole call (null outside). A plain `Cell` without destructor, so reading
    /// it on the tiny-op path is one thread-local load.
    static CURRENT: Cell<*const AtomicBool> = const { Cell::new(std::ptr::null()) };
}

/// Run `f` (ops on an engine) with `flag` as this thread's cancellation flag (the previous one
/// is restored after, also when `f` unwinds). Setting `flag` from any thread makes the kernels
/// `f` runs stop at their next check; `f`'s result is then replaced by
/// [`Error::Interrupted`] (named `op`), so no partly computed tensor escapes.
///
/// # Errors
/// `f`'s error, or [`Error::Interrupted`] when `flag` was set before `f` returned.
pub fn with_cancel_flag<T>(
    op: &str,
    flag: &Arc<AtomicBool>,
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    struct Restore(*const AtomicBool);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let prev = CURRENT.with(|c| c.replace(Arc::as_ptr(flag)));
    let _restore = Restore(prev);
    let r = f();
    if flag.load(Ordering::Relaxed) {
        return Err(interrupted(op));
    }
    r
}

/// A kernel's handle on the flag of the op it runs (none: never cancelled).
#[derive(Clone, Default)]
pub(crate) struct Cancel(Option<Arc<AtomicBool>>);

impl Cancel {
    /// The flag of the calling thread's op, if any.
    pub(crate) fn current() -> Cancel {
        let p = CURRENT.with(Cell::get);
        if p.is_null() {
            return Cancel(None);
        }
        // SAFETY: a non-null pointer comes from `Arc::as_ptr` of the `Arc` that
        // `with_cancel_flag` borrows until it restores the previous value, and this thread is
        // inside that call: the `Arc` is alive, so taking one more strong count is sound.
        Cancel(Some(unsafe {
            Arc::increment_strong_count(p);
            Arc::from_raw(p)
        }))
    }

    /// No flag: the handle of small ops, which never look.
    pub(crate) fn none() -> Cancel {
        Cancel(None)
    }

    /// Whether a flag is present (an op whose caller may cancel it).
    #[inline]
    pub(crate) fn armed(&self) -> bool {
        self.0.is_some()
    }

    /// Whether the op was asked to stop.
    #[inline]
    pub(crate) fn requested(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// [`Error::Interrupted`] for `op` once the op was asked to stop.
    ///
    /// # Errors
    /// [`Error::Interrupted`].
    #[inline]
    pub(crate) fn check(&self, op: &str) -> Result<()> {
        if self.requested() {
            Err(interrupted(op))
        } else {
            Ok(())
        }
    }
}

/// The error of an interrupted op.
pub(crate) fn interrupted(op: &str) -> Error {
    Error::Interrupted { op: op.to_string() }
}

/// Positions per piece for [`in_pieces`]: about [`CHECK_WORK`] work units when `cancel` is
/// armed, the whole range otherwise.
#[inline]
pub(crate) fn grain(cancel: &Cancel, cost: usize) -> usize {
    if cancel.armed() {
        (CHECK_WORK / cost.max(1)).max(1)
    } else {
        usize::MAX
    }
}

/// Run `body` on `[start, end)` in pieces of `grain` positions, stopping once `cancel` is
/// requested.
#[inline]
pub(crate) fn in_pieces(
    cancel: &Cancel,
    start: usize,
    end: usize,
    grain: usize,
    body: &(impl Fn(usize, usize) + ?Sized),
) {
    let mut a = start;
    while a < end {
        if cancel.requested() {
            return;
        }
        let b = end.min(a.saturating_add(grain));
        body(a, b);
        a = b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_is_per_thread_and_restored() {
        assert!(!Cancel::current().armed());
        let flag = Arc::new(AtomicBool::new(false));
        assert_eq!(with_cancel_flag("x", &flag, || Ok(5)).unwrap(), 5);
        let r = with_cancel_flag("x", &flag, || {
            let c = Cancel::current();
            assert!(c.armed() && !c.requested());
            flag.store(true, Ordering::Relaxed);
            assert!(c.requested() && Cancel::current().requested());
            assert!(matches!(c.check("x"), Err(Error::Interrupted { .. })));
            // Another thread has no flag.
            std::thread::scope(|s| {
                s.spawn(|| assert!(!Cancel::current().armed()));
            });
            Ok(1)
        });
        assert!(
            matches!(r, Err(Error::Interrupted { .. })),
            "a partial result never escapes"
        );
        assert!(!Cancel::current().armed());
    }

    #[test]
    fn pieces_cover_the_range_and_stop_when_asked() {
        let seen = std::sync::Mutex::new(Vec::new());
        in_pieces(&Cancel::none(), 3, 200_000, 1000, &|a, b| {
            seen.lock().unwrap().push((a, b))
        });
        let v = seen.into_inner().unwrap();
        assert_eq!(v.first().unwrap().0, 3);
        assert_eq!(v.last().unwrap().1, 200_000);
        assert!(v.windows(2).all(|w| w[0].1 == w[1].0));
        let flag = Arc::new(AtomicBool::new(false));
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let r = with_cancel_flag("x", &flag, || {
            let c = Cancel::current();
            assert_eq!(grain(&c, 4), CHECK_WORK / 4);
            in_pieces(&c, 0, 1 << 30, grain(&c, 1), &|_, _| {
                if calls.fetch_add(1, Ordering::Relaxed) == 2 {
                    flag.store(true, Ordering::Relaxed);
                }
            });
            Ok(())
        });
        assert!(r.is_err());
        assert_eq!(calls.load(Ordering::Relaxed), 3);
    }
}
