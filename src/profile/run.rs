//! The profiler's driver: prepares every measurement of every payload, then runs the timing jobs
//! (in parallel, or one at a time and in turns in precise mode), streaming each result to the
//! caller.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use rayon::prelude::*;

use super::bench::{AllCores, BenchConfig, BenchError, Bencher, Measurement, Spread, SpreadRun};
use super::cost::field_costs;
use super::libs::{self, Adapter, Library, Source};
use super::sizes::{self, FormatSizes, SchemaSource};
use super::sweep::{self, Link, Sweep, SweepPoint};
use super::turns::Turns;
use crate::codec::protobuf::infer::{infer, wrap_for_inferred, InferOptions};
use crate::codec::protobuf::MessageDescriptor;
use crate::codec::{self, EncodeOptions, Encoded, Format};
use crate::model::Value;
use crate::profile::report::{FileReport, FormatReport, Mode, Report, TimingRow};

/// One payload to profile.
#[derive(Debug, Clone)]
pub struct Subject {
    /// A name for reports (the file name).
    pub name: String,
    /// The decoded payload.
    pub value: std::sync::Arc<Value>,
    /// The protobuf message type the user gave; `None` infers one (schema source "inferred").
    pub message: Option<MessageDescriptor>,
}

/// What to measure and how.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Quick, standard or precise.
    pub mode: Mode,
    /// Sampling settings.
    pub bench: BenchConfig,
    /// Record counts of the scaling sweep (empty: no sweep).
    pub sweep_counts: Vec<usize>,
    /// Whether the sweep ends with the payload's own record count.
    pub sweep_all: bool,
    /// Links of the transfer estimates.
    pub links: Vec<Link>,
    /// Worker threads in parallel mode (0: one per core).
    pub threads: usize,
}

impl Settings {
    /// The settings of a mode: quick (few samples, sweep of 1/10/100 records and the whole
    /// payload), standard
    /// (criterion-like sampling, sweep by powers of ten up to the whole payload, in parallel) or
    /// precise (standard, one timing job at a time, the jobs taking turns).
    pub fn new(mode: Mode) -> Settings {
        let (bench, sweep_counts, sweep_all) = match mode {
            // The whole payload's point costs no timing job (it reuses the main rows).
            Mode::Quick => (BenchConfig::quick(), vec![1, 10, 100], true),
            Mode::Standard => (
                BenchConfig::standard(),
                vec![1, 10, 100, 1_000, 10_000, 100_000],
                true,
            ),
            Mode::Precise => (
                BenchConfig::precise(),
                vec![1, 10, 100, 1_000, 10_000, 100_000],
                true,
            ),
        };
        Settings {
            mode,
            bench,
            sweep_counts,
            sweep_all,
            links: Link::defaults(),
            threads: 0,
        }
    }
}

/// Encode or decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Value → bytes (or compress).
    Encode,
    /// Bytes → value (or decompress).
    Decode,
}

impl Op {
    /// `encode` or `decode`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Encode => "encode",
            Op::Decode => "decode",
        }
    }
}

/// Where a measurement goes in the [`Report`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slot {
    /// `files[file].timings[row]`.
    Timing {
        /// Index of the file.
        file: usize,
        /// Index of the row.
        row: usize,
        /// Which timing.
        op: Op,
    },
    /// gzip of `files[file].formats[format]` (encode = compress).
    Gzip {
        /// Index of the file.
        file: usize,
        /// Index into `formats`.
        format: usize,
        /// Compress or decompress.
        op: Op,
    },
    /// `files[file].sweep.points[point]`.
    Sweep {
        /// Index of the file.
        file: usize,
        /// Index of the point.
        point: usize,
        /// Which timing.
        op: Op,
    },
}

/// What [`run`] tells its caller while it works.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// A payload's sizes and bytes per field are ready (timings still empty).
    Prepared {
        /// Index of the file.
        file: usize,
        /// Its report so far.
        report: Box<FileReport>,
    },
    /// A timing job starts.
    Started {
        /// Jobs finished so far.
        done: usize,
        /// Jobs in all.
        total: usize,
        /// What is measured.
        label: String,
    },
    /// Precise mode: a job took its turn to measure (the progress of a run whose jobs all finish
    /// in its last round).
    Turn {
        /// Turns taken so far, this one included.
        done: usize,
        /// Turns planned in all (each job's samples fill [`BenchConfig::rounds`] turns at most, so
        /// a run may end a little short of it).
        total: usize,
        /// The job now measuring.
        label: String,
    },
    /// A timing job finished.
    Measured {
        /// Jobs finished, this one included.
        done: usize,
        /// Jobs in all.
        total: usize,
        /// What was measured.
        label: String,
        /// Where it goes.
        slot: Slot,
        /// The measurement (boxed: it is far larger than the other events).
        result: Box<Result<Measurement, BenchError>>,
        /// For a library's timing row: the size of the library's own encoding, known once the
        /// job has prepared the library (the row's [`TimingRow::bytes`]).
        bytes: Option<usize>,
    },
}

/// A job's slot, what it measured, and (a library's row) the size of the library's encoding.
type Outcome = (Slot, Result<Measurement, BenchError>, Option<usize>);

enum Task {
    Adapter(Arc<Lazy>, Op),
    /// gzip compress (the bytes, and the seconds preparing took to gzip them) or decompress.
    Gzip(Arc<Vec<u8>>, Op, Option<f64>),
}

/// What a library needs to be prepared: the value, wirelens' encoding of it, the message type.
#[derive(Clone)]
struct Inputs {
    library: Library,
    format: Format,
    value: Arc<Value>,
    bytes: Arc<Vec<u8>>,
    message: Option<MessageDescriptor>,
}

enum Stage {
    Waiting(Inputs),
    Ready(Result<Arc<dyn Adapter>, String>),
    Released,
}

/// A library prepared by the first of its jobs (encode, decode) to run, and dropped when the
/// last one finishes. A library's value of a large payload takes hundreds of megabytes, so only
/// the libraries being measured hold one (before, every library of every format was prepared
/// up front and held to the end of the run: 3 GB for a 9 MB protobuf batch), and preparing runs
/// on the pool beside the other jobs instead of before them all.
struct Lazy {
    stage: Mutex<Stage>,
    /// Jobs that have not finished yet.
    left: AtomicUsize,
    /// The inputs again (shared, not copied), for the copies every core is measured with
    /// ([`on_every_core`]); `None` when the row is not measured so.
    again: Option<Inputs>,
}

impl Lazy {
    fn new(inputs: Inputs, jobs: usize) -> Lazy {
        Lazy {
            stage: Mutex::new(Stage::Waiting(inputs)),
            left: AtomicUsize::new(jobs),
            again: None,
        }
    }

