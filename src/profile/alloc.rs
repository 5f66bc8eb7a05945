//! Allocations per operation: a counting global allocator with per-thread counters.
//!
//! Profiling wants "how many allocations, how many bytes" next to each timing, counted on the
//! thread that does the work, so that jobs running at once on other threads never mix into each
//! other's numbers. [`CountingAlloc`] forwards every call to the system allocator and adds one to
//! a thread-local count (and the requested size to a thread-local byte total) for each `alloc`,
//! `alloc_zeroed` and `realloc` (a `realloc` counts as one allocation of its new size, as heap
//! profilers usually count it). Frees are not counted.
//!
//! The `wirelens` binary registers it as its `#[global_allocator]`; code that runs without it (the
//! library's own tests, another program using the library) gets `None` from [`snapshot`], and
//! reports say "not counted" instead of showing zeros.
//!
//! [`give_back_freed`] asks glibc's allocator to return the memory it holds freed, so that a
//! large run's resident size is what it uses, not what it used once.
//!
//! This is the one module with `unsafe` code: `GlobalAlloc` is an unsafe trait, and
//! `malloc_trim` a C function.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// A global allocator that counts allocations per thread; register it with
/// `#[global_allocator] static A: CountingAlloc = CountingAlloc;`.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAlloc;

static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    static COUNT: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

#[inline]
fn record(size: usize) {
    // `try_with`: during thread teardown the counters may be gone; the allocation still happens.
    let _ = COUNT.try_with(|c| c.set(c.get().wrapping_add(1)));
    let _ = BYTES.try_with(|b| b.set(b.get().wrapping_add(size as u64)));
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; counting
// touches only const-initialised thread-locals without destructors, which never allocate.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations made on the current thread so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AllocCount {
    /// Number of allocations (reallocations included).
    pub count: u64,
    /// Bytes requested by them.
    pub bytes: u64,
}

impl AllocCount {
    /// What happened between `earlier` and `self`.
    pub fn since(self, earlier: AllocCount) -> AllocCount {
        AllocCount {
            count: self.count.wrapping_sub(earlier.count),
            bytes: self.bytes.wrapping_sub(earlier.bytes),
        }
    }
}

/// Whether [`CountingAlloc`] is the global allocator (it has seen an allocation).
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// The current thread's counters, or `None` when the counting allocator is not installed.
pub fn snapshot() -> Option<AllocCount> {
    installed().then(|| AllocCount {
        count: COUNT.try_with(Cell::get).unwrap_or(0),
        bytes: BYTES.try_with(Cell::get).unwrap_or(0),
    })
}

/// Gives the memory the allocator holds freed back to the system (glibc's `malloc_trim`), so
/// that what a finished job freed is not counted in the process's resident size while the next
/// one runs on another thread's arena; elsewhere it does nothing. Takes a few milliseconds.
pub fn give_back_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: malloc_trim takes a byte count, touches only the allocator's own free lists,
        // and is safe to call from any thread at any time.
        unsafe {
            malloc_trim(0);
        }
    }
}
