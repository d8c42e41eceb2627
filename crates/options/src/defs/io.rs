//! What I/O is done: direction, block sizes, randomness, buffers, depth, rate, verification and
//! error handling.

use crate::choices::{write_hint_from_word, DedupeMode, ErrorPolicy, Fadvise, MemKind, RandomGenerator};
use crate::error::Result;
use crate::spec::{
    Arg, JobSpec, RandomDist, SteadyState, SyncFileRange, DIST_FORMS, IGNORE_FORMS, PATTERN_FORMS, SS_FORMS,
};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O, TimeUnit};
use crate::value::{self, Value};

const INT0: K = K::Int { min: 0, max: i64::MAX };
const INT1: K = K::Int { min: 1, max: i64::MAX };
const PCT: K = K::Int { min: 0, max: 100 };

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(super) static DEFS: &[O] = &[
    O::new("rw", K::Rw, C::IoType, "I/O direction and pattern, with an optional :N offset modifier").alias(&["readwrite"]).def("read").to(|s, v| Ok((s.rw, s.rw_modifier) = v.rw())),
    O::new("rw_sequencer", K::Choice(RW_SEQ), C::IoType, "What the :N of rw means").def("sequential").to(|s, v| Ok(s.rw_sequencer_identical = v.choice() == "identical")),
    O::new("rwmixread", PCT, C::IoType, "Percentage of reads in a mixed workload").def("50").to(|s, v| Ok(s.rwmixread = v.u32()?)),
    O::new("rwmixwrite", PCT, C::IoType, "Percentage of writes in a mixed workload").def("50"),
    O::new("percentage_random", PCT, C::IoType, "Percentage of random I/O in a random workload (the rest is sequential)").def("100").per_dir().to(|s, v| Ok(s.percentage_random = v.per_dir_u64().map(|p| p as u32))),
    O::new("direct", K::Bool, C::IoType, "Use O_DIRECT (bypass the page cache)").def("0").to(|s, v| Ok(s.direct = v.flag())),
    O::new("buffered", K::Bool, C::IoType, "Use buffered I/O (the opposite of direct)").def("1").to(|s, v| Ok(s.direct |= !v.flag())),
    O::new("sync", K::Choice(SYNC), C::IoType, "Open files with O_SYNC or O_DSYNC").def("none").to(|s, v| Ok(s.open_sync = match v.choice() { "sync" | "1" => Some(true), "dsync" => Some(false), _ => None })),
    O::new("fsync", INT0, C::IoType, "fsync after this many writes (0: never)").def("0").to(|s, v| Ok(s.fsync = v.u32()?)),
    O::new("fdatasync", INT0, C::IoType, "fdatasync after this many writes (0: never)").def("0").to(|s, v| Ok(s.fdatasync = v.u32()?)),
    O::new("sync_file_range", K::Str, C::IoType, "sync_file_range(2) over what was written, every N writes (wait_before,write,wait_after[:N])").to(|s, v| Ok(s.sync_file_range = SyncFileRange::parse(&v.text()).map_err(|e| v.err(e))?)),
    O::new("serialize_overlap", K::Bool, C::IoDepth, "Hold back an I/O while an I/O in flight overlaps it").def("0").to(|s, v| Ok(s.serialize_overlap = v.flag())),
    O::new("end_fsync", K::Bool, C::IoType, "fsync the files when the job's writes are done").def("0").to(|s, v| Ok(s.end_fsync = v.flag())),
    O::new("end_syncfs", K::Bool, C::IoType, "syncfs(2) the files' file system once when the job's writes are done (fio 3.42)").def("0").to(|s, v| Ok(s.end_syncfs = v.flag())),
    O::new("fsync_on_close", K::Bool, C::IoType, "fsync each file when closing it").def("0").to(|s, v| Ok(s.fsync_on_close = v.flag())),
    O::new("randrepeat", K::Bool, C::IoType, "Use the same random sequence on every run").def("1").to(|s, v| Ok(s.randrepeat = v.flag())),
    // fiox draws every random choice from one seeded stream per job, so `allrandrepeat` makes
    // all of them repeatable exactly as randrepeat does.
    O::new("allrandrepeat", K::Bool, C::IoType, "Make every random choice repeatable, whatever randrepeat says").def("0").to(|s, v| Ok(s.randrepeat |= v.flag())),
    O::new("randseed", K::Int { min: 0, max: i64::MAX, }, C::IoType, "Seed of the random generators").def("0x89").first_piece().to(|s, v| {
        s.randseed = v.u64();
        s.randseed_given = !v.is_default();
        Ok(())
    }),
    O::new("norandommap", K::Flag, C::IoType, "Do not track which blocks were done; random I/O may repeat blocks").to(|s, v| Ok(s.norandommap = v.flag())),
    O::new("random_generator", K::Choice(RANDGEN), C::IoType, "Random number generator for offsets (fiox uses its own for all three; lfsr keeps each block once per pass even with norandommap)").def("tausworthe").to(|s, v| Ok(s.random_generator = v.typed(RandomGenerator::from_word))),
    O::new("sprandom", K::Bool, C::IoType, "Precondition an SSD to its random-write steady state: write its physical capacity once, invalidating earlier regions' blocks as at steady state (fio 3.42; randwrite, sets random_generator=lfsr and norandommap)").def("0").to(|s, v| Ok(s.sprandom.on = v.flag())),
    O::new("spr_num_regions", K::Int { min: i64::MIN + 1, max: i64::MAX }, C::IoType, "sprandom: number of regions the device is divided into (fio 3.42)").def("100").to(|s, v| Ok(s.sprandom.regions = v.int())),
    O::new("spr_op", K::Float { min: 0.0, max: 1.0 }, C::IoType, "sprandom: the SSD's over-provisioning ratio, between 0 and 1 (fio 3.42)").def("0.15").to(|s, v| Ok(s.sprandom.op = v.float())),
    O::new("spr_cs", K::Size, C::IoType, "sprandom: the SSD's cache size; invalidating writes are delayed by one region (fio 3.42)").def("0").to(|s, v| Ok(s.sprandom.cache = v.size())),
    O::new("num_range", K::Int { min: 0, max: 256 }, C::IoType, "Ranges per trim command (fio 3.42; io_uring_cmd only, 1 elsewhere)").def("1").to(|s, v| Ok(s.num_range = v.u32()?)),
    O::new("random_distribution", K::Str, C::IoType, "Offset distribution: random, zipf:θ, pareto:h, normal:σ, zoned:..., zoned_abs:...").def("random").to(|s, v| Ok(s.random_distribution = v.custom(|t| RandomDist::parse(t.trim(), v.ctx()), DIST_FORMS)?)),
    O::new("bs", K::Size, C::BlockSize, "Block size of each I/O").alias(&["blocksize"]).def("4096").per_dir().to(|s, v| Ok(s.bs = v.per_dir_u64())),
    O::new("bsrange", K::Range, C::BlockSize, "Range of block sizes (low-high)").alias(&["blocksize_range"]).per_dir().to(|s, v| Ok(s.bsrange = v.per_dir().map(|d| match d { Some(Value::Range(lo, hi)) => Some((lo, hi)), _ => None }))),
    O::new("bssplit", K::BsSplit, C::BlockSize, "Weighted mix of block sizes (4k/50:64k/50)").per_dir().to(|s, v| Ok(s.bssplit = v.per_dir().map(|d| match d { Some(Value::Split(split)) => split, _ => Vec::new() }))),
    O::new("ba", K::Size, C::BlockSize, "Alignment of random offsets (default: the block size)").alias(&["blockalign"]).per_dir().to(|s, v| Ok(s.blockalign = v.per_dir_u64())),
    O::new("bs_unaligned", K::Flag, C::BlockSize, "Do not align block sizes within a range").alias(&["blocksize_unaligned"]).to(|s, v| Ok(s.bs_unaligned = v.flag())),
    O::new("bs_is_seq_rand", K::Bool, C::BlockSize, "Read the bs lists as sequential,random instead of read,write").def("0").to(|s, v| Ok(s.bs_is_seq_rand = v.flag())),
    O::new("fadvise_hint", K::Choice(FADVISE), C::IoType, "posix_fadvise hint given when a file is opened: 1 follows rw (sequential or random)").def("1").to(|s, v| Ok(s.fadvise = v.typed(Fadvise::from_word))),
    O::new("write_hint", K::Choice(WRITE_HINT), C::IoType, "Expected lifetime of the written data, passed to the kernel (F_SET_RW_HINT)").to(|s, v| Ok(s.write_hint = Some(v.typed(write_hint_from_word)))),
    O::new("write_barrier", INT0, C::IoType, "fio: make every Nth write a barrier write; no Linux engine of fio 3.33 issues barriers, so this has no effect").def("0"),
    O::new("atomic", K::Bool, C::IoType, "fio: open with O_ATOMIC, which Linux does not have; no effect here, as in fio").def("0"),
    O::new("hugepage-size", K::Size, C::Buffers, "Huge page size that mem=mmaphuge and shmhuge buffers are rounded up to").def("2m").to(|s, v| Ok(s.hugepage_size = v.size())),
    O::new("zero_buffers", K::Flag, C::Buffers, "Fill I/O buffers with zeros").to(|s, v| Ok(s.zero_buffers = v.flag())),
    O::new("refill_buffers", K::Flag, C::Buffers, "Refill the buffer with new data before every write").to(|s, v| Ok(s.refill_buffers = v.flag())),
    O::new("scramble_buffers", K::Bool, C::Buffers, "Lightly scramble buffer contents before each write to defeat dedupe").def("1").to(|s, v| Ok(s.scramble_buffers = v.flag())),
    O::new("buffer_compress_percentage", PCT, C::Buffers, "Make write buffers compressible to this percentage").to(|s, v| Ok(s.buffer_compress_percentage = v.u32()?)),
    O::new("buffer_compress_chunk", K::Size, C::Buffers, "Granularity of buffer_compress_percentage").def("512").to(|s, v| Ok(s.buffer_compress_chunk = v.size())),
    O::new("dedupe_percentage", PCT, C::Buffers, "Percentage of write buffers that repeat earlier ones").def("0").to(|s, v| Ok(s.dedupe_percentage = v.u32()?)),
    O::new("dedupe_mode", K::Choice(DEDUPE_MODE), C::Buffers, "How a deduplicated write buffer is made: repeat the last unique one, or pick one of a working set").def("repeat").to(|s, v| Ok(s.dedupe_mode = v.typed(DedupeMode::from_word))),
    O::new("dedupe_working_set_percentage", PCT, C::Buffers, "With dedupe_mode=working_set: the working set's size, as a percentage of the job's size").def("5").to(|s, v| Ok(s.dedupe_working_set_pct = v.u32()?)),
    O::new("dedupe_global", K::Bool, C::Buffers, "Share the dedupe working set among all jobs that set this").def("0").to(|s, v| Ok(s.dedupe_global = v.flag())),
    O::new("buffer_pattern", K::Str, C::Buffers, "Fill write buffers with this pattern (number, 0x hex or \"string\")").to(|s, v| Ok(s.buffer_pattern = Some(v.custom(value::parse_pattern, PATTERN_FORMS)?))),
    O::new("mem", K::Choice(MEM), C::Buffers, "Where I/O buffers come from").alias(&["iomem"]).def("malloc").to(mem),
    O::new("iomem_align", K::Size, C::Buffers, "Alignment of I/O buffers in memory").alias(&["mem_align"]).def("0").to(|s, v| Ok(s.iomem_align = v.size())),
    O::new("iodepth", INT1, C::IoDepth, "Number of I/Os in flight per job (synchronous engines do one at a time)").def("1").to(|s, v| Ok(s.iodepth = v.u32()?)),
    O::new("iodepth_batch_submit", INT0, C::IoDepth, "Number of I/Os to submit at once").alias(&["iodepth_batch"]).def("1").to(|s, v| Ok(s.iodepth_batch_submit = v.u32()?)),
    O::new("iodepth_batch_complete_min", INT0, C::IoDepth, "Least number of completions to wait for at once").alias(&["iodepth_batch_complete"]).def("1").to(|s, v| Ok(s.iodepth_batch_complete_min = v.u32()?)),
    O::new("iodepth_batch_complete_max", INT0, C::IoDepth, "Most completions to reap at once (default: iodepth_batch_complete_min)").to(|s, v| Ok(s.iodepth_batch_complete_max = v.u32()?)),
    O::new("iodepth_low", INT0, C::IoDepth, "Refill the queue only when it has drained to this depth (default: iodepth)").to(|s, v| Ok(s.iodepth_low = v.u32()?)),
    O::new("io_submit_mode", K::Choice(SUBMIT_MODE), C::IoDepth, "Submit I/O from the job itself or from helper threads").def("inline").to(|s, v| Ok(s.offload = v.choice() == "offload")),
    O::new("rate", K::Size, C::Rate, "Cap bandwidth at this many bytes per second").per_dir().to(|s, v| Ok(s.rate = v.per_dir_u64())),
    O::new("rate_min", K::Size, C::Rate, "Fail the job if bandwidth falls below this").per_dir().alias(&["ratemin"]).to(|s, v| Ok(s.rate_min = v.per_dir_u64())),
    O::new("rate_iops", INT0, C::Rate, "Cap the rate at this many I/Os per second").per_dir().to(|s, v| Ok(s.rate_iops = v.per_dir_u64())),
    O::new("rate_iops_min", INT0, C::Rate, "Fail the job if IOPS fall below this").per_dir().to(|s, v| Ok(s.rate_iops_min = v.per_dir_u64())),
    O::new("rate_process", K::Choice(RATE_PROCESS), C::Rate, "How rate-limited I/O is spaced in time").def("linear").to(|s, v| Ok(s.rate_poisson = v.choice() == "poisson")),
    O::new("rate_cycle", INT0, C::Rate, "Window in ms over which rate_min is checked").def("1000").alias(&["ratecycle"]).to(|s, v| Ok(s.rate_cycle_ms = v.u64().max(1))),
    O::new("rate_ignore_thinktime", K::Bool, C::Rate, "Go on at the rate after a think instead of making up for the time thought (fio's default catches up)").def("0").to(|s, v| Ok(s.rate_ignore_thinktime = v.flag())),
    O::new("thinktime", K::Time { unit: TimeUnit::Usec, }, C::Rate, "Pause this long after an I/O (microseconds unless a unit is given)").def("0").to(|s, v| Ok(s.thinktime_us = v.time())),
    O::new("thinktime_spin", K::Time { unit: TimeUnit::Usec, }, C::Rate, "Busy-spin this long of each think time").def("0").to(|s, v| Ok(s.thinktime_spin_us = v.time())),
    O::new("thinktime_blocks", INT1, C::Rate, "Think only after this many blocks").def("1").to(|s, v| Ok(s.thinktime_blocks = v.u32()?)),
    O::new("thinktime_blocks_type", K::Choice(THINK_TYPE), C::Rate, "Whether thinktime_blocks counts completions or submissions").def("complete").to(|s, v| Ok(s.think_on_complete = v.choice() == "complete")),
    O::new("thinktime_iotime", K::Time { unit: TimeUnit::Sec, }, C::Rate, "Think only after this much I/O time").def("0").to(|s, v| Ok(s.thinktime_iotime_us = v.time())),
    O::new("thinkcycles", INT0, C::Rate, "Busy-loop this many iterations after each completed I/O, besides thinktime (fio 3.42)").def("0").to(|s, v| Ok(s.thinkcycles = v.u64())),
    O::new("latency_target", K::Time { unit: TimeUnit::Usec, }, C::Latency, "Find the highest queue depth at which I/Os stay under this latency (0: off)").def("0").first_piece().to(|s, v| Ok(s.latency_target.get_or_insert_default().target_us = v.time())),
    O::new("latency_window", K::Time { unit: TimeUnit::Usec, }, C::Latency, "Window over which latency_target is checked at each queue depth").def("0").first_piece().to(|s, v| Ok(s.latency_target.get_or_insert_default().window_us = v.time())),
    O::new("latency_percentile", K::Float { min: 0.0, max: 100.0, }, C::Latency, "Percentage of I/Os in each window that must meet latency_target").def("100").to(|s, v| Ok(s.latency_target.get_or_insert_default().percentile = v.float())),
    O::new("latency_run", K::Bool, C::Latency, "Keep adjusting the queue depth for the whole run instead of stopping once it is found").def("0").to(|s, v| Ok(s.latency_target.get_or_insert_default().run = v.flag())),
    O::new("max_latency", K::Time { unit: TimeUnit::Usec, }, C::Latency, "Fail the job (ETIMEDOUT) when an I/O takes longer than this (0: no limit)").def("0").to(|s, v| Ok(s.max_latency_us = v.time())),
    O::new("steadystate", K::Str, C::SteadyState, "Steady-state criterion and limit: iops, iops_slope, bw or bw_slope, then ':' and a number or a percentage of the mean (iops_slope:0.1%)").alias(&["ss"]).def("iops_slope:0.01%").to(|s, v| Ok(s.steadystate.get_or_insert_default().criterion(v.custom(SteadyState::parse, SS_FORMS)?))),
    // fio samples once a second, so the window is a whole number of seconds.
    O::new("steadystate_duration", K::Time { unit: TimeUnit::Sec, }, C::SteadyState, "Rolling window over which steady state is judged, sampled once a second (0: off)").alias(&["ss_dur"]).def("0").first_piece().to(|s, v| Ok(s.steadystate.get_or_insert_default().dur_s = v.time() / 1_000_000)),
    O::new("steadystate_ramp_time", K::Time { unit: TimeUnit::Sec, }, C::SteadyState, "Run this long before collecting steady-state samples").alias(&["ss_ramp"]).def("0").first_piece().to(|s, v| Ok(s.steadystate.get_or_insert_default().ramp_us = v.time())),
    O::new("steadystate_check_interval", K::Time { unit: TimeUnit::Sec, }, C::SteadyState, "Time between steady-state samples, at least 1 s; ss_dur must be a multiple of it (fio 3.42)").alias(&["ss_interval"]).def("1").to(|s, v| Ok(s.steadystate.get_or_insert_default().interval_us = v.time())),
    O::new("continue_on_error", K::Choice(CONT_ERR), C::Errors, "Which errors do not stop the job (only EIO and EILSEQ, unless ignore_error lists others)").def("none").to(|s, v| Ok(s.errors = v.typed(ErrorPolicy::continuing))),
    O::new("ignore_error", K::Str, C::Errors, "Errors that do not stop the job, as READ,WRITE,VERIFY lists of names or numbers separated by ':' (EIO:ENOSPC,EIO)").to(ignore_error),
    O::new("error_dump", K::Bool, C::Errors, "Print every I/O error, also those that do not stop the job").def("0").to(|s, v| Ok(s.errors.dump = v.flag())),
];