    /// [`Lazy::new`], keeping the inputs for [`Lazy::fresh`].
    fn kept(inputs: Inputs, jobs: usize) -> Lazy {
        Lazy {
            again: Some(inputs.clone()),
            ..Lazy::new(inputs, jobs)
        }
    }

    /// A library prepared anew from the kept inputs: a copy of its own, for one thread, down to
    /// the message type's descriptors (a pool shared between threads would share its reference
    /// counts, which every encode touches).
    fn fresh(&self) -> Result<Arc<dyn Adapter>, String> {
        let Some(inputs) = &self.again else {
            return Err("the row's inputs were not kept".into());
        };
        let message = match &inputs.message {
            Some(m) => {
                let pool = prost_reflect::DescriptorPool::decode(
                    m.parent_pool().encode_to_vec().as_slice(),
                )
                .map_err(|e| format!("a copy of the descriptors: {e}"))?;
                let own = pool
                    .get_message_by_name(m.full_name())
                    .ok_or_else(|| format!("a copy of the descriptors lacks {}", m.full_name()))?;
                Some(own)
            }
            None => None,
        };
        prepare(&Inputs {
            message,
            ..inputs.clone()
        })
    }

    /// The prepared library, preparing it now if no job has (another job of the same library
    /// waits meanwhile).
    fn adapter(&self) -> Result<Arc<dyn Adapter>, String> {
        let mut stage = self.stage.lock().unwrap_or_else(PoisonError::into_inner);
        if let Stage::Waiting(_) = &*stage {
            let Stage::Waiting(i) = std::mem::replace(&mut *stage, Stage::Released) else {
                unreachable!("matched above")
            };
            *stage = Stage::Ready(prepare(&i));
        }
        match &*stage {
            Stage::Ready(r) => r.clone(),
            Stage::Waiting(_) | Stage::Released => Err("the library was released".into()),
        }
    }

    /// One job is done with it; the last one drops the library and its inputs (those kept for
    /// [`Lazy::fresh`] stay with it).
    fn release(&self) {
        if self.left.fetch_sub(1, Ordering::SeqCst) == 1 {
            let old = std::mem::replace(
                &mut *self.stage.lock().unwrap_or_else(PoisonError::into_inner),
                Stage::Released,
            );
            drop(old);
        }
    }
}

/// Prepares `i`'s library. Avro's bytes were written by the schema wirelens infers from the
/// value (the profiler takes no user schema for Avro): every library reads and writes by it.
fn prepare(i: &Inputs) -> Result<Arc<dyn Adapter>, String> {
    let avro = match i.format {
        Format::Avro => Some(codec::avro::schema_for(&i.value, &EncodeOptions::default())),
        _ => None,
    };
    match avro.transpose() {
        Ok(avro) => {
            let source = Source {
                value: &i.value,
                bytes: &i.bytes,
                message: i.message.as_ref(),
                avro: avro.as_ref(),
            };
            libs::prepare(i.library, i.format, source)
                .map(Arc::from)
                .map_err(|e| e.to_string())
        }
        Err(e) => Err(format!("the Avro schema: {e}")),
    }
}

/// How much the copies of one row's library value may hold together when every core is
/// measured at once ([`on_every_core`]), by [`value_estimate`]: a row whose copies would hold
/// more is not measured so.
pub const ALL_CORES_BUDGET: usize = 256 << 20;

/// The throughput of `lazy`'s library on `threads` threads at once (see [`AllCores`]): each
/// thread prepares its own copy of the library's value and bytes, then all start together and
/// call the operation for [`BenchConfig::all_cores_time`]. Run while no other job measures.
fn on_every_core(
    lazy: &Lazy,
    op: Op,
    threads: usize,
    config: &BenchConfig,
    cancel: &AtomicBool,
    capacity: usize,
) -> Result<AllCores, BenchError> {
    let start = std::sync::Barrier::new(threads);
    let runs: Vec<Result<SpreadRun, BenchError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let start = &start;
                scope.spawn(move || {
                    let passed = AtomicBool::new(false);
                    let spread = Spread {
                        start,
                        span: config.all_cores_time,
                        passed: &passed,
                    };
                    // A panic (a library's own) or a failure before the routine still passes
                    // the barrier, so no other thread waits for this one for ever.
                    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let mut b = Bencher::spread(config, cancel, capacity, spread);
                        match lazy.fresh() {
                            Ok(a) => match op {
                                Op::Encode => a.encode(&mut b),
                                Op::Decode => {
                                    a.release_value();
                                    a.decode(&mut b);
                                }
                            },
                            Err(e) => b.fail(e),
                        }
                        b.finish_spread()
                    }));
                    if !passed.load(Ordering::SeqCst) {
                        start.wait();
                    }
                    run.unwrap_or_else(|_| Err(BenchError::Failed("the library panicked".into())))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(BenchError::Failed("a thread stopped".into())))
            })
            .collect()
    });
    let runs = runs.into_iter().collect::<Result<Vec<_>, _>>()?;
    AllCores::of(&runs).ok_or(BenchError::NotRun)
}

struct Job {
    slot: Slot,
    label: String,
    capacity: usize,
    task: Task,
    /// What a library's row holds while it is measured (its value of the payload, and what
    /// one decode builds): [`value_estimate`]; 0 for the other jobs.
    weight: usize,
}

/// A row whose library's value is estimated at this or more is heavy: heavy rows are measured
/// side by side only while their estimates together stay within [`HEAVY_BUDGET`] (see [`run`]).
pub const HEAVY_BYTES: usize = 64 << 20;

/// How much of the libraries' values of a large payload the timing jobs hold at once, by
/// [`value_estimate`]. On the 9 MB OTLP batch (19 MB as JSON) most pairs of rows fit, and
/// `compare --quick` takes about 15 s and 770 MiB at most (about 750 MiB with no bound, 19 s
/// with one heavy row at a time); on a payload several times larger, two rows side by side
/// would hold a gigabyte or more each, and they take turns instead.
pub const HEAVY_BUDGET: usize = 640 << 20;

/// The bytes `library` allocates to decode `len` bytes of `format` into its value: the bytes
/// per byte measured by the counting allocator (`alloc_bytes_per_op` of the decode, and of
/// wirelens' encode with its spans where that is more) on the 2,000-span OTLP batch, rounded
/// up. The value of one decode is the most any of a row's jobs holds at a time (the encode job's
/// value is that of the library's own decode).
pub fn value_estimate(library: Library, format: Format, len: usize) -> usize {
    let per_byte = match (library, format) {
        (Library::SerdeJson, _) => 17,
        (Library::SonicRs, _) => 12,
        (Library::RmpSerde | Library::Rmpv, _) => 14,
        (Library::Ciborium, _) => 12,
        (Library::Cbor4ii, _) => 10,
        (Library::ProstReflect, _) => 37,
        (Library::ApacheAvro, _) => 16,
        (Library::Wirelens, Format::Json) => 10,
        (Library::Wirelens, Format::MessagePack) => 17,
        (Library::Wirelens, Format::Cbor) => 19,
        (Library::Wirelens, Format::Protobuf) => 29,
        (Library::Wirelens, Format::Avro) => 19,
    };
    len.saturating_mul(per_byte)
}

