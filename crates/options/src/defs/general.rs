//! Job description, time, targets, processes and units.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O, TimeUnit};

const INT0: K = K::Int { min: 0, max: i64::MAX };
const INT1: K = K::Int { min: 1, max: i64::MAX };

#[rustfmt::skip]
pub(super) static DEFS: &[O] = &[
    O::new("name", K::Str, C::Description, "Name of the job; on the command line it starts a new job ('global' starts a global section)"),
    O::new("description", K::Str, C::Description, "Free text describing the job, printed in the report"),
    O::new("wait_for", K::Str, C::Process, "Start only after the named job has finished"),
    O::new("stonewall", K::Flag, C::Process, "Wait for all earlier jobs to finish before starting; also starts a new reporting group").alias(&["wait_for_previous"]),
    O::new("new_group", K::Flag, C::Process, "Start a new reporting group without waiting for earlier jobs"),
    O::new("numjobs", INT1, C::Process, "Number of clones of this job, each a separate worker doing the same workload").def("1"),
    O::new("thread", K::Flag, C::Process, "Run jobs as threads instead of processes (fiox always uses threads; this changes what is printed)"),
    O::new("group_reporting", K::Flag, C::Measurement, "Report a reporting group as one job instead of each job separately"),
    O::new("exitall", K::Flag, C::Process, "Stop all jobs when one job finishes"),
    O::new("exitall_on_error", K::Flag, C::Process, "Stop all jobs when one job stops on an error"),
    O::new("exit_what", K::Choice(EXIT_WHAT), C::Process, "What exitall and exitall_on_error stop").def("group"),
    O::new("cpus_allowed", K::Str, C::Process, "CPUs the job may run on, as a list like 0-3,6"),
    O::new("cpus_allowed_policy", K::Choice(CPU_POLICY), C::Process, "How cpus_allowed is shared between the clones of a job").def("shared"),
    O::new("cpumask", K::Int { min: 0, max: i64::MAX }, C::Process, "CPUs the job may run on, as a bit mask (bit N: CPU N); cpus_allowed takes a list"),
    O::new("nice", K::Int { min: -20, max: 19 }, C::Process, "Scheduling niceness of the job").def("0"),
    O::new("prio", K::Int { min: 0, max: 7 }, C::Process, "I/O priority level within the class (0 is highest)"),
    O::new("prioclass", K::Int { min: 0, max: 3 }, C::Process, "I/O priority class (1 realtime, 2 best effort, 3 idle)"),
    O::new("lockmem", K::Size, C::Buffers, "Lock this much memory per job, to test with less RAM available").def("0"),
    O::new("runtime", K::Time { unit: TimeUnit::Sec }, C::Time, "Stop the job after this long (seconds unless a unit is given)").alias(&["timeout"]).def("0"),
    O::new("time_based", K::Flag, C::Time, "Keep running for the whole runtime, repeating the workload as needed"),
    O::new("ramp_time", K::Time { unit: TimeUnit::Sec }, C::Time, "Run this long before counting statistics").def("0"),
    O::new("startdelay", K::Time { unit: TimeUnit::Sec }, C::Time, "Wait this long before starting the job").def("0"),
    O::new("hang_timeout", K::Time { unit: TimeUnit::Sec }, C::Time, "fiox: a job is hung when none of its I/O completes for this long; its in-flight I/O is then reported as dropped (after a stop request: at most 5 s)").def("300"),
    O::new("loops", INT1, C::Time, "Repeat the job's workload this many times").def("1"),
    O::new("number_ios", INT0, C::IoSize, "Stop after this many I/Os (0: no limit)").def("0"),
    O::new("filename", K::Str, C::Target, "File or device to use; several separated by ':'"),
    O::new("opendir", K::Str, C::Target, "Add every regular file under this directory (recursively) to the job's files"),
    O::new("lockfile", K::Choice(LOCKFILE), C::Target, "Lock each file around each I/O, among the jobs sharing it").def("none"),
    O::new("directory", K::Str, C::Target, "Directory in which to create the job's files"),
    O::new("filename_format", K::Str, C::Target, "Pattern for generated file names ($jobname.$jobnum.$filenum)").def("$jobname.$jobnum.$filenum"),
    O::new("nrfiles", INT1, C::Target, "Number of files per job").alias(&["nr_files"]).def("1"),
    O::new("openfiles", INT0, C::Target, "How many of the job's files are used at a time (0: all); the next one is taken in when one is done").def("0"),
    O::new("file_service_type", K::Str, C::Target, "How the next file is chosen: roundrobin[:N], sequential, random[:N], zipf:θ, pareto:h, normal:σ (gauss)").def("roundrobin"),
    O::new("size", K::SizeOrPct, C::IoSize, "Total size of the job's I/O region (split across its files), or a percentage of the file or device"),
    O::new("filesize", K::Range, C::IoSize, "Size of each file (a range picks a random size per file)"),
    O::new("io_size", K::SizeOrPct, C::IoSize, "Bytes to transfer, if different from size").alias(&["io_limit"]),
    O::new("offset", K::SizeOrPct, C::IoSize, "Start of the I/O region within each file").def("0").alias(&["fileoffset"]),
    O::new("offset_increment", K::SizeOrPct, C::IoSize, "Added to offset for each further clone of the job").def("0"),
    O::new("fill_device", K::Bool, C::IoSize, "Write until the file system is full (ENOSPC ends the job, not as an error); without size=, the size is the free space").alias(&["fill_fs"]).def("0"),
    O::new("create_on_open", K::Bool, C::Target, "Create files only when the job opens them for I/O").def("0"),
    O::new("flow", K::Int { min: i64::MIN + 1, max: i64::MAX }, C::Process, "Weight of the job's I/O among the jobs of its flow_id (8 beside 1: eight I/Os to one)").def("0"),
    O::new("flow_id", INT0, C::Process, "Group of jobs whose I/O flow keeps in proportion").def("0"),
    O::new("flow_sleep", INT0, C::Process, "Microseconds a job ahead of its flow group waits before checking again (0: yield)").def("0"),
    O::new("exec_prerun", K::Str, C::Process, "Shell command run before the job (output in JOBNAME.prerun.txt)"),
    O::new("exec_postrun", K::Str, C::Process, "Shell command run after the job (output in JOBNAME.postrun.txt)"),
    O::new("pre_read", K::Bool, C::Target, "Read the job's region into the page cache before the job starts (not counted)").def("0"),
    O::new("allow_file_create", K::Bool, C::Target, "Let the job create or extend its files (0: they must exist, large enough)").def("1"),
    O::new("create_only", K::Bool, C::Target, "Lay the files out, then end the job without I/O").def("0"),
    O::new("create_serialize", K::Bool, C::Target, "Lay out the jobs' files one job after another (0: each job lays out its own, in parallel)").def("1"),
    O::new("create_fsync", K::Bool, C::Target, "fsync a file after writing its layout").def("1"),
    O::new("file_append", K::Bool, C::Target, "Start each file's region at its current end").def("0"),
    O::new("unique_filename", K::Bool, C::Target, "Prefix generated file names with the client's name in client/server runs (no effect locally)").def("1"),
    O::new("offset_align", K::Size, C::IoSize, "Round a percentage offset up to this (0: to the block size)").def("0"),
    O::new("overwrite", K::Bool, C::Target, "Lay out write targets fully before writing").def("0"),
    O::new("fallocate", K::Choice(FALLOCATE), C::Target, "How to preallocate files when laying them out").def("native"),
    O::new("unlink", K::Bool, C::Target, "Delete the job's files when it is done").def("0"),
    O::new("unlink_each_loop", K::Bool, C::Target, "Delete the job's files after each loop (only files fiox created)").def("0"),
    O::new("invalidate", K::Bool, C::Target, "Drop the page cache of the files before the run").def("1"),
    O::new("allow_mounted_write", K::Bool, C::Target, "Allow writes to a block device that holds a mounted or recognisable file system").def("0"),
    O::new("readonly", K::Flag, C::Target, "Refuse to write (safety check)"),
    O::new("kb_base", K::Choice(KB_BASE), C::Units, "Base of size suffixes: 1024 (k=1024, KiB=1000) or 1000 (k=1000, KiB=1024)").def("1024"),
    O::new("unit_base", K::Choice(UNIT_BASE), C::Units, "Report bandwidth in bytes (8, or 0 for automatic) or bits (1)").def("0"),
];

