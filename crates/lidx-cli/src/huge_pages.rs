//! The allocator of the `lidx` binary: the system allocator, with every large allocation
//! aligned to 2 MiB and advised as a transparent huge page candidate (Linux).
//!
//! In-memory index benchmarks on arrays of hundreds of megabytes are dominated by TLB misses
//! when the memory sits on 4 KiB pages, most of all on virtual machines where a miss walks two
//! page tables: on the 2-core VM this project is developed on, a random probe into 400 MB costs
//! about 350 ns on 4 KiB pages. Every structure the benchmark allocates (the keys, each index's
//! models and nodes) goes through this allocator, so the comparison stays fair while measuring
//! what the indexes do rather than what the page tables do. `--small-pages` turns it off.
//!
//! **A fixed mmap threshold** ([`fix_mmap_threshold`], glibc only). glibc serves a block of 128 KiB
//! or more with its own `mmap` and gives it back to the OS when freed, but each time such a block
//! is freed it raises that threshold to the block's size (up to 32 MiB), after which blocks of that
//! size come from its arenas and, freed, stay with the process. A store under a stream of writes
//! allocates and frees such blocks all the time (memtables growing, a merge's filters, models and
//! write buffers), so memory it has freed stays resident and, under a memory cgroup, charged. The
//! `lidx` binary sets the threshold to glibc's initial 128 KiB, which also turns the raising off
//! (`mallopt(3)`), unless the environment sets it (`MALLOC_MMAP_THRESHOLD_`, or
//! `glibc.malloc.mmap_threshold` in `GLIBC_TUNABLES`: then glibc's reading of it stands). It
//! applies to every command but the in-memory benchmarks `lidx bench`, `lidx dims` and `lidx
//! start` (below); only `lidx ycsb`'s writes were measured with and without it. Measured
//! (`lidx ycsb --dataset gen:uniform-sparse:4M --payload-size 100 --memory-limit 160M
//! --memory-budget 16M --cache-blocks 4000 --row-cache 64M --ops 3M --store lsm --workload a
//! --device file:<dir>`, 96 MB of budget and caches, 2-core AMD EPYC VM, the threshold fixed by this call or
//! `MALLOC_MMAP_THRESHOLD_`): resident peak 139-155 MB in four runs with the default, 103 MB in
//! three with the threshold fixed (118 MB at 1 MiB); throughput 74.6-76.1 Kops/s against 67.5-70.5
//! (the last pair back to back: 76.1 against 68.4). So the price is about a tenth of the throughput
//! of a stream of writes, paid in page faults: a block `mmap`ed afresh is zeroed page by page where
//! a block an arena kept is reused. A store killed by its memory limit loses more. `heaptrack` of
//! the same run put the live heap at its peak at about 80 MB beyond what was allocated before the
//! run (the dataset and the plan): the rest of the resident memory had been freed. An embedder of
//! the library on glibc gets the same by `MALLOC_MMAP_THRESHOLD_=131072` in its environment or the
//! same `mallopt` call.
//!
//! The in-memory benchmarks keep glibc's own, rising threshold: their maps allocate and free
//! blocks of every size as they grow (an ALEX data node's arrays are replaced by larger ones on
//! every expansion), and a block `mmap`ed afresh each time costs page faults and, being apart
//! from the arenas, sits on 4 KiB pages where `glibc.malloc.hugetlb=1` puts the arenas on huge
//! pages. Measured (`lidx bench --dataset <10M lognormal keys> --workload insert --index
//! alex,lipp --runs 3` under `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, the setting the C++
//! reference harness runs with, Intel Xeon VM, session 54): ALEX 345 ns an insert with the
//! threshold fixed, 228-255 with glibc's own (four runs), 265 with it set at 32 MiB in the
//! environment; LIPP 236, 201-224 and 225. None of them runs under a memory limit.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Allocations at least this large are huge-page candidates.
const LARGE: usize = 4 << 20;
/// The huge page size on x86-64 and arm64 Linux.
const HUGE_PAGE: usize = 2 << 20;

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns huge-page advice off for allocations made from now on.
pub fn disable() {
    ENABLED.store(false, Ordering::Relaxed);
}

/// Whether large allocations are advised as huge pages.
pub fn enabled() -> bool {
    cfg!(target_os = "linux") && ENABLED.load(Ordering::Relaxed)
}

/// Fixes glibc's mmap threshold at its initial 128 KiB unless the environment sets it (module
/// docs); nothing elsewhere. Call before the first thread starts.
pub fn fix_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none()
        && !std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("malloc.mmap_threshold"))
    {
        // SAFETY: `mallopt` takes any parameter and value and returns 0 when it refuses them;
        // it is called before any other thread exists, so no allocation runs beside it.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
        }
    }
}

/// [`System`] plus `madvise(MADV_HUGEPAGE)` on large blocks.
pub struct HugePageAlloc;

// SAFETY: every request is forwarded to `System` with a layout at least as strict as asked
// (only the alignment is raised, which `dealloc`/`realloc` repeat consistently because they
// derive it from the same size test), so the `GlobalAlloc` contract is System's.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match huge_layout(layout) {
            Some(big) => {
                // SAFETY: `big` has a non-zero size (>= LARGE) and a valid power-of-two align.
                let ptr = unsafe { System.alloc(big) };
                if !ptr.is_null() {
                    advise(ptr, big.size());
                }
                ptr
            }
            // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let layout = huge_layout(layout).unwrap_or(layout);
        // SAFETY: `ptr` came from `alloc`/`realloc` above with this same derived layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = huge_layout(layout).unwrap_or(layout);
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        if huge_layout(new_layout).is_none() && huge_layout(layout).is_none() {
            // SAFETY: both layouts are plain System ones; the caller upholds the contract.
            return unsafe { System.realloc(ptr, old, new_size) };
        }
        // SAFETY: allocate the new block through `alloc` (which advises it), copy the live
        // bytes, free the old block with the layout it was allocated with.
        unsafe {
            let new = self.alloc(new_layout);
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                System.dealloc(ptr, old);
            }
            new
        }
    }
}

/// The layout a large block is really allocated with: same size, 2 MiB alignment.
fn huge_layout(layout: Layout) -> Option<Layout> {
    if !enabled() || layout.size() < LARGE {
        return None;
    }
    Layout::from_size_align(layout.size(), layout.align().max(HUGE_PAGE)).ok()
}

#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, size: usize) {
    // SAFETY: `ptr..ptr + size` is a block we just allocated; madvise only changes how the
    // kernel backs it and fails harmlessly (the advice is ignored) where THP is unavailable.
    unsafe {
        libc::madvise(ptr.cast(), size, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_ptr: *mut u8, _size: usize) {}