/// Profiles every subject per `settings`. Calls `on_event` from worker threads as results come;
/// raising `cancel` stops the run soon after (the report then holds what finished).
pub fn run(
    subjects: &[Subject],
    settings: &Settings,
    cancel: &AtomicBool,
    on_event: &(dyn Fn(Event) + Sync),
) -> Report {
    let parallel = settings.mode != Mode::Precise;
    // The pool prepares too (encodings, compressed sizes, bytes per field), in every mode: in
    // precise mode only the timing jobs take turns.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(settings.threads)
        .build()
        .ok();
    let (mut files, jobs) = prepare_files(subjects, settings, cancel, on_event, pool.as_ref());
    // What preparing freed (decodes, compressors' windows, span trees) goes back before the
    // libraries' values arrive.
    super::alloc::give_back_freed();
    // The rows measured on every core too, after all the rest.
    let threads = settings.bench.all_cores_threads();
    let spread: Vec<usize> = (0..jobs.len())
        .filter(|&i| matches!(&jobs[i].task, Task::Adapter(lazy, _) if lazy.again.is_some()))
        .collect();
    let total = jobs.len() + spread.len();
    // Each job's samples fill `rounds` turns, and its single calls for the tail go on for
    // `tail_rounds - 1` more (a slow operation's samples are its single calls).
    let turns_planned =
        jobs.len() * (settings.bench.rounds.max(1) + settings.bench.tail_rounds.max(1) - 1);
    let on_turn = |seat: usize, taken: usize| {
        if let Some(job) = jobs.get(seat) {
            on_event(Event::Turn {
                done: taken,
                total: turns_planned.max(taken),
                label: job.label.clone(),
            });
        }
    };
    let turns = Turns::with_hook(if parallel { 0 } else { jobs.len() }, &on_turn);
    let runner = Runner {
        settings,
        cancel,
        on_event,
        turns: &turns,
        parallel,
        total,
        done: AtomicUsize::new(0),
        running: AtomicUsize::new(0),
        started: AtomicUsize::new(0),
    };
    let run_one = |(index, job): (usize, &Job)| runner.measure(index, job);
    let mut results: Vec<Outcome> = if parallel {
        in_lanes(&jobs, pool.as_ref(), &run_one)
    } else {
        in_turns(&jobs, &turns, &run_one)
    };
    runner.every_core(&jobs, &spread, &mut results, threads);
    let probe = probes(&results);
    let mut cancelled = false;
    for (slot, result, bytes) in results {
        cancelled |= record(&mut files, slot, result, bytes);
    }
    for file in &mut files {
        finish_file(file, &settings.links);
    }
    Report {
        mode: settings.mode,
        parallel,
        allocations_counted: super::alloc::installed(),
        links: settings.links.clone(),
        files,
        cancelled: cancelled || cancel.load(Ordering::Relaxed),
        probe,
    }
}

/// Prepares every subject on `pool` (encodings, compressed sizes, bytes per field), telling
/// `on_event` of each, until `cancel` is raised: the files' reports and their timing jobs.
fn prepare_files(
    subjects: &[Subject],
    settings: &Settings,
    cancel: &AtomicBool,
    on_event: &(dyn Fn(Event) + Sync),
    pool: Option<&rayon::ThreadPool>,
) -> (Vec<FileReport>, Vec<Job>) {
    let on_pool = |work: &(dyn Fn() -> (FileReport, Vec<Job>) + Sync)| match pool {
        Some(pool) => pool.install(work),
        None => work(),
    };
    let mut files = Vec::new();
    let mut jobs = Vec::new();
    for (i, subject) in subjects.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let (file, file_jobs) = on_pool(&|| prepare_file(i, subject, settings));
        on_event(Event::Prepared {
            file: i,
            report: Box::new(file.clone()),
        });
        files.push(file);
        jobs.extend(file_jobs);
    }
    (files, jobs)
}

/// What every timing job of a run shares: the settings, cancel, where events go, the turns of
/// precise mode, and the counts of jobs started, running and done.
struct Runner<'a> {
    settings: &'a Settings,
    cancel: &'a AtomicBool,
    on_event: &'a (dyn Fn(Event) + Sync),
    /// The ring of seats jobs measure in (precise mode; empty otherwise).
    turns: &'a Turns<'a>,
    /// Whether jobs measure side by side.
    parallel: bool,
    /// Jobs in all, those measured on every core included.
    total: usize,
    /// Jobs finished.
    done: AtomicUsize,
    /// Jobs measuring now.
    running: AtomicUsize,
    /// Jobs started.
    started: AtomicUsize,
}

