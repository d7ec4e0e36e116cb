//! Herald's patch: a memory and iteration budget for one render.
//!
//! MiniJinja bounds a render's instructions (fuel) but not what one
//! instruction may allocate: `"%999999999s"|format("x")`, `[1]|batch(1e8)` or
//! `s ~ s` repeated build values of any size, and an allocation the allocator
//! refuses aborts the process. A template is written by a tenant and rendered
//! on threads every tenant shares, so a render must fail softly instead.
//!
//! While a render is in a budget scope (`enter`), this thread's net bytes
//! allocated are counted (the embedding application's global allocator calls
//! `on_alloc`/`on_dealloc`), and three checks keep them under the limit:
//!
//! - before each instruction the VM calls `check`, which fails once the count
//!   is over the limit (growth spread over instructions: captures, loops);
//! - an operation whose result can be far larger than its operands (string
//!   repetition, `format`'s width, `indent`, `replace`, `batch`, `slice`,
//!   sequence concatenation) asks `ensure(bytes)` before it allocates;
//! - loops inside one instruction (formatting a container, collecting an
//!   iterator) call `over` per item and stop early; the scope stays tripped, so
//!   the render fails at the next check.
//!
//! Items yielded by value iterators are counted too (`tick`), so a lazily
//! repeated or concatenated sequence cannot keep a thread busy without
//! allocating either.
//!
//! Outside a scope every function is a no-op: MiniJinja behaves as published.

use std::cell::Cell;

use crate::error::{Error, ErrorKind};

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static NET: Cell<isize> = const { Cell::new(0) };
    static LIMIT: Cell<isize> = const { Cell::new(0) };
    static ITEMS: Cell<u64> = const { Cell::new(0) };
    static MAX_ITEMS: Cell<u64> = const { Cell::new(0) };
    static TRIPPED: Cell<bool> = const { Cell::new(false) };
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// How deep values may be nested when they are formatted or serialised in a
/// scope: each level is a native stack frame, and a template can nest a list
/// in itself as often as its fuel allows.
pub const MAX_DEPTH: u32 = 200;

/// One level of a recursive walk over a value (see `descend`).
pub struct Level(bool);

impl Drop for Level {
    fn drop(&mut self) {
        if self.0 {
            DEPTH.with(|c| c.set(c.get().saturating_sub(1)));
        }
    }
}

/// Enters one level of formatting or serialising a container: `None` (and the
/// scope tripped) past `MAX_DEPTH` levels in a scope.
#[inline]
pub fn descend() -> Option<Level> {
    if !ACTIVE.with(Cell::get) {
        return Some(Level(false));
    }
    let d = DEPTH.with(|c| {
        let d = c.get() + 1;
        c.set(d);
        d
    });
    let level = Level(true);
    if d > MAX_DEPTH || over() {
        TRIPPED.with(|c| c.set(true));
        return None;
    }
    Some(level)
}

/// The message of the error a render over its budget fails with.
pub const EXCEEDED: &str = "template memory budget exceeded";

/// Restores the thread's previous scope (normally none) when dropped.
#[must_use = "the scope ends when the guard is dropped"]
pub struct Guard {
    prev: (bool, isize, isize, u64, u64, bool),
}

impl Drop for Guard {
    fn drop(&mut self) {
        let (a, n, l, i, m, t) = self.prev;
        ACTIVE.with(|c| c.set(a));
        NET.with(|c| c.set(n));
        LIMIT.with(|c| c.set(l));
        ITEMS.with(|c| c.set(i));
        MAX_ITEMS.with(|c| c.set(m));
        TRIPPED.with(|c| c.set(t));
    }
}

/// Starts a budget scope on this thread: at most `max_bytes` net bytes
/// allocated and `max_items` items iterated until the guard is dropped.
pub fn enter(max_bytes: usize, max_items: u64) -> Guard {
    let prev = (
        ACTIVE.with(Cell::get),
        NET.with(Cell::get),
        LIMIT.with(Cell::get),
        ITEMS.with(Cell::get),
        MAX_ITEMS.with(Cell::get),
        TRIPPED.with(Cell::get),
    );
    NET.with(|c| c.set(0));
    LIMIT.with(|c| c.set(max_bytes.min(isize::MAX as usize) as isize));
    ITEMS.with(|c| c.set(0));
    MAX_ITEMS.with(|c| c.set(max_items));
    TRIPPED.with(|c| c.set(false));
    ACTIVE.with(|c| c.set(true));
    Guard { prev }
}

/// Called by the global allocator for every allocation of `n` bytes. Must not
/// allocate (thread locals of const-initialised `Cell`s do not).
#[inline]
pub fn on_alloc(n: usize) {
    let _ = ACTIVE.try_with(|a| {
        if a.get() {
            NET.with(|c| c.set(c.get().saturating_add(n as isize)));
        }
    });
}

