//! Background work: one computation on a worker thread, with progress, cancel and a result.
//!
//! The app's UI thread never decodes or encodes anything large; it starts a [`Job`], draws its
//! [`Job::progress`] and polls it each frame. A job that panics becomes a [`JobError::Panicked`]
//! instead of taking the app down. Cancel is cooperative: the work checks
//! [`JobContext::check`] between its steps, and a cancelled job's result is dropped even if a
//! long step (one decode) finishes later.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};

/// Why a job gave no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// The user cancelled it.
    #[error("cancelled")]
    Cancelled,
    /// The work panicked (a bug); the message is the panic's.
    #[error("internal error (please report it): {0}")]
    Panicked(String),
    /// The work failed with this message.
    #[error("{0}")]
    Failed(String),
    /// The worker thread could not be started or vanished.
    #[error("the worker thread stopped: {0}")]
    Lost(String),
}

/// Called from the worker when something changed (progress, the result): the app repaints.
pub type Notify = Arc<dyn Fn() + Send + Sync>;

/// What the work sees: the cancel flag and the progress to update.
#[derive(Clone)]
pub struct JobContext {
    cancel: Arc<AtomicBool>,
    progress: Arc<AtomicU32>,
    stage: Arc<Mutex<String>>,
    notify: Notify,
}

impl JobContext {
    /// A context no one watches (for tests that run a job's work directly).
    #[cfg(test)]
    pub(crate) fn unwatched() -> JobContext {
        JobContext {
            cancel: Arc::new(AtomicBool::new(false)),
            progress: Arc::new(AtomicU32::new(0)),
            stage: Arc::new(Mutex::new(String::new())),
            notify: no_notify(),
        }
    }

    /// Whether the user asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// `Err(Cancelled)` when the user asked to stop: `ctx.check()?` between steps.
    pub fn check(&self) -> Result<(), JobError> {
        if self.is_cancelled() {
            Err(JobError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Reports progress (0.0–1.0) and what is being done.
    pub fn report(&self, fraction: f32, stage: &str) {
        self.progress
            .store(fraction.clamp(0.0, 1.0).to_bits(), Ordering::Relaxed);
        if let Ok(mut s) = self.stage.lock() {
            s.clear();
            s.push_str(stage);
        }
        (self.notify)();
    }
}

/// A computation running on a worker thread.
pub struct Job<T> {
    name: String,
    ctx: JobContext,
    rx: Receiver<Result<T, JobError>>,
    preview: Arc<Mutex<Option<Arc<T>>>>,
}

/// Where a job publishes a first, partial result while it works on the rest (the decoded
/// payload before its encodings): [`Job::preview`] hands it to the app.
pub struct Preview<T> {
    slot: Arc<Mutex<Option<Arc<T>>>>,
    notify: Notify,
}

impl<T> Preview<T> {
    /// Replaces the preview with `partial`, and wakes the app.
    pub fn publish(&self, partial: T) {
        if let Ok(mut slot) = self.slot.lock() {
            *slot = Some(Arc::new(partial));
        }
        (self.notify)();
    }
}

impl<T> std::fmt::Debug for Job<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("name", &self.name).finish()
    }
}

impl<T: Send + Sync + 'static> Job<T> {
    /// Starts `work` on a new thread named after `name`; `notify` is called when progress is
    /// reported and when the result is ready.
    pub fn spawn(
        name: &str,
        notify: Notify,
        work: impl FnOnce(&JobContext) -> Result<T, JobError> + Send + 'static,
    ) -> Job<T> {
        Job::spawn_with_preview(name, notify, move |ctx, _| work(ctx))
    }