impl Runner<'_> {
    /// Runs job `index` (skipped when the run is cancelled) and tells of its start and result.
    fn measure(&self, index: usize, job: &Job) -> Outcome {
        // Precise mode: every job has a seat in the ring and measures only in its turns.
        let seat = (!self.parallel).then(|| self.turns.seat(index));
        if self.cancel.load(Ordering::Relaxed) {
            if let Task::Adapter(lazy, _) = &job.task {
                lazy.release();
            }
            return (job.slot, Err(BenchError::Cancelled), None);
        }
        (self.on_event)(Event::Started {
            done: self.done.load(Ordering::SeqCst),
            total: self.total,
            label: job.label.clone(),
        });
        let me = self.started.fetch_add(1, Ordering::SeqCst);
        let before = self.running.fetch_add(1, Ordering::SeqCst);
        let seed = index as u64 + 1;
        let sweep_point;
        let settings = match job.slot {
            Slot::Sweep { .. } => {
                sweep_point = self.settings.bench.for_sweep();
                &sweep_point
            }
            _ => &self.settings.bench,
        };
        let cancel = self.cancel;
        let mut b = match seat {
            Some(seat) => Bencher::interleaved(settings, cancel, job.capacity, seed, seat),
            None => Bencher::new(settings, cancel, job.capacity, seed),
        };
        let bytes = time(&job.task, &mut b);
        let others = self.running.load(Ordering::SeqCst) > 1
            || self.started.load(Ordering::SeqCst) != me + 1;
        self.running.fetch_sub(1, Ordering::SeqCst);
        // Jobs in turns overlap in time but never measure at once.
        let result = b.finish().map(|mut m| {
            m.concurrent = self.parallel && (before > 0 || others);
            m
        });
        let n = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        (self.on_event)(Event::Measured {
            done: n,
            total: self.total,
            label: job.label.clone(),
            slot: job.slot,
            result: Box::new(result.clone()),
            bytes,
        });
        (job.slot, result, bytes)
    }

    /// Measures the `spread` jobs on `threads` threads at once, one job after another with no
    /// other job running, and adds each one's [`AllCores`] to its measurement in `results` (a
    /// job whose own measurement failed is not measured again), telling of each as a job of its
    /// own, counted after the jobs done.
    fn every_core(&self, jobs: &[Job], spread: &[usize], results: &mut [Outcome], threads: usize) {
        let mut n = self.done.load(Ordering::SeqCst);
        for &i in spread {
            let job = &jobs[i];
            let Task::Adapter(lazy, op) = &job.task else {
                continue;
            };
            let Some((slot, result, bytes)) = results.iter_mut().find(|o| o.0 == job.slot) else {
                continue;
            };
            if self.cancel.load(Ordering::Relaxed) {
                return;
            }
            let Ok(m) = result else {
                continue;
            };
            // A failure here leaves the row's own measurement as it was, without the figure.
            let bench = &self.settings.bench;
            m.all_cores = on_every_core(lazy, *op, threads, bench, self.cancel, job.capacity).ok();
            super::alloc::give_back_freed();
            n += 1;
            let label = format!("{} · every core", job.label);
            (self.on_event)(Event::Started {
                done: n - 1,
                total: self.total,
                label: label.clone(),
            });
            (self.on_event)(Event::Measured {
                done: n,
                total: self.total,
                label,
                slot: *slot,
                result: Box::new(result.clone()),
                bytes: *bytes,
            });
        }
    }
}

/// Measures `task` with `b`; for a library's row, returns the size of the library's encoding.
/// A library is prepared outside the timed region, which starts in `encode`/`decode`.
fn time(task: &Task, b: &mut Bencher<'_>) -> Option<usize> {
    match task {
        Task::Adapter(lazy, op) => {
            let mut bytes = None;
            match lazy.adapter() {
                Ok(a) => {
                    bytes = Some(a.bytes().len());
                    let warmed = a.warmed();
                    b.warmed(match op {
                        Op::Encode => warmed.encode,
                        Op::Decode => warmed.decode,
                    });
                    match op {
                        Op::Encode => {
                            a.encode(b);
                            // The decode job reads the bytes only.
                            a.release_value();
                        }
                        Op::Decode => a.decode(b),
                    }
                }
                Err(e) => b.fail(e),
            }
            lazy.release();
            bytes
        }
        Task::Gzip(bytes, Op::Encode, warmed) => {
            b.warmed(*warmed);
            b.iter(|buf| {
                buf.clear();
                let mut e = flate2::write::GzEncoder::new(
                    &mut *buf,
                    flate2::Compression::new(sizes::GZIP_LEVEL),
                );
                e.write_all(bytes).is_ok() && e.finish().is_ok()
            });
            None
        }
        Task::Gzip(gz, Op::Decode, _) => {
            b.iter(|buf| {
                buf.clear();
                flate2::read::GzDecoder::new(&gz[..])
                    .read_to_end(buf)
                    .is_ok()
            });
            None
        }
    }
}

/// Runs the jobs side by side on `pool`. Heavy rows (a library's value of a large payload) are
/// measured by one worker, and by a second one beside it only while their estimated values fit
/// the budget together; the other jobs run on the rest of the pool, whose workers then help
/// with the heavy rows. A row's two jobs run back to back on one worker, which reuses the
/// memory its last row gave back. Without a pool, one job after another.
fn in_lanes(
    jobs: &[Job],
    pool: Option<&rayon::ThreadPool>,
    run_one: &(dyn Fn((usize, &Job)) -> Outcome + Sync),
) -> Vec<Outcome> {
    let heavy = HeavyRows::new(jobs);
    let lanes = || {
        let (mut first, (light, second)) = rayon::join(
            || heavy.run(jobs, run_one),
            || {
                let light: Vec<Outcome> = jobs
                    .par_iter()
                    .enumerate()
                    .filter(|(_, j)| j.weight < HEAVY_BYTES)
                    .map(run_one)
                    .collect();
                (light, heavy.run(jobs, run_one))
            },
        );
        first.extend(light);
        first.extend(second);
        first
    };
    match pool {
        Some(pool) => pool.install(lanes),
        None => jobs.iter().enumerate().map(run_one).collect(),
    }
}

/// The heavy rows of a run, waiting, and the estimated bytes of those being measured.
struct HeavyRows {
    state: Mutex<(VecDeque<Vec<usize>>, usize)>,
    changed: Condvar,
}

impl HeavyRows {
    /// The heavy jobs of `jobs`, a row's jobs (one library, one payload: the same prepared
    /// library) together, in order.
    fn new(jobs: &[Job]) -> HeavyRows {
        let mut rows: VecDeque<Vec<usize>> = VecDeque::new();
        for (i, job) in jobs
            .iter()
            .enumerate()
            .filter(|(_, j)| j.weight >= HEAVY_BYTES)
        {
            let same_row = rows
                .back()
                .and_then(|r| r.last())
                .is_some_and(|&last| same_library(&jobs[last], job));
            match rows.back_mut() {
                Some(row) if same_row => row.push(i),
                _ => rows.push_back(vec![i]),
            }
        }
        HeavyRows {
            state: Mutex::new((rows, 0)),
            changed: Condvar::new(),
        }
    }

    /// Measures heavy rows until none is left: the first waiting row whose estimate fits the
    /// budget beside those being measured (any row when none is), waiting when none fits.
    fn run(
        &self,
        jobs: &[Job],
        run_one: &(dyn Fn((usize, &Job)) -> Outcome + Sync),
    ) -> Vec<Outcome> {
        let mut out = Vec::new();
        loop {
            let (row, weight) = {
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                loop {
                    let (rows, busy) = &mut *state;
                    let weight = |row: &Vec<usize>| row.iter().map(|&i| jobs[i].weight).max();
                    let fits = rows.iter().position(|row| {
                        *busy == 0 || *busy + weight(row).unwrap_or(0) <= HEAVY_BUDGET
                    });
                    match fits {
                        Some(at) => {
                            let row = rows.remove(at).unwrap_or_default();
                            let w = weight(&row).unwrap_or(0);
                            *busy += w;
                            break (row, w);
                        }
                        None if rows.is_empty() => return out,
                        None => {
                            state = self
                                .changed
                                .wait(state)
                                .unwrap_or_else(PoisonError::into_inner);
                        }
                    }
                }
            };
            out.extend(row.into_iter().map(|i| run_one((i, &jobs[i]))));
            super::alloc::give_back_freed();
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.1 -= weight;
            self.changed.notify_all();
        }
    }
}

