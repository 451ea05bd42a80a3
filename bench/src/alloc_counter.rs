//! A global allocator that counts the bytes allocated by the whole process (both nodes, their
//! transports and the cores), as Go's `-benchmem` does for bee's benchmark, except on threads
//! that stand in for the network.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct Counting;

static ALLOCATED: AtomicU64 = AtomicU64::new(0);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Set on threads that model the network (the delaying proxy), which no host would pay for.
    static EXCLUDED: Cell<bool> = const { Cell::new(false) };
}

/// Stops counting allocations made on the calling thread.
pub fn exclude_this_thread() {
    EXCLUDED.with(|e| e.set(true));
}

fn count(bytes: usize) {
    if !EXCLUDED.with(Cell::get) {
        ALLOCATED.fetch_add(bytes as u64, Ordering::Relaxed);
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting has no effect on
// the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    /// A growing reallocation counts the bytes added, as a fresh allocation of the difference.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size.saturating_sub(layout.size()));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Bytes and allocations so far.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    pub bytes: u64,
    pub count: u64,
}

pub fn snapshot() -> Snapshot {
    Snapshot {
        bytes: ALLOCATED.load(Ordering::Relaxed),
        count: ALLOCATIONS.load(Ordering::Relaxed),
    }
}

impl Snapshot {
    pub fn since(self, earlier: Snapshot) -> Snapshot {
        Snapshot { bytes: self.bytes - earlier.bytes, count: self.count - earlier.count }
    }
}
