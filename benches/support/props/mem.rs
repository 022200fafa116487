//! Live and peak heap bytes, kept by [`Counting`] when a runner installs it as its
//! global allocator (the benchmark does; `cargo test` runs tests on several threads at once,
//! so it does not, and the memory bounds are not checked there).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The largest peak above its start any case of the current property reached.
static CASE_MAX: AtomicUsize = AtomicUsize::new(0);
/// The same per kind of input, for the properties that have kinds.
static KIND_MAX: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

/// `System`, counting. A reallocation counts as its change in size (a large block grows
/// in place or by remapping, not by holding both copies).
pub struct Counting;

fn add(n: usize) {
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                add(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

/// The runner installed [`Counting`]; call once at its start.
pub fn installed() {
    INSTALLED.store(true, Relaxed);
}

pub fn is_installed() -> bool {
    INSTALLED.load(Relaxed)
}

/// A case starts: the live bytes now, the peak reset to them.
pub fn start() -> usize {
    let live = LIVE.load(Relaxed);
    PEAK.store(live, Relaxed);
    live
}

/// The most a case held above `start` (none when not counting), noted for the property.
pub fn peak_since(start: usize) -> Option<usize> {
    if !is_installed() {
        return None;
    }
    let above = PEAK.load(Relaxed).saturating_sub(start);
    CASE_MAX.fetch_max(above, Relaxed);
    Some(above)
}

/// The largest case peak since the last call.
pub fn take_case_max() -> usize {
    CASE_MAX.swap(0, Relaxed)
}

/// [`peak_since`], noted for the case's kind of input too.
pub fn peak_of_kind(start: usize, kind: usize) -> Option<usize> {
    let peak = peak_since(start)?;
    KIND_MAX[kind].fetch_max(peak, Relaxed);
    Some(peak)
}

/// The largest case peak of `kind` since the last call.
pub fn take_kind_max(kind: usize) -> usize {
    KIND_MAX[kind].swap(0, Relaxed)
}