/// Whether two jobs measure the same prepared library (a row's encode and decode).
fn same_library(a: &Job, b: &Job) -> bool {
    match (&a.task, &b.task) {
        (Task::Adapter(x, _), Task::Adapter(y, _)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

/// Runs every job on a thread of its own; the jobs' seats make them measure one at a time, in
/// turns, so every job starts at once and they all finish in the last round.
fn in_turns(
    jobs: &[Job],
    turns: &Turns,
    run_one: &(dyn Fn((usize, &Job)) -> Outcome + Sync),
) -> Vec<Outcome> {
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .iter()
            .enumerate()
            .map(|(index, job)| {
                let handle = std::thread::Builder::new()
                    .name(format!("wirelens-turn-{index}"))
                    .spawn_scoped(s, move || run_one((index, job)));
                if handle.is_err() {
                    // No thread will take this seat: leave the ring so the others go on.
                    drop(turns.seat(index));
                }
                (job.slot, handle)
            })
            .collect();
        handles
            .into_iter()
            .map(|(slot, handle)| match handle {
                Ok(h) => h.join().unwrap_or_else(|_| {
                    (
                        slot,
                        Err(BenchError::Failed("the measurement panicked".into())),
                        None,
                    )
                }),
                Err(e) => (
                    slot,
                    Err(BenchError::Failed(format!("no thread: {e}"))),
                    None,
                ),
            })
            .collect()
    })
}

/// The probe times of every turn of the run, summarised (`None` when nothing was measured in
/// turns): how much other programs slowed the shared cache while the precise mode measured.
fn probes(results: &[Outcome]) -> Option<super::stats::Summary> {
    let probes: Vec<f64> = results
        .iter()
        .filter_map(|(_, r, _)| r.as_ref().ok())
        .flat_map(|m| m.probes.iter().copied())
        .collect();
    super::stats::summarize(&probes, 0, 0)
}

/// Puts a job's result in its slot: a measurement, or (for a timing row) the reason it is
/// missing, and the size of the library's encoding when the job says it. Returns whether the
/// job was cancelled.
pub(super) fn record(
    files: &mut [FileReport],
    slot: Slot,
    result: Result<Measurement, BenchError>,
    bytes: Option<usize>,
) -> bool {
    if let (Slot::Timing { file, row, .. }, Some(bytes)) = (slot, bytes) {
        if let Some(r) = files.get_mut(file).and_then(|f| f.timings.get_mut(row)) {
            r.bytes = bytes;
        }
    }
    let measurement = match result {
        Ok(m) => Some(m),
        Err(BenchError::Cancelled) => {
            place(files, slot, None);
            return true;
        }
        Err(e) => {
            if let Slot::Timing { file, row, .. } = slot {
                if let Some(r) = files.get_mut(file).and_then(|f| f.timings.get_mut(row)) {
                    r.error.get_or_insert_with(|| e.to_string());
                }
            }
            None
        }
    };
    place(files, slot, measurement);
    false
}

fn place(files: &mut [FileReport], slot: Slot, m: Option<Measurement>) {
    match slot {
        Slot::Timing { file, row, op } => {
            if let Some(r) = files.get_mut(file).and_then(|f| f.timings.get_mut(row)) {
                *match op {
                    Op::Encode => &mut r.encode,
                    Op::Decode => &mut r.decode,
                } = m;
            }
        }
        Slot::Gzip { file, format, op } => {
            if let Some(f) = files.get_mut(file).and_then(|f| f.formats.get_mut(format)) {
                *match op {
                    Op::Encode => &mut f.gzip_compress,
                    Op::Decode => &mut f.gzip_decompress,
                } = m;
            }
        }
        Slot::Sweep { file, point, op } => {
            if let Some(p) = files
                .get_mut(file)
                .and_then(|f| f.sweep.as_mut())
                .and_then(|s| s.points.get_mut(point))
            {
                *match op {
                    Op::Encode => &mut p.encode,
                    Op::Decode => &mut p.decode,
                } = m;
            }
        }
    }
}

/// Fills what derives from the measurements: the sweep's full-size points (which reuse the
/// whole payload's timings) and the transfer estimates. Safe to call again as results arrive.
pub(super) fn finish_file(file: &mut FileReport, links: &[Link]) {
    if let Some(sweep) = &mut file.sweep {
        for p in &mut sweep.points {
            if p.records != sweep.records.count || p.error.is_some() {
                continue;
            }
            if let Some(row) = file
                .timings
                .iter()
                .find(|r| r.format == p.format && r.library == p.library)
            {
                // Again as a row's measurement changes (its every-core figure comes last).
                if row.encode.is_some() {
                    p.encode = row.encode.clone();
                }
                if row.decode.is_some() {
                    p.decode = row.decode.clone();
                }
            }
        }
    }
    file.transfer = file.transfer_estimates(links);
}

/// `value` ready for `format`: for protobuf, the message type (given, or inferred with the value
/// wrapped as the inferred type expects).
fn for_format<'a>(
    value: &'a Value,
    format: Format,
    given: Option<&MessageDescriptor>,
) -> Result<(Cow<'a, Value>, Option<MessageDescriptor>, SchemaSource), String> {
    // The profiler writes Avro by the schema inferred from the value (the libraries all take it).
    if format == Format::Avro {
        return Ok((Cow::Borrowed(value), None, SchemaSource::Inferred));
    }
    if format != Format::Protobuf {
        return Ok((Cow::Borrowed(value), None, SchemaSource::None));
    }
    if let Some(m) = given {
        return Ok((Cow::Borrowed(value), Some(m.clone()), SchemaSource::Given));
    }
    let inferred = infer(value, &InferOptions::default()).map_err(|e| e.to_string())?;
    Ok((
        wrap_for_inferred(value),
        Some(inferred.message),
        SchemaSource::Inferred,
    ))
}

fn encode_for(
    value: &Value,
    format: Format,
    message: Option<&MessageDescriptor>,
) -> Result<Encoded, String> {
    let options = EncodeOptions {
        message: message.cloned(),
        ..EncodeOptions::default()
    };
    codec::encode(value, format, &options).map_err(|e| e.to_string())
}

/// [`encode_for`]'s bytes, without recording spans (for sizes alone).
fn encode_fast_for(
    value: &Value,
    format: Format,
    message: Option<&MessageDescriptor>,
) -> Result<Vec<u8>, String> {
    let options = EncodeOptions {
        message: message.cloned(),
        ..EncodeOptions::default()
    };
    codec::encode_fast(value, format, &options)
        .map(|e| e.bytes)
        .map_err(|e| e.to_string())
}

