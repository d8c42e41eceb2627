//! `write_iolog`: every issued I/O, in fio's iolog version 3 text.

use anyhow::{Context, Result};
use fiox_engine::Ddir;

use crate::plan::io::NextIo;
use crate::plan::WorkerPlan;

/// `write_iolog`: every issued I/O, in fio's iolog version 3 text (`<time> <file> <action>
/// <offset> <length>`), kept in memory and written when the job ends. The time is in
/// microseconds since the job started, as fio 3.33 writes it (measured: a 100 ms thinktime
/// shows as about 100000 between lines), and as `read_iolog` reads it back.
pub(super) struct IoLog {
    text: String,
    names: Vec<String>,
    opened: Vec<bool>,
    /// Files opened since the last loop's end, closed again since or not.
    used: Vec<bool>,
    /// The offset of the latest read, write or trim of any file, or of the block a pass
    /// ended on ([`IoLog::tried`]): a sync's line carries it, whichever file the sync went to
    /// (fio 3.33's logs: it is the offset its I/O unit last held).
    prev: u64,
}

impl IoLog {
    pub(super) fn new(plan: &WorkerPlan) -> IoLog {
        let names: Vec<String> = plan.files.iter().map(|f| f.path.display().to_string()).collect();
        let mut text = String::from("fio version 3 iolog\n");
        for n in &names {
            text.push_str(&format!("0 {n} add\n"));
        }
        IoLog { opened: vec![false; names.len()], used: vec![false; names.len()], prev: 0, names, text }
    }

    pub(super) fn issue(&mut self, now_ns: u64, io: &NextIo) {
        use std::fmt::Write as _;
        let us = now_ns / 1_000;
        let name = &self.names[io.file()];
        // fio opens files on first use and logs it.
        if !self.opened[io.file()] {
            self.opened[io.file()] = true;
            self.used[io.file()] = true;
            let _ = writeln!(self.text, "{us} {name} open");
        }
        let action = match io.ddir() {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
            Ddir::Sync => "sync",
            Ddir::DataSync => "datasync",
            Ddir::SyncRange => "sync_file_range",
        };
        if matches!(io.ddir(), Ddir::Sync | Ddir::DataSync | Ddir::SyncRange) {
            let _ = writeln!(self.text, "{us} {name} {action} {} 0", self.prev);
        } else {
            self.prev = io.offset;
            let _ = writeln!(self.text, "{us} {name} {action} {} {}", io.offset, io.len());
        }
    }

    /// A pass ended on a block at `offset` it did not issue: fio's next sync line carries
    /// that offset (size=10k on a 10 KiB file: `write 0`, `write 4096`, then `sync 8192`).
    pub(super) fn tried(&mut self, offset: u64) {
        self.prev = offset;
    }

    /// The file service found file `f` done and closed it (nothing when it is not open).
    pub(super) fn close(&mut self, now_ns: u64, f: usize) {
        use std::fmt::Write as _;
        if std::mem::take(&mut self.opened[f]) {
            let _ = writeln!(self.text, "{} {} close", now_ns / 1_000, self.names[f]);
        }
    }

    /// `end_fsync` or `fsync_on_close`: the sync of each of the job's files when it ends,
    /// whether the job used it or not (fio 3.33 syncs all four files of `nrfiles=4` when
    /// `size=` lets the job write two, as fiox does). A file that is not open is opened for
    /// it and closed after.
    pub(super) fn end_sync(&mut self, now_ns: u64) {
        use std::fmt::Write as _;
        let us = now_ns / 1_000;
        let last = self.prev;
        for (i, name) in self.names.iter().enumerate() {
            if self.opened[i] {
                let _ = writeln!(self.text, "{us} {name} sync {last} 0");
            } else {
                let _ = writeln!(self.text, "{us} {name} open\n{us} {name} sync {last} 0\n{us} {name} close");
            }
        }
    }

    /// The end of one loop of several: fio closes the files still open (the next loop opens
    /// them again on first use). Returns the files the loop used, for [`IoLog::loop_synced`].
    pub(super) fn loop_closed(&mut self, now_ns: u64) -> Vec<usize> {
        use std::fmt::Write as _;
        for (i, open) in self.opened.iter_mut().enumerate() {
            if std::mem::take(open) {
                let _ = writeln!(self.text, "{} {} close", now_ns / 1_000, self.names[i]);
            }
        }
        (0..self.used.len()).filter(|&i| std::mem::take(&mut self.used[i])).collect()
    }

    /// `end_fsync` or `fsync_on_close` between two loops: fio opens each file the loop used
    /// again, syncs it and closes it (observed in fio 3.33's logs), after the loop's closes.
    pub(super) fn loop_synced(&mut self, files: &[usize], now_ns: u64) {
        use std::fmt::Write as _;
        let us = now_ns / 1_000;
        let last = self.prev;
        for &i in files {
            let name = &self.names[i];
            let _ = writeln!(self.text, "{us} {name} open\n{us} {name} sync {last} 0\n{us} {name} close");
        }
    }

    /// Counts `files` as used by the job since the last loop's end again (for
    /// [`IoLog::end_sync`]).
    pub(super) fn mark_used(&mut self, files: &[usize]) {
        for &i in files {
            self.used[i] = true;
        }
    }

    pub(super) fn finish(mut self, now_ns: u64, path: &str) -> Result<()> {
        for (n, open) in self.names.iter().zip(&self.opened) {
            if *open {
                self.text.push_str(&format!("{} {n} close\n", now_ns / 1_000));
            }
        }
        // fio opens the log for appending (O_APPEND, never truncating), so an existing log
        // grows and every clone of a job (numjobs) naming one log adds its own, version line
        // and all, in the order the clones end. fio's clones write their logs through an 8 KiB
        // buffer as they run, so logs longer than that interleave in 8 KiB pieces, cutting lines
        // (its HOWTO: "the file may be corrupt"); fiox writes each clone's log in one append at
        // its end, which is what fio writes whenever each clone's log is under 8 KiB.
        use std::io::Write as _;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(self.text.as_bytes()))
            .with_context(|| format!("cannot write write_iolog file '{path}'"))
    }
}