/// Called by the global allocator for every deallocation of `n` bytes.
#[inline]
pub fn on_dealloc(n: usize) {
    let _ = ACTIVE.try_with(|a| {
        if a.get() {
            NET.with(|c| c.set(c.get().saturating_sub(n as isize)));
        }
    });
}

/// Whether this thread is in a scope that went over its budget; trips the
/// scope if so, so that a loop which stops on it leaves the render failing.
#[inline]
pub fn over() -> bool {
    if !ACTIVE.with(Cell::get) {
        return false;
    }
    if TRIPPED.with(Cell::get) {
        return true;
    }
    if NET.with(Cell::get) > LIMIT.with(Cell::get) {
        TRIPPED.with(|c| c.set(true));
        return true;
    }
    false
}

/// Whether the current scope was tripped (read by the embedder after a failed
/// render to tell a budget failure from any other).
pub fn tripped() -> bool {
    ACTIVE.with(Cell::get) && TRIPPED.with(Cell::get)
}

/// Net bytes allocated in the current scope (0 outside one).
pub fn used() -> usize {
    if ACTIVE.with(Cell::get) {
        NET.with(Cell::get).max(0) as usize
    } else {
        0
    }
}

fn exceeded() -> Error {
    TRIPPED.with(|c| c.set(true));
    Error::new(ErrorKind::InvalidOperation, EXCEEDED)
}

/// Fails once the scope is over its budget (called before each instruction).
#[inline]
pub fn check() -> Result<(), Error> {
    if over() {
        Err(exceeded())
    } else {
        Ok(())
    }
}

/// Fails if allocating `bytes` more would take the scope over its budget;
/// `None` (an overflowing size computation) always fails in a scope.
pub fn ensure(bytes: Option<usize>) -> Result<(), Error> {
    if !ACTIVE.with(Cell::get) {
        return Ok(());
    }
    let Some(bytes) = bytes else {
        return Err(exceeded());
    };
    let net = NET.with(Cell::get).max(0) as usize;
    if TRIPPED.with(Cell::get) || net.saturating_add(bytes) > LIMIT.with(Cell::get) as usize {
        return Err(exceeded());
    }
    // Herald: the memory budget is net, so an allocation freed again (in a
    // loop: `"%9999s"|slice(100000)` each time round) would cost only fuel,
    // one unit for work proportional to its size. Its gross size is also
    // charged to the item budget, so the total work of a render is bounded
    // as the items it iterates are (found by the render fuzz: a loop of such
    // slices ran for minutes within its fuel).
    charge((bytes / BYTES_PER_ITEM) as u64)
}

/// How many bytes an `ensure`d allocation costs one item of the budget.
const BYTES_PER_ITEM: usize = 64;

/// Counts `n` items of work against the scope's item budget; fails (and
/// trips the scope) once it is spent.
pub fn charge(n: u64) -> Result<(), Error> {
    if !ACTIVE.with(Cell::get) {
        return Ok(());
    }
    let total = ITEMS.with(|c| {
        let t = c.get().saturating_add(n);
        c.set(t);
        t
    });
    if total > MAX_ITEMS.with(Cell::get) {
        return Err(exceeded());
    }
    Ok(())
}

/// Counts one item yielded by an iterator; false (and the scope tripped) once
/// the scope's item budget is spent.
#[inline]
pub fn tick() -> bool {
    if !ACTIVE.with(Cell::get) {
        return true;
    }
    let n = ITEMS.with(|c| {
        let n = c.get() + 1;
        c.set(n);
        n
    });
    if n > MAX_ITEMS.with(Cell::get) || over() {
        TRIPPED.with(|c| c.set(true));
        return false;
    }
    true
}

/// The bytes of `n` values, for `ensure`.
pub fn values(n: usize) -> Option<usize> {
    n.checked_mul(std::mem::size_of::<crate::value::Value>())
}

/// An iterator that counts its items against the scope's item budget and
/// ends early once the scope is over its budget. Its size hint is the inner
/// one (a loop's `loop.last` and `loop.length` depend on an exact hint); the
/// lazy sequences whose hint could be huge are bounded when they are made.
struct Ticking<I>(I);

impl<I: Iterator> Iterator for Ticking<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        if !tick() {
            return None;
        }
        self.0.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

/// Wraps an object's iterator in a scope (unchanged outside one).
pub(crate) fn ticking<T: 'static>(
    iter: Box<dyn Iterator<Item = T> + Send + Sync>,
) -> Box<dyn Iterator<Item = T> + Send + Sync> {
    if ACTIVE.with(Cell::get) {
        Box::new(Ticking(iter))
    } else {
        iter
    }
}