/// The payload the runtime harnesses time ([`super::runtimes`]): wirelens' default encoding of
/// `subject` in every format it can be written in, and for protobuf the descriptor set of the
/// message type used (given, or inferred as for the Rust rows).
pub fn runtime_payload(subject: &Subject) -> super::runtimes::Payload {
    super::runtimes::Payload {
        compressors: true,
        ..payload_of(&subject.value, subject.message.as_ref())
    }
}

/// Each slice of `sweep` below the whole payload ([`Sweep::slice_counts`]) as the harnesses
/// read it: its record count and the slice in every format.
pub fn runtime_sweep_payloads(
    subject: &Subject,
    sweep: &Sweep,
) -> Vec<(usize, super::runtimes::Payload)> {
    sweep
        .slice_counts()
        .into_iter()
        .map(|n| {
            let slice = sweep::slice_records(&subject.value, &sweep.records, n);
            (n, payload_of(&slice, subject.message.as_ref()))
        })
        .collect()
}

/// Runs `runtime`'s harness (interpreter `program`) on each of `slices` in turn (see
/// [`runtime_sweep_payloads`]), telling `on_progress` which slice runs and what it did; stops
/// when `cancel` is raised. A slice whose harness failed has its report's error, like any run.
pub fn measure_runtime_sweep(
    runtime: super::runtimes::Runtime,
    program: &str,
    slices: &[(usize, super::runtimes::Payload)],
    bench: &BenchConfig,
    timeout: std::time::Duration,
    cancel: &AtomicBool,
    on_progress: &(dyn Fn(&str) + Sync),
) -> Vec<sweep::RuntimeSweepPoint> {
    let bench = &bench.for_sweep();
    let mut out = Vec::new();
    for (records, payload) in slices {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let what = format!("scaling, {records} records");
        on_progress(&what);
        let report = super::runtimes::measure_with(
            runtime,
            program,
            payload,
            bench,
            timeout,
            cancel,
            &|step| on_progress(&format!("{what}: {step}")),
        );
        out.push(sweep::RuntimeSweepPoint {
            records: *records,
            report,
        });
    }
    out
}

/// The payload `value` in every format (protobuf with `message`, else an inferred type; Avro
/// with the schema inferred from the value, whose text goes with it), as the harnesses read it.
fn payload_of(value: &Value, message: Option<&MessageDescriptor>) -> super::runtimes::Payload {
    let mut payload = super::runtimes::Payload::default();
    for format in Format::ALL {
        let Ok((value, message, _)) = for_format(value, format, message) else {
            continue;
        };
        let avro = match format {
            Format::Avro => match codec::avro::schema_for(&value, &EncodeOptions::default()) {
                Ok(schema) => Some(schema),
                Err(_) => continue,
            },
            _ => None,
        };
        let options = EncodeOptions {
            message: message.clone(),
            avro: avro.clone(),
            ..EncodeOptions::default()
        };
        let Ok(encoded) = codec::encode(&value, format, &options) else {
            continue;
        };
        if let Some(m) = &message {
            payload.descriptor_set = Some(m.parent_pool().encode_to_vec());
            payload.message = Some(m.full_name().to_string());
        }
        if let Some(schema) = &avro {
            payload.avro_schema = Some(schema.text().to_string());
        }
        payload.files.push((format, encoded.bytes));
    }
    payload
}

/// Times every subject in each of `runtimes` ([`super::runtimes::measure`]) and puts the results
/// in `report` (whose files are the subjects', in order). The harnesses run one after another,
/// after the Rust jobs, so they do not share the cores with them. `on_start` is told each
/// harness before it runs.
pub fn run_runtimes(
    subjects: &[Subject],
    report: &mut Report,
    runtimes: &[super::runtimes::Runtime],
    bench: &BenchConfig,
    timeout: std::time::Duration,
    cancel: &AtomicBool,
    on_start: &(dyn Fn(&str) + Sync),
) {
    for (subject, file) in subjects.iter().zip(&mut report.files) {
        let payload = runtime_payload(subject);
        let slices = file
            .sweep
            .as_ref()
            .map(|s| runtime_sweep_payloads(subject, s))
            .unwrap_or_default();
        for &runtime in runtimes {
            if cancel.load(Ordering::Relaxed) {
                report.cancelled = true;
                return;
            }
            let what = format!("{} · {} harness", subject.name, runtime.title());
            on_start(&what);
            let whole = super::runtimes::measure(runtime, &payload, bench, timeout, cancel);
            // A runtime that failed on the whole payload is not asked again for each slice.
            let failed = whole.error.is_some() && whole.rows.is_empty();
            file.runtimes.push(whole);
            if let (Some(sweep), false) = (file.sweep.as_mut(), failed) {
                let points = measure_runtime_sweep(
                    runtime,
                    &runtime.default_program(),
                    &slices,
                    bench,
                    timeout,
                    cancel,
                    &|step| on_start(&format!("{what} · {step}")),
                );
                sweep.runtimes.extend(points);
            }
        }
    }
}

fn label(file: &str, format: Format, library: Library, op: &str) -> String {
    format!("{file} · {} · {} · {op}", format.title(), library.name())
}

/// One format of a payload, ready for its rows: the value as the format takes it, the message
/// type, wirelens' encoding and its gzip.
struct Prepared {
    value: Arc<Value>,
    message: Option<MessageDescriptor>,
    schema: SchemaSource,
    bytes: Arc<Vec<u8>>,
    gzip: Vec<u8>,
    gzip_seconds: f64,
}

/// A format's report, its encoding's size and what its rows need; or why it cannot be written.
type FormatOutcome = Result<(FormatReport, usize, Prepared), String>;