/// `mem`: fio maps `mmaphuge:FILE` from a file on hugetlbfs; the choice parser keeps only the
/// word, so the file would be ignored without this refusal.
fn mem(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    if let Some(raw) = v.written().filter(|raw| raw.contains(':')) {
        return Err(v.err(format!(
            "mem={raw}: a file for the buffers (after ':') is not supported yet; mem=mmaphuge maps anonymous huge pages"
        )));
    }
    s.mem = v.typed(MemKind::from_word);
    Ok(())
}

/// `ignore_error` adds to the policy `continue_on_error` (the row above) set.
fn ignore_error(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let base = s.errors.clone();
    s.errors = v.custom(
        |text| {
            let mut p = base.clone();
            p.ignore(text).map(|()| p)
        },
        IGNORE_FORMS,
    )?;
    Ok(())
}

static DEDUPE_MODE: &[Choice] = &[
    Choice { word: "repeat", help: "Repeat the last unique buffer written" },
    Choice { word: "working_set", help: "Pick a buffer at random from a working set (dedupe_working_set_percentage)" },
];

static FADVISE: &[Choice] = &[
    Choice { word: "0", help: "No hint" },
    Choice { word: "1", help: "POSIX_FADV_SEQUENTIAL for sequential jobs, POSIX_FADV_RANDOM for random ones" },
    Choice { word: "sequential", help: "POSIX_FADV_SEQUENTIAL" },
    Choice { word: "random", help: "POSIX_FADV_RANDOM" },
];

