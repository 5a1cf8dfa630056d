//! A bounded cache of large freed buffers.
//!
//! Allocating a fresh multi-megabyte buffer for every op output costs more than the op itself: the
//! allocator maps new pages and the kernel faults each one in on first touch. Storages of at least
//! [`MIN_POOLED_BYTES`] return their buffer here when dropped, and the next allocation of the same
//! element type and size takes it back, already faulted in. The cache holds at most
//! [`max_cached_bytes`] (env `OXTORCH_CPU_POOL_MB`, default 1024), evicting other buffers to make room
//! for the newest, so memory never grows without bound.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Buffers smaller than this are left to the allocator, which reuses small blocks well.
pub const MIN_POOLED_BYTES: usize = 1 << 20;

type Key = (TypeId, usize);

/// A cached buffer: its size in bytes and the type-erased `Vec<T>`.
type Cached = (usize, Box<dyn Any + Send>);

#[derive(Default)]
struct Pool {
    free: HashMap<Key, Vec<Cached>>,
    bytes: usize,
}

fn pool() -> &'static Mutex<Pool> {
    static POOL: OnceLock<Mutex<Pool>> = OnceLock::new();
    POOL.get_or_init(|| {
        crate::malloc::tune_lazily();
        Default::default()
    })
}

/// The most bytes the cache keeps.
pub fn max_cached_bytes() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var("OXTORCH_CPU_POOL_MB").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(1024) << 20
    })
}

/// An empty vector with capacity for exactly `n` elements, reused from the cache when possible.
pub fn take<T: Send + 'static>(n: usize) -> Vec<T> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    if bytes >= MIN_POOLED_BYTES {
        let mut p = pool().lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, v)) = p.free.get_mut(&(TypeId::of::<T>(), n)).and_then(Vec::pop) {
            p.bytes -= bytes;
            drop(p);
            if let Ok(v) = v.downcast::<Vec<T>>() {
                return *v;
            }
        }
    }
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        // A panic, not the allocator's abort: a service can catch it, and the CLI reports it as
        // an error line. torch's message.
        panic!("{OUT_OF_MEMORY}: you tried to allocate {bytes} bytes.");
    }
    crate::hugepage::advise(&v);
    v
}

/// How a buffer the machine cannot hold is reported (torch's CPU allocator's words), as a panic
/// whose message starts with this.
pub const OUT_OF_MEMORY: &str = "DefaultCPUAllocator: not enough memory";

/// `vec![value; n]` whose allocation failure is the [`OUT_OF_MEMORY`] panic (which dispatch turns
/// into the op's error) rather than the allocator's abort: for kernels' scratch and outputs of
/// any element type, outside the cache. A large buffer's address space is reserved once as a
/// probe, then `vec!` allocates it (zeros stay lazily zeroed pages, faulted in by the kernel's
/// parallel writes).
pub fn checked_vec<T: Clone>(n: usize, value: T) -> Vec<T> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    if bytes >= MIN_POOLED_BYTES && Vec::<T>::new().try_reserve_exact(n).is_err() {
        panic!("{OUT_OF_MEMORY}: you tried to allocate {bytes} bytes.");
    }
    vec![value; n]
}

/// A vector of `n` copies of `value`, in a cached buffer when one fits.
pub fn filled<T: Copy + Send + 'static>(n: usize, value: T) -> Vec<T> {
    let mut v = take(n);
    v.resize(n, value);
    v
}

/// Returns a buffer to the cache (large buffers only, while the cache has room); its elements are
/// dropped first.
pub fn give<T: Send + 'static>(mut v: Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < MIN_POOLED_BYTES {
        return;
    }
    if bytes > max_cached_bytes() {
        return;
    }
    v.clear();
    let mut p = pool().lock().unwrap_or_else(|e| e.into_inner());
    // Make room by evicting other cached buffers: the newest sizes are the likeliest to recur.
    let mut evicted: Vec<Cached> = Vec::new();
    while p.bytes + bytes > max_cached_bytes() {
        let Some(key) = p.free.keys().next().copied() else {
            break;
        };
        let bucket = p.free.get_mut(&key).expect("key just listed");
        if let Some(victim) = bucket.pop() {
            p.bytes -= victim.0;
            evicted.push(victim);
        }
        if p.free.get(&key).is_some_and(Vec::is_empty) {
            p.free.remove(&key);
        }
    }
    p.bytes += bytes;
    p.free.entry((TypeId::of::<T>(), v.capacity())).or_default().push((bytes, Box::new(v)));
    drop(p);
    drop(evicted);
}

/// Bytes currently held by the cache.
pub fn cached_bytes() -> usize {
    pool().lock().unwrap_or_else(|e| e.into_inner()).bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_buffers_are_reused_and_small_ones_are_not() {
        let n = (MIN_POOLED_BYTES / 4) + 123;
        let mut v: Vec<f32> = take(n);
        v.resize(n, 1.0);
        let ptr = v.as_ptr();
        give(v);
        let w: Vec<f32> = take(n);
        assert_eq!(w.as_ptr(), ptr);
        assert!(w.is_empty() && w.capacity() >= n);
        // A different element type of the same byte size does not get the f32 buffer.
        give(w);
        let u: Vec<i32> = take(n);
        assert_ne!(u.as_ptr() as usize, ptr as usize);
        let small: Vec<u8> = take(16);
        give(small);
        assert!(cached_bytes() <= max_cached_bytes());
    }
}
