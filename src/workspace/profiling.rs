//! The profiler in the workspace: one run at a time on a worker thread, its results streaming
//! into a [`Live`] report the app draws every frame, and the exports of a finished (or
//! cancelled) report.
//!
//! The subjects are the payloads the user has open: the current one, or every open source's
//! selected payload (to compare, e.g., the same API at 10 and at 15,000 records). A source whose
//! payload has not been decoded yet is decoded on the worker, never on the UI thread.

use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::analysis::{analyze, open, Analysis, AnalysisRequest, Choice};
use super::errors::ExportError;
use super::job::{Job, JobContext, JobError, Notify};
use super::schemas::SchemaSet;
use super::source::Source;
use crate::files::write_atomically;
use crate::limits::Limits;
use crate::profile::runtimes::Runtime;
use crate::profile::sweep::Link;

/// How long a runtime's harness may take in the app (as `compare --runtime-timeout`'s default).
const RUNTIME_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);
use crate::profile::{self, Live, Settings, Subject};
use crate::report::{csv, table, Mode, Report};

/// Which payloads a run profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The payload shown.
    Current,
    /// The selected payload of every open source.
    AllOpen,
}

/// One payload to profile, as the UI thread hands it to the worker: decoded already, or the
/// bytes and choices to decode it with.
pub(super) struct Pending {
    pub name: String,
    pub analysis: Option<Arc<Analysis>>,
    pub source: Arc<Source>,
    pub layers: crate::pipeline::Layers,
    /// The key logs the source was peeled with, so it peels to the same payloads again.
    pub keys: Option<Arc<crate::capture::tls::KeyLog>>,
    pub payload: usize,
    pub choice: Choice,
}

/// A profiler run: started, streaming, finished or cancelled.
pub struct ProfileRun {
    /// What has arrived so far, the whole report once the run is over (its `mode` says how
    /// timings were taken).
    pub live: Arc<Mutex<Live>>,
    preparing: Arc<Mutex<Option<String>>>,
    job: Option<Job<Report>>,
    cancel: Arc<AtomicBool>,
    /// Why the run gave no report (a panic, a payload that did not decode), once over.
    pub error: Option<String>,
}

impl std::fmt::Debug for ProfileRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileRun")
            .field("running", &self.is_running())
            .finish()
    }
}

impl ProfileRun {
    /// Starts profiling `pending` on a worker thread; then each of `runtimes` with its
    /// interpreter.
    pub(super) fn start(
        pending: Vec<Pending>,
        mode: Mode,
        links: Vec<Link>,
        runtimes: Vec<(Runtime, String)>,
        schemas: SchemaSet,
        limits: Limits,
        notify: Notify,
    ) -> ProfileRun {
        let mut settings = Settings::new(mode);
        if !links.is_empty() {
            settings.links = links;
        }
        let live = Arc::new(Mutex::new(Live::new(&settings)));
        let preparing = Arc::new(Mutex::new(None));
        let cancel = Arc::new(AtomicBool::new(false));
        let worker = Worker {
            live: live.clone(),
            preparing: preparing.clone(),
            cancel: cancel.clone(),
            notify: notify.clone(),
            settings,
        };
        let job = Job::spawn("profile", notify, move |ctx| {
            let subjects = subjects(
                pending,
                &schemas,
                &limits,
                ctx,
                &worker.cancel,
                &worker.preparing,
            )?;
            set(&worker.preparing, None);
            // The flag is read between samples, so a cancel stops the run within one sample.
            let mut report = profile::run(&subjects, &worker.settings, &worker.cancel, &|event| {
                if let Ok(mut l) = worker.live.lock() {
                    l.apply(event);
                }
                (worker.notify)();
            });
            // Other runtimes after the Rust jobs, so they do not share the cores. Each
            // runtime's report joins the live one as it finishes; the view names the harness
            // running and what it has done.
            let (runtimes, absent) = worker.installed(&runtimes);
            worker.time_runtimes(&subjects, &runtimes, &mut report);
            if !absent.is_empty() {
                let add = |files: &mut Vec<crate::profile::report::FileReport>| {
                    for f in files {
                        f.runtimes.extend(absent.iter().cloned());
                        f.runtimes.sort_by_key(|r| r.runtime);
                    }
                };
                if let Ok(mut l) = worker.live.lock() {
                    add(&mut l.report.files);
                }
                add(&mut report.files);
            }
            set(&worker.preparing, None);
            Ok(report)
        });
        ProfileRun {
            live,
            preparing,
            job: Some(job),
            cancel,
            error: None,
        }
    }