static WRITE_HINT: &[Choice] = &[
    Choice { word: "none", help: "RWH_WRITE_LIFE_NONE" },
    Choice { word: "short", help: "RWH_WRITE_LIFE_SHORT" },
    Choice { word: "medium", help: "RWH_WRITE_LIFE_MEDIUM" },
    Choice { word: "long", help: "RWH_WRITE_LIFE_LONG" },
    Choice { word: "extreme", help: "RWH_WRITE_LIFE_EXTREME" },
];

static RW_SEQ: &[Choice] = &[
    Choice { word: "sequential", help: "N: skip N bytes (sequential) or repeat the offset every N I/Os (random)" },
    Choice { word: "identical", help: "Repeat the same offset N times" },
];
static SYNC: &[Choice] = &[
    Choice { word: "none", help: "Neither O_SYNC nor O_DSYNC" },
    Choice { word: "0", help: "Same as none" },
    Choice { word: "sync", help: "O_SYNC" },
    Choice { word: "1", help: "Same as sync" },
    Choice { word: "dsync", help: "O_DSYNC" },
];
static RANDGEN: &[Choice] = &[
    Choice { word: "tausworthe", help: "Fast 32-bit generator (the default)" },
    Choice { word: "lfsr", help: "Linear feedback shift register: every block once, no random map needed" },
    Choice { word: "tausworthe64", help: "64-bit generator for very large regions" },
];
static MEM: &[Choice] = &[
    Choice { word: "malloc", help: "Heap memory" },
    Choice { word: "shm", help: "System V shared memory" },
    Choice { word: "shmhuge", help: "System V shared memory in huge pages" },
    Choice { word: "mmap", help: "Anonymous mmap" },
    Choice { word: "mmaphuge", help: "mmap in huge pages" },
    Choice { word: "mmapshared", help: "Shared anonymous mmap" },
];
static SUBMIT_MODE: &[Choice] = &[
    Choice { word: "inline", help: "The job submits its own I/O" },
    Choice { word: "offload", help: "Helper threads submit the I/O" },
];
static RATE_PROCESS: &[Choice] = &[
    Choice { word: "linear", help: "Evenly spaced I/O" },
    Choice { word: "poisson", help: "Exponentially distributed gaps (Poisson arrivals)" },
];
static THINK_TYPE: &[Choice] = &[
    Choice { word: "complete", help: "Count completed I/Os" },
    Choice { word: "issue", help: "Count submitted I/Os" },
];
static CONT_ERR: &[Choice] = &[
    Choice { word: "none", help: "Stop on any error" },
    Choice { word: "0", help: "Same as none" },
    Choice { word: "read", help: "Continue on read errors" },
    Choice { word: "write", help: "Continue on write errors" },
    Choice { word: "io", help: "Continue on read and write errors" },
    Choice { word: "verify", help: "Continue on verify errors" },
    Choice { word: "all", help: "Continue on all errors" },
    Choice { word: "1", help: "Same as all" },
];

