//! `ioengine` and the options that belong to one engine or a few.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O, TimeUnit};

const BOOL: K = K::Bool;

#[rustfmt::skip]
pub(super) static DEFS: &[O] = &[
    O::new("ioengine", K::Choice(ENGINES), C::Engine, "How the job does its I/O").def("psync"),
    // Rows shared by several engines are in the order fio's `--enghelp=ENGINE` lists them for
    // each of those engines (io_uring, io_uring_cmd, libaio, pvsync2 and sg), since that listing
    // follows this table.
    O::new("userspace_reap", K::Flag, C::Engine, "Reap completions from user space instead of io_getevents").def("0").engines(&["libaio"]),
    O::new("hipri", K::Flag, C::Engine, "Use polled I/O completions (needs poll queues)").def("0").engines(&["io_uring", "io_uring_cmd", "pvsync2", "sg"]),
    O::new("cmdprio_percentage", K::Int { min: 0, max: 100 }, C::Engine, "Percentage of I/Os sent with the cmdprio_class/cmdprio priority").per_dir().engines(&["io_uring", "io_uring_cmd", "libaio"]),
    O::new("cmdprio_class", K::Int { min: 1, max: 3 }, C::Engine, "Priority class of those I/Os (1 realtime, 2 best effort, 3 idle)").per_dir().engines(&["io_uring", "io_uring_cmd", "libaio"]),
    O::new("cmdprio", K::Int { min: 0, max: 7 }, C::Engine, "Priority level of those I/Os (0 is highest)").per_dir().engines(&["io_uring", "io_uring_cmd", "libaio"]),
    O::new("cmdprio_bssplit", K::PrioSplit, C::Engine, "Priority percentages by block size (bs/pct[/class/level]:...)").per_dir().engines(&["io_uring", "io_uring_cmd", "libaio"]),
    O::new("fixedbufs", K::Flag, C::Engine, "Register the I/O buffers with the ring").def("0").engines(&["io_uring", "io_uring_cmd"]),
    O::new("registerfiles", K::Flag, C::Engine, "Register the files with the ring").def("0").engines(&["io_uring", "io_uring_cmd"]),
    O::new("sqthread_poll", K::Flag, C::Engine, "Let a kernel thread poll the submission queue").def("0").engines(&["io_uring", "io_uring_cmd"]),
    O::new("sqthread_poll_cpu", K::Int { min: 0, max: 4096 }, C::Engine, "CPU of the submission polling thread").engines(&["io_uring", "io_uring_cmd"]),
    O::new("nonvectored", K::Int { min: -1, max: 1 }, C::Engine, "Use non-vectored read/write commands (-1: when the kernel has them)").def("-1").engines(&["io_uring", "io_uring_cmd"]),
    O::new("hipri_percentage", K::Int { min: 0, max: 100 }, C::Engine, "Percentage of I/Os that are polled").def("100").engines(&["pvsync2"]),
    O::new("uncached", BOOL, C::Engine, "Drop the pages from the cache after buffered I/O (RWF_DONTCACHE)").def("0").engines(&["io_uring", "io_uring_cmd", "pvsync2"]),
    O::new("nowait", BOOL, C::Engine, "Fail instead of blocking (RWF_NOWAIT)").def("0").engines(&["io_uring", "io_uring_cmd", "libaio", "pvsync2"]),
    O::new("force_async", K::Int { min: 0, max: i64::MAX, }, C::Engine, "Mark every Nth request IOSQE_ASYNC").def("0").engines(&["io_uring", "io_uring_cmd"]),
    O::new("cmd_type", K::Choice(CMD_TYPES), C::Engine, "Kind of pass-through command (io_uring_cmd; io_uring lists it too, as in fio)").def("nvme").engines(&["io_uring", "io_uring_cmd"]),
    // sg
    O::new("readfua", BOOL, C::Engine, "Set the FUA (force unit access) bit on every read").def("0").engines(&["sg"]),
    O::new("writefua", BOOL, C::Engine, "Set the FUA (force unit access) bit on every write").def("0").engines(&["sg"]),
    O::new("sg_write_mode", K::Choice(SG_WRITE_MODES), C::Engine, "Which SCSI command a write is").def("write").engines(&["sg"]),
    O::new("stream_id", K::Int { min: 0, max: u32::MAX as i64 }, C::Engine, "Stream of WRITE STREAM(16) commands").def("0").engines(&["sg"]),
    // cpuio
    O::new("cpuload", K::Int { min: i32::MIN as i64, max: u32::MAX as i64 }, C::Engine, "Share of one CPU to burn, in percent (required; above 100 means 100)").engines(&["cpuio"]),
    O::new("cpuchunks", K::Int { min: 0, max: u32::MAX as i64 }, C::Engine, "Length of one burn, in microseconds").def("50000").engines(&["cpuio"]).child_of("cpuload"),
    O::new("cpumode", K::Choice(CPU_MODES), C::Engine, "How the CPU is burnt").def("noop").engines(&["cpuio"]),
    O::new("exit_on_io_done", BOOL, C::Engine, "Stop once every job that does I/O has finished").def("0").engines(&["cpuio"]),
    // exec
    O::new("program", K::Str, C::Engine, "Program to run for the job's runtime (required)").engines(&["exec"]),
    O::new("arguments", K::Str, C::Engine, "Its arguments, separated by spaces; %r is the runtime in seconds, %n the job's name").engines(&["exec"]),
    O::new("grace_time", K::Int { min: 0, max: u32::MAX as i64 }, C::Engine, "Seconds between SIGTERM and SIGKILL at the end").def("1").engines(&["exec"]),
    O::new("std_redirect", BOOL, C::Engine, "Send the program's output to JOBNAME.stdout and JOBNAME.stderr").def("1").engines(&["exec"]),
    // e4defrag
    O::new("donorname", K::Str, C::Engine, "File whose blocks are swapped into the job's file (required)").engines(&["e4defrag"]),
    O::new("inplace", K::Int { min: 0, max: 1 }, C::Engine, "Allocate and free the donor's space at each I/O instead of once").engines(&["e4defrag"]),
    // net, netsplice (hostname and port also rdma)
    O::new("hostname", K::Str, C::Engine, "Host to send to (net) or connect to (rdma)").engines(&["net", "netsplice", "rdma"]),
    O::new("bindname", K::Str, C::Engine, "Local address to bind to").def("").engines(&["rdma"]),
    O::new("port", K::Int { min: 1, max: 65535 }, C::Engine, "TCP or UDP port").engines(&["net", "netsplice", "rdma"]),
    O::new("verb", K::Choice(RDMA_VERBS), C::Engine, "RDMA operation").def("write").engines(&["rdma"]),
    O::new("protocol", K::Choice(PROTOCOLS), C::Engine, "Network protocol").alias(&["proto"]).def("tcp").engines(&["net", "netsplice"]),
    O::new("nodelay", BOOL, C::Engine, "Set TCP_NODELAY on TCP connections").def("0").engines(&["net", "netsplice"]),
    O::new("listen", K::Flag, C::Engine, "Wait for the other end: accept a TCP connection or bind the UDP port").def("0").engines(&["net", "netsplice"]),
    O::new("pingpong", K::Flag, C::Engine, "Each I/O waits for the other end's answer").def("0").engines(&["net", "netsplice"]),
    O::new("interface", K::Str, C::Engine, "Interface address for UDP multicast").engines(&["net", "netsplice"]),
    O::new("ttl", K::Int { min: 0, max: 255 }, C::Engine, "Time to live of outgoing UDP multicast datagrams").def("1").engines(&["net", "netsplice"]),
    O::new("window_size", K::Int { min: 0, max: i32::MAX as i64 }, C::Engine, "Socket buffer size (SO_SNDBUF and SO_RCVBUF)").engines(&["net", "netsplice"]),
    O::new("mss", K::Int { min: 0, max: i32::MAX as i64 }, C::Engine, "TCP maximum segment size (TCP_MAXSEG)").engines(&["net", "netsplice"]),
    // mtd, nbd, gfapi
    O::new("skip_bad", BOOL, C::Engine, "Skip known bad blocks").def("0").engines(&["mtd"]),
    O::new("uri", K::Str, C::Engine, "Name of NBD URI").engines(&["nbd"]),
    O::new("volume", K::Str, C::Engine, "GlusterFS volume").engines(&["gfapi", "gfapi_async"]),
    O::new("brick", K::Str, C::Engine, "GlusterFS brick to connect to").engines(&["gfapi", "gfapi_async"]),
    O::new("single-instance", BOOL, C::Engine, "Share one GlusterFS connection among the jobs").engines(&["gfapi", "gfapi_async"]),
    // Ceph (fio's order and words in --enghelp=rados and --enghelp=rbd)
    O::new("clustername", K::Str, C::Engine, "Cluster name for ceph").engines(&["rados", "rbd"]),
    O::new("rbdname", K::Str, C::Engine, "RBD name for RBD engine").engines(&["rbd"]),
    O::new("pool", K::Str, C::Engine, "Ceph pool name to benchmark against")
        .engines(&["rados", "rbd"])
        .engine_help(&[("rbd", "Name of the pool hosting the RBD for the RBD engine")]),
    O::new("clientname", K::Str, C::Engine, "Name of the ceph client to access RADOS engine")
        .engines(&["rados", "rbd"])
        .engine_help(&[("rbd", "Name of the ceph client to access the RBD for the RBD engine")]),
    // fio's rbd engine has no `conf` (it reads `$CEPH_CONF` or the default places only).
    O::new("conf", K::Str, C::Engine, "Path of the ceph configuration file").engines(&["rados"]).extra_engines(&["rbd"]),
    O::new("busy_poll", BOOL, C::Engine, "Busy poll for completions instead of sleeping").def("0").engines(&["rados", "rbd"]),
    O::new("touch_objects", BOOL, C::Engine, "Touch (create) objects on start").def("1").engines(&["rados"]),
    // fiox's own Ceph options: general rows (not the engines'), so that --enghelp=rbd and
    // --enghelp=rados stay fio's; refused with any other engine.
    O::new("namespace", K::Str, C::Engine, "fiox: the RADOS namespace of the rbd image or the rados objects (rbd, rados)"),
    O::new("ceph_connect_timeout", K::Time { unit: TimeUnit::Sec }, C::Engine, "fiox: how long to wait for the Ceph monitors (rbd, rados; default: the configuration's client_mount_timeout if it sets one, else 60 s)"),
    O::new("ceph_shared_client", BOOL, C::Engine, "fiox: one librados client (one monitor session, one set of OSD connections) for all jobs of this process with the same cluster, client, pool and namespace, instead of one per job as fio (rbd, rados)").def("0"),
    O::new("rbd_shared_handle", BOOL, C::Engine, "fiox: one open image (one exclusive-lock owner, one librbd cache) for all jobs of this process on the same image, instead of one per job as fio; implies ceph_shared_client (rbd)").def("0"),
    O::new("ceph_stall_warn", K::Time { unit: TimeUnit::Sec }, C::Engine, "fiox: when no I/O completes for this long with I/O outstanding, say so on stderr with the oldest I/O's age and the cluster's health from the monitors (rbd, rados; 0: never)").def("10"),
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
    Choice { word: "nbd", help: "Network block device client through libnbd (package libnbd0)" },
    Choice { word: "rados", help: "Ceph RADOS objects" },
    Choice { word: "rbd", help: "Ceph RBD images through librbd" },
    Choice { word: "rdma", help: "RDMA" },
    Choice { word: "gfapi", help: "GlusterFS" },
    Choice { word: "gfapi_async", help: "GlusterFS, asynchronous" },
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
    Choice { word: "libzbc", help: "Zoned block devices through libzbc" },
    Choice { word: "dfs", help: "DAOS file system" },
    Choice { word: "libcufile", help: "NVIDIA GPUDirect Storage" },
    Choice { word: "librpma_apm_client", help: "PMDK librpma, APM client" },
    Choice { word: "librpma_apm_server", help: "PMDK librpma, APM server" },
    Choice { word: "librpma_gpspm_client", help: "PMDK librpma, GPSPM client" },
    Choice { word: "librpma_gpspm_server", help: "PMDK librpma, GPSPM server" },
    Choice { word: "windowsaio", help: "Windows overlapped I/O (Windows only)" },
    Choice { word: "solarisaio", help: "Solaris asynchronous I/O (Solaris only)" },
];

