//! What I/O is done: direction, block sizes, randomness, buffers, depth, rate, verification and
//! error handling.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O, TimeUnit};

const INT0: K = K::Int { min: 0, max: i64::MAX };
const INT1: K = K::Int { min: 1, max: i64::MAX };
const PCT: K = K::Int { min: 0, max: 100 };

#[rustfmt::skip]
pub(super) static DEFS: &[O] = &[
    O::new("rw", K::Rw, C::IoType, "I/O direction and pattern, with an optional :N offset modifier").alias(&["readwrite"]).def("read"),
    O::new("rw_sequencer", K::Choice(RW_SEQ), C::IoType, "What the :N of rw means").def("sequential"),
    O::new("rwmixread", PCT, C::IoType, "Percentage of reads in a mixed workload").def("50"),
    O::new("rwmixwrite", PCT, C::IoType, "Percentage of writes in a mixed workload").def("50"),
    O::new("percentage_random", PCT, C::IoType, "Percentage of random I/O in a random workload (the rest is sequential)").def("100").per_dir(),
    O::new("direct", K::Bool, C::IoType, "Use O_DIRECT (bypass the page cache)").def("0"),
    O::new("buffered", K::Bool, C::IoType, "Use buffered I/O (the opposite of direct)").def("1"),
    O::new("sync", K::Choice(SYNC), C::IoType, "Open files with O_SYNC or O_DSYNC").def("none"),
    O::new("fsync", INT0, C::IoType, "fsync after this many writes (0: never)").def("0"),
    O::new("fdatasync", INT0, C::IoType, "fdatasync after this many writes (0: never)").def("0"),
    O::new("sync_file_range", K::Str, C::IoType, "sync_file_range(2) over what was written, every N writes (wait_before,write,wait_after[:N])"),
    O::new("serialize_overlap", K::Bool, C::IoDepth, "Hold back an I/O while an I/O in flight overlaps it").def("0"),
    O::new("end_fsync", K::Bool, C::IoType, "fsync the files when the job's writes are done").def("0"),
    O::new("fsync_on_close", K::Bool, C::IoType, "fsync each file when closing it").def("0"),
    O::new("randrepeat", K::Bool, C::IoType, "Use the same random sequence on every run").def("1"),
    O::new("allrandrepeat", K::Bool, C::IoType, "Make every random choice repeatable, whatever randrepeat says").def("0"),
    O::new("randseed", K::Int { min: 0, max: i64::MAX, }, C::IoType, "Seed of the random generators").def("0x89"),
    O::new("norandommap", K::Flag, C::IoType, "Do not track which blocks were done; random I/O may repeat blocks"),
    O::new("random_generator", K::Choice(RANDGEN), C::IoType, "Random number generator for offsets (fiox uses its own for all three; lfsr keeps each block once per pass even with norandommap)").def("tausworthe"),
    O::new("random_distribution", K::Str, C::IoType, "Offset distribution: random, zipf:θ, pareto:h, normal:σ, zoned:..., zoned_abs:...").def("random"),
    O::new("bs", K::Size, C::BlockSize, "Block size of each I/O").alias(&["blocksize"]).def("4096").per_dir(),
    O::new("bsrange", K::Range, C::BlockSize, "Range of block sizes (low-high)").alias(&["blocksize_range"]).per_dir(),
    O::new("bssplit", K::BsSplit, C::BlockSize, "Weighted mix of block sizes (4k/50:64k/50)").per_dir(),
    O::new("ba", K::Size, C::BlockSize, "Alignment of random offsets (default: the block size)").alias(&["blockalign"]).per_dir(),
    O::new("bs_unaligned", K::Flag, C::BlockSize, "Do not align block sizes within a range").alias(&["blocksize_unaligned"]),
    O::new("bs_is_seq_rand", K::Bool, C::BlockSize, "Read the bs lists as sequential,random instead of read,write").def("0"),
    O::new("fadvise_hint", K::Choice(FADVISE), C::IoType, "posix_fadvise hint given when a file is opened: 1 follows rw (sequential or random)").def("1"),
    O::new("write_hint", K::Choice(WRITE_HINT), C::IoType, "Expected lifetime of the written data, passed to the kernel (F_SET_RW_HINT)"),
    O::new("write_barrier", INT0, C::IoType, "fio: make every Nth write a barrier write; no Linux engine of fio 3.33 issues barriers, so this has no effect").def("0"),
    O::new("atomic", K::Bool, C::IoType, "fio: open with O_ATOMIC, which Linux does not have; no effect here, as in fio").def("0"),
    O::new("hugepage-size", K::Size, C::Buffers, "Huge page size that mem=mmaphuge and shmhuge buffers are rounded up to").def("2m"),
    O::new("zero_buffers", K::Flag, C::Buffers, "Fill I/O buffers with zeros"),
    O::new("refill_buffers", K::Flag, C::Buffers, "Refill the buffer with new data before every write"),
    O::new("scramble_buffers", K::Bool, C::Buffers, "Lightly scramble buffer contents before each write to defeat dedupe").def("1"),
    O::new("buffer_compress_percentage", PCT, C::Buffers, "Make write buffers compressible to this percentage"),
    O::new("buffer_compress_chunk", K::Size, C::Buffers, "Granularity of buffer_compress_percentage").def("512"),
    O::new("dedupe_percentage", PCT, C::Buffers, "Percentage of write buffers that repeat earlier ones").def("0"),
    O::new("dedupe_mode", K::Choice(DEDUPE_MODE), C::Buffers, "How a deduplicated write buffer is made: repeat the last unique one, or pick one of a working set").def("repeat"),
    O::new("dedupe_working_set_percentage", PCT, C::Buffers, "With dedupe_mode=working_set: the working set's size, as a percentage of the job's size").def("5"),
    O::new("dedupe_global", K::Bool, C::Buffers, "Share the dedupe working set among all jobs that set this").def("0"),
    O::new("buffer_pattern", K::Str, C::Buffers, "Fill write buffers with this pattern (number, 0x hex or \"string\")"),
    O::new("mem", K::Choice(MEM), C::Buffers, "Where I/O buffers come from").alias(&["iomem"]).def("malloc"),
    O::new("iomem_align", K::Size, C::Buffers, "Alignment of I/O buffers in memory").alias(&["mem_align"]).def("0"),
    O::new("iodepth", INT1, C::IoDepth, "Number of I/Os in flight per job (synchronous engines do one at a time)").def("1"),
    O::new("iodepth_batch_submit", INT0, C::IoDepth, "Number of I/Os to submit at once").alias(&["iodepth_batch"]).def("1"),
    O::new("iodepth_batch_complete_min", INT0, C::IoDepth, "Least number of completions to wait for at once").alias(&["iodepth_batch_complete"]).def("1"),
    O::new("iodepth_batch_complete_max", INT0, C::IoDepth, "Most completions to reap at once (default: iodepth_batch_complete_min)"),
    O::new("iodepth_low", INT0, C::IoDepth, "Refill the queue only when it has drained to this depth (default: iodepth)"),
    O::new("io_submit_mode", K::Choice(SUBMIT_MODE), C::IoDepth, "Submit I/O from the job itself or from helper threads").def("inline"),
    O::new("rate", K::Size, C::Rate, "Cap bandwidth at this many bytes per second").per_dir(),
    O::new("rate_min", K::Size, C::Rate, "Fail the job if bandwidth falls below this").per_dir().alias(&["ratemin"]),
    O::new("rate_iops", INT0, C::Rate, "Cap the rate at this many I/Os per second").per_dir(),
    O::new("rate_iops_min", INT0, C::Rate, "Fail the job if IOPS fall below this").per_dir(),
    O::new("rate_process", K::Choice(RATE_PROCESS), C::Rate, "How rate-limited I/O is spaced in time").def("linear"),
    O::new("rate_cycle", INT0, C::Rate, "Window in ms over which rate_min is checked").def("1000").alias(&["ratecycle"]),
    O::new("rate_ignore_thinktime", K::Bool, C::Rate, "Go on at the rate after a think instead of making up for the time thought (fio's default catches up)").def("0"),
    O::new("thinktime", K::Time { unit: TimeUnit::Usec, }, C::Rate, "Pause this long after an I/O (microseconds unless a unit is given)").def("0"),
    O::new("thinktime_spin", K::Time { unit: TimeUnit::Usec, }, C::Rate, "Busy-spin this long of each think time").def("0"),
    O::new("thinktime_blocks", INT1, C::Rate, "Think only after this many blocks").def("1"),
    O::new("thinktime_blocks_type", K::Choice(THINK_TYPE), C::Rate, "Whether thinktime_blocks counts completions or submissions").def("complete"),
    O::new("thinktime_iotime", K::Time { unit: TimeUnit::Sec, }, C::Rate, "Think only after this much I/O time").def("0"),
    O::new("latency_target", K::Time { unit: TimeUnit::Usec, }, C::Latency, "Find the highest queue depth at which I/Os stay under this latency (0: off)").def("0"),
    O::new("latency_window", K::Time { unit: TimeUnit::Usec, }, C::Latency, "Window over which latency_target is checked at each queue depth").def("0"),
    O::new("latency_percentile", K::Float { min: 0.0, max: 100.0, }, C::Latency, "Percentage of I/Os in each window that must meet latency_target").def("100"),
    O::new("latency_run", K::Bool, C::Latency, "Keep adjusting the queue depth for the whole run instead of stopping once it is found").def("0"),
    O::new("max_latency", K::Time { unit: TimeUnit::Usec, }, C::Latency, "Fail the job (ETIMEDOUT) when an I/O takes longer than this (0: no limit)").def("0"),
    O::new("steadystate", K::Str, C::SteadyState, "Steady-state criterion and limit: iops, iops_slope, bw or bw_slope, then ':' and a number or a percentage of the mean (iops_slope:0.1%)").alias(&["ss"]).def("iops_slope:0.01%"),
    O::new("steadystate_duration", K::Time { unit: TimeUnit::Sec, }, C::SteadyState, "Rolling window over which steady state is judged, sampled once a second (0: off)").alias(&["ss_dur"]).def("0"),
    O::new("steadystate_ramp_time", K::Time { unit: TimeUnit::Sec, }, C::SteadyState, "Run this long before collecting steady-state samples").alias(&["ss_ramp"]).def("0"),
    O::new("continue_on_error", K::Choice(CONT_ERR), C::Errors, "Which errors do not stop the job (only EIO and EILSEQ, unless ignore_error lists others)").def("none"),
    O::new("ignore_error", K::Str, C::Errors, "Errors that do not stop the job, as READ,WRITE,VERIFY lists of names or numbers separated by ':' (EIO:ENOSPC,EIO)"),
    O::new("error_dump", K::Bool, C::Errors, "Print every I/O error, also those that do not stop the job").def("0"),
];

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
