//! Timing one operation the way criterion does, sized for an interactive tool.
//!
//! A [`Bencher`] runs a routine in three phases:
//! 1. **Warm-up**: the routine runs until [`BenchConfig::warm_up`] has passed (at least once),
//!    which fills caches and gives an estimate of the time per call.
//! 2. **Batch size**: enough calls that one sample lasts at least [`BenchConfig::sample_time`]
//!    (1 ms by default), so the clock's resolution and overhead vanish in the sample.
//! 3. **Sampling**: at least [`BenchConfig::min_samples`] samples (30 by default), more when
//!    [`BenchConfig::measurement_time`] allows; an operation slower than
//!    [`BenchConfig::slow_threshold`] (100 ms) gets [`BenchConfig::slow_samples`] samples of one
//!    call each (flat sampling) so a large file does not take minutes; with a
//!    [`BenchConfig::slow_budget`] (the quick mode's), fewer of them, never fewer than one, so
//!    the time spent on an operation is bounded by the budget rather than growing with the
//!    payload.
//!
//! Each sample's time is divided by its batch size; [`super::stats::summarize`] turns the samples
//! into the reported statistics. Inputs are prepared by the caller outside the timed region; the
//! routine gets a preallocated output buffer (`&mut Vec<u8>`, through `black_box`), its results go
//! through `black_box` into a vector reserved before the clock starts and are dropped after it
//! stops. Allocations are counted on the current thread over the timed calls only (see
//! [`super::alloc`]).
//!
//! A slow operation that its caller has just run on the same input (a library's preparation
//! decodes the payload and encodes it once) is not warmed up again when
//! [`BenchConfig::prepared_warms`] is set (the quick mode): that call was its warm-up and its
//! time the estimate ([`Bencher::warmed`]). [`Bencher::iter_checked`] checks the first output
//! of a routine and reports a failure instead of timing it.
//!
//! Between samples the cancel flag is checked; a cancelled measurement returns
//! [`BenchError::Cancelled`].

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::alloc;
use super::stats::{percentile, summarize, Summary};
use super::turns::{probe, Seat};

/// How long and how often to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchConfig {
    /// Warm-up time before sampling.
    pub warm_up: Duration,
    /// The least time one sample should last; the batch size follows from it.
    pub sample_time: Duration,
    /// The fewest samples for an operation faster than `slow_threshold`.
    pub min_samples: usize,
    /// The most samples.
    pub max_samples: usize,
    /// Sampling time aimed at (more samples when the operation is fast, never fewer than
    /// `min_samples`).
    pub measurement_time: Duration,
    /// An operation at least this slow is sampled flat, one call per sample.
    pub slow_threshold: Duration,
    /// Samples for such a slow operation.
    pub slow_samples: usize,
    /// The most time the samples of a slow operation should take: `None` takes all
    /// `slow_samples`; `Some(budget)` takes as many as fit in it, at least one (see
    /// [`plan_samples`]).
    pub slow_budget: Option<Duration>,
    /// Whether a slow operation the caller has just run ([`Bencher::warmed`]) skips the
    /// warm-up.
    pub prepared_warms: bool,
    /// Bootstrap resamples for the confidence interval.
    pub resamples: usize,
    /// In interleaved measuring (a [`Seat`] given), the turns the samples are spread over.
    pub rounds: usize,
    /// In interleaved measuring, the turns the single calls for the tail are spread over (after
    /// the samples' turns; the first of them is the samples' last).
    pub tail_rounds: usize,
    /// Time given to timing calls one by one for the tail latency ([`Latency`]), after the
    /// samples; an operation slower than `slow_threshold` uses its samples instead.
    pub latency_time: Duration,
    /// The most calls timed one by one.
    pub latency_calls: usize,
    /// Time every core spends calling the routine at once, each thread with its own copy of
    /// the input ([`AllCores`]), after every job's own measurement; zero measures none.
    pub all_cores_time: Duration,
}

impl BenchConfig {
    /// The threads an every-core measurement runs: one per core, and none (no such
    /// measurement) on one core or without [`BenchConfig::all_cores_time`].
    pub fn all_cores_threads(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        if cores < 2 || self.all_cores_time.is_zero() {
            0
        } else {
            cores
        }
    }

    /// The default: 200 ms warm-up, ≥ 1 ms samples, 30–100 samples over ~0.5 s.
    pub fn standard() -> BenchConfig {
        BenchConfig {
            warm_up: Duration::from_millis(200),
            sample_time: Duration::from_millis(1),
            min_samples: 30,
            max_samples: 100,
            measurement_time: Duration::from_millis(500),
            slow_threshold: Duration::from_millis(100),
            slow_samples: 10,
            slow_budget: None,
            prepared_warms: false,
            resamples: 10_000,
            rounds: 10,
            tail_rounds: 10,
            latency_time: Duration::from_millis(250),
            latency_calls: 100_000,
            all_cores_time: Duration::from_millis(300),
        }
    }

