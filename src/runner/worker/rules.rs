//! The rules that end a job: its runtime, its size and I/O count (`size`, `io_size`, `loops`,
//! `number_ios`), a stop request, an I/O error, a minimum rate not met. Each is checked in one
//! place, once per pass of the worker's loop.

use std::io::Write;

use fiox_engine::{Ddir, Io};
use fiox_options::{ErrorPolicy, JobSpec, RwMode};
use fiox_stats::ThreadStat;

use crate::plan::io::NextIo;
use crate::plan::WorkerPlan;

/// Why a job ended (or is draining its queue before it ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EndReason {
    /// `runtime` (after `ramp_time`) is over.
    Runtime,
    /// The job issued all it was to issue: its size times its loops, `number_ios`, or the
    /// pattern ran out.
    Done,
    /// Ctrl-C, SIGTERM, or another job's `exitall`.
    Stop,
    /// An I/O error, or a minimum rate not met.
    Error,
}

/// How much a job may issue, and how much it has.
pub(super) struct EndRules {
    /// Clock reading at which the runtime is over (`u64::MAX`: no runtime).
    pub(super) end_ns: u64,
    /// Bytes to issue over all loops (`u64::MAX` for time-based jobs).
    limit: u64,
    ios_limit: u64,
    issued_bytes: u64,
    issued_ios: u64,
    /// In trimwrite modes every block is trimmed and then written; fio counts only the writes
    /// toward the job's size.
    count_trims: bool,
    /// Bytes of one loop (0: time based) and loops whose end was handled (`unlink_each_loop`).
    per_loop: u64,
    loops_done: u64,
    /// The job gives an io_size, or draws random offsets without a random map: its last block
    /// is issued whole, past the size, as fio issues it (see [`EndRules::fit`]).
    whole_blocks: bool,
    /// The bytes issued before the last I/O issued, and whether any was: its loop (by bytes,
    /// `size` per loop) is worked out only where it is needed (`fit_size`), so that issuing an
    /// I/O costs no division.
    last_issue_at: Option<u64>,
    /// Loops are the generator's sequential passes ([`room_past_region`]), not `size` bytes
    /// each: `loops` passes, and more while an io_size of `io_size` bytes leaves at least
    /// `max_bs` to do (fio 3.33, docs/fio-observed/seq-room.md). `pass_ended`: a pass is over
    /// and the next has not started.
    passes: bool,
    loops: u64,
    io_size: Option<u64>,
    max_bs: u64,
    pass_ended: bool,
    /// A time-based job: a pass ends as a loop does, and another always starts.
    endless: bool,
    /// The job ended because a pass did and no other was to start.
    pass_ends_job: bool,
}

impl EndRules {
    pub(super) fn new(plan: &WorkerPlan) -> EndRules {
        let spec = &*plan.spec;
        let passes = room_past_region(plan) && !spec.time_based;
        let (ramp_ns, runtime_ns) = (spec.ramp_time_us * 1000, spec.runtime_us * 1000);
        EndRules {
            // A ramp_size ramp has no known end: the runtime is set when it ends (`ramp_over`).
            end_ns: if runtime_ns > 0 && spec.ramp_size == 0 { ramp_ns + runtime_ns } else { u64::MAX },
            // A replay ends with its trace: fio 3.33 ignores size, io_size, loops and number_ios
            // then (measured).
            // A scaled size that holds no block (`size=20%:4k`) moves nothing, even time based.
            limit: if plan.io_bytes == 0 && spec.size_scaled_from.is_some() {
                0
            } else if spec.time_based || plan.replay.is_some() {
                u64::MAX
            } else if reads_back_per_loop(spec) {
                // One loop at a time: its writes are read back before the next (as fio).
                plan.io_bytes
            } else {
                plan.io_bytes.saturating_mul(spec.loops as u64)
            },
            ios_limit: if spec.number_ios > 0 && plan.replay.is_none() { spec.number_ios } else { u64::MAX },
            issued_bytes: 0,
            issued_ios: 0,
            count_trims: !matches!(spec.rw, RwMode::TrimWrite | RwMode::RandTrimWrite),
            per_loop: if spec.time_based || passes { 0 } else { plan.io_bytes },
            loops_done: 0,
            whole_blocks: crate::plan::explicit_io_size(spec).is_some()
                || unmapped_random(spec)
                || (passes && crate::plan::io::min_block(spec) == crate::plan::io::max_block(spec)),
            last_issue_at: None,
            passes,
            loops: spec.loops.max(1) as u64,
            io_size: crate::plan::explicit_io_size(spec).map(|_| plan.io_bytes),
            max_bs: crate::plan::io::max_block(spec),
            pass_ended: false,
            endless: spec.time_based,
            pass_ends_job: false,
        }
    }

