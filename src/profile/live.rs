//! A [`Report`] assembled from a run's [`Event`]s as they arrive, for views that show results
//! while the run goes on (the GUI's profiler fills its bars and plots from one of these).

use super::run::{finish_file, record, Event, Settings, Slot};
use crate::profile::report::{FileReport, Report};

/// What a run has produced so far.
#[derive(Debug, Clone)]
pub struct Live {
    /// The report so far: every prepared payload, every finished measurement, and the transfer
    /// estimates of the rows whose encode and decode are both in.
    pub report: Report,
    /// Timing jobs finished.
    pub done: usize,
    /// Timing jobs in all (0 until every payload is prepared and the jobs are counted).
    pub total: usize,
    /// The jobs running now, by label, oldest first.
    pub running: Vec<String>,
    /// Precise mode: turns taken, turns planned, and the job measuring now.
    pub turn: Option<(usize, usize, String)>,
}

impl Live {
    /// An empty report for a run with these settings.
    pub fn new(settings: &Settings) -> Live {
        Live {
            report: Report {
                mode: settings.mode,
                parallel: settings.mode != crate::profile::report::Mode::Precise,
                allocations_counted: super::alloc::installed(),
                links: settings.links.clone(),
                files: Vec::new(),
                cancelled: false,
                probe: None,
            },
            done: 0,
            total: 0,
            running: Vec::new(),
            turn: None,
        }
    }

    /// Takes one event in.
    pub fn apply(&mut self, event: Event) {
        match event {
            Event::Prepared { file, report } => {
                let files = &mut self.report.files;
                if files.len() <= file {
                    files.resize_with(file + 1, || placeholder(String::new()));
                }
                files[file] = *report;
            }
            Event::Started { total, label, .. } => {
                self.total = total;
                self.running.push(label);
            }
            Event::Turn { done, total, label } => {
                if self.turn.as_ref().is_none_or(|(d, ..)| done >= *d) {
                    self.turn = Some((done, total, label));
                }
            }
            Event::Measured {
                done,
                total,
                label,
                slot,
                result,
                bytes,
            } => {
                self.done = self.done.max(done);
                self.total = total;
                if let Some(i) = self.running.iter().position(|l| *l == label) {
                    self.running.remove(i);
                }
                self.report.cancelled |= record(&mut self.report.files, slot, *result, bytes);
                let file = match slot {
                    Slot::Timing { file, .. }
                    | Slot::Gzip { file, .. }
                    | Slot::Sweep { file, .. } => file,
                };
                let links = self.report.links.clone();
                if let Some(f) = self.report.files.get_mut(file) {
                    finish_file(f, &links);
                }
            }
        }
    }

    /// Progress as a fraction (0 before the jobs are counted). In precise mode the jobs all
    /// finish in the last round, so the turns taken tell the progress until then.
    pub fn fraction(&self) -> f32 {
        let jobs = if self.total == 0 {
            0.0
        } else {
            self.done as f32 / self.total as f32
        };
        match &self.turn {
            Some((done, total, _)) if *total > 0 && self.done < self.total => {
                jobs.max(*done as f32 / *total as f32).min(0.99)
            }
            _ => jobs,
        }
    }

    /// What the progress bar says: jobs done, or (precise mode) turns taken.
    pub fn progress_text(&self) -> String {
        match &self.turn {
            Some((done, total, _)) if self.done < self.total => {
                format!(
                    "turn {done} / ~{total} · {} / {} jobs",
                    self.done, self.total
                )
            }
            _ => format!("{} / {} jobs", self.done, self.total),
        }
    }

    /// The job to name next to the progress bar: the one holding the turn (precise mode), or
    /// the oldest running one.
    pub fn current(&self) -> Option<&str> {
        match &self.turn {
            Some((.., label)) if self.done < self.total => Some(label),
            _ => self.running.first().map(String::as_str),
        }
    }
}