    /// Precise: the standard sampling, with the tail latency timed for two seconds (up to
    /// 200,000 calls) in forty turns, so that a p99 rests on thousands of calls spread over the
    /// whole run rather than on a quarter second's stretch of it.
    pub fn precise() -> BenchConfig {
        BenchConfig {
            tail_rounds: 40,
            latency_time: Duration::from_secs(2),
            latency_calls: 200_000,
            ..BenchConfig::standard()
        }
    }

    /// The config of a scaling sweep's point: this one, with the tail timed no longer than the
    /// standard run does (a sweep shows medians; a precise tail for every point would double
    /// the run).
    pub fn for_sweep(&self) -> BenchConfig {
        BenchConfig {
            latency_time: self.latency_time.min(BenchConfig::standard().latency_time),
            ..self.clone()
        }
    }

    /// A quick look (and what tests use): 10 ms warm-up, 8 samples, up to 3 for slow operations
    /// within half a second of sampling (one sample of an operation slower than a quarter
    /// second), no second warm-up of a slow operation just prepared.
    pub fn quick() -> BenchConfig {
        BenchConfig {
            warm_up: Duration::from_millis(10),
            sample_time: Duration::from_millis(1),
            min_samples: 8,
            max_samples: 8,
            measurement_time: Duration::from_millis(20),
            slow_threshold: Duration::from_millis(50),
            slow_samples: 3,
            slow_budget: Some(Duration::from_millis(500)),
            prepared_warms: true,
            resamples: 1_000,
            rounds: 2,
            tail_rounds: 2,
            latency_time: Duration::from_millis(20),
            latency_calls: 10_000,
            all_cores_time: Duration::from_millis(50),
        }
    }
}

/// One operation's timing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// Nanoseconds per operation.
    pub ns: Summary,
    /// Calls per sample.
    pub batch: u64,
    /// Timed calls in all.
    pub iterations: u64,
    /// Allocations per operation; `None` when the counting allocator is not installed.
    pub allocs_per_op: Option<f64>,
    /// Bytes allocated per operation; `None` when not counted.
    pub alloc_bytes_per_op: Option<f64>,
    /// Whether other measurements ran at the same time (the parallel mode); such numbers are
    /// noisier and usually slower.
    pub concurrent: bool,
    /// Interleaved measuring only: the [`probe`] time (ns) of each turn this job measured in,
    /// i.e. how fast the machine ran during it.
    #[serde(skip)]
    pub probes: Vec<f64>,
    /// CPU time of the measuring thread per operation, ns (its thread CPU clock over the timed
    /// samples): beside the wall time, it shows a library that waits or spins. `None` where the
    /// platform has no thread CPU clock, or for another runtime's rows.
    pub cpu_ns_per_op: Option<f64>,
    /// Tail latency from calls timed one by one; `None` when none were timed.
    pub latency: Option<Latency>,
    /// Throughput with every core calling the routine at once; `None` when not measured (one
    /// core, a payload whose copies would not fit, another runtime's row).
    pub all_cores: Option<AllCores>,
}

/// Throughput on every core: `threads` threads, each with its own copy of the input (the
/// library's value, or its bytes), call the routine for the same span of time, started
/// together.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AllCores {
    /// Threads, one per core.
    pub threads: usize,
    /// Calls made by all of them.
    pub calls: u64,
    /// Operations per second of all threads together: the sum of each thread's calls over its
    /// own span.
    pub ops_per_s: f64,
    /// The threads' CPU time per call, ns: near the wall time per call of one thread unless
    /// they wait (for the allocator, memory bandwidth) or spin.
    pub cpu_ns_per_op: Option<f64>,
}

impl AllCores {
    /// How many times one thread's operations per second (from `ns_per_op`, its median) all
    /// threads together make.
    pub fn scaling(&self, ns_per_op: f64) -> Option<f64> {
        (ns_per_op > 0.0).then(|| self.ops_per_s * ns_per_op / 1e9)
    }
}

/// What one thread of an [`AllCores`] measurement did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpreadRun {
    /// Calls made in its span.
    pub calls: u64,
    /// Its span, seconds: from the start all threads share to its last call's end.
    pub seconds: f64,
    /// Its CPU time over that span, ns.
    pub cpu_ns: Option<u128>,
}

impl AllCores {
    /// The threads' runs together; `None` for no calls.
    pub fn of(runs: &[SpreadRun]) -> Option<AllCores> {
        let calls: u64 = runs.iter().map(|r| r.calls).sum();
        if calls == 0 || runs.iter().any(|r| r.seconds <= 0.0) {
            return None;
        }
        let cpu: Option<u128> = runs.iter().map(|r| r.cpu_ns).sum();
        Some(AllCores {
            threads: runs.len(),
            calls,
            ops_per_s: runs.iter().map(|r| r.calls as f64 / r.seconds).sum(),
            cpu_ns_per_op: cpu.map(|c| c as f64 / calls as f64),
        })
    }
}