    /// A `ramp_size` ramp ended at clock reading `now`: the runtime counts from here.
    pub(super) fn ramp_over(&mut self, now: u64, runtime_ns: u64) {
        if runtime_ns > 0 {
            self.end_ns = now.saturating_add(runtime_ns);
        }
    }

    /// The rules of a read-back: it ends when every block was read (or on a stop or an
    /// error), whatever the job's size and runtime.
    pub(super) fn read_back() -> EndRules {
        EndRules {
            end_ns: u64::MAX,
            limit: u64::MAX,
            ios_limit: u64::MAX,
            issued_bytes: 0,
            issued_ios: 0,
            count_trims: true,
            per_loop: 0,
            loops_done: 0,
            whole_blocks: false,
            last_issue_at: None,
            passes: false,
            loops: 1,
            io_size: None,
            max_bs: 0,
            pass_ended: false,
            endless: false,
            pass_ends_job: false,
        }
    }

    /// Whether the job has issued a whole loop whose end was not handled yet, with more loops
    /// to go.
    #[inline]
    pub(super) fn loop_ended(&self) -> bool {
        self.pass_ended
            || self.per_loop > 0
                && !self.issued_all()
                && self.issued_bytes >= (self.loops_done + 1).saturating_mul(self.per_loop)
    }

    /// The end of the loop was handled; the next one starts.
    pub(super) fn next_loop(&mut self) {
        self.loops_done += 1;
        self.pass_ended = false;
    }

    /// A sequential pass ended: whether another starts (the loop's end then comes first, see
    /// [`EndRules::loop_ended`]). One does while loops are left, and after the last while an
    /// io_size leaves at least the largest block to do, as in fio 3.33 (on a 6 KiB file,
    /// size=6k with io_size=8k reads its first block twice, with io_size=7k once); else the
    /// job is done. A time-based job's passes go on until its runtime is over.
    pub(super) fn another_pass(&mut self) -> bool {
        let left = self.io_size.is_some_and(|s| s.saturating_sub(self.issued_bytes) >= self.max_bs);
        if self.issued_all() || (self.loops_done + 1 >= self.loops && !left && !self.endless) {
            self.pass_ends_job = !self.issued_all();
            self.exhausted();
            return false;
        }
        self.pass_ended = true;
        true
    }

    /// Whether the job ended because its last pass did (see [`EndRules::another_pass`]).
    pub(super) fn ended_on_pass(&self) -> bool {
        self.pass_ends_job
    }

    /// Whether the job has issued all it may (it still waits for what is in flight).
    #[inline]
    pub(super) fn issued_all(&self) -> bool {
        self.issued_bytes >= self.limit || self.issued_ios >= self.ios_limit
    }

    /// Why the job should end now, if it should, by clock reading `now`.
    #[inline]
    pub(super) fn verdict(&self, now: u64, stop: bool, failed: bool) -> Option<EndReason> {
        if stop {
            Some(EndReason::Stop)
        } else if failed {
            Some(EndReason::Error)
        } else if now >= self.end_ns {
            Some(EndReason::Runtime)
        } else if self.issued_all() {
            Some(EndReason::Done)
        } else {
            None
        }
    }

    /// Counts an I/O handed to the engine.
    #[inline]
    pub(super) fn issued(&mut self, io: &NextIo) {
        if io.check() {
            // A verify read: fio adds the job's size to its budget for them.
            return;
        }
        self.issued_ios += 1;
        self.last_issue_at = Some(self.issued_bytes);
        if self.count_trims || io.ddir() != Ddir::Trim {
            self.issued_bytes += io.len() as u64;
        }
    }

