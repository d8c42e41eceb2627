//! `lockfile`: jobs that share a file take turns doing I/O to it. Each I/O holds the file's
//! lock from just before it is queued until it completes: `exclusive` takes it alone for every
//! I/O, `readwrite` shares it among reads and takes it alone for writes (and trims, syncs).
//!
//! fio's manual describes the two modes; what fio 3.33 does was measured with two jobs on one
//! file and every read and write slowed to 100 ms (docs/fio-observed/file-setup.md §13 and
//! files2.md): exclusive doubles both pairs' time, readwrite leaves two readers in parallel,
//! and bytes, I/O counts and offsets never change.
//!
//! A job's own I/Os never wait for each other: the lock counts its holds per job, so a deep
//! queue keeps its I/O in flight together. A job that finds the file taken by another first
//! lets its own I/O finish (releasing what it holds) and only then waits, so two jobs can
//! never each wait for the other.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use fiox_engine::Ddir;
use fiox_options::LockMode;

/// Who holds one file, and how.
#[derive(Default)]
struct State {
    /// The job holding the file alone, and how many of its I/Os do.
    writer: Option<u64>,
    writes: u32,
    /// Jobs holding the file for reads, with their number of reads in flight.
    readers: HashMap<u64, u32>,
    /// The most jobs ever holding the file at once (a check for tests).
    most_holders: usize,
}

impl State {
    fn may(&self, me: u64, alone: bool) -> bool {
        let writer_ok = self.writer.is_none_or(|w| w == me);
        writer_ok && (!alone || self.readers.keys().all(|&r| r == me))
    }

    fn holders(&self) -> usize {
        let mut n = self.readers.len();
        if let Some(w) = self.writer {
            n += usize::from(!self.readers.contains_key(&w));
        }
        n
    }
}

/// One file's lock, shared by every job using the file in this run.
#[derive(Default)]
pub struct FileLock {
    state: Mutex<State>,
    freed: Condvar,
}

impl FileLock {
    fn try_take(&self, me: u64, alone: bool) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !s.may(me, alone) {
            return false;
        }
        if alone {
            s.writer = Some(me);
            s.writes += 1;
        } else {
            *s.readers.entry(me).or_insert(0) += 1;
        }
        s.most_holders = s.most_holders.max(s.holders());
        true
    }

    /// Waits until the file can be taken; gives up (false) when `stop` is set.
    fn take(&self, me: u64, alone: bool, stop: &dyn Fn() -> bool) -> bool {
        loop {
            if self.try_take(me, alone) {
                return true;
            }
            if stop() {
                return false;
            }
            let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if !s.may(me, alone) {
                // Woken by a release; the timeout only bounds how late a stop is seen.
                let _ = self.freed.wait_timeout(s, Duration::from_millis(20));
            }
        }
    }

    fn release(&self, me: u64, alone: bool) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if alone {
            if s.writer == Some(me) {
                s.writes -= 1;
                if s.writes == 0 {
                    s.writer = None;
                }
            }
        } else if let Some(n) = s.readers.get_mut(&me) {
            *n -= 1;
            if *n == 0 {
                s.readers.remove(&me);
            }
        }
        drop(s);
        self.freed.notify_all();
    }

    /// The most jobs that ever held the file at the same time.
    #[cfg(test)]
    pub fn most_holders(&self) -> usize {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).most_holders
    }
}

/// The run's file locks, by file name as the jobs name their files (fio shares a lock among
/// jobs that name the same file).
pub fn lock_of(path: &Path) -> Arc<FileLock> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<FileLock>>>> = OnceLock::new();
    let mut map = LOCKS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    map.entry(path.to_path_buf()).or_default().clone()
}

/// One job's side of the locks of its files.
pub struct JobLocks {
    mode: LockMode,
    me: u64,
    files: Vec<Arc<FileLock>>,
    /// Holds per file: (shared, alone), released when the job ends however it ends.
    held: Vec<(u32, u32)>,
}

impl JobLocks {
    /// `None` under `lockfile=none`.
    pub fn new(mode: LockMode, me: u64, paths: &[&Path]) -> Option<JobLocks> {
        if mode == LockMode::None {
            return None;
        }
        let files: Vec<Arc<FileLock>> = paths.iter().map(|p| lock_of(p)).collect();
        let held = vec![(0, 0); files.len()];
        Some(JobLocks { mode, me, files, held })
    }

