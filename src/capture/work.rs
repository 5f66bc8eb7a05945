//! A count of the steps the capture layer takes on the current thread, so tests can check that
//! reading a capture twice as large takes about twice the work (a count, not a time, so the check
//! holds on any machine).
//!
//! A step is one unit of the loops whose length depends on the input: an HTTP/2 or WebSocket
//! frame read, an HTTP/2 message filed as a payload and the lookup of its request, and each TCP
//! segment visited to find the frames a payload came from. Counting costs one thread-local
//! addition; nothing reads the count but [`steps`].

use std::cell::Cell;

thread_local! {
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// Adds `n` steps.
pub(crate) fn add(n: usize) {
    let _ = STEPS.try_with(|s| s.set(s.get().wrapping_add(n as u64)));
}

/// The steps taken on this thread so far (take the difference around the work measured).
pub fn steps() -> u64 {
    STEPS.try_with(Cell::get).unwrap_or(0)
}
