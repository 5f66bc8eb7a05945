//! Interleaved measuring: many timing jobs take turns on one core, round-robin, so that each is
//! sampled across the whole run instead of in one stretch of it.
//!
//! The precise mode needs this because a shared machine's speed drifts: on the virtual machines
//! wirelens is developed on, the same loop runs 1.8× slower for ten seconds at a time while no
//! other process runs. Timed one after another, a job that happened to run in a slow stretch reads
//! 1.8× slower than its neighbour; timed in turns, every job sees the same mix of fast and slow
//! stretches. A [`probe`] of fixed work is timed at the start of every turn, so a report can say
//! how much the machine's speed moved during the run.
//!
//! Each job runs on its own thread and holds a [`Seat`]. [`Seat::take`] waits for the seat's
//! turn; [`Seat::pass`] hands the turn to the next job. A seat leaves the ring when it is dropped
//! (also when its job fails or panics), so the others never wait for a job that is gone.

use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// The ring of jobs taking turns.
#[derive(Debug, Default)]
pub struct Turns {
    ring: Mutex<VecDeque<usize>>,
    changed: Condvar,
}

impl Turns {
    /// A ring of `count` seats (numbered `0..count`); seat 0 has the first turn.
    pub fn new(count: usize) -> Turns {
        Turns {
            ring: Mutex::new((0..count).collect()),
            changed: Condvar::new(),
        }
    }

    /// Seat `id` of the ring (its place was made by [`Turns::new`]).
    pub fn seat(&self, id: usize) -> Seat<'_> {
        Seat {
            turns: self,
            id,
            holding: false,
        }
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<usize>> {
        // A job that panicked while holding the lock left the ring consistent (every change is
        // one call), so a poisoned lock is still usable.
        self.ring.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One job's place in the ring.
#[derive(Debug)]
pub struct Seat<'a> {
    turns: &'a Turns,
    id: usize,
    holding: bool,
}

impl Seat<'_> {
    /// Waits until it is this seat's turn (returns at once when it already is). A seat that has
    /// left the ring does not wait.
    pub fn take(&mut self) {
        if self.holding {
            return;
        }
        let mut ring = self.turns.lock();
        loop {
            match ring.front() {
                Some(&front) if front == self.id => break,
                _ if !ring.contains(&self.id) => return,
                _ => {
                    ring = self
                        .turns
                        .changed
                        .wait(ring)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
        self.holding = true;
    }

    /// Hands the turn to the next seat (this one goes to the back of the ring). Does nothing when
    /// the seat does not hold the turn.
    pub fn pass(&mut self) {
        if !self.holding {
            return;
        }
        self.holding = false;
        let mut ring = self.turns.lock();
        if ring.front() == Some(&self.id) {
            ring.rotate_left(1);
        }
        drop(ring);
        self.turns.changed.notify_all();
    }

    /// Leaves the ring for good (a dropped seat leaves too).
    pub fn leave(&mut self) {
        self.holding = false;
        let mut ring = self.turns.lock();
        ring.retain(|&id| id != self.id);
        drop(ring);
        self.turns.changed.notify_all();
    }
}

impl Drop for Seat<'_> {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Times a fixed piece of work (about a quarter of a millisecond on a 2020s core): integer
/// arithmetic over a 32 KiB buffer that stays in the L1/L2 cache, and one allocation. The best of
/// three runs, in nanoseconds. Timed at the start of every turn, it tells how fast the machine
/// ran during that turn.
pub fn probe() -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        black_box(probe_work(black_box(0x9E37_79B9_7F4A_7C15)));
        best = best.min(t.elapsed().as_secs_f64() * 1e9);
    }
    best
}

fn probe_work(seed: u64) -> u64 {
    let mut buf = vec![0u64; 4096];
    let mut x = seed;
    for _ in 0..8 {
        for slot in buf.iter_mut() {
            // xorshift64
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *slot = slot.wrapping_add(x);
        }
    }
    buf.iter().fold(0, |acc, v| acc ^ v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn seats_take_turns_round_robin_and_one_at_a_time() {
        let turns = Turns::new(3);
        let log = Mutex::new(Vec::new());
        let inside = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for id in 0..3 {
                let (turns, log, inside) = (&turns, &log, &inside);
                s.spawn(move || {
                    let mut seat = turns.seat(id);
                    for _ in 0..4 {
                        seat.take();
                        assert_eq!(
                            inside.fetch_add(1, Ordering::SeqCst),
                            0,
                            "two seats at once"
                        );
                        log.lock().expect("log").push(id);
                        inside.fetch_sub(1, Ordering::SeqCst);
                        seat.pass();
                    }
                });
            }
        });
        let log = log.into_inner().expect("log");
        assert_eq!(log, [0, 1, 2].repeat(4));
    }

    #[test]
    fn a_seat_that_leaves_early_never_blocks_the_others() {
        let turns = Turns::new(3);
        let log = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            // Seat 0 (first in the ring) fails before taking a turn; seat 1 panics mid-run.
            s.spawn(|| drop(turns.seat(0)));
            let failing = s.spawn(|| {
                let mut seat = turns.seat(1);
                seat.take();
                log.lock().expect("log").push(1);
                panic!("a job failed");
            });
            s.spawn(|| {
                let mut seat = turns.seat(2);
                for _ in 0..3 {
                    seat.take();
                    log.lock().expect("log").push(2);
                    seat.pass();
                }
            });
            assert!(failing.join().is_err());
        });
        let log = log.into_inner().expect("log");
        assert_eq!(log.iter().filter(|&&id| id == 2).count(), 3);
        assert!(log.len() <= 4, "{log:?}");
    }

    #[test]
    fn the_probe_times_real_work() {
        let t = probe();
        assert!(t.is_finite() && t > 0.0, "{t}");
        // The work is deterministic (the probe's result does not depend on the machine).
        assert_eq!(probe_work(1), probe_work(1));
        assert_ne!(probe_work(1), probe_work(2));
    }
}