/// `format`'s part of the report (sizes, variants, bytes per field) and what its rows need, or
/// why the value cannot be written in it. Runs on the pool: the compressors, the bytes per field
/// and the variants side by side.
fn prepare_format(subject: &Subject, format: Format) -> FormatOutcome {
    let (value, message, schema) = for_format(&subject.value, format, subject.message.as_ref())?;
    let value = match value {
        Cow::Borrowed(_) => Arc::clone(&subject.value),
        Cow::Owned(v) => Arc::new(v),
    };
    let encoded = encode_for(&value, format, message.as_ref())?;
    let bytes = Arc::new(encoded.bytes);
    let (gzipped, fields) = rayon::join(
        || sizes::compressed_sizes_and_gzip(&bytes),
        || field_costs(format, bytes.len(), &encoded.spans),
    );
    drop(encoded.spans);
    let sizes = gzipped.sizes;
    let variants = sizes::variant_sizes(&value, format, &bytes, sizes);
    let gzip = gzipped.gzip.unwrap_or_default();
    let report = FormatReport {
        sizes: FormatSizes {
            format,
            sizes,
            // Set once the JSON encoding's size is known.
            ratio_to_json: f64::NAN,
            schema,
            notes: encoded.notes.iter().map(|n| n.count).sum(),
            note_texts: encoded
                .notes
                .iter()
                .take(5)
                .map(|n| n.to_string())
                .collect(),
        },
        variants,
        fields,
        gzip_compress: None,
        gzip_decompress: None,
    };
    let len = bytes.len();
    Ok((
        report,
        len,
        Prepared {
            value,
            message,
            schema,
            bytes,
            gzip,
            gzip_seconds: gzipped.gzip_seconds,
        },
    ))
}

/// Prepares one subject: every format's part of the report on the pool, then a file's timing
/// rows and their jobs (gzip and every library of each format that could be written).
fn prepare_file(index: usize, subject: &Subject, settings: &Settings) -> (FileReport, Vec<Job>) {
    let name = &subject.name;
    let prepared: Vec<(Format, FormatOutcome)> = Format::ALL
        .par_iter()
        .map(|&format| (format, prepare_format(subject, format)))
        .collect();
    let json_bytes = prepared
        .iter()
        .find(|(f, _)| *f == Format::Json)
        .and_then(|(_, p)| p.as_ref().ok())
        .map_or(0, |(_, len, _)| *len);
    let mut formats = Vec::new();
    let mut rows = FileRows {
        index,
        name,
        settings,
        timings: Vec::new(),
        jobs: Vec::new(),
    };
    let mut whole = Vec::new();
    for (format, outcome) in prepared {
        let (mut report, len, mut p) = match outcome {
            Ok(p) => p,
            Err(e) => {
                rows.not_encoded(subject, format, &e);
                continue;
            }
        };
        report.sizes.ratio_to_json = if json_bytes == 0 {
            f64::NAN
        } else {
            len as f64 / json_bytes as f64
        };
        whole.push((format, len, report.sizes.sizes.gzip));
        let format_index = formats.len();
        formats.push(report);
        rows.gzip(format, format_index, len, &mut p);
        rows.libraries(format, len, &p);
    }
    let FileRows {
        timings, mut jobs, ..
    } = rows;
    let sweep = prepare_sweep(index, subject, settings, &whole, &mut jobs);
    (
        FileReport {
            name: name.clone(),
            json_bytes,
            formats,
            timings,
            sweep,
            transfer: Vec::new(),
            runtimes: Vec::new(),
        },
        jobs,
    )
}

/// One file's timing rows and jobs, as [`prepare_file`] adds them format by format.
struct FileRows<'a> {
    /// The file's index in the run.
    index: usize,
    /// The file's name, in the jobs' labels.
    name: &'a str,
    settings: &'a Settings,
    /// The rows of the timings table.
    timings: Vec<TimingRow>,
    /// The jobs that fill them.
    jobs: Vec<Job>,
}

impl FileRows<'_> {
    /// The rows of a format the value cannot be written in: each library's, saying why.
    fn not_encoded(&mut self, subject: &Subject, format: Format, e: &str) {
        let schema = if format == Format::Protobuf && subject.message.is_some() {
            SchemaSource::Given
        } else if matches!(format, Format::Protobuf | Format::Avro) {
            SchemaSource::Inferred
        } else {
            SchemaSource::None
        };
        for &library in Library::for_format(format) {
            self.timings.push(TimingRow {
                format,
                library,
                schema,
                bytes: 0,
                encode: None,
                decode: None,
                error: Some(format!("cannot encode as {}: {e}", format.title())),
            });
        }
    }

    /// The gzip compress and decompress jobs of `format`'s encoding (its gzipped bytes are
    /// taken from `p`).
    fn gzip(&mut self, format: Format, format_index: usize, len: usize, p: &mut Prepared) {
        let gzip = std::mem::take(&mut p.gzip);
        for (op, task) in [
            (
                Op::Encode,
                Task::Gzip(Arc::clone(&p.bytes), Op::Encode, Some(p.gzip_seconds)),
            ),
            (Op::Decode, Task::Gzip(Arc::new(gzip), Op::Decode, None)),
        ] {
            self.jobs.push(Job {
                slot: Slot::Gzip {
                    file: self.index,
                    format: format_index,
                    op,
                },
                label: format!(
                    "{} · {} · gzip · {}",
                    self.name,
                    format.title(),
                    if op == Op::Encode {
                        "compress"
                    } else {
                        "decompress"
                    }
                ),
                capacity: len + 1024,
                task,
                weight: 0,
            });
        }
    }

    /// A row per library of `format`, with its encode and decode jobs sharing one lazily
    /// prepared library.
    fn libraries(&mut self, format: Format, len: usize, p: &Prepared) {
        for &library in Library::for_format(format) {
            let row = self.timings.len();
            // The row's bytes are the library's own encoding's, known once its job prepares it.
            self.timings.push(TimingRow {
                format,
                library,
                schema: p.schema,
                bytes: 0,
                encode: None,
                decode: None,
                error: None,
            });
            let inputs = Inputs {
                library,
                format,
                value: Arc::clone(&p.value),
                bytes: Arc::clone(&p.bytes),
                message: p.message.clone(),
            };
            // Measured on every core too when a copy per core fits the budget.
            let threads = self.settings.bench.all_cores_threads();
            let copies = value_estimate(library, format, len).saturating_mul(threads);
            let lazy = Arc::new(if threads > 0 && copies <= ALL_CORES_BUDGET {
                Lazy::kept(inputs, 2)
            } else {
                Lazy::new(inputs, 2)
            });
            for op in [Op::Encode, Op::Decode] {
                self.jobs.push(Job {
                    slot: Slot::Timing {
                        file: self.index,
                        row,
                        op,
                    },
                    label: label(self.name, format, library, op.name()),
                    capacity: len * 2 + 1024,
                    task: Task::Adapter(Arc::clone(&lazy), op),
                    weight: value_estimate(library, format, len),
                });
            }
        }
    }
}

