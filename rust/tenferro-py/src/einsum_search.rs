//! Long einsum path searches (`optimize="anneal"`, `tf.EinsumAnneal`): the `optimize=` options
//! object read into [`AnnealOptions`], and the [`Runner`] the PyO3-free planner runs its search
//! through. The search runs on a helper thread with the GIL released while the calling thread
//! serves Python's signal handlers every [`POLL`] (a handler that raises stops the search: the
//! probe's stop flag is polled once per sweep, and the handler's own exception is raised --
//! `KeyboardInterrupt` for Ctrl-C) and, once
//! the search has run for `tenferro._progress.DELAY` seconds (1 s), drives a `tqdm` bar made by
//! `tenferro._progress.start` (the module is registered as a hook by `tenferro.einsum`) (which makes none unless `sys.stderr` is a terminal).

use crate::imports::{hook, EINSUM_PROGRESS};
use pyo3::prelude::*;
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::time::{Duration, Instant};
use tenferro_einsum::anneal::{Probe, Runner, Search};
use tenferro_einsum::{py_repr, AnnealOptions};
use tenferro_tensor::{Error, Result};

/// How often the waiting thread serves signal handlers and updates the progress bar.
const POLL: Duration = Duration::from_millis(10);

/// The options of a `tf.EinsumAnneal` (anything with its `_tenferro_anneal` triple), or `None`
/// for other objects.
///
/// # Errors
/// [`Error::Einsum`] naming the option that is malformed.
pub(crate) fn anneal_of(subscripts: &str, o: &Bound<'_, PyAny>) -> Result<Option<AnnealOptions>> {
    let Ok(Some(t)) = o.getattr_opt("_tenferro_anneal") else {
        return Ok(None);
    };
    let bad = |what: &str| {
        Error::einsum(
            "einsum",
            format!(
                "subscripts {}: invalid EinsumAnneal {what}",
                py_repr(subscripts)
            ),
        )
    };
    let (seed, max_time, max_repeats): (Bound<'_, PyAny>, Option<f64>, Bound<'_, PyAny>) = t
        .extract()
        .map_err(|_| bad("options (seed, max_time, max_repeats)"))?;
    let seed: u64 = seed
        .extract()
        .map_err(|_| bad("seed (an int in [0, 2**64))"))?;
    let max_repeats: u64 = max_repeats
        .extract()
        .ok()
        .filter(|&r| r >= 1)
        .ok_or_else(|| bad("max_repeats (an int >= 1)"))?;
    let max_time = match max_time {
        None => None,
        Some(s) if s > 0.0 && s < 1e9 => Some(Duration::from_secs_f64(s)),
        Some(s) => return Err(bad(&format!("max_time={s} (seconds in (0, 1e9))"))),
    };
    Ok(Some(AnnealOptions {
        seed,
        max_time,
        max_repeats,
    }))
}

struct PyRunner;

/// Install the runner (at module import).
pub(crate) fn install() {
    tenferro_einsum::anneal::set_runner(Box::new(PyRunner));
}

impl Runner for PyRunner {
    fn run(&self, options: &AnnealOptions, search: &Search<'_>) -> Result<Vec<Vec<usize>>> {
        Python::attach(|py| run(py, options, search))
    }
}

/// The progress bar of one search (made lazily, closed at the end).
struct Bar {
    delay: Option<Duration>,
    bar: Option<Py<PyAny>>,
    shown: u64,
}

impl Bar {
    fn new(py: Python<'_>) -> Bar {
        let delay = hook(py, "einsum", &EINSUM_PROGRESS, "_progress")
            .and_then(|m| m.getattr("DELAY"))
            .and_then(|d| d.extract::<f64>())
            .ok()
            .filter(|d| d.is_finite() && *d >= 0.0)
            .map(Duration::from_secs_f64);
        Bar {
            delay,
            bar: None,
            shown: 0,
        }
    }

    /// Show `fraction` (per mille) once `elapsed` passed the delay. Failures of the bar (a
    /// closed stderr, a missing tqdm) only hide it.
    fn update(&mut self, py: Python<'_>, elapsed: Duration, fraction: f64) {
        let Some(delay) = self.delay else { return };
        if self.bar.is_none() {
            if elapsed < delay {
                return;
            }
            let made = hook(py, "einsum", &EINSUM_PROGRESS, "_progress")
                .and_then(|m| m.getattr("start"))
                .and_then(|f| f.call1(("einsum anneal", 1000)));
            match made {
                Ok(b) if !b.is_none() => self.bar = Some(b.unbind()),
                _ => {
                    self.delay = None;
                    return;
                }
            }
        }
        let permille = (fraction.clamp(0.0, 1.0) * 1000.0) as u64;
        if permille > self.shown {
            if let Some(b) = &self.bar {
                if b.call_method1(py, "update", (permille - self.shown,))
                    .is_err()
                {
                    self.delay = None;
                }
            }
            self.shown = permille;
        }
    }

    fn close(&mut self, py: Python<'_>) {
        if let Some(b) = self.bar.take() {
            let _ = b.call_method0(py, "close");
        }
    }
}

fn run(py: Python<'_>, options: &AnnealOptions, search: &Search<'_>) -> Result<Vec<Vec<usize>>> {
    let probe = Probe::default();
    let start = Instant::now();
    let total = options.total_sweeps().max(1) as f64;
    let fraction = |probe: &Probe, elapsed: Duration| {
        let f = probe.done() as f64 / total;
        match options.max_time {
            Some(t) => f.max(elapsed.as_secs_f64() / t.as_secs_f64()),
            None => f,
        }
    };
    let mut bar = Bar::new(py);
    let mut signal: Option<PyErr> = None;
    let outcome = py.detach(|| {
        std::thread::scope(|s| {
            let (tx, rx) = sync_channel(1);
            let probe_ref = &probe;
            let spawned = std::thread::Builder::new()
                .name("tenferro-einsum-search".into())
                .spawn_scoped(s, move || {
                    let _ = tx.send(search(probe_ref));
                });
            let handle = match spawned {
                Ok(h) => h,
                // No thread to spare: search here, without Ctrl-C or a bar.
                Err(_) => return Ok(search(&probe)),
            };
            loop {
                match rx.recv_timeout(POLL) {
                    Ok(path) => return Ok(path),
                    Err(RecvTimeoutError::Disconnected) => return Err(handle.join().err()),
                    Err(RecvTimeoutError::Timeout) => Python::attach(|py| {
                        if signal.is_none() {
                            if let Err(e) = py.check_signals() {
                                probe.request_stop();
                                signal = Some(e);
                            }
                        }
                        let elapsed = start.elapsed();
                        bar.update(py, elapsed, fraction(&probe, elapsed));
                    }),
                }
            }
        })
    });
    if outcome.is_ok() && signal.is_none() && bar.bar.is_some() {
        bar.update(py, Duration::MAX, 1.0);
    }
    bar.close(py);
    match (outcome, signal) {
        // a signal handler raised (Ctrl-C: KeyboardInterrupt): its own exception reaches the
        // caller, class and traceback intact
        (_, Some(e)) => Err(crate::errors::from_callback("einsum", e)),
        (Ok(path), None) => Ok(path),
        (Err(Some(panic)), None) => std::panic::resume_unwind(panic),
        (Err(None), None) => Err(Error::internal(
            "einsum",
            "the path search thread ended without a result",
        )),
    }
}