    /// Fits `io` into what is left of the job's size; `None` when not even its smallest block
    /// fits, which ends the job. With an io_size, a block that does not fit is issued whole
    /// while any of the io_size is left, unless it starts a new pass over the file within the
    /// loop, as fio 3.33 does (bs=4k, size=64k: io_size=5k moves 8 KiB, 65k moves 64 KiB, 69k
    /// moves 72 KiB; with loops=2, size=8k and io_size=5k, 12 KiB).
    // The unbounded case (time-based jobs) is decided here, in line; the rest is a call.
    #[inline(always)]
    pub(super) fn fit(&mut self, io: NextIo, source: &crate::runner::source::Source, new_pass: bool) -> Option<NextIo> {
        if self.limit == u64::MAX {
            return Some(io);
        }
        self.fit_size(io, source, new_pass)
    }

    #[inline(never)]
    fn fit_size(&mut self, io: NextIo, source: &crate::runner::source::Source, new_pass: bool) -> Option<NextIo> {
        let remaining = self.limit - self.issued_bytes;
        let per_loop = self.per_loop.max(1);
        let loop_fresh = self.last_issue_at.is_none_or(|at| self.issued_bytes / per_loop > at / per_loop);
        if self.whole_blocks && remaining > 0 && (loop_fresh || !new_pass || self.passes) {
            // Variable sizes still shrink to what is left (a deliberate difference, see the
            // README); a block that cannot shrink goes whole.
            return Some(source.fit(io, remaining).unwrap_or(io));
        }
        let fitted = source.fit(io, remaining);
        if fitted.is_none() {
            self.exhausted();
        }
        fitted
    }

    /// The pattern is used up (a sequential pass ended on a partial block): nothing more is
    /// issued.
    pub(super) fn exhausted(&mut self) {
        self.issued_bytes = self.limit;
    }
}

/// Whether every I/O of a job draws a random offset without fio's random map (`norandommap`
/// but for the LFSR, which visits each block once per pass, or a non-uniform distribution).
/// No map fills up to end the job, so fio issues whole blocks while less than its size was
/// issued: `rw=randread norandommap size=6k bs=4k` moves 8 KiB in two reads.
fn unmapped_random(spec: &JobSpec) -> bool {
    let no_map = (spec.norandommap && spec.random_generator != fiox_options::RandomGenerator::Lfsr)
        || !matches!(spec.random_distribution, fiox_options::RandomDist::Random);
    spec.rw.is_random() && spec.percentage_random.iter().all(|&p| p >= 100) && no_map
}

/// Whether a job's sequential passes see their files' real end (a file larger than the
/// region, a device) and, unless time based, are its loops: a plain sequential job (no
/// zones, replay, verify, sprandom or `:N` holes), as observed in fio 3.33.
pub(super) fn room_past_region(plan: &WorkerPlan) -> bool {
    let spec = &*plan.spec;
    // `rw=write:4k`'s holes wrap within the loop in fio: those jobs keep their own rule.
    !spec.rw.is_random()
        && spec.rw_modifier == 0
        && plan.replay.is_none()
        && spec.zones.mode == fiox_options::ZoneMode::None
        && spec.verify.is_none()
        && !spec.sprandom.on
}

/// Whether a job reads back each loop's writes before the next loop (verify after writing).
fn reads_back_per_loop(spec: &JobSpec) -> bool {
    spec.loops > 1 && spec.rw.writes() && spec.verify.as_ref().is_some_and(|v| v.after_write && !v.only)
}

/// What an I/O error does to a job: fio's `continue_on_error`, `ignore_error` and
/// `error_dump`. The first failed I/O sets the job's `error`; failures of a type the job may go
/// on after are counted (`total_err`, `first_error`); one the policy does not let the job go on
/// after is printed and ends the job.
pub(super) struct ErrorRule {
    policy: ErrorPolicy,
    /// The error that ended the job, described; `None` while it goes on.
    pub(super) first: Option<String>,
    /// fio's `func=` for an error that is not an I/O error (`max latency exceeded`).
    pub(super) func: Option<&'static str>,
}

impl ErrorRule {
    pub(super) fn new(spec: &JobSpec) -> ErrorRule {
        ErrorRule { policy: spec.errors.clone(), first: None, func: None }
    }

    /// Whether an error ended the job.
    #[inline]
    pub(super) fn failed(&self) -> bool {
        self.first.is_some()
    }

