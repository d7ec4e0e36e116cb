//! The global allocator's side of a render's memory budget.
//!
//! MiniJinja (patched, vendor/README.md) keeps a per-thread count of the net
//! bytes a render has allocated and fails the render once it is over its
//! budget; the count is fed from here. The binary installs
//! `Budgeted<Jemalloc>` as its global allocator, this crate's unit tests and
//! the fuzz target `Budgeted<System>`: without it only the sizes computed
//! before an allocation are bounded, not growth spread over instructions.
//!
//! Outside a render the cost is one thread-local flag read per allocation.

use std::alloc::{GlobalAlloc, Layout};

/// Wraps an allocator and reports each allocation's size to the budget of a
/// render running on this thread, if any.
pub struct Budgeted<A>(pub A);

// SAFETY: every call is forwarded unchanged to the wrapped allocator; the
// budget hooks only update const-initialised thread-local cells (they neither
// allocate nor unwind).
unsafe impl<A: GlobalAlloc> GlobalAlloc for Budgeted<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc(layout);
        if !p.is_null() {
            minijinja::budget::on_alloc(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc_zeroed(layout);
        if !p.is_null() {
            minijinja::budget::on_alloc(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        minijinja::budget::on_dealloc(layout.size());
        self.0.dealloc(ptr, layout)
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.0.realloc(ptr, layout, new_size);
        if !p.is_null() {
            minijinja::budget::on_dealloc(layout.size());
            minijinja::budget::on_alloc(new_size);
        }
        p
    }
}

/// This crate's unit tests count like the binary does.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOC: Budgeted<std::alloc::System> = Budgeted(std::alloc::System);