/// A bencher's part in an [`AllCores`] measurement: the barrier every thread starts from, how
/// long to call, and whether this thread has passed the barrier.
#[derive(Debug, Clone, Copy)]
pub struct Spread<'a> {
    /// Passed once by each thread, when its routine is ready to be called.
    pub start: &'a std::sync::Barrier,
    /// How long each thread calls its routine.
    pub span: Duration,
    /// Set when this thread has passed `start` (a thread that never reached its routine must
    /// pass it still, or the others would wait for it for ever).
    pub passed: &'a AtomicBool,
}

/// Tail latency: percentiles of single calls' wall time, ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latency {
    /// Calls timed one by one.
    pub n: usize,
    /// Median call.
    pub p50: f64,
    /// 99th percentile; `None` with fewer than [`Latency::P99_CALLS`] calls.
    pub p99: Option<f64>,
    /// 99.9th percentile; `None` with fewer than [`Latency::P999_CALLS`] calls.
    pub p999: Option<f64>,
}

impl Latency {
    /// The fewest calls a 99th percentile is quoted from (one call in a hundred above it).
    pub const P99_CALLS: usize = 100;
    /// The fewest calls a 99.9th percentile is quoted from.
    pub const P999_CALLS: usize = 1_000;

    /// The percentiles of `calls` (ns each; NaNs dropped); `None` for none.
    pub fn of(calls: &[f64]) -> Option<Latency> {
        let mut sorted: Vec<f64> = calls.iter().copied().filter(|x| !x.is_nan()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let at = |p: f64, least: usize| (n >= least).then(|| percentile(&sorted, p));
        Some(Latency {
            n,
            p50: percentile(&sorted, 50.0),
            p99: at(99.0, Latency::P99_CALLS),
            p999: at(99.9, Latency::P999_CALLS),
        })
    }
}

/// This thread's CPU time so far, ns; `None` where there is no thread CPU clock.
pub fn thread_cpu_ns() -> Option<u128> {
    #[cfg(unix)]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        let secs = u128::try_from(t.tv_sec).ok()?;
        let nanos = u128::try_from(t.tv_nsec).ok()?;
        Some(secs * 1_000_000_000 + nanos)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// A measurement that did not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// The cancel flag was raised.
    #[error("cancelled")]
    Cancelled,
    /// The routine failed (the message says why).
    #[error("{0}")]
    Failed(String),
    /// The adapter never called [`Bencher::iter`].
    #[error("nothing was measured")]
    NotRun,
}

/// Runs one routine per [`BenchConfig`]; adapters call [`Bencher::iter`] once.
#[derive(Debug)]
pub struct Bencher<'a> {
    config: &'a BenchConfig,
    cancel: &'a AtomicBool,
    buffer: Vec<u8>,
    seed: u64,
    capacity: usize,
    seat: Option<Seat<'a, 'a>>,
    warmed: Option<f64>,
    result: Option<Result<Measurement, BenchError>>,
    spread: Option<(Spread<'a>, Option<Result<SpreadRun, BenchError>>)>,
}

impl<'a> Bencher<'a> {
    /// A bencher whose output buffer has `capacity` bytes reserved; `seed` seeds the bootstrap.
    pub fn new(
        config: &'a BenchConfig,
        cancel: &'a AtomicBool,
        capacity: usize,
        seed: u64,
    ) -> Bencher<'a> {
        Bencher {
            config,
            cancel,
            buffer: Vec::with_capacity(capacity),
            seed,
            capacity,
            seat: None,
            warmed: None,
            result: None,
            spread: None,
        }
    }