    /// Whether the worker is still on it.
    pub fn is_running(&self) -> bool {
        self.job.is_some()
    }

    /// Asks the run to stop soon; what finished stays in the report.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether the user asked the run to stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// A copy of the report so far.
    pub fn report(&self) -> Report {
        self.live
            .lock()
            .map(|l| l.report.clone())
            .unwrap_or_else(|p| p.into_inner().report.clone())
    }

    /// Whether any payload's results have arrived (something to show or export).
    pub fn has_results(&self) -> bool {
        self.live.lock().is_ok_and(|l| !l.report.files.is_empty())
    }

    /// How far the run is.
    pub fn progress(&self) -> Progress {
        match self.live.lock() {
            Ok(l) => Progress {
                done: l.done,
                total: l.total,
                fraction: l.fraction(),
                text: l.progress_text(),
                current: l.current().map(str::to_owned),
            },
            Err(_) => Progress::default(),
        }
    }

    /// What the worker is decoding before the timing starts, if anything.
    pub fn preparing(&self) -> Option<String> {
        self.preparing.lock().ok().and_then(|p| p.clone())
    }

    /// Takes the finished report in; returns whether the run just ended.
    pub(super) fn poll(&mut self) -> bool {
        let Some(job) = &self.job else {
            return false;
        };
        let Some(result) = job.poll() else {
            return false;
        };
        self.job = None;
        match result {
            Ok(report) => {
                if let Ok(mut l) = self.live.lock() {
                    l.report = report;
                    l.running.clear();
                }
            }
            Err(JobError::Cancelled) => {
                if let Ok(mut l) = self.live.lock() {
                    l.report.cancelled = true;
                    l.running.clear();
                }
            }
            Err(e) => self.error = Some(e.to_string()),
        }
        true
    }

