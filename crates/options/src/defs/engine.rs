//! `ioengine` and the options that belong to one engine or a few.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const BOOL: K = K::Bool;

#[rustfmt::skip]
pub(super) static DEFS: &[O] = &[
    O::new("ioengine", K::Choice(ENGINES), C::Engine, "How the job does its I/O").def("psync"),
    O::new("hipri", K::Flag, C::Engine, "Use polled I/O completions (needs poll queues)").def("0").engines(&["io_uring", "pvsync2"]),
    O::new("hipri_percentage", K::Int { min: 0, max: 100 }, C::Engine, "Percentage of I/Os that are polled").def("100").engines(&["pvsync2"]).not_yet(),
    O::new("uncached", BOOL, C::Engine, "Drop the pages from the cache after buffered I/O (RWF_DONTCACHE)").def("0").engines(&["io_uring", "pvsync2"]),
    O::new("nowait", BOOL, C::Engine, "Fail instead of blocking (RWF_NOWAIT)").def("0").engines(&["io_uring", "libaio", "pvsync2"]),
    O::new("fixedbufs", K::Flag, C::Engine, "Register the I/O buffers with the ring").def("0").engines(&["io_uring"]),
    O::new("registerfiles", K::Flag, C::Engine, "Register the files with the ring").def("0").engines(&["io_uring"]),
    O::new("sqthread_poll", K::Flag, C::Engine, "Let a kernel thread poll the submission queue").def("0").engines(&["io_uring"]),
    O::new("sqthread_poll_cpu", K::Int { min: 0, max: 4096 }, C::Engine, "CPU of the submission polling thread").engines(&["io_uring"]),
    O::new("nonvectored", K::Int { min: -1, max: 1 }, C::Engine, "Use non-vectored read/write commands (-1: when the kernel has them)").def("-1").engines(&["io_uring"]),
    O::new("force_async", K::Int { min: 0, max: i64::MAX, }, C::Engine, "Mark every Nth request IOSQE_ASYNC").def("0").engines(&["io_uring"]),
    O::new("cmdprio_percentage", K::Int { min: 0, max: 100 }, C::Engine, "Percentage of I/Os sent with the cmdprio_class/cmdprio priority").per_dir().engines(&["io_uring", "libaio"]),
    O::new("cmdprio_class", K::Int { min: 1, max: 3 }, C::Engine, "Priority class of those I/Os (1 realtime, 2 best effort, 3 idle)").per_dir().engines(&["io_uring", "libaio"]),
    O::new("cmdprio", K::Int { min: 0, max: 7 }, C::Engine, "Priority level of those I/Os (0 is highest)").per_dir().engines(&["io_uring", "libaio"]),
    O::new("cmdprio_bssplit", K::PrioSplit, C::Engine, "Priority percentages by block size (bs/pct[/class/level]:...)").per_dir().engines(&["io_uring", "libaio"]),
    O::new("userspace_reap", K::Flag, C::Engine, "Reap completions from user space instead of io_getevents").def("0").engines(&["libaio"]),
];

/// Every engine name fio 3.33 knows. Which of them fiox implements is the engine registry's
/// business; an engine it does not have is refused before any I/O.
static ENGINES: &[Choice] = &[
    Choice { word: "sync", help: "read(2)/write(2) with lseek(2)" },
    Choice { word: "psync", help: "pread(2)/pwrite(2) (the default)" },
    Choice { word: "vsync", help: "readv(2)/writev(2), merging adjacent I/Os" },
    Choice { word: "pvsync", help: "preadv(2)/pwritev(2)" },
    Choice { word: "pvsync2", help: "preadv2(2)/pwritev2(2) with flags" },
    Choice { word: "libaio", help: "Linux native asynchronous I/O" },
    Choice { word: "io_uring", help: "Linux io_uring" },
    Choice { word: "io_uring_cmd", help: "io_uring pass-through commands to NVMe" },
    Choice { word: "posixaio", help: "POSIX asynchronous I/O (aio_read/aio_write)" },
    Choice { word: "mmap", help: "Copy to and from a memory mapping of the file" },
    Choice { word: "null", help: "Do no I/O at all (measures the tool itself)" },
    Choice { word: "splice", help: "splice(2) and vmsplice(2)" },
    Choice { word: "net", help: "Network I/O over TCP or UDP" },
    Choice { word: "netsplice", help: "Network I/O with splice" },
    Choice { word: "sg", help: "SCSI generic" },
    Choice { word: "nbd", help: "Network block device client" },
    Choice { word: "rados", help: "Ceph RADOS objects" },
    Choice { word: "rbd", help: "Ceph RBD images through librbd" },
    Choice { word: "rdma", help: "RDMA" },
    Choice { word: "gfapi", help: "GlusterFS" },
    Choice { word: "mtd", help: "Memory technology devices" },
    Choice { word: "pmemblk", help: "Persistent memory blocks" },
    Choice { word: "dev-dax", help: "Device DAX" },
    Choice { word: "libpmem", help: "Persistent memory" },
    Choice { word: "cpuio", help: "Burn CPU instead of doing I/O" },
    Choice { word: "falloc", help: "fallocate(2) calls" },
    Choice { word: "ftruncate", help: "ftruncate(2) calls" },
    Choice { word: "filecreate", help: "Create files and time it" },
    Choice { word: "filestat", help: "stat files and time it" },
    Choice { word: "filedelete", help: "Delete files and time it" },
    Choice { word: "exec", help: "Run a program alongside" },
    Choice { word: "e4defrag", help: "ext4 online defragmentation" },
    Choice { word: "http", help: "HTTP, WebDAV and S3" },
    Choice { word: "gfapi_async", help: "GlusterFS, asynchronous" },
    // fio 3.33 engines that Debian's build leaves out (they need libraries or hardware Debian's
    // fio is not built with). fio's --parse-only accepts job files naming them, so fiox does
    // too; a run refuses them before any I/O.
    Choice { word: "libiscsi", help: "iSCSI initiator in user space" },
    Choice { word: "nfs", help: "NFS client in user space (libnfs)" },
    Choice { word: "libhdfs", help: "Hadoop HDFS" },
    Choice { word: "cpp_null", help: "The null engine, written in C++" },
    Choice { word: "ime_psync", help: "DDN IME, synchronous" },
    Choice { word: "ime_psyncv", help: "DDN IME, vectored" },
    Choice { word: "ime_aio", help: "DDN IME, asynchronous" },
    Choice { word: "xnvme", help: "xNVMe" },
    Choice { word: "dfs", help: "DAOS file system" },
    Choice { word: "libcufile", help: "NVIDIA GPUDirect Storage" },
    Choice { word: "librpma_apm_client", help: "PMDK librpma, APM client" },
    Choice { word: "librpma_apm_server", help: "PMDK librpma, APM server" },
    Choice { word: "librpma_gpspm_client", help: "PMDK librpma, GPSPM client" },
    Choice { word: "librpma_gpspm_server", help: "PMDK librpma, GPSPM server" },
    Choice { word: "windowsaio", help: "Windows overlapped I/O (Windows only)" },
    Choice { word: "solarisaio", help: "Solaris asynchronous I/O (Solaris only)" },
];