    /// A bencher for one thread of an [`AllCores`] measurement: the routine runs once (its
    /// output checked), then, from the moment every thread has passed `spread.start`, as often
    /// as it can for `spread.span`. [`Bencher::finish_spread`] gives what it did.
    pub fn spread(
        config: &'a BenchConfig,
        cancel: &'a AtomicBool,
        capacity: usize,
        spread: Spread<'a>,
    ) -> Bencher<'a> {
        Bencher {
            spread: Some((spread, None)),
            ..Bencher::new(config, cancel, capacity, 0)
        }
    }

    /// What a [`Bencher::spread`] thread did (or why it did nothing).
    pub fn finish_spread(self) -> Result<SpreadRun, BenchError> {
        match self.spread {
            Some((_, Some(result))) => result,
            Some((_, None)) => match self.result {
                Some(Err(e)) => Err(e),
                _ => Err(BenchError::NotRun),
            },
            None => Err(BenchError::NotRun),
        }
    }

    /// A bencher that measures in turns with other jobs (see [`super::turns`]): it takes its
    /// seat's turn to warm up, then spreads its samples over [`BenchConfig::rounds`] turns,
    /// timing a [`probe`] at the start of each. The output buffer is reserved on the first turn
    /// (jobs waiting for their turn hold no memory for it).
    pub fn interleaved(
        config: &'a BenchConfig,
        cancel: &'a AtomicBool,
        capacity: usize,
        seed: u64,
        seat: Seat<'a, 'a>,
    ) -> Bencher<'a> {
        Bencher {
            config,
            cancel,
            buffer: Vec::new(),
            seed,
            capacity,
            seat: Some(seat),
            warmed: None,
            result: None,
            spread: None,
        }
    }

    /// The measurement (or why there is none).
    pub fn finish(self) -> Result<Measurement, BenchError> {
        self.result.unwrap_or(Err(BenchError::NotRun))
    }

    /// What the last call left in the output buffer (an encoder's bytes).
    pub fn output(&self) -> &[u8] {
        &self.buffer
    }

    /// Records that the routine could not even start (preparation failed).
    pub fn fail(&mut self, message: impl Into<String>) {
        self.result = Some(Err(BenchError::Failed(message.into())));
    }

    /// Says the routine about to be measured has just run once, taking `seconds`, on the same
    /// input (outside the timed region: a library's preparation). With
    /// [`BenchConfig::prepared_warms`], a routine that slow skips the warm-up (that call was
    /// it) and is sampled by that estimate; otherwise this changes nothing.
    pub fn warmed(&mut self, seconds: Option<f64>) {
        self.warmed = seconds;
    }

    /// Measures `routine`, which gets the preallocated output buffer (cleared before each call is
    /// the routine's job, so that clearing is timed like a real service would do it).
    pub fn iter<O>(&mut self, routine: impl FnMut(&mut Vec<u8>) -> O) {
        self.iter_checked(|_| Ok(()), routine);
    }

    /// [`Bencher::iter`], with `check` run on the routine's first output (after the clock, if
    /// that call is timed): an error fails the measurement with its message, nothing is timed.
    pub fn iter_checked<O>(
        &mut self,
        check: impl Fn(&O) -> Result<(), String>,
        mut routine: impl FnMut(&mut Vec<u8>) -> O,
    ) {
        if let Some((spread, _)) = self.spread {
            let run = self.call_for_a_span(spread, &check, &mut routine);
            self.spread = Some((spread, Some(run)));
            return;
        }
        if let Some(seat) = &mut self.seat {
            seat.take();
            self.buffer.reserve(self.capacity);
        }
        self.result = Some(self.run(&check, &mut routine));
        if let Some(seat) = &mut self.seat {
            seat.leave();
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// One thread of an [`AllCores`] measurement (see [`Bencher::spread`]). The barrier is
    /// passed whatever happens before it, so that no thread waits for one that failed.
    fn call_for_a_span<O>(
        &mut self,
        spread: Spread<'a>,
        check: &impl Fn(&O) -> Result<(), String>,
        routine: &mut impl FnMut(&mut Vec<u8>) -> O,
    ) -> Result<SpreadRun, BenchError> {
        let first = black_box(routine(black_box(&mut self.buffer)));
        let checked = check(&first);
        drop(first);
        spread.passed.store(true, Ordering::SeqCst);
        spread.start.wait();
        checked.map_err(BenchError::Failed)?;
        let cpu_before = thread_cpu_ns();
        let start = Instant::now();
        let mut calls: u64 = 0;
        loop {
            drop(black_box(routine(black_box(&mut self.buffer))));
            calls += 1;
            if start.elapsed() >= spread.span {
                break;
            }
            if calls % 64 == 0 && self.cancelled() {
                return Err(BenchError::Cancelled);
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        let cpu_ns = cpu_before
            .zip(thread_cpu_ns())
            .map(|(b, a)| a.saturating_sub(b));
        Ok(SpreadRun {
            calls,
            seconds,
            cpu_ns,
        })
    }

    /// Warms `routine` up, in doubling chunks, for [`BenchConfig::warm_up`], checking its
    /// outputs with `checked`; the last (largest) chunk estimates the seconds per call, free of
    /// the first calls' cold caches.
    fn warm_up<O>(
        &mut self,
        checked: &mut impl FnMut(&O) -> Result<(), BenchError>,
        routine: &mut impl FnMut(&mut Vec<u8>) -> O,
    ) -> Result<f64, BenchError> {
        let start = Instant::now();
        let mut chunk: u64 = 1;
        loop {
            let t = Instant::now();
            for _ in 0..chunk {
                let o = black_box(routine(black_box(&mut self.buffer)));
                checked(&o)?;
                drop(o);
            }
            let spent = t.elapsed().as_secs_f64();
            if start.elapsed() >= self.config.warm_up {
                return Ok(spent / chunk as f64);
            }
            if self.cancelled() {
                return Err(BenchError::Cancelled);
            }
            chunk = chunk.saturating_mul(2);
        }
    }

    /// Interleaved measuring: hands the turn on, waits for the next one, (other jobs having run
    /// meanwhile) warms the caches again with `warm` calls, and times the turn's [`probe`].
    fn next_turn<O>(
        &mut self,
        warm: u64,
        routine: &mut impl FnMut(&mut Vec<u8>) -> O,
    ) -> Result<f64, BenchError> {
        if let Some(seat) = &mut self.seat {
            seat.pass();
            seat.take();
        }
        if self.cancelled() {
            return Err(BenchError::Cancelled);
        }
        for _ in 0..warm {
            drop(black_box(routine(black_box(&mut self.buffer))));
        }
        Ok(probe())
    }

    /// The tail latency of a routine taking `per_call` seconds (sampled `batch` calls at a
    /// time): timed call by call for [`BenchConfig::latency_time`] (the clock's own cost, tens
    /// of ns, included), at most [`BenchConfig::latency_calls`] calls. Interleaved, the calls are
    /// spread over [`BenchConfig::tail_rounds`] turns like the samples, so that the tail is the whole
    /// run's and not that of whatever the machine did during one stretch of it; each turn's
    /// probe goes to `probes`.
    fn latency<O>(
        &mut self,
        per_call: f64,
        batch: u64,
        probes: &mut Vec<f64>,
        routine: &mut impl FnMut(&mut Vec<u8>) -> O,
    ) -> Result<Option<Latency>, BenchError> {
        let cfg = self.config;
        if cfg.latency_time.is_zero() {
            return Ok(None);
        }
        let calls = ((cfg.latency_time.as_secs_f64() / per_call.max(1e-9)) as usize)
            .clamp(1, cfg.latency_calls.max(1));
        let per_turn = match self.seat {
            Some(_) => calls.div_ceil(cfg.tail_rounds.clamp(1, calls)),
            None => calls,
        };
        let mut single = Vec::with_capacity(calls);
        for i in 0..calls {
            if i > 0 && i % per_turn == 0 {
                probes.push(self.next_turn(batch, routine)?);
            }
            if i % 1024 == 0 && self.cancelled() {
                return Err(BenchError::Cancelled);
            }
            let t = Instant::now();
            let o = black_box(routine(black_box(&mut self.buffer)));
            single.push(t.elapsed().as_secs_f64() * 1e9);
            drop(o);
        }
        Ok(Latency::of(&single))
    }

    /// Measures `routine` per the config: warm-up (unless its preparation warmed it), samples
    /// (in turns when seated), the tail latency; its first output is checked with `check`.
    fn run<O>(
        &mut self,
        check: &impl Fn(&O) -> Result<(), String>,
        routine: &mut impl FnMut(&mut Vec<u8>) -> O,
    ) -> Result<Measurement, BenchError> {
        let cfg = self.config;
        let mut unchecked = true;
        let mut checked = |o: &O| -> Result<(), BenchError> {
            if std::mem::take(&mut unchecked) {
                check(o).map_err(BenchError::Failed)?;
            }
            Ok(())
        };
        let prepared = self
            .warmed
            .filter(|&s| cfg.prepared_warms && s >= cfg.slow_threshold.as_secs_f64());
        let per_call = match prepared {
            Some(seconds) => seconds,
            None => self.warm_up(&mut checked, routine)?,
        };
        let (batch, samples) = plan_samples(cfg, per_call);
        let slow = per_call >= cfg.slow_threshold.as_secs_f64();
        let mut times = Vec::with_capacity(samples);
        let mut probes = Vec::new();
        let mut allocs = alloc::snapshot().map(|_| alloc::AllocCount::default());
        let batch_len = usize::try_from(batch).unwrap_or(usize::MAX);
        let mut cpu: Option<u128> = thread_cpu_ns().map(|_| 0);
        // Interleaved: the samples go in `rounds` turns of about equal size.
        let per_turn = match self.seat {
            Some(_) => samples.div_ceil(cfg.rounds.clamp(1, samples)),
            None => samples,
        };
        for i in 0..samples {
            if self.cancelled() {
                return Err(BenchError::Cancelled);
            }
            if self.seat.is_some() && i % per_turn == 0 {
                probes.push(if i > 0 {
                    // Other jobs ran since the last turn: warm the caches again (one batch,
                    // about a millisecond; slow operations are not worth it).
                    self.next_turn(if slow { 0 } else { batch }, routine)?
                } else {
                    probe()
                });
            }
            let mut outputs: Vec<O> = Vec::with_capacity(batch_len);
            let before = alloc::snapshot();
            let cpu_before = thread_cpu_ns();
            let t = Instant::now();
            for _ in 0..batch {
                outputs.push(black_box(routine(black_box(&mut self.buffer))));
            }
            let elapsed = t.elapsed();
            if let (Some(total), Some(b), Some(a)) = (cpu.as_mut(), cpu_before, thread_cpu_ns()) {
                *total += a.saturating_sub(b);
            }
            let after = alloc::snapshot();
            if let Some(first) = outputs.first() {
                checked(first)?;
            }
            if let (Some(total), Some(b), Some(a)) = (allocs.as_mut(), before, after) {
                let d = a.since(b);
                total.count += d.count;
                total.bytes += d.bytes;
            }
            drop(outputs);
            times.push(elapsed.as_secs_f64() * 1e9 / batch as f64);
        }
        let iterations = batch * samples as u64;
        let ns = summarize(&times, cfg.resamples, self.seed).ok_or(BenchError::NotRun)?;
        // Tail latency: a slow operation's samples are single calls already; a faster one is
        // timed call by call (also one sampled a call at a time: its samples are too few).
        let latency = if slow {
            Latency::of(&times)
        } else {
            self.latency(per_call, batch, &mut probes, routine)?
        };
        Ok(Measurement {
            ns,
            batch,
            iterations,
            allocs_per_op: allocs.map(|a| a.count as f64 / iterations as f64),
            alloc_bytes_per_op: allocs.map(|a| a.bytes as f64 / iterations as f64),
            concurrent: false,
            probes,
            cpu_ns_per_op: cpu.map(|c| c as f64 / iterations as f64),
            latency,
            all_cores: None,
        })
    }
}

/// How a routine taking `per_call` seconds (the warm-up's estimate) is sampled under `cfg`:
/// calls per sample and samples. A slow routine gets one call per sample and
/// [`BenchConfig::slow_samples`] samples, or as many as fit in [`BenchConfig::slow_budget`] (at
/// least one); a fast one, batches of at least [`BenchConfig::sample_time`] and between
/// `min_samples` and `max_samples` of them, as many as fit in `measurement_time`.
pub fn plan_samples(cfg: &BenchConfig, per_call: f64) -> (u64, usize) {
    if per_call >= cfg.slow_threshold.as_secs_f64() {
        let mut samples = cfg.slow_samples.max(1);
        if let Some(budget) = cfg.slow_budget {
            let fit = (budget.as_secs_f64() / per_call.max(1e-9)) as usize;
            samples = samples.min(fit.max(1));
        }
        return (1, samples);
    }
    let batch = (cfg.sample_time.as_secs_f64() / per_call.max(1e-9))
        .ceil()
        .max(1.0) as u64;
    let sample_secs = batch as f64 * per_call;
    let fit = (cfg.measurement_time.as_secs_f64() / sample_secs.max(1e-9)) as usize;
    (
        batch,
        fit.clamp(
            cfg.min_samples.max(1),
            cfg.max_samples.max(cfg.min_samples).max(1),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::turns::Turns;
    use std::sync::Mutex;

    #[test]
    fn tail_percentiles_wait_for_enough_calls() {
        let calls: Vec<f64> = (1..=99).map(f64::from).collect();
        let l = Latency::of(&calls).expect("calls");
        assert_eq!((l.n, l.p50, l.p99, l.p999), (99, 50.0, None, None));
        let calls: Vec<f64> = (1..=1000).map(f64::from).collect();
        let l = Latency::of(&calls).expect("calls");
        assert_eq!(l.p99, Some(percentile(&calls, 99.0)));
        assert!(l.p999.is_some_and(|p| p > 999.0 && p <= 1000.0), "{l:?}");
        assert_eq!(Latency::of(&[]), None);
    }

    /// Every thread of an every-core measurement calls its routine for the span, from one
    /// start; a thread whose routine fails its check still lets the others start, and the
    /// measurement says why it failed.
    #[test]
    fn every_core_calls_for_the_span_and_a_failing_thread_blocks_no_other() {
        let config = BenchConfig {
            all_cores_time: Duration::from_millis(20),
            ..BenchConfig::quick()
        };
        let cancel = AtomicBool::new(false);
        let threads = 3;
        for failing in [None, Some(1)] {
            let start = std::sync::Barrier::new(threads);
            let runs: Vec<Result<SpreadRun, BenchError>> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        let (start, config, cancel) = (&start, &config, &cancel);
                        scope.spawn(move || {
                            let passed = AtomicBool::new(false);
                            let spread = Spread {
                                start,
                                span: config.all_cores_time,
                                passed: &passed,
                            };
                            let mut b = Bencher::spread(config, cancel, 16, spread);
                            let fails = failing == Some(t);
                            b.iter_checked(
                                |_| if fails { Err("wrong".into()) } else { Ok(()) },
                                |buf| {
                                    buf.clear();
                                    buf.extend_from_slice(&[1, 2, 3]);
                                    buf.len()
                                },
                            );
                            assert!(passed.load(Ordering::SeqCst));
                            b.finish_spread()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("joined"))
                    .collect()
            });
            for (t, run) in runs.iter().enumerate() {
                match run {
                    Err(BenchError::Failed(why)) => {
                        assert_eq!((Some(t), why.as_str()), (failing, "wrong"))
                    }
                    Ok(r) => {
                        assert_ne!(Some(t), failing);
                        assert!(r.calls > 0 && r.seconds >= 0.02, "{r:?}");
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            if failing.is_none() {
                let ok: Vec<SpreadRun> = runs.into_iter().map(|r| r.expect("ran")).collect();
                let all = AllCores::of(&ok).expect("calls");
                assert_eq!(all.threads, threads);
                assert_eq!(all.calls, ok.iter().map(|r| r.calls).sum::<u64>());
                let sum: f64 = ok.iter().map(|r| r.calls as f64 / r.seconds).sum();
                assert!((all.ops_per_s - sum).abs() < 1e-6 * sum);
            }
        }
        // Gain: three threads at 1,000 ops/s each against one thread's 1 ms median.
        let all = AllCores {
            threads: 3,
            calls: 3_000,
            ops_per_s: 3_000.0,
            cpu_ns_per_op: None,
        };
        assert_eq!(all.scaling(1e6), Some(3.0));
        assert_eq!(all.scaling(0.0), None);
    }

    #[test]
    #[cfg(unix)]
    fn the_thread_cpu_clock_moves_with_work() {
        // Every Unix has the clock (elsewhere the CSV cell stays empty).
        let Some(before) = thread_cpu_ns() else {
            panic!("no thread CPU clock on this platform");
        };
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        let after = thread_cpu_ns().expect("the same clock");
        assert!(after > before, "{before} {after} {x}");
    }

    #[test]
    fn the_quick_budget_bounds_the_samples_of_slow_operations() {
        let quick = BenchConfig::quick();
        // 0.1 s a call: all three samples fit in the half second.
        assert_eq!(plan_samples(&quick, 0.1), (1, 3));
        // 0.2 s: two fit; 0.3 s and a payload's 5 s: one, never none.
        assert_eq!(plan_samples(&quick, 0.2), (1, 2));
        assert_eq!(plan_samples(&quick, 0.3), (1, 1));
        assert_eq!(plan_samples(&quick, 5.0), (1, 1));
        // The standard mode has no budget: a slow operation always gets its ten samples.
        let standard = BenchConfig::standard();
        assert_eq!(plan_samples(&standard, 5.0), (1, standard.slow_samples));
        // Fast operations are batched as before, the budget does not apply.
        let (batch, samples) = plan_samples(&quick, 1e-6);
        assert!((1000..=1001).contains(&batch), "{batch}");
        assert_eq!(samples, quick.min_samples);
    }

    #[test]
    fn a_slow_routine_run_just_before_is_not_warmed_up_again_in_quick_mode() {
        for (prepared_warms, calls_made) in [(true, 3), (false, 4)] {
            let cfg = BenchConfig {
                slow_threshold: Duration::from_millis(2),
                warm_up: Duration::from_millis(1),
                slow_samples: 3,
                slow_budget: None,
                prepared_warms,
                ..BenchConfig::quick()
            };
            let cancel = AtomicBool::new(false);
            let mut b = Bencher::new(&cfg, &cancel, 0, 1);
            b.warmed(Some(0.003));
            let calls = std::cell::Cell::new(0);
            b.iter(|_| {
                calls.set(calls.get() + 1);
                std::thread::sleep(Duration::from_millis(3))
            });
            let m = b.finish().expect("measured");
            assert_eq!((m.batch, m.ns.n), (1, 3));
            assert_eq!(calls.get(), calls_made, "prepared_warms {prepared_warms}");
        }
        // A fast routine is warmed up whatever its caller says.
        let cfg = BenchConfig::quick();
        let cancel = AtomicBool::new(false);
        let mut b = Bencher::new(&cfg, &cancel, 0, 1);
        b.warmed(Some(1e-6));
        b.iter(|_| 1 + 1);
        let m = b.finish().expect("measured");
        assert!(m.batch > 1, "{m:?}");
    }

    #[test]
    fn a_failing_first_output_fails_the_measurement() {
        let cfg = BenchConfig::quick();
        let cancel = AtomicBool::new(false);
        let mut b = Bencher::new(&cfg, &cancel, 0, 1);
        b.iter_checked(
            |r: &Result<u8, String>| r.as_ref().map(|_| ()).map_err(|e| format!("lib: {e}")),
            |_| Err::<u8, _>("bad byte at 3".to_string()),
        );
        assert_eq!(
            b.finish(),
            Err(BenchError::Failed("lib: bad byte at 3".into()))
        );
        // Also when the first call is a timed one (no warm-up).
        let cfg = BenchConfig {
            slow_threshold: Duration::from_millis(1),
            ..BenchConfig::quick()
        };
        let mut b = Bencher::new(&cfg, &cancel, 0, 1);
        b.warmed(Some(1.0));
        b.iter_checked(
            |&ok: &bool| if ok { Ok(()) } else { Err("no".into()) },
            |_| false,
        );
        assert_eq!(b.finish(), Err(BenchError::Failed("no".into())));
    }

    #[test]
    fn a_routine_slower_than_the_budget_is_sampled_once() {
        let cfg = BenchConfig {
            slow_threshold: Duration::from_millis(2),
            warm_up: Duration::from_millis(1),
            slow_samples: 5,
            slow_budget: Some(Duration::from_millis(1)),
            ..BenchConfig::quick()
        };
        let cancel = AtomicBool::new(false);
        let mut b = Bencher::new(&cfg, &cancel, 0, 1);
        let calls = std::cell::Cell::new(0);
        b.iter(|_| {
            calls.set(calls.get() + 1);
            std::thread::sleep(Duration::from_millis(3))
        });
        let m = b.finish().expect("measured");
        assert_eq!((m.batch, m.ns.n, m.iterations), (1, 1, 1));
        // One warm-up call, one timed.
        assert_eq!(calls.get(), 2);
        assert!(m.ns.min >= 3e6);
    }

    /// Interleaved, a fast routine's single calls for the tail take turns like its samples: two
    /// jobs each take their `rounds` sample turns and `tail_rounds - 1` more for the tail, and the
    /// tail's calls are all timed. A precise config times the tail for longer than the standard
    /// one, and a sweep point's tail no longer than the standard one.
    #[test]
    fn the_tail_is_timed_in_turns_spread_over_the_run() {
        let cfg = BenchConfig {
            rounds: 4,
            tail_rounds: 6,
            latency_time: Duration::from_millis(20),
            ..BenchConfig::quick()
        };
        let cancel = AtomicBool::new(false);
        let taken = Mutex::new(Vec::new());
        let on_turn = |seat: usize, _: usize| taken.lock().expect("log").push(seat);
        let turns = Turns::with_hook(2, &on_turn);
        let tails: Vec<Option<Latency>> = std::thread::scope(|s| {
            let jobs: Vec<_> = (0..2)
                .map(|id| {
                    let (cfg, cancel, turns) = (&cfg, &cancel, &turns);
                    s.spawn(move || {
                        let mut b = Bencher::interleaved(cfg, cancel, 0, 1, turns.seat(id));
                        let data: Vec<u64> = (0..2000).collect();
                        b.iter(|_| black_box(&data).iter().sum::<u64>());
                        b.finish().map(|m| m.latency)
                    })
                })
                .collect();
            jobs.into_iter()
                .map(|j| j.join().expect("job").expect("measured"))
                .collect()
        });
        let taken = taken.into_inner().expect("log");
        for id in 0..2 {
            let turns = taken.iter().filter(|&&s| s == id).count();
            assert_eq!(
                turns,
                cfg.rounds + cfg.tail_rounds - 1,
                "seat {id}: {taken:?}"
            );
        }
        // The seats alternate: no job ran its tail in one stretch.
        assert!(taken.windows(2).all(|w| w[0] != w[1]), "{taken:?}");
        for tail in tails {
            assert!(tail.is_some_and(|l| l.n >= cfg.tail_rounds), "{tail:?}");
        }
        let (standard, precise) = (BenchConfig::standard(), BenchConfig::precise());
        assert!(precise.latency_time > standard.latency_time);
        assert_eq!(precise.for_sweep().latency_time, standard.latency_time);
        assert_eq!(precise.for_sweep().min_samples, precise.min_samples);
    }

    #[test]
    fn measures_a_routine_and_counts_nothing_without_the_allocator() {
        let cfg = BenchConfig::quick();
        let cancel = AtomicBool::new(false);
        let mut b = Bencher::new(&cfg, &cancel, 64, 1);
        let data: Vec<u64> = (0..1000).collect();
        b.iter(|buf| {
            buf.clear();
            buf.extend_from_slice(&[1, 2, 3]);
            data.iter().sum::<u64>()
        });
        let m = b.finish().expect("measured");
        assert_eq!(m.ns.n, cfg.min_samples);
        assert!(m.ns.median > 0.0);
        assert!(m.ns.ci_low <= m.ns.median && m.ns.median <= m.ns.ci_high);
        // A fast routine is batched (a few thousand additions take microseconds, far under the
        // 1 ms sample time), and every sample ran the whole batch. How long a sample took is not
        // checked: on a loaded machine that is the scheduler's business.
        assert!(m.batch > 1, "{m:?}");
        assert_eq!(m.iterations, m.batch * m.ns.n as u64);
        // Library tests run without the counting allocator: "not counted", not zero.
        assert!(!alloc::installed());
        assert_eq!(m.allocs_per_op, None);
    }

    #[test]
    fn a_raised_flag_cancels() {
        let cfg = BenchConfig::quick();
        let cancel = AtomicBool::new(true);
        let mut b = Bencher::new(&cfg, &cancel, 0, 1);
        b.iter(|_| std::thread::sleep(Duration::from_millis(1)));
        assert_eq!(b.finish(), Err(BenchError::Cancelled));
    }

    #[test]
    fn slow_operations_are_sampled_flat() {
        let cfg = BenchConfig {
            slow_threshold: Duration::from_millis(2),
            warm_up: Duration::from_millis(1),
            ..BenchConfig::quick()
        };
        let cancel = AtomicBool::new(false);
        let mut b = Bencher::new(&cfg, &cancel, 0, 1);
        b.iter(|_| std::thread::sleep(Duration::from_millis(3)));
        let m = b.finish().expect("measured");
        assert_eq!((m.batch, m.ns.n), (1, cfg.slow_samples));
        assert!(m.ns.min >= 3e6);
    }
}