fn placeholder(name: String) -> FileReport {
    FileReport {
        name,
        json_bytes: 0,
        formats: Vec::new(),
        timings: Vec::new(),
        sweep: None,
        transfer: Vec::new(),
        runtimes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Mutex;

    use super::*;
    use crate::codec::{decode, DecodeOptions, Format};
    use crate::profile::bench::BenchConfig;
    use crate::profile::report::Mode;
    use crate::profile::{run, Subject};

    /// Replaying a run's events gives the report the run returns: the same sizes, the same
    /// measurements in the same slots, the same transfer estimates.
    #[test]
    fn a_precise_run_shows_progress_by_turns_until_its_jobs_finish() {
        let mut live = Live::new(&Settings::new(Mode::Precise));
        for label in ["a", "b"] {
            live.apply(Event::Started {
                done: 0,
                total: 2,
                label: label.into(),
            });
        }
        // Both jobs run, neither has finished: the jobs' count says nothing yet.
        assert_eq!((live.fraction(), live.current()), (0.0, Some("a")));
        live.apply(Event::Turn {
            done: 5,
            total: 20,
            label: "b".into(),
        });
        // A late event from an earlier turn does not move the bar back.
        live.apply(Event::Turn {
            done: 4,
            total: 20,
            label: "a".into(),
        });
        assert_eq!(live.fraction(), 0.25);
        assert_eq!(live.current(), Some("b"));
        assert_eq!(live.progress_text(), "turn 5 / ~20 · 0 / 2 jobs");
        // Short of the end, the turns never claim the run is done.
        live.apply(Event::Turn {
            done: 20,
            total: 20,
            label: "a".into(),
        });
        assert!(live.fraction() < 1.0);
    }

    #[test]
    fn events_rebuild_the_report() -> Result<(), Box<dyn std::error::Error>> {
        let text = br#"{"data":[{"id":1,"name":"a"},{"id":2,"name":"b"},{"id":3,"name":"c"}]}"#;
        let value = decode(text, Format::Json, &DecodeOptions::default())?.value;
        let subjects = [Subject {
            name: "records.json".into(),
            value: value.into(),
            message: None,
        }];
        let mut settings = Settings::new(Mode::Quick);
        settings.bench = BenchConfig {
            warm_up: std::time::Duration::ZERO,
            min_samples: 2,
            max_samples: 2,
            slow_samples: 2,
            measurement_time: std::time::Duration::from_millis(1),
            resamples: 10,
            ..BenchConfig::quick()
        };
        settings.sweep_counts = vec![1, 2];
        settings.sweep_all = true;
        let live = Mutex::new(Live::new(&settings));
        let report = run(&subjects, &settings, &AtomicBool::new(false), &|e| {
            if let Ok(mut l) = live.lock() {
                l.apply(e);
            }
        });
        let live = live.into_inner().map_err(|_| "poisoned")?;
        assert_eq!(live.done, live.total);
        assert!(live.total > 0);
        assert!(live.running.is_empty(), "{:?}", live.running);
        assert_eq!(live.report, report);
        Ok(())
    }

    #[test]
    fn precise_mode_takes_turns_and_says_how_the_machine_moved(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let text = br#"{"data":[{"id":1,"name":"a"},{"id":2,"name":"b"}]}"#;
        let value = decode(text, Format::Json, &DecodeOptions::default())?.value;
        let subjects = [Subject {
            name: "records.json".into(),
            value: value.into(),
            message: None,
        }];
        let mut settings = Settings::new(Mode::Precise);
        settings.bench = BenchConfig {
            warm_up: std::time::Duration::ZERO,
            min_samples: 6,
            max_samples: 6,
            slow_samples: 6,
            measurement_time: std::time::Duration::from_millis(1),
            resamples: 10,
            rounds: 3,
            tail_rounds: 3,
            ..BenchConfig::quick()
        };
        settings.sweep_counts = Vec::new();
        let live = Mutex::new(Live::new(&settings));
        let turn_events = Mutex::new(Vec::new());
        let report = run(&subjects, &settings, &AtomicBool::new(false), &|e| {
            if let (Event::Turn { done, total, .. }, Ok(mut t)) = (&e, turn_events.lock()) {
                t.push((*done, *total));
            }
            if let Ok(mut l) = live.lock() {
                l.apply(e);
            }
        });
        assert!(!report.parallel && !report.cancelled);
        let mut turns = 0;
        for row in &report.files[0].timings {
            for m in [&row.encode, &row.decode] {
                let m = m.as_ref().ok_or_else(|| format!("{row:?} not measured"))?;
                // Six samples in three turns of two, then the single calls for the tail in two
                // more turns, a probe at the start of each turn; jobs in turns never measure at
                // the same time.
                assert_eq!(m.ns.n, 6);
                assert_eq!(m.probes.len(), 5, "{m:?}");
                assert!(!m.concurrent);
                turns += 5;
            }
        }
        for f in &report.files[0].formats {
            turns += f.gzip_compress.as_ref().map_or(0, |m| m.probes.len());
            turns += f.gzip_decompress.as_ref().map_or(0, |m| m.probes.len());
        }
        let probe = report.probe.ok_or("no probe summary")?;
        assert_eq!(probe.n, turns);
        // One progress event per turn, counting up; every job planned five turns and took them.
        let turn_events = turn_events.into_inner().map_err(|_| "poisoned")?;
        assert_eq!(turn_events.len(), turns);
        assert!(turn_events.iter().all(|&(_, total)| total == turns));
        let mut counts: Vec<usize> = turn_events.iter().map(|&(done, _)| done).collect();
        counts.sort_unstable();
        assert_eq!(counts, (1..=turns).collect::<Vec<_>>());
        assert!(probe.min > 0.0 && probe.min <= probe.median && probe.median <= probe.max);
        // The events carry every measurement; the probe summary comes with the final report.
        let live = live.into_inner().map_err(|_| "poisoned")?;
        assert_eq!((live.done, live.running.len()), (live.total, 0));
        assert_eq!(live.fraction(), 1.0);
        assert_eq!(live.progress_text(), format!("{0} / {0} jobs", live.total));
        assert_eq!(
            live.report,
            Report {
                probe: None,
                ..report
            }
        );
        Ok(())
    }
}
