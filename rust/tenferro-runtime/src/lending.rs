//! Engine lending: one holder (an OS thread) at a time. A second borrow from the holding thread
//! is either re-entry (an error for sessions) or a nested use (implicit ops); other threads wait,
//! optionally with a timeout.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use tenferro_tensor::{Error, Result};

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static TOKEN: u64 = NEXT_TOKEN.fetch_add(1, SeqCst);
}

/// A process-unique, non-zero token of the calling OS thread.
pub fn thread_token() -> u64 {
    TOKEN.with(|t| *t)
}

/// The outcome of a successful borrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Borrow {
    /// The engine was free and is now held by this thread: release it when done.
    Acquired,
    /// This thread already holds the engine: do not release.
    AlreadyHeld,
}

/// Who holds an engine.
#[derive(Default)]
pub struct Lending {
    owner: AtomicU64,
    waiters: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Lending {
    /// Borrow for the calling thread. `reentry_is_error` makes a borrow by the holding thread a
    /// [`Error::Reentered`]; otherwise it is [`Borrow::AlreadyHeld`]. Other threads' holds are
    /// waited for, up to `timeout` ([`Error::EngineBusy`] after it).
    ///
    /// # Errors
    /// [`Error::Reentered`], [`Error::EngineBusy`].
    pub fn acquire(
        &self,
        op: &str,
        timeout: Option<Duration>,
        reentry_is_error: bool,
    ) -> Result<Borrow> {
        let me = thread_token();
        match self.owner.compare_exchange(0, me, SeqCst, SeqCst) {
            Ok(_) => return Ok(Borrow::Acquired),
            Err(cur) if cur == me => {
                return if reentry_is_error {
                    Err(Error::reentered(
                        op,
                        "this engine is already lent to a session on this thread; \
                         nest sessions on different engines instead",
                    ))
                } else {
                    Ok(Borrow::AlreadyHeld)
                };
            }
            Err(_) => {}
        }
        // A deadline past what `Instant` can hold is no deadline (wait forever), never a panic.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.waiters.fetch_add(1, SeqCst);
        let result = loop {
            if self.owner.compare_exchange(0, me, SeqCst, SeqCst).is_ok() {
                break Ok(Borrow::Acquired);
            }
            match deadline {
                None => {
                    guard = self.cv.wait(guard).unwrap_or_else(|e| e.into_inner());
                }
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        break Err(Error::engine_busy(
                            op,
                            format!(
                                "the engine is held by another thread; gave up after {:.3} s",
                                timeout.unwrap_or_default().as_secs_f64()
                            ),
                        ));
                    }
                    guard = self
                        .cv
                        .wait_timeout(guard, d - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        };
        self.waiters.fetch_sub(1, SeqCst);
        drop(guard);
        result
    }

    /// Release a borrow obtained as [`Borrow::Acquired`].
    pub fn release(&self) {
        self.owner.store(0, SeqCst);
        if self.waiters.load(SeqCst) > 0 {
            let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.cv.notify_all();
        }
    }

    /// Whether some thread holds the engine.
    pub fn is_held(&self) -> bool {
        self.owner.load(SeqCst) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn reentry_and_waiting() {
        let l = Arc::new(Lending::default());
        assert_eq!(l.acquire("s", None, true).unwrap(), Borrow::Acquired);
        assert!(matches!(
            l.acquire("s", None, true),
            Err(Error::Reentered { .. })
        ));
        assert_eq!(l.acquire("op", None, false).unwrap(), Borrow::AlreadyHeld);
        let l2 = l.clone();
        let busy = std::thread::spawn(move || {
            l2.acquire("s", Some(Duration::from_millis(20)), true)
                .is_err()
        })
        .join()
        .unwrap();
        assert!(busy);
        let l3 = l.clone();
        let h = std::thread::spawn(move || {
            let b = l3.acquire("s", None, true).unwrap();
            l3.release();
            b
        });
        std::thread::sleep(Duration::from_millis(20));
        l.release();
        assert_eq!(h.join().unwrap(), Borrow::Acquired);
    }
}