/// The sweep's points and their jobs. `whole` holds each format's size and gzipped size of the
/// whole payload (already measured), which the point of every record reuses.
fn prepare_sweep(
    index: usize,
    subject: &Subject,
    settings: &Settings,
    whole: &[(Format, usize, Option<usize>)],
    jobs: &mut Vec<Job>,
) -> Option<Sweep> {
    if settings.sweep_counts.is_empty() {
        return None;
    }
    let records = sweep::find_records(&subject.value)?;
    if records.count == 0 {
        return None;
    }
    let mut points = Vec::new();
    for n in sweep::sweep_counts(&settings.sweep_counts, records.count, settings.sweep_all) {
        let full = n == records.count;
        let slice = (!full).then(|| Arc::new(sweep::slice_records(&subject.value, &records, n)));
        let prepared: Vec<_> = Format::ALL
            .par_iter()
            .map(|&format| {
                let library = Library::reference(format);
                let mut point = SweepPoint {
                    records: n,
                    format,
                    library,
                    bytes: 0,
                    gzip: None,
                    encode: None,
                    decode: None,
                    error: None,
                };
                let Some(slice) = &slice else {
                    // The whole payload: its sizes are the formats' and its timings the main
                    // rows' (copied at the end).
                    match whole.iter().find(|(f, ..)| *f == format) {
                        Some(&(_, bytes, gzip)) => {
                            point.bytes = bytes;
                            point.gzip = gzip;
                        }
                        None => point.error = Some(format!("cannot encode as {}", format.title())),
                    }
                    return (point, None);
                };
                let prepared = for_format(slice, format, subject.message.as_ref()).and_then(
                    |(value, message, _)| {
                        let bytes = encode_fast_for(&value, format, message.as_ref())?;
                        let value = match value {
                            Cow::Borrowed(_) => Arc::clone(slice),
                            Cow::Owned(v) => Arc::new(v),
                        };
                        Ok((value, message, bytes))
                    },
                );
                match prepared {
                    Err(e) => {
                        point.error = Some(e);
                        (point, None)
                    }
                    Ok((value, message, bytes)) => {
                        point.bytes = bytes.len();
                        point.gzip = sizes::gzip_size(&bytes).ok();
                        let inputs = Inputs {
                            library,
                            format,
                            value,
                            bytes: Arc::new(bytes),
                            message,
                        };
                        (point, Some(inputs))
                    }
                }
            })
            .collect();
        for (point, inputs) in prepared {
            if let Some(inputs) = inputs {
                let len = inputs.bytes.len();
                let format = inputs.format;
                let weight = value_estimate(inputs.library, format, len);
                let lazy = Arc::new(Lazy::new(inputs, 2));
                for op in [Op::Encode, Op::Decode] {
                    jobs.push(Job {
                        slot: Slot::Sweep {
                            file: index,
                            point: points.len(),
                            op,
                        },
                        label: format!(
                            "{} · {n} records · {} · {}",
                            subject.name,
                            format.title(),
                            op.name()
                        ),
                        capacity: len * 2 + 1024,
                        task: Task::Adapter(Arc::clone(&lazy), op),
                        weight,
                    });
                }
            }
            points.push(point);
        }
    }
    Some(Sweep {
        records,
        points,
        runtimes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A row of `weight` (two jobs sharing one prepared library).
    fn row(weight: usize, jobs: &mut Vec<Job>) {
        let lazy = Arc::new(Lazy::new(
            Inputs {
                library: Library::Wirelens,
                format: Format::Json,
                value: Arc::new(Value::int(1)),
                bytes: Arc::new(b"1".to_vec()),
                message: None,
            },
            2,
        ));
        for op in [Op::Encode, Op::Decode] {
            jobs.push(Job {
                slot: Slot::Timing {
                    file: 0,
                    row: jobs.len() / 2,
                    op,
                },
                label: format!("row {}", jobs.len() / 2),
                capacity: 0,
                task: Task::Adapter(Arc::clone(&lazy), op),
                weight,
            });
        }
    }

    /// Two workers take the heavy rows: each row's jobs back to back on one worker, every job
    /// once, and rows side by side only while their weights fit the budget together.
    #[test]
    fn heavy_rows_share_the_budget_and_keep_their_jobs_together() {
        let mut jobs = Vec::new();
        let weights = [
            HEAVY_BUDGET / 2,
            HEAVY_BUDGET / 2,
            HEAVY_BUDGET,
            HEAVY_BYTES,
            HEAVY_BUDGET * 2,
            HEAVY_BUDGET / 3,
            HEAVY_BUDGET / 3,
            HEAVY_BUDGET / 3,
        ];
        for w in weights {
            row(w, &mut jobs);
        }
        // A light job is not the heavy rows' to run.
        jobs.push(Job {
            slot: Slot::Gzip {
                file: 0,
                format: 0,
                op: Op::Encode,
            },
            label: "gzip".into(),
            capacity: 0,
            task: Task::Gzip(Arc::new(Vec::new()), Op::Encode, None),
            weight: 0,
        });
        let heavy = HeavyRows::new(&jobs);
        let busy = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let over = AtomicUsize::new(0);
        let run_one = |(i, job): (usize, &Job)| -> Outcome {
            // A row's weight is counted once, by its first job.
            let first = i % 2 == 0;
            if first {
                let now = busy.fetch_add(job.weight, Ordering::SeqCst) + job.weight;
                most.fetch_max(now, Ordering::SeqCst);
                if now > HEAVY_BUDGET && now != job.weight {
                    over.fetch_add(1, Ordering::SeqCst);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
            if !first {
                busy.fetch_sub(job.weight, Ordering::SeqCst);
            }
            (job.slot, Err(BenchError::NotRun), Some(i))
        };
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| heavy.run(&jobs, &run_one));
            let b = s.spawn(|| heavy.run(&jobs, &run_one));
            (a.join().expect("worker"), b.join().expect("worker"))
        });
        for ran in [&a, &b] {
            let order: Vec<usize> = ran.iter().filter_map(|o| o.2).collect();
            for pair in order.chunks(2) {
                assert_eq!(pair, [pair[0], pair[0] + 1], "a row's jobs back to back");
            }
        }
        let mut all: Vec<usize> = a.iter().chain(&b).filter_map(|o| o.2).collect();
        all.sort_unstable();
        assert_eq!(all, (0..weights.len() * 2).collect::<Vec<_>>());
        assert_eq!(
            over.load(Ordering::SeqCst),
            0,
            "rows beside others over the budget"
        );
        assert!(
            most.load(Ordering::SeqCst) >= HEAVY_BUDGET * 2,
            "a row over the budget still runs alone"
        );
    }

    #[test]
    fn value_estimates_make_a_large_payloads_rows_heavy() {
        let mb = 1 << 20;
        assert!(value_estimate(Library::SerdeJson, Format::Json, 19 * mb) >= HEAVY_BYTES);
        assert!(value_estimate(Library::ProstReflect, Format::Protobuf, 2 * mb) >= HEAVY_BYTES);
        assert!(value_estimate(Library::Cbor4ii, Format::Cbor, mb) < HEAVY_BYTES);
    }
}