    fn alone(&self, ddir: Ddir) -> bool {
        self.mode == LockMode::Exclusive || ddir != Ddir::Read
    }

    fn note(&mut self, file: usize, alone: bool, by: i32) {
        let h = &mut self.held[file];
        let n = if alone { &mut h.1 } else { &mut h.0 };
        *n = n.saturating_add_signed(by);
    }

    /// Takes file `file` for one I/O if no other job is in the way.
    pub fn try_take(&mut self, file: usize, ddir: Ddir) -> bool {
        let alone = self.alone(ddir);
        let ok = self.files[file].try_take(self.me, alone);
        if ok {
            self.note(file, alone, 1);
        }
        ok
    }

    /// Waits for file `file`; false if `stop` ended the wait first. Call only while the job
    /// holds nothing, or two jobs could wait for each other.
    pub fn take(&mut self, file: usize, ddir: Ddir, stop: &dyn Fn() -> bool) -> bool {
        let alone = self.alone(ddir);
        let ok = self.files[file].take(self.me, alone, stop);
        if ok {
            self.note(file, alone, 1);
        }
        ok
    }

    /// The I/O of direction `ddir` to file `file` is over.
    pub fn release(&mut self, file: usize, ddir: Ddir) {
        let alone = self.alone(ddir);
        let h = self.held[file];
        if (if alone { h.1 } else { h.0 }) == 0 {
            return;
        }
        self.files[file].release(self.me, alone);
        self.note(file, alone, -1);
    }
}

impl Drop for JobLocks {
    fn drop(&mut self) {
        // A job that ends with I/O still counted (an error, a hung device) must not keep
        // the other jobs waiting.
        for (i, &(shared, alone)) in self.held.iter().enumerate() {
            for _ in 0..shared {
                self.files[i].release(self.me, false);
            }
            for _ in 0..alone {
                self.files[i].release(self.me, true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Two threads doing "I/O" (a short sleep) on one file: how many were ever inside at once.
    fn overlap(mode: LockMode, dirs: [Ddir; 2]) -> u32 {
        let path = PathBuf::from(format!("/nonexistent/fiox-lock-test-{mode:?}-{dirs:?}"));
        let inside = Arc::new(AtomicU32::new(0));
        let most = Arc::new(AtomicU32::new(0));
        std::thread::scope(|s| {
            for (k, ddir) in dirs.into_iter().enumerate() {
                let (inside, most, path) = (inside.clone(), most.clone(), path.clone());
                s.spawn(move || {
                    let mut l = JobLocks::new(mode, k as u64 + 1, &[path.as_path()]).unwrap();
                    for _ in 0..20 {
                        assert!(l.take(0, ddir, &|| false));
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(2));
                        inside.fetch_sub(1, Ordering::SeqCst);
                        l.release(0, ddir);
                    }
                });
            }
        });
        most.load(Ordering::SeqCst)
    }

    #[test]
    fn exclusive_is_one_at_a_time_and_readwrite_lets_readers_share() {
        assert_eq!(overlap(LockMode::Exclusive, [Ddir::Read, Ddir::Read]), 1);
        assert_eq!(overlap(LockMode::Exclusive, [Ddir::Write, Ddir::Write]), 1);
        assert_eq!(overlap(LockMode::ReadWrite, [Ddir::Read, Ddir::Write]), 1);
        assert_eq!(overlap(LockMode::ReadWrite, [Ddir::Write, Ddir::Write]), 1);
        // Two readers overlap on a machine that runs both threads at once; 20 sleeps of 2 ms
        // each make that all but certain, but a loaded machine may serialise them anyway.
        assert!(overlap(LockMode::ReadWrite, [Ddir::Read, Ddir::Read]) >= 1);
    }

    #[test]
    fn a_job_holds_many_of_its_own_and_releases_on_drop() {
        let p = PathBuf::from("/nonexistent/fiox-lock-test-own");
        let mut a = JobLocks::new(LockMode::Exclusive, 1, &[p.as_path()]).unwrap();
        let mut b = JobLocks::new(LockMode::Exclusive, 2, &[p.as_path()]).unwrap();
        assert!(a.try_take(0, Ddir::Write) && a.try_take(0, Ddir::Read), "its own I/Os share");
        assert!(!b.try_take(0, Ddir::Read));
        drop(a);
        assert!(b.try_take(0, Ddir::Write), "dropping a job frees what it held");
        assert_eq!(lock_of(&p).most_holders(), 1);
    }
}
