//! Interleaved measuring: many timing jobs take turns on one core, round-robin, so that each is
//! sampled across the whole run instead of in one stretch of it.
//!
//! The precise mode needs this because a shared machine's speed drifts. On the virtual machines
//! wirelens is developed on, the drift is other tenants' use of the shared last-level cache: a
//! pointer chase through 4 MiB takes anywhere from 1× to 9× its best time, in stretches of a few
//! seconds, and a JSON decode of 144 KB runs up to 1.5× slower while it is slow; an arithmetic
//! loop in the L1 cache does not feel it at all, and no process on the machine itself shows it.
//! Timed one after another, a job that happened to run in a slow stretch reads 1.5× slower than
//! its neighbour; timed in turns, every job sees the same mix of fast and slow stretches. A
//! [`probe`] that feels that contention is timed at the start of every turn, so a report can say
//! how disturbed the machine was during the run.
//!
//! Each job runs on its own thread and holds a [`Seat`]. [`Seat::take`] waits for the seat's
//! turn; [`Seat::pass`] hands the turn to the next job. A seat leaves the ring when it is dropped
//! (also when its job fails or panics), so the others never wait for a job that is gone.

use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

/// Called with the seat that took a turn and the turns taken so far in the run, that one
/// included (for progress reports).
pub type OnTurn<'h> = &'h (dyn Fn(usize, usize) + Sync);

/// The ring of jobs taking turns.
#[derive(Default)]
pub struct Turns<'h> {
    ring: Mutex<VecDeque<usize>>,
    changed: Condvar,
    taken: AtomicUsize,
    on_turn: Option<OnTurn<'h>>,
}

impl std::fmt::Debug for Turns<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turns")
            .field("ring", &self.ring)
            .field("taken", &self.taken)
            .finish_non_exhaustive()
    }
}

impl<'h> Turns<'h> {
    /// A ring of `count` seats (numbered `0..count`); seat 0 has the first turn.
    pub fn new(count: usize) -> Turns<'h> {
        Turns {
            ring: Mutex::new((0..count).collect()),
            changed: Condvar::new(),
            taken: AtomicUsize::new(0),
            on_turn: None,
        }
    }

    /// The same ring, calling `on_turn` each time a seat takes a turn.
    pub fn with_hook(count: usize, on_turn: OnTurn<'h>) -> Turns<'h> {
        Turns {
            on_turn: Some(on_turn),
            ..Turns::new(count)
        }
    }

    /// Seat `id` of the ring (its place was made by [`Turns::new`]).
    pub fn seat(&self, id: usize) -> Seat<'_, 'h> {
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
pub struct Seat<'a, 'h> {
    turns: &'a Turns<'h>,
    id: usize,
    holding: bool,
}

impl Seat<'_, '_> {
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
        drop(ring);
        self.holding = true;
        let taken = self.turns.taken.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(on_turn) = self.turns.on_turn {
            on_turn(self.id, taken);
        }
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

impl Drop for Seat<'_, '_> {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Times a fixed piece of work that is sensitive to contention for the shared cache: a pointer
/// chase of 10,000 steps through a 4 MiB random cycle (a fifth of a millisecond when the cache is
/// free, several times that when another tenant thrashes it). The best of two runs after an
/// untimed one, in nanoseconds. Timed at the start of every turn, it tells how disturbed the
/// machine was during that turn.
pub fn probe() -> f64 {
    let cycle = probe_cycle();
    // One untimed pass brings the chase's lines in (the turn before left the cache full of its
    // own data: timed cold, the probe would measure that, not the other tenants); the timed
    // passes then tell whether the lines stay.
    black_box(chase(black_box(cycle), PROBE_STEPS));
    let mut best = f64::INFINITY;
    for _ in 0..2 {
        let t = Instant::now();
        black_box(chase(black_box(cycle), PROBE_STEPS));
        best = best.min(t.elapsed().as_secs_f64() * 1e9);
    }
    best
}

const PROBE_STEPS: usize = 10_000;

/// The probe's random cycle through 4 MiB of `u32` indices, built once per process.
fn probe_cycle() -> &'static [u32] {
    static CYCLE: OnceLock<Vec<u32>> = OnceLock::new();
    CYCLE.get_or_init(|| random_cycle(4 << 20 >> 2, 0x9E37_79B9_7F4A_7C15))
}

/// A random permutation of `0..n` that is one cycle (Sattolo's algorithm), so a chase visits
/// every slot before it repeats and the prefetcher cannot guess the next one.
fn random_cycle(n: usize, seed: u64) -> Vec<u32> {
    let mut slots: Vec<u32> = (0..n as u32).collect();
    let mut x = seed | 1;
    for i in (1..n).rev() {
        // xorshift64
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % i as u64) as usize;
        slots.swap(i, j);
    }
    slots
}

fn chase(cycle: &[u32], steps: usize) -> u32 {
    let mut at = 0u32;
    for _ in 0..steps {
        at = cycle[at as usize];
    }
    at
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
    fn the_probe_chases_one_cycle_through_every_slot() {
        let t = probe();
        assert!(t.is_finite() && t > 0.0, "{t}");
        // One cycle: starting anywhere, the chase comes back only after visiting every slot.
        let cycle = random_cycle(1000, 7);
        let mut seen = vec![false; 1000];
        let mut at = 0u32;
        for _ in 0..1000 {
            assert!(!seen[at as usize], "slot {at} visited twice");
            seen[at as usize] = true;
            at = cycle[at as usize];
        }
        assert_eq!(at, 0);
        assert_eq!(chase(&cycle, 1000), 0);
        assert_eq!(probe_cycle().len(), 1 << 20);
    }
}