    /// Blocks until the run is over (tests, the command line).
    pub fn wait(&mut self) {
        while self.is_running() {
            if !self.poll() {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
}

impl Drop for ProfileRun {
    /// A run nobody looks at any more (a new run replaced it) stops.
    fn drop(&mut self) {
        self.cancel();
    }
}

/// A profile run's worker: where it shows its progress, its cancel flag and its settings.
struct Worker {
    /// The report as it fills in.
    live: Arc<Mutex<Live>>,
    /// What is being prepared or run, for the progress line.
    preparing: Arc<Mutex<Option<String>>>,
    cancel: Arc<AtomicBool>,
    /// Repaints the app.
    notify: Notify,
    settings: Settings,
}

impl Worker {
    /// Shows `text` as what is being done, and repaints.
    fn say(&self, text: String) {
        set(&self.preparing, Some(text));
        (self.notify)();
    }

    /// Which of `runtimes` are installed: a quick probe (in parallel); the others are listed on
    /// every payload with why, not run. None when the run was cancelled.
    fn installed(
        &self,
        runtimes: &[(Runtime, String)],
    ) -> (
        Vec<(Runtime, String)>,
        Vec<profile::runtimes::RuntimeReport>,
    ) {
        if runtimes.is_empty() || self.cancel.load(Ordering::Relaxed) {
            return (Vec::new(), Vec::new());
        }
        self.say("looking for the other runtimes…".into());
        profile::runtimes::probe_installed(runtimes, profile::runtimes::PROBE_TIMEOUT, &|_| {
            "untick it in the Runtimes window of the Profile menu to stop asking".into()
        })
    }

    /// Times every subject in each of `runtimes`, adding each runtime's report to the live one
    /// and to `report` as it finishes; a cancel marks `report` cancelled.
    fn time_runtimes(
        &self,
        subjects: &[Subject],
        runtimes: &[(Runtime, String)],
        report: &mut Report,
    ) {
        let n = subjects.len() * runtimes.len();
        let mut k = 0;
        for (i, subject) in subjects.iter().enumerate() {
            if runtimes.is_empty() {
                break;
            }
            // The payload in every format, as the harnesses read it (encoded only when a
            // runtime is to be timed).
            let payload = profile::runtime_payload(subject);
            for (runtime, program) in runtimes {
                if self.cancel.load(Ordering::Relaxed) {
                    report.cancelled = true;
                    return;
                }
                k += 1;
                let what = format!(
                    "timing {} in {} ({k} of {n} harnesses)",
                    subject.name,
                    runtime.title()
                );
                self.say(format!("{what}…"));
                let on_step = |step: &str| self.say(format!("{what}: {step}"));
                let r = profile::runtimes::measure_with(
                    *runtime,
                    program,
                    &payload,
                    &self.settings.bench,
                    RUNTIME_TIMEOUT,
                    &self.cancel,
                    &on_step,
                );
                // A runtime that failed on the whole payload is not asked again per slice.
                let failed = r.error.is_some() && r.rows.is_empty();
                if let Ok(mut l) = self.live.lock() {
                    if let Some(f) = l.report.files.get_mut(i) {
                        f.runtimes.push(r.clone());
                    }
                }
                if let Some(f) = report.files.get_mut(i) {
                    f.runtimes.push(r);
                }
                (self.notify)();
                // The scaling view's slices, one harness run each, after the whole payload.
                let slices = match report.files.get(i).and_then(|f| f.sweep.as_ref()) {
                    Some(sweep) if !failed => profile::runtime_sweep_payloads(subject, sweep),
                    _ => Vec::new(),
                };
                for slice in slices.chunks(1) {
                    self.time_slice(i, (*runtime, program), slice, &on_step, report);
                }
            }
        }
    }

    /// Times one slice of subject `i`'s records in `runtime`, adding its points to the live
    /// report's sweep and to `report`'s.
    fn time_slice(
        &self,
        i: usize,
        (runtime, program): (Runtime, &str),
        slice: &[(usize, profile::runtimes::Payload)],
        on_step: &(dyn Fn(&str) + Sync),
        report: &mut Report,
    ) {
        let points = profile::measure_runtime_sweep(
            runtime,
            program,
            slice,
            &self.settings.bench,
            RUNTIME_TIMEOUT,
            &self.cancel,
            on_step,
        );
        let add = |f: Option<&mut crate::profile::report::FileReport>| {
            if let Some(sweep) = f.and_then(|f| f.sweep.as_mut()) {
                sweep.runtimes.extend(points.iter().cloned());
            }
        };
        if let Ok(mut l) = self.live.lock() {
            add(l.report.files.get_mut(i));
        }
        add(report.files.get_mut(i));
        (self.notify)();
    }
}

fn set(slot: &Mutex<Option<String>>, text: Option<String>) {
    if let Ok(mut s) = slot.lock() {
        *s = text;
    }
}

/// Decodes what was not decoded yet, on the worker.
fn subjects(
    pending: Vec<Pending>,
    schemas: &SchemaSet,
    limits: &Limits,
    ctx: &JobContext,
    cancel: &AtomicBool,
    preparing: &Mutex<Option<String>>,
) -> Result<Vec<Subject>, JobError> {
    let n = pending.len();
    let mut out = Vec::with_capacity(n);
    for (i, p) in pending.into_iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Err(JobError::Cancelled);
        }
        let analysis = match p.analysis {
            Some(a) => a,
            None => {
                set(
                    preparing,
                    Some(format!("decoding {} ({}/{n})", p.name, i + 1)),
                );
                let opened = open(
                    &p.source,
                    p.layers,
                    limits,
                    p.keys.as_deref(),
                    schemas.registry.as_ref(),
                )
                .map_err(|e| JobError::Failed(format!("{}: {e}", p.name)))?;
                let Some(payload) = opened.payloads.get(p.payload) else {
                    return Err(JobError::Failed(format!("{}: no payload", p.name)));
                };
                let call = payload.grpc_call();
                let request = AnalysisRequest {
                    bytes: &payload.bytes,
                    origin: crate::pipeline::Origin::of(payload, call.as_ref()),
                    choice: &p.choice,
                    schemas,
                    limits,
                };
                Arc::new(analyze(request, ctx)?)
            }
        };
        let Some(doc) = analysis.source().and_then(|c| c.document.as_ref()) else {
            return Err(JobError::Failed(format!(
                "{}: the payload did not decode, so there is nothing to profile",
                p.name
            )));
        };
        if let Some(e) = analysis.source().and_then(|c| c.error.as_ref()) {
            return Err(JobError::Failed(format!(
                "{}: the payload decoded only in part ({e}); profile a complete payload",
                p.name
            )));
        }
        let message = analysis.message.as_deref().and_then(|m| schemas.message(m));
        let value = doc.whole().ok_or_else(|| {
            JobError::Failed(format!("{}: the payload did not decode again", p.name))
        })?;
        out.push(Subject {
            name: p.name,
            value,
            message,
        });
    }
    Ok(out)
}

/// The two CSV files an export writes for `path`: the timings at `path` (one row per file ×
/// format × library, as `wirelens compare --csv`) and bytes per field next to it, named
/// `<stem>-fields.csv` (as `--csv-fields`).
pub fn export_paths(path: &FsPath) -> (PathBuf, PathBuf) {
    (path.to_path_buf(), beside(path, "-fields.csv"))
}

/// A file next to `path` named after its stem: `beside("/tmp/p.csv", "-sizes.png")` is
/// `/tmp/p-sizes.png` (the plots' PNGs and the fields CSV sit beside the export path).
pub fn beside(path: &FsPath, suffix: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "wirelens".into());
    path.with_file_name(format!("{stem}{suffix}"))
}