    /// [`Job::spawn`], for work that can publish a partial result on the way ([`Preview`]).
    pub fn spawn_with_preview(
        name: &str,
        notify: Notify,
        work: impl FnOnce(&JobContext, &Preview<T>) -> Result<T, JobError> + Send + 'static,
    ) -> Job<T> {
        let preview = Arc::new(Mutex::new(None));
        let publisher = Preview {
            slot: preview.clone(),
            notify: notify.clone(),
        };
        let ctx = JobContext {
            cancel: Arc::new(AtomicBool::new(false)),
            progress: Arc::new(AtomicU32::new(0)),
            stage: Arc::new(Mutex::new(String::new())),
            notify,
        };
        let (tx, rx) = mpsc::channel();
        let worker_ctx = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("wirelens-{name}"))
            .spawn(move || {
                let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    work(&worker_ctx, &publisher)
                }));
                let result = match caught {
                    Ok(r) => r,
                    Err(panic) => Err(JobError::Panicked(panic_message(panic.as_ref()))),
                };
                let result = match result {
                    Ok(_) if worker_ctx.is_cancelled() => Err(JobError::Cancelled),
                    r => r,
                };
                // The app may have dropped the job meanwhile; then nobody wants the result.
                let _ = tx.send(result);
                (worker_ctx.notify)();
            });
        if let Err(e) = spawned {
            let (tx, rx2) = mpsc::channel();
            let _ = tx.send(Err(JobError::Lost(e.to_string())));
            return Job {
                name: name.to_string(),
                ctx,
                rx: rx2,
                preview,
            };
        }
        Job {
            name: name.to_string(),
            ctx,
            rx,
            preview,
        }
    }
}

impl<T> Job<T> {
    /// What the job does, as given to [`Job::spawn`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Asks the work to stop; its result will be [`JobError::Cancelled`].
    pub fn cancel(&self) {
        self.ctx.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether [`Job::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }

    /// The partial result the work published last, if any ([`Preview::publish`]).
    pub fn preview(&self) -> Option<Arc<T>> {
        self.preview.lock().ok().and_then(|p| p.clone())
    }

    /// The last reported progress (0.0–1.0) and stage.
    pub fn progress(&self) -> (f32, String) {
        let fraction = f32::from_bits(self.ctx.progress.load(Ordering::Relaxed));
        let stage = self.ctx.stage.lock().map(|s| s.clone()).unwrap_or_default();
        (fraction, stage)
    }

    /// The result if it is ready; `None` while the work runs. Returns the result once.
    pub fn poll(&self) -> Option<Result<T, JobError>> {
        match self.rx.try_recv() {
            Ok(r) => Some(if self.is_cancelled() {
                Err(JobError::Cancelled)
            } else {
                r
            }),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                Some(Err(JobError::Lost("no result was sent".into())))
            }
        }
    }

    /// Blocks until the result is ready (tests, the command line).
    pub fn wait(self) -> Result<T, JobError> {
        match self.rx.recv() {
            Ok(r) if self.is_cancelled() => r.and(Err(JobError::Cancelled)),
            Ok(r) => r,
            Err(_) => Err(JobError::Lost("no result was sent".into())),
        }
    }
}

/// The text of a caught panic's payload.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".into()
    }
}

/// A [`Notify`] that does nothing (tests, the command line).
pub fn no_notify() -> Notify {
    Arc::new(|| {})
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn a_result_arrives_through_the_channel_with_progress() {
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let job = Job::spawn(
            "sum",
            Arc::new(move || {
                c.fetch_add(1, Ordering::Relaxed);
            }),
            |ctx| {
                ctx.report(0.5, "adding");
                Ok((1..=10).sum::<u32>())
            },
        );
        assert_eq!(job.wait(), Ok(55));
        // One progress report and one "done"; the last repaint request follows the result, so
        // give the worker a moment to make it.
        for _ in 0..500 {
            if calls.load(Ordering::Relaxed) >= 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(calls.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn a_panic_becomes_an_error() {
        let job: Job<u8> = Job::spawn("boom", no_notify(), |_| panic!("bad index 7"));
        assert_eq!(job.wait(), Err(JobError::Panicked("bad index 7".into())));
    }

    #[test]
    fn cancel_stops_the_work_at_its_next_check() {
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let job = Job::spawn("loop", no_notify(), move |ctx| {
            // Wait until the test has cancelled, then see the flag.
            let _ = go_rx.recv();
            ctx.check()?;
            Ok(1)
        });
        job.cancel();
        let _ = go_tx.send(());
        assert_eq!(job.wait(), Err(JobError::Cancelled));
    }

    #[test]
    fn poll_is_empty_while_the_work_runs() {
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let job = Job::spawn("wait", no_notify(), move |_| {
            let _ = go_rx.recv();
            Ok("done")
        });
        assert!(job.poll().is_none());
        let _ = go_tx.send(());
        let mut result = None;
        while result.is_none() {
            result = job.poll();
            std::thread::yield_now();
        }
        assert_eq!(result, Some(Ok("done")));
    }
}