static CMD_TYPES: &[Choice] = &[Choice { word: "nvme", help: "NVMe pass-through commands" }];

static SG_WRITE_MODES: &[Choice] = &[
    Choice { word: "write", help: "WRITE commands" },
    Choice { word: "write_and_verify", help: "WRITE AND VERIFY commands" },
    Choice { word: "verify", help: "WRITE AND VERIFY commands (old name)" },
    Choice { word: "write_same", help: "WRITE SAME commands" },
    Choice { word: "same", help: "WRITE SAME commands (old name)" },
    Choice { word: "write_same_ndob", help: "WRITE SAME(16) commands with NDOB" },
    Choice { word: "verify_bytchk_00", help: "VERIFY commands, BYTCHK 00" },
    Choice { word: "verify_bytchk_01", help: "VERIFY commands, BYTCHK 01" },
    Choice { word: "verify_bytchk_11", help: "VERIFY commands, BYTCHK 11" },
    Choice { word: "write_stream", help: "WRITE STREAM(16) commands" },
];

static CPU_MODES: &[Choice] =
    &[Choice { word: "noop", help: "A busy loop" }, Choice { word: "qsort", help: "Sorting arrays" }];

static RDMA_VERBS: &[Choice] = &[
    Choice { word: "write", help: "RDMA write" },
    Choice { word: "read", help: "RDMA read" },
    Choice { word: "send", help: "Send" },
    Choice { word: "recv", help: "Receive" },
];

static PROTOCOLS: &[Choice] = &[
    Choice { word: "tcp", help: "TCP over IPv4" },
    Choice { word: "tcpv6", help: "TCP over IPv6" },
    Choice { word: "udp", help: "UDP over IPv4" },
    Choice { word: "udpv6", help: "UDP over IPv6" },
    Choice { word: "unix", help: "A UNIX domain stream socket" },
];