    /// An I/O finished with `errno`: counted; fio's `io_u error` line when it ends the job (or
    /// with `error_dump`); the job's error when it is the first that ends it.
    pub(super) fn io_failed(
        &mut self,
        io: &Io,
        errno: i32,
        detail: Option<fiox_engine::ErrorDetail>,
        plan: &WorkerPlan,
        ts: &mut ThreadStat,
        diag: &mut dyn Write,
    ) {
        // fio reports a trim that a synchronous engine failed (and an engine's own steps) as
        // the error of the step that failed (`func=`), with no `io_u error` line.
        let step = match &detail {
            Some(fiox_engine::ErrorDetail::Step { func, .. }) => Some(*func),
            None if io.ddir == Ddir::Trim && plan.engine.sync => Some("td_io_queue"),
            _ => None,
        };
        if ts.error == 0 {
            ts.error = errno;
            if let Some(func) = step {
                self.func.get_or_insert(func);
            }
        }
        // fio's error types: EILSEQ is a verify error whatever the direction.
        let kind = match io.ddir {
            _ if errno == libc::EILSEQ => 2,
            Ddir::Read => 0,
            _ => 1,
        };
        // As fio (with synchronous engines): errors of a type the job may go on after are
        // counted, also one not on the list that then ends the job.
        if self.policy.continues[kind] {
            ts.total_err += 1;
            if ts.first_error == 0 {
                ts.first_error = errno;
            }
        }
        let fatal = !self.policy.continues_after(kind, errno);
        if !fatal && !self.policy.dump {
            return;
        }
        let e = fiox_report::units::strerror(errno);
        if let Some(func) = step {
            let line = match detail {
                Some(fiox_engine::ErrorDetail::Step { line, .. }) => line,
                _ => None,
            };
            self.step_failed(errno, func, line, fatal, plan, diag);
            return;
        }
        let file = plan.files.get(io.file as usize).map(|f| f.path.display().to_string()).unwrap_or_default();
        let what = match io.ddir {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
            Ddir::Sync | Ddir::DataSync | Ddir::SyncRange => "sync",
        };
        let said = match &detail {
            Some(fiox_engine::ErrorDetail::Device(_)) => "Device-specific error",
            _ => &e,
        };
        let mut msg = format!("io_u error on file {file}: {said}: {what} offset={}, buflen={}", io.offset, io.len);
        if let Some(fiox_engine::ErrorDetail::Inline(d)) = &detail {
            // The engine's account (http: the request, its status and the server's code).
            msg.push_str(&format!(" ({d})"));
        }
        let _ = writeln!(diag, "fiox: {msg}");
        if let Some(fiox_engine::ErrorDetail::Lines(d) | fiox_engine::ErrorDetail::Device(d)) = &detail {
            // The engine's account of the failure (sg: SCSI status, sense data, the command).
            let _ = writeln!(diag, "fiox: {}", d.trim_end());
        }
        if fatal && self.first.is_none() {
            // As fio, the error that ends the job is announced once more with the job's pid
            // (fio adds its own source file and line, and prints it on standard output).
            let pid = crate::plan::clock::thread_id(plan.number);
            let _ = writeln!(diag, "fiox: pid={pid}, err={errno}, func=io_u error, error={e}");
            self.first = Some(msg);
        }
    }

    /// An I/O failed in a step fio names (`func=`): a trim in its queueing step
    /// (`td_io_queue`), an engine's own step (mtd's `mtd_erase`). fio prints no `io_u error`
    /// line then, but `pid=N, err=E, func=..., error=...` (with its source file and line), after
    /// the engine's account of the failure if it gave one.
    #[cold]
    fn step_failed(
        &mut self,
        errno: i32,
        func: &'static str,
        line: Option<String>,
        fatal: bool,
        plan: &WorkerPlan,
        diag: &mut dyn Write,
    ) {
        if let Some(l) = line {
            let _ = writeln!(diag, "fiox: {}", l.trim_end());
        }
        let pid = crate::plan::clock::thread_id(plan.number);
        let msg = format!("pid={pid}, err={errno}, func={func}, error={}", fiox_report::units::strerror(errno));
        let _ = writeln!(diag, "fiox: {msg}");
        if fatal && self.first.is_none() {
            self.first = Some(msg);
        }
    }

