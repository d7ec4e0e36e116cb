//! The stack a render runs on: one region per thread, mapped once and reused.
//!
//! A template can nest a value in itself as deep as its fuel allows, and
//! dropping or comparing it recurses once per level (see `RENDER_STACK`), so
//! renders need more stack than a thread has. `stacker::grow` maps a fresh
//! stack per call, 8 to 12 µs each (measured, release build), which is per
//! rendered field: a few percent of a delivery's whole cost. Here each thread
//! keeps its region (`psm::on_stack` switches to it, well under a
//! microsecond), mapped without reserving memory: only the pages a render
//! touches are resident. A deep render leaves its pages resident, so they are
//! given back (`MADV_DONTNEED`) after a failed render, which is where deep
//! ones end, and every `RELEASE_EVERY` renders.

use std::cell::Cell;
use std::panic::AssertUnwindSafe;

/// Usable stack per thread (see `super::RENDER_STACK`).
const SIZE: usize = super::RENDER_STACK;
/// An unmapped gap below the stack: an overflow faults instead of writing
/// into another mapping.
const GUARD: usize = 64 * 1024;
/// Renders between two releases of the region's pages.
const RELEASE_EVERY: u32 = 256;

struct Region {
    base: *mut std::ffi::c_void,
    uses: u32,
}

impl Region {
    fn new() -> Option<Region> {
        use rustix::mm::{MapFlags, MprotectFlags, ProtFlags};
        // SAFETY: a new anonymous mapping, not yet shared with anything; the
        // guard is its lowest part.
        unsafe {
            let base = rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                SIZE + GUARD,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::STACK,
            )
            .ok()?;
            if rustix::mm::mprotect(base, GUARD, MprotectFlags::empty()).is_err() {
                let _ = rustix::mm::munmap(base, SIZE + GUARD);
                return None;
            }
            Some(Region { base, uses: 0 })
        }
    }

    fn stack(&self) -> *mut u8 {
        // SAFETY: within the mapping.
        unsafe { self.base.cast::<u8>().add(GUARD) }
    }

    /// Gives the touched pages back to the kernel (they read as zeros after).
    fn release(&mut self) {
        self.uses = 0;
        // SAFETY: no render runs on the region (it is not in a `run`), and
        // nothing refers to its contents.
        unsafe {
            let _ =
                rustix::mm::madvise(self.stack().cast(), SIZE, rustix::mm::Advice::LinuxDontNeed);
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the region is not in use (it is dropped only when not lent
        // out), and it was mapped with this length.
        unsafe {
            let _ = rustix::mm::munmap(self.base, SIZE + GUARD);
        }
    }
}

thread_local! {
    /// The thread's region, when not lent to a render running on it.
    static CACHED: Cell<Option<Region>> = const { Cell::new(None) };
}

/// Puts the region back for the thread's next render, even if the render
/// panicked.
struct Lent(Option<Region>);

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(mut r) = self.0.take() {
            r.uses += 1;
            if r.uses >= RELEASE_EVERY {
                r.release();
            }
            let _ = CACHED.try_with(|c| c.set(Some(r)));
        }
    }
}

/// Runs `f` on the thread's render stack. A render within a render (none is
/// made today) or a failed mapping falls back to a fresh stack.
pub fn run<R>(f: impl FnOnce() -> R) -> R {
    let Some(region) = CACHED.with(Cell::take).or_else(Region::new) else {
        return stacker::grow(SIZE, f);
    };
    let lent = Lent(Some(region));
    let stack = lent
        .0
        .as_ref()
        .map(Region::stack)
        .unwrap_or(std::ptr::null_mut());
    let mut f = Some(f);
    // SAFETY: `stack` is the usable part of a mapping of `SIZE` bytes, page
    // aligned, used by nothing else while lent; the callback does not unwind
    // (a panic is caught and resumed on the thread's own stack).
    let out = unsafe {
        psm::on_stack(stack, SIZE, || {
            std::panic::catch_unwind(AssertUnwindSafe(|| (f.take().expect("called once"))()))
        })
    };
    drop(lent);
    match out {
        Ok(v) => v,
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// Gives back the pages of this thread's region now (after a render that
/// failed: the deep ones do).
pub fn release() {
    let _ = CACHED.try_with(|c| {
        if let Some(mut r) = c.take() {
            r.release();
            c.set(Some(r));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: u32) -> u32 {
        // a frame of some size, as a render's recursion has
        let pad = std::hint::black_box([n as u8; 512]);
        if n == 0 {
            pad[0] as u32
        } else {
            depth(n - 1) + 1
        }
    }

    #[test]
    fn deep_recursion_fits_and_the_region_is_reused_and_a_panic_comes_back() {
        // 50,000 frames of over 512 bytes: far past a 2 MiB thread stack
        assert_eq!(run(|| depth(50_000)), 50_000);
        let first = CACHED.with(|c| {
            let r = c.take();
            let p = r.as_ref().map(|r| r.base as usize);
            c.set(r);
            p
        });
        assert!(first.is_some());
        assert_eq!(run(|| 7), 7);
        let again = CACHED.with(|c| {
            let r = c.take();
            let p = r.as_ref().map(|r| r.base as usize);
            c.set(r);
            p
        });
        assert_eq!(first, again, "the region is kept");
        let caught = std::panic::catch_unwind(|| run(|| panic!("in a render")));
        assert!(caught.is_err());
        release();
        assert_eq!(
            run(|| depth(1000)),
            1000,
            "usable after a panic and a release"
        );
    }
}
