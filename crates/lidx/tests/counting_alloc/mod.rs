//! A global allocator that counts live heap bytes, for the tests that check an index's own
//! memory figure against what it really holds. A test binary that uses it installs it with
//! `#[global_allocator]` and runs its measurements in ONE `#[test]`.
//!
//! The count is kept per thread: bytes a thread allocates are added to its own count and bytes
//! it frees are taken from it. The test harness's main thread allocates while a test runs (it
//! records the running test and its timeout after spawning the test's thread, later on a loaded
//! machine), and a process-wide count once charged those bytes to the first index measured. A
//! measured structure must therefore be built and dropped on the measuring thread, which every
//! single-threaded build is.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The counting allocator: forwards to `System`.
pub struct Counting;

thread_local! {
    /// This thread's allocated minus freed bytes. Const-initialised and without a destructor,
    /// so reading it never allocates and works until the thread ends.
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// Adds `delta` to this thread's count.
fn count(delta: isize) {
    // `try_with` fails only while the thread is torn down; nothing is measured then.
    let _ = LIVE.try_with(|live| live.set(live.get() + delta));
}

/// Live heap bytes this thread allocated and did not free.
pub fn live() -> isize {
    LIVE.with(Cell::get)
}

// SAFETY: forwards every call to `System` unchanged and only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
