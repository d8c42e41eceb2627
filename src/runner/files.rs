//! Which of a job's files the next I/O goes to (`file_service_type`, `openfiles`), as fio 3.33
//! picks them (docs/fio-observed/file-service.md has the sequences measured):
//! - `roundrobin[:N]` (the default, N=1): N I/Os to each file in turn;
//! - `sequential`: a file until it is done, then the next;
//! - `random[:N]`: N I/Os to a file drawn at random;
//! - `zipf:θ`, `pareto:h`, `normal:σ` (`gauss`): a file drawn from that distribution for each
//!   I/O, where the hot files keep being read after their region is done.
//!
//! The first three skip files whose region is done for this pass, so each file gets its whole
//! region; `openfiles=K` limits the choice to K files at a time, taking the next file in when one
//! is done.
//!
//! As in fio, a file is found done lazily: only when a read, write or trim is next given it
//! does the picker close it (the close `write_iolog` records there) and choose again. An
//! `fsync=N` sync takes the next choice like any I/O ([`FilePicker::pick_sync`]) but needs no
//! offset, so it may land on a file that is done and not yet closed.

use fiox_options::FileService as Service;

use super::offsets::{Dist, Rng};

/// The file chooser of one job.
pub struct FilePicker {
    service: Service,
    dist: Option<Dist>,
    /// Files whose region is done for this pass.
    finished: Vec<bool>,
    /// Files that may be chosen now (`openfiles`), in index order.
    open: Vec<usize>,
    /// How many files may be open at once (all of them with `openfiles=0`).
    limit: usize,
    /// The next file to take into `open` this pass.
    next_unopened: usize,
    current: Option<usize>,
    /// Done files the last [`FilePicker::pick`] closed before its choice.
    skipped: u32,
    /// Whether the last [`FilePicker::pick`] closed the pass's last file (a new pass began).
    wrapped: bool,
    /// I/Os left on `current` before the next choice.
    left: u32,
    /// Files closed since the last [`FilePicker::take_closed`], in order; kept only when asked
    /// for (`write_iolog`).
    closed: Option<Vec<usize>>,
}

impl FilePicker {
    pub fn new(service: Service, files: usize, openfiles: usize) -> FilePicker {
        let files = files.max(1);
        let limit = if openfiles == 0 { files } else { openfiles.min(files) };
        let dist = match &service {
            Service::Weighted(d) => Dist::new(d, files as u64, 1, 0),
            _ => None,
        };
        let mut p = FilePicker {
            service,
            dist,
            finished: vec![false; files],
            open: Vec::with_capacity(limit),
            limit,
            next_unopened: 0,
            current: None,
            skipped: 0,
            wrapped: false,
            left: 0,
            closed: None,
        };
        p.refill();
        p
    }

    /// Takes unfinished files into the open set up to the limit, in index order.
    fn refill(&mut self) {
        while self.open.len() < self.limit && self.next_unopened < self.finished.len() {
            if !self.finished[self.next_unopened] {
                self.open.push(self.next_unopened);
            }
            self.next_unopened += 1;
        }
    }

    /// Records the files closed from now on, for [`FilePicker::take_closed`].
    pub fn track_closes(&mut self) {
        self.closed.get_or_insert_with(Vec::new);
    }