static LOCKFILE: &[Choice] = &[
    Choice { word: "none", help: "No file locking" },
    Choice { word: "exclusive", help: "One I/O at a time to the file, across jobs" },
    Choice { word: "readwrite", help: "Many reads or one write at a time to the file, across jobs" },
];

static EXIT_WHAT: &[Choice] = &[
    Choice { word: "group", help: "The jobs running now (later stonewall groups still run)" },
    Choice { word: "stonewall", help: "The jobs running now, then go on with the next stonewall group" },
    Choice { word: "all", help: "Everything: later groups do not run" },
];

static CPU_POLICY: &[Choice] = &[
    Choice { word: "shared", help: "All clones share the whole set" },
    Choice { word: "split", help: "Each clone gets one CPU of the set" },
];

static FALLOCATE: &[Choice] = &[
    Choice { word: "none", help: "Do not preallocate" },
    Choice { word: "native", help: "Preallocate with fallocate, falling back to none" },
    Choice { word: "posix", help: "Preallocate with posix_fallocate" },
    Choice { word: "keep", help: "fallocate with FALLOC_FL_KEEP_SIZE" },
    Choice { word: "truncate", help: "Extend with ftruncate" },
    Choice { word: "0", help: "Same as none" },
    Choice { word: "1", help: "Same as posix" },
];

static KB_BASE: &[Choice] = &[
    Choice { word: "1024", help: "k means 1024 (KiB means 1000)" },
    Choice { word: "1000", help: "k means 1000 (KiB means 1024)" },
];

static UNIT_BASE: &[Choice] = &[
    Choice { word: "0", help: "Automatic (bytes)" },
    Choice { word: "8", help: "Report in bits" },
    Choice { word: "1", help: "Report in bytes" },
];