/// Writes the report's CSV files (see [`export_paths`]), each atomically: a failed write leaves
/// any earlier file in place. Returns the paths written.
pub fn export_csv(report: &Report, path: &FsPath) -> Result<Vec<PathBuf>, ExportError> {
    if report.files.is_empty() {
        return Err(ExportError::Nothing);
    }
    let (timings, fields) = export_paths(path);
    let t = csv::timings_csv(report)?;
    let f = csv::fields_csv(report)?;
    write_file(&timings, &t)?;
    write_file(&fields, &f)?;
    Ok(vec![timings, fields])
}

/// Writes `bytes` to `path` atomically; the error names the file.
fn write_file(path: &FsPath, bytes: &[u8]) -> Result<(), ExportError> {
    write_atomically(path, bytes).map_err(|source| ExportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The timings as CSV text (for the clipboard).
pub fn csv_text(report: &Report) -> Result<String, ExportError> {
    let bytes = csv::timings_csv(report)?;
    Ok(String::from_utf8(bytes)?)
}

/// The timings as a Markdown table (for the clipboard: issues, pull requests, chat).
pub fn markdown_text(report: &Report) -> String {
    table::markdown(report)
}

/// How far a profile run is (see [`crate::profile::live::Live`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Timing jobs finished.
    pub done: usize,
    /// Timing jobs in all (0 until they are counted).
    pub total: usize,
    /// The fraction done (in precise mode, by turns taken until the last round).
    pub fraction: f32,
    /// What the progress bar says.
    pub text: String,
    /// The job to name next to the bar.
    pub current: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_sit_beside_the_export_path() {
        let (t, f) = export_paths(FsPath::new("/tmp/out/profile.csv"));
        assert_eq!(t, PathBuf::from("/tmp/out/profile.csv"));
        assert_eq!(f, PathBuf::from("/tmp/out/profile-fields.csv"));
        assert_eq!(
            beside(FsPath::new("/tmp/out/profile.csv"), "-wire.png"),
            PathBuf::from("/tmp/out/profile-wire.png")
        );
    }
}