    /// The files closed since the last call, in the order they were closed.
    pub fn take_closed(&mut self) -> Vec<usize> {
        self.closed.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The file of the next read, write or trim: a file that is done is closed and the choice
    /// made again.
    // One file is decided in line (it was a call on every I/O); several are a call.
    #[inline(always)]
    pub fn pick(&mut self, rng: &mut Rng) -> usize {
        if self.finished.len() == 1 {
            return 0;
        }
        self.pick_of_many(rng)
    }

    #[inline(never)]
    fn pick_of_many(&mut self, rng: &mut Rng) -> usize {
        self.skipped = 0;
        self.wrapped = false;
        loop {
            let f = self.choose(rng);
            if self.dist.is_some() || !self.finished[f] {
                return f;
            }
            self.close(f);
            self.skipped += 1;
        }
    }

    /// How many done files the last [`FilePicker::pick`] closed before choosing (fio drew the
    /// I/O's direction again for each).
    #[inline]
    pub fn skipped(&self) -> u32 {
        self.skipped
    }

    /// Whether `f` is the only file not done in this pass.
    pub fn last_open(&self, f: usize) -> bool {
        self.finished.iter().enumerate().all(|(i, &done)| done || i == f)
    }

    /// Says that file `f` is done for this pass and closes it now, rather than when it is
    /// next chosen (a mixed job finds a file done on the draw that has no room in it).
    /// Returns whether it did: files drawn from a distribution are never done.
    pub fn close_now(&mut self, f: usize) -> bool {
        if self.dist.is_some() || self.finished.get(f).is_none_or(|&done| done) {
            return false;
        }
        self.finished[f] = true;
        self.close(f);
        true
    }

    /// How many files are done for this pass but not closed yet.
    pub fn done_unclosed(&self) -> u32 {
        self.open.iter().filter(|&&f| self.finished[f]).count() as u32
    }

    /// Records the close of `f`, the last file of a pass that ends now (for `write_iolog`),
    /// without choosing again: the next loop puts every file back.
    pub fn record_close(&mut self, f: usize) {
        if let Some(c) = &mut self.closed {
            c.push(f);
        }
    }

    /// Whether the last pick's closes ended the pass over the files (see
    /// [`FilePicker::skipped`]).
    #[inline]
    pub fn wrapped(&self) -> bool {
        self.wrapped
    }

    /// The file of an `fsync=N` sync: the next choice, whether or not that file is done.
    pub fn pick_sync(&mut self, rng: &mut Rng) -> usize {
        if self.finished.len() == 1 {
            return 0;
        }
        self.choose(rng)
    }

    /// The next choice among the open files, following the service type.
    fn choose(&mut self, rng: &mut Rng) -> usize {
        let n = self.finished.len();
        if let Some(d) = &self.dist {
            // Distributions draw for every I/O and never skip: the hot files are re-read.
            return d.sample(rng, n as u64) as usize;
        }
        if let Some(c) = self.current.filter(|&c| self.left > 0 && self.open.contains(&c)) {
            self.left -= 1;
            return c;
        }
        let (file, per) = match self.service {
            Service::RoundRobin(k) => {
                // The next open file after the current one, wrapping to the first.
                let after = self.current.and_then(|c| self.open.iter().copied().find(|&f| f > c));
                (after.unwrap_or(self.open[0]), k)
            }
            Service::Sequential => (self.open[0], u32::MAX),
            Service::Random(k) => (self.open[rng.below(self.open.len() as u64) as usize], k),
            Service::Weighted(_) => unreachable!("distributions are drawn above"),
        };
        self.current = Some(file);
        self.left = per - 1;
        file
    }

    /// Says that file `f`'s region is done for this pass: the next choice of it closes it.
    pub fn finished(&mut self, f: usize) {
        if self.dist.is_some() || self.finished.get(f).is_none_or(|&done| done) {
            return;
        }
        self.finished[f] = true;
    }

    /// A new loop of the job: every file is back, closed by the loop's end. Round robin goes
    /// on from the file after the last one chosen (fio 3.33 gives a loop's first I/O the file
    /// after the one its previous loop's last sync went to); `sequential` starts again from the
    /// first file.
    pub fn new_loop(&mut self) {
        self.finished.fill(false);
        self.open.clear();
        self.next_unopened = 0;
        self.left = 0;
        if matches!(self.service, Service::Sequential) {
            self.current = None;
        }
        self.refill();
    }

    /// Closes done file `f`: it is not chosen again until every file is closed (a new pass,
    /// with every file back), and the next file takes its place among the open ones.
    fn close(&mut self, f: usize) {
        self.open.retain(|&o| o != f);
        if let Some(c) = &mut self.closed {
            c.push(f);
        }
        self.refill();
        if self.open.is_empty() {
            // A new pass starts again from the first file.
            self.wrapped = true;
            self.finished.fill(false);
            self.next_unopened = 0;
            self.current = None;
            self.left = 0;
            self.refill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files of 16 I/Os over 4 files of 4 blocks, each file done after its 4th I/O.
    fn order(service: &str, openfiles: usize) -> Vec<usize> {
        let mut p = FilePicker::new(Service::parse(service).unwrap(), 4, openfiles);
        let mut rng = Rng::new(7);
        let mut count = [0; 4];
        (0..16)
            .map(|_| {
                let f = p.pick(&mut rng);
                count[f] += 1;
                if count[f] == 4 {
                    p.finished(f);
                }
                f
            })
            .collect()
    }

    #[test]
    fn fio_3_33_file_orders() {
        // As fio 3.33 issues them (write_iolog of nrfiles=4 filesize=16k bs=4k rw=read).
        assert_eq!(order("roundrobin", 0), [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
        assert_eq!(order("roundrobin", 2), [0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3]);
        assert_eq!(order("roundrobin:2", 0), [0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(order("roundrobin:2", 2), [0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3]);
        assert_eq!(order("sequential", 0), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
        assert_eq!(order("sequential", 2), order("sequential", 0));
        // Random choices skip done files: every file gets exactly its four I/Os.
        for s in ["random", "random:2"] {
            let mut o = order(s, 0);
            o.sort_unstable();
            assert_eq!(o, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3], "{s}");
        }
    }

    #[test]
    fn distributions_favour_hot_files_and_repeat_them() {
        let o = order("zipf:1.2", 0);
        let mut count = [0; 4];
        for f in &o {
            count[*f] += 1;
        }
        assert!(count.iter().max().unwrap() > &4, "{o:?}");
    }

    #[test]
    fn parse_forms() {
        assert_eq!(Service::parse("roundrobin:3"), Ok(Service::RoundRobin(3)));
        assert_eq!(Service::parse("random"), Ok(Service::Random(1)));
        assert!(matches!(Service::parse("gauss:5"), Ok(Service::Weighted(_))));
        for bad in ["roundrobin:0", "random:x", "sequential:2", "zipf:1", "pareto:2", "spiral"] {
            assert!(Service::parse(bad).is_err(), "{bad}");
        }
    }
}