    /// A read failed its verification (`message`: fio's lines): EILSEQ, a verify error for
    /// `continue_on_error`; `verify_fatal` ends the job whatever the policy says.
    pub(super) fn verify_failed(
        &mut self,
        message: &str,
        verify_fatal: bool,
        ts: &mut ThreadStat,
        diag: &mut dyn Write,
    ) {
        let _ = diag.write_all(message.as_bytes());
        let errno = libc::EILSEQ;
        if ts.error == 0 {
            ts.error = errno;
        }
        if self.policy.continues[2] {
            ts.total_err += 1;
            if ts.first_error == 0 {
                ts.first_error = errno;
            }
        }
        if (verify_fatal || !self.policy.continues_after(2, errno)) && self.first.is_none() {
            self.first = Some(message.lines().next().unwrap_or("verify failed").to_string());
        }
    }

    /// The job failed for a reason other than an I/O error (a minimum rate not met, a device
    /// that stopped answering).
    pub(super) fn job_failed(
        &mut self,
        msg: String,
        errno: i32,
        spec: &JobSpec,
        ts: &mut ThreadStat,
        diag: &mut dyn Write,
    ) {
        let _ = writeln!(diag, "fiox: job '{}': {msg}", spec.name);
        if self.first.is_none() {
            if ts.error == 0 {
                ts.error = errno;
            }
            self.first = Some(msg);
        }
    }
}

/// `rate_min` / `rate_iops_min`: every `rate_cycle`, each direction must have moved at least
/// that much, or the job stops with an error (as fio does).
pub(super) struct MinRate {
    bytes: [u64; 3],
    ios: [u64; 3],
    cycle_ns: u64,
    next: u64,
    last: ([u64; 3], [u64; 3]),
}

impl MinRate {
    pub(super) fn new(spec: &JobSpec) -> Option<MinRate> {
        // Only the directions the job does are held to a minimum (`rate_min=1m` means every one).
        let on = [spec.rw.reads(), spec.rw.writes(), spec.rw.trims()];
        let only = |v: [u64; 3]| [0, 1, 2].map(|d| if on[d] { v[d] } else { 0 });
        let (bytes, ios) = (only(spec.rate_min), only(spec.rate_iops_min));
        (bytes.iter().chain(&ios).any(|&v| v > 0)).then(|| MinRate {
            bytes,
            ios,
            cycle_ns: spec.rate_cycle_ms * 1_000_000,
            next: 0,
            last: ([0; 3], [0; 3]),
        })
    }