#[cfg(test)]
mod tests {
    use crate::choices::{DedupeMode, Fadvise, MemKind, RandomGenerator};
    use crate::spec::bind::check::lands;
    use crate::{RandomDist, RwMode};

    /// Each row lands in its field, and a row's default is what a job gets without it.
    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("rw=randwrite:8", |s| s.rw == RwMode::RandWrite && s.rw_modifier == 8),
            ("rw_sequencer=identical", |s| s.rw_sequencer_identical),
            ("rwmixread=30", |s| s.rwmixread == 30),
            ("rwmixwrite=30", |s| s.rwmixread == 70),
            ("rwmixwrite=30 rwmixread=40", |s| s.rwmixread == 40),
            ("percentage_random=10,20", |s| s.percentage_random == [10, 20, 20]),
            ("direct=1", |s| s.direct),
            ("buffered=0", |s| s.direct),
            ("sync=dsync", |s| s.open_sync == Some(false)),
            ("fsync=3 fdatasync=4", |s| s.fsync == 3 && s.fdatasync == 4),
            ("sync_file_range=write:2", |s| s.sync_file_range.is_some_and(|r| r.flags == 2 && r.every == 2)),
            ("serialize_overlap=1 end_fsync=1 fsync_on_close=1", |s| {
                s.serialize_overlap && s.end_fsync && s.fsync_on_close
            }),
            ("randrepeat=0", |s| !s.randrepeat),
            ("randrepeat=0 allrandrepeat=1", |s| s.randrepeat),
            ("randseed=7 norandommap", |s| s.randseed == 7 && s.norandommap),
            ("random_generator=lfsr", |s| s.random_generator == RandomGenerator::Lfsr),
            ("random_distribution=zipf:1.2", |s| s.random_distribution == RandomDist::Zipf(1.2, None)),
            ("bs=,16k", |s| s.bs == [4096, 16384, 16384]),
            ("bsrange=4k-8k", |s| s.bsrange == [Some((4096, 8192)); 3]),
            ("bsrange=0-8k", |s| s.bsrange == [Some((4096, 8192)); 3]),
            ("bs=2k bsrange=0-0", |s| s.bsrange == [Some((2048, 2048)); 3]),
            ("bssplit=4k/50:8k/50", |s| s.bssplit[0] == vec![(4096, 50.0), (8192, 50.0)]),
            ("ba=512 bs_unaligned bs_is_seq_rand=1", |s| {
                s.blockalign == [512; 3] && s.bs_unaligned && s.bs_is_seq_rand
            }),
            ("fadvise_hint=random", |s| s.fadvise == Fadvise::Random),
            ("write_hint=short", |s| s.write_hint.is_some()),
            ("hugepage-size=4m", |s| s.hugepage_size == 4 << 20),
            ("zero_buffers refill_buffers scramble_buffers=0", |s| {
                s.zero_buffers && s.refill_buffers && !s.scramble_buffers
            }),
            ("buffer_compress_percentage=50 buffer_compress_chunk=4k", |s| {
                s.buffer_compress_percentage == 50 && s.buffer_compress_chunk == 4096
            }),
            ("dedupe_percentage=10 dedupe_mode=working_set dedupe_working_set_percentage=20 dedupe_global=1", |s| {
                s.dedupe_percentage == 10
                    && s.dedupe_mode == DedupeMode::WorkingSet
                    && s.dedupe_working_set_pct == 20
                    && s.dedupe_global
            }),
            ("buffer_pattern=0xab", |s| s.buffer_pattern.as_deref() == Some(&[0xab][..])),
            ("mem=mmap iomem_align=4k", |s| s.mem == MemKind::Mmap && s.iomem_align == 4096),
            ("iodepth=8", |s| s.iodepth == 8 && s.iodepth_low == 8),
            ("iodepth=8 iodepth_low=2", |s| s.iodepth_low == 2),
            ("iodepth_batch_submit=4 iodepth_batch_complete_min=2", |s| {
                s.iodepth_batch_submit == 4 && s.iodepth_batch_complete_min == 2 && s.iodepth_batch_complete_max == 2
            }),
            ("iodepth_batch_complete_max=6", |s| s.iodepth_batch_complete_max == 6),
            ("io_submit_mode=offload", |s| s.offload),
            ("rate=1m rate_min=1k", |s| s.rate == [1 << 20; 3] && s.rate_min == [1024; 3]),
            ("rate_iops=10,20 rate_iops_min=1", |s| s.rate_iops == [10, 20, 20] && s.rate_iops_min == [1; 3]),
            ("rate_process=poisson rate_cycle=0 rate_ignore_thinktime=1", |s| {
                s.rate_poisson && s.rate_cycle_ms == 1 && s.rate_ignore_thinktime
            }),
            ("thinktime=5 thinktime_spin=2 thinktime_blocks=3", |s| {
                s.thinktime_us == 5 && s.thinktime_spin_us == 2 && s.thinktime_blocks == 3
            }),
            ("thinktime_blocks_type=issue thinktime_iotime=1", |s| {
                !s.think_on_complete && s.thinktime_iotime_us == 1_000_000
            }),
            ("latency_target=10ms latency_window=1s latency_percentile=99 latency_run=1", |s| {
                s.latency_target
                    .is_some_and(|l| l.target_us == 10_000 && l.window_us == 1_000_000 && l.percentile == 99.0 && l.run)
            }),
            ("latency_window=1s", |s| s.latency_target.is_none()),
            ("max_latency=1s", |s| s.max_latency_us == 1_000_000),
            ("steadystate=bw:2% steadystate_duration=30 steadystate_ramp_time=5", |s| {
                s.steadystate
                    .is_some_and(|ss| ss.bw && !ss.slope && ss.pct && ss.dur_s == 30 && ss.ramp_us == 5_000_000)
            }),
            ("steadystate=bw:2%", |s| s.steadystate.is_none()),
            ("continue_on_error=read ignore_error=EIO,EIO error_dump=1", |s| s.errors.dump),
            // The rows' defaults.
            ("", |s| {
                s.rw == RwMode::Read
                    && s.rwmixread == 50
                    && s.percentage_random == [100; 3]
                    && !s.direct
                    && s.randrepeat
                    && s.randseed == 0x89
                    && s.bs == [4096; 3]
                    && s.fadvise == Fadvise::FollowRw
                    && s.hugepage_size == 2 << 20
                    && s.scramble_buffers
                    && s.buffer_compress_chunk == 512
                    && s.dedupe_working_set_pct == 5
                    && s.iodepth == 1
                    && s.iodepth_batch_submit == 1
                    && s.iodepth_batch_complete_max == 1
                    && s.rate_cycle_ms == 1000
                    && s.thinktime_blocks == 1
                    && s.think_on_complete
                    && s.random_distribution == RandomDist::Random
            }),
        ]);
    }
}
