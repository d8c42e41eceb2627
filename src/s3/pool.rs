//! The objects a bench's reads and deletes choose from: every object the run made and has not
//! deleted. In `mixed`, where reads and deletes run side by side, the pool also keeps which
//! objects are being read, so a DELETE never picks one a GET or HEAD has in flight, and a read
//! never picks one being deleted (it leaves the pool before its DELETE goes out): no request
//! meets a 404 that the bench itself caused (warp's rule for its mixed mode).

use std::collections::HashMap;
use std::sync::Mutex;

pub struct Pool {
    inner: Mutex<Inner>,
    /// Whether reads are tracked (only `mixed` reads and deletes at once).
    guard: bool,
}

#[derive(Default)]
struct Inner {
    keys: Vec<String>,
    /// Keys with reads in flight, and how many.
    reading: HashMap<String, u32>,
}

/// What a delete found to take.
#[derive(Debug, PartialEq)]
pub enum Take {
    Key(String),
    /// Nothing left.
    Empty,
    /// Every object left is being read: try again later.
    Busy,
}

impl Pool {
    pub fn new(guard: bool) -> Pool {
        Pool { inner: Mutex::new(Inner::default()), guard }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn add(&self, key: String) {
        self.lock().keys.push(key);
    }

    pub fn clear(&self) {
        let mut p = self.lock();
        p.keys.clear();
        p.reading.clear();
    }

    /// A key to read, drawn with `r`; held (with the guard) until [`Pool::done`].
    pub fn read(&self, r: u64) -> Option<String> {
        let mut p = self.lock();
        if p.keys.is_empty() {
            return None;
        }
        let key = p.keys[(r % p.keys.len() as u64) as usize].clone();
        if self.guard {
            *p.reading.entry(key.clone()).or_default() += 1;
        }
        Some(key)
    }

    /// The read of `key` is over.
    pub fn done(&self, key: &str) {
        if !self.guard {
            return;
        }
        let mut p = self.lock();
        if let Some(n) = p.reading.get_mut(key) {
            *n -= 1;
            if *n == 0 {
                p.reading.remove(key);
            }
        }
    }

    /// A key to delete, taken out of the pool: the first no read holds, looking from a place
    /// drawn with `r`.
    pub fn take(&self, r: u64) -> Take {
        let mut p = self.lock();
        let n = p.keys.len();
        if n == 0 {
            return Take::Empty;
        }
        let start = (r % n as u64) as usize;
        let free = (0..n).map(|i| (start + i) % n).find(|&i| !p.reading.contains_key(&p.keys[i]));
        match free {
            Some(i) => Take::Key(p.keys.swap_remove(i)),
            None => Take::Busy,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_being_read_is_not_deleted_and_a_deleted_key_is_not_read() {
        let p = Pool::new(true);
        p.add("a".into());
        p.add("b".into());
        let r = p.read(0).unwrap();
        assert_eq!(r, "a");
        // Whatever the draw, the delete takes the key nobody reads.
        for draw in 0..4 {
            let q = Pool::new(true);
            q.add("a".into());
            q.add("b".into());
            let _held = q.read(0);
            assert_eq!(q.take(draw), Take::Key("b".into()), "draw {draw}");
            assert_eq!(q.take(draw), Take::Busy, "only the held key is left");
            q.done("a");
            assert_eq!(q.take(draw), Take::Key("a".into()));
            assert_eq!(q.take(draw), Take::Empty);
            assert_eq!(q.read(draw), None);
        }
        // Two reads of one key hold it until both are over.
        let _second = p.read(0);
        assert_eq!(p.take(0), Take::Key("b".into()));
        p.done("a");
        assert_eq!(p.take(0), Take::Busy);
        p.done("a");
        assert_eq!(p.take(0), Take::Key("a".into()));
        // Without the guard, reads hold nothing.
        let u = Pool::new(false);
        u.add("x".into());
        let _ = u.read(0);
        assert_eq!(u.take(0), Take::Key("x".into()));
    }
}