    /// At the end of each cycle, the first direction that moved too little, described. As in
    /// fio, a rate is judged only when I/O has completed since the last judgement, over the whole
    /// time since then: a job whose blocks come slower than one a cycle (`rate=1250` with 4 KiB
    /// blocks, fio's 1mbs_clients example) is judged by its average, not failed for the cycles
    /// between two of its I/Os.
    pub(super) fn check(&mut self, now: u64, ts: &ThreadStat) -> Option<String> {
        if self.next == 0 {
            self.next = now + self.cycle_ns;
            self.last = (ts.dirs.clone().map(|d| d.io_bytes), ts.dirs.clone().map(|d| d.total_ios));
            return None;
        }
        if now < self.next || (0..3).all(|d| ts.dirs[d].total_ios == self.last.1[d]) {
            return None;
        }
        let secs = (now - self.next + self.cycle_ns) as f64 / 1e9;
        self.next = now + self.cycle_ns;
        let mut verdict = None;
        for d in 0..3 {
            let (b, i) = (ts.dirs[d].io_bytes - self.last.0[d], ts.dirs[d].total_ios - self.last.1[d]);
            let (bw, iops) = ((b as f64 / secs) as u64, (i as f64 / secs) as u64);
            if self.bytes[d] > 0 && bw < self.bytes[d] && verdict.is_none() {
                verdict = Some(format!("min rate {} not met, got {} KiB/s", self.bytes[d] / 1024, bw / 1024));
            }
            if self.ios[d] > 0 && iops < self.ios[d] && verdict.is_none() {
                verdict = Some(format!("min iops rate {} not met, got {iops}", self.ios[d]));
            }
            self.last.0[d] = ts.dirs[d].io_bytes;
            self.last.1[d] = ts.dirs[d].total_ios;
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_options::{argv, assemble, Ctx};

    fn spec(args: &[&str]) -> JobSpec {
        let mut a = args.to_vec();
        a.extend(["--name=t"]);
        assemble(&argv::parse(a).unwrap(), &[], &Ctx::default()).unwrap().jobs[0].spec.clone()
    }

    /// The end rules of a null-engine job (no file is touched) with `args`.
    fn rules(args: &[&str]) -> EndRules {
        let mut a = vec!["--name=t", "--ioengine=null"];
        a.extend_from_slice(args);
        let set = assemble(&argv::parse(a).unwrap(), &[], &Ctx::default()).unwrap();
        EndRules::new(&crate::plan::build(set, false, None).unwrap().workers[0])
    }

    fn next(ddir: Ddir, len: u32) -> NextIo {
        NextIo::new(ddir, 0, 0, len)
    }

    #[test]
    fn a_sized_job_is_done_after_its_size_times_its_loops() {
        // A random job's loops are `size` bytes each (a sequential job's are its passes).
        let mut r = rules(&["--size=16k", "--bs=4k", "--loops=2", "--rw=randread"]);
        let mut ended = Vec::new();
        for n in 1..=8 {
            assert_eq!(r.verdict(0, false, false), None, "before I/O {n}");
            r.issued(&next(Ddir::Read, 4096));
            if r.loop_ended() {
                ended.push(n);
                r.next_loop();
            }
        }
        assert_eq!(ended, [4], "the first loop ends after 16 KiB; the last is the job's end, not a loop's");
        assert!(r.issued_all());
        assert_eq!(r.verdict(0, false, false), Some(EndReason::Done));
    }

    #[test]
    fn a_sequential_jobs_loops_are_its_passes_and_an_io_size_adds_passes() {
        // Two passes of 8 KiB (size=6k on a file with room): both loops, then the end.
        let mut r = rules(&["--size=6k", "--bs=4k", "--loops=2"]);
        r.issued(&next(Ddir::Read, 4096));
        r.issued(&next(Ddir::Read, 4096));
        assert!(!r.loop_ended(), "bytes alone end no loop");
        assert!(r.another_pass() && r.loop_ended());
        r.next_loop();
        r.issued(&next(Ddir::Read, 4096));
        assert!(!r.another_pass() || r.issued_all(), "no loop is left");
        // io_size=12k after one pass of 8 KiB: 4 KiB left, a block: one more pass.
        let mut r = rules(&["--size=6k", "--bs=4k", "--io_size=12k"]);
        r.issued(&next(Ddir::Read, 4096));
        r.issued(&next(Ddir::Read, 4096));
        assert!(r.another_pass());
        r.next_loop();
        // io_size=9k: 1 KiB left after 8 KiB, less than a block: done.
        let mut r = rules(&["--size=6k", "--bs=4k", "--io_size=9k"]);
        r.issued(&next(Ddir::Read, 4096));
        r.issued(&next(Ddir::Read, 4096));
        assert!(!r.another_pass());
        assert_eq!(r.verdict(0, false, false), Some(EndReason::Done));
    }

    #[test]
    fn the_verdict_puts_a_stop_before_an_error_before_the_runtime() {
        let r = rules(&["--size=1m", "--time_based", "--runtime=2", "--ramp_time=1"]);
        // The runtime starts after the ramp: 3 s in all.
        assert_eq!(r.end_ns, 3_000_000_000);
        assert_eq!(r.verdict(2_999_999_999, false, false), None);
        assert_eq!(r.verdict(3_000_000_000, false, false), Some(EndReason::Runtime));
        assert_eq!(r.verdict(3_000_000_000, false, true), Some(EndReason::Error));
        assert_eq!(r.verdict(3_000_000_000, true, true), Some(EndReason::Stop));
        assert_eq!(r.verdict(0, true, false), Some(EndReason::Stop));
    }

    #[test]
    fn a_time_based_job_never_runs_out_of_size() {
        let mut r = rules(&["--size=8k", "--bs=4k", "--time_based", "--runtime=1"]);
        for _ in 0..100 {
            r.issued(&next(Ddir::Write, 4096));
        }
        assert!(!r.issued_all() && !r.loop_ended());
        assert_eq!(r.verdict(999_999_999, false, false), None);
        assert_eq!(rules(&["--size=8k"]).end_ns, u64::MAX, "no runtime, no time limit");
    }

    #[test]
    fn number_ios_ends_the_job_before_its_size() {
        let mut r = rules(&["--size=1m", "--bs=4k", "--number_ios=3"]);
        for _ in 0..2 {
            r.issued(&next(Ddir::Read, 4096));
        }
        assert_eq!(r.verdict(0, false, false), None);
        r.issued(&next(Ddir::Read, 4096));
        assert_eq!(r.verdict(0, false, false), Some(EndReason::Done));
    }

    #[test]
    fn verify_reads_and_trimwrites_trims_do_not_count_toward_the_size() {
        let mut r = rules(&["--size=8k", "--bs=4k", "--rw=write"]);
        r.issued(&next(Ddir::Read, 4096).checked());
        r.issued(&next(Ddir::Write, 4096));
        assert!(!r.issued_all(), "the verify read is on top of the size");
        r.issued(&next(Ddir::Write, 4096));
        assert!(r.issued_all());
        // trimwrite trims each block and then writes it: only the writes count.
        let mut r = rules(&["--size=8k", "--bs=4k", "--rw=trimwrite"]);
        for ddir in [Ddir::Trim, Ddir::Write, Ddir::Trim] {
            r.issued(&next(ddir, 4096));
        }
        assert!(!r.issued_all());
        r.issued(&next(Ddir::Write, 4096));
        assert!(r.issued_all());
        // In other modes a trim is a block like any other.
        let mut r = rules(&["--size=8k", "--bs=4k", "--rw=randtrim"]);
        r.issued(&next(Ddir::Trim, 4096));
        r.issued(&next(Ddir::Trim, 4096));
        assert!(r.issued_all());
    }

    #[test]
    fn an_exhausted_pattern_ends_the_job_and_a_read_back_only_on_a_stop() {
        let mut r = rules(&["--size=1m"]);
        r.exhausted();
        assert_eq!(r.verdict(0, false, false), Some(EndReason::Done));
        let mut back = EndRules::read_back();
        for _ in 0..10_000 {
            back.issued(&next(Ddir::Read, 1 << 20));
        }
        assert_eq!(back.verdict(u64::MAX - 1, false, false), None, "no size and no runtime");
        assert_eq!(back.verdict(0, true, false), Some(EndReason::Stop));
    }

    #[test]
    fn min_rate_judges_each_cycle() {
        let s = spec(&["--size=1m", "--rate_iops_min=100", "--rate_cycle=1000"]);
        let mut m = MinRate::new(&s).unwrap();
        let mut ts = ThreadStat::default();
        assert_eq!(m.check(0, &ts), None, "the first call starts the cycle");
        ts.dirs[0].total_ios = 150;
        assert_eq!(m.check(500_000_000, &ts), None, "mid-cycle");
        assert_eq!(m.check(1_000_000_000, &ts), None, "150 I/Os in 1 s meet 100 IOPS");
        ts.dirs[0].total_ios = 200;
        let v = m.check(2_000_000_000, &ts).expect("50 I/Os in 1 s miss 100 IOPS");
        assert_eq!(v, "min iops rate 100 not met, got 50");
    }

    #[test]
    fn min_rate_waits_for_io_and_judges_the_whole_span() {
        // 1250 B/s in 4 KiB blocks: one block every 3.3 s. No judgement without a completion,
        // then 4096 bytes over 3.3 s (1241 B/s) meet 1024 B/s.
        let s = spec(&["--size=1m", "--rate_min=1024", "--rate_cycle=1000"]);
        let mut m = MinRate::new(&s).unwrap();
        let mut ts = ThreadStat::default();
        assert_eq!(m.check(0, &ts), None);
        for t in 1..=3 {
            assert_eq!(m.check(t * 1_000_000_000, &ts), None, "no I/O completed by {t} s: not judged");
        }
        ts.dirs[0].io_bytes = 4096;
        ts.dirs[0].total_ios = 1;
        assert_eq!(m.check(3_300_000_000, &ts), None, "1241 B/s over 3.3 s");
        ts.dirs[0].io_bytes = 8192;
        ts.dirs[0].total_ios = 2;
        let v = m.check(8_300_000_000, &ts).expect("4096 B over 5 s is 819 B/s");
        assert_eq!(v, "min rate 1 not met, got 0 KiB/s");
    }

    #[test]
    fn no_minimum_no_rule() {
        assert!(MinRate::new(&spec(&["--size=1m"])).is_none());
        // A write minimum on a read job holds nothing to account.
        assert!(MinRate::new(&spec(&["--size=1m", "--rate_min=,1m"])).is_none());
    }
}
