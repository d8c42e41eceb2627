//! `ioengine`, and the options that belong to one engine or a few: one file per engine (or
//! family of engines sharing rows), each with its rows, the struct they bind into and a test
//! of where each row lands. Adding an engine's options is a file here, its struct in
//! [`EngineOpts`] and its rows in `defs::TABLES`.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

pub(super) mod ceph;
pub(super) mod cpuio;
pub(super) mod e4defrag;
pub(super) mod exec;
pub(super) mod gfapi;
pub(crate) mod http;
pub(super) mod io_uring;
pub(super) mod io_uring_cmd;
pub(super) mod libblkio;
pub(super) mod net;
pub(super) mod others;
pub(super) mod sg;

pub use ceph::CephOpts;
pub use cpuio::CpuioOpts;
pub use e4defrag::E4defragOpts;
pub use exec::ExecOpts;
pub use gfapi::GfapiOpts;
pub use http::{HttpMode, HttpOpts, Https};
pub use io_uring::{CmdPrioOpts, IoUringOpts, LibaioOpts, Pvsync2Opts};
pub use io_uring_cmd::{PiChk, UringCmdOpts, WriteMode as UringCmdWriteMode};
pub use libblkio::{LibblkioOpts, WaitMode as LibblkioWaitMode};
pub use net::{NetOpts, RdmaOpts};
pub use others::{LibiscsiOpts, MtdOpts, NbdOpts, NfsOpts};
pub use sg::SgOpts;

/// Options that only some engines read, one struct per engine (or family sharing rows), each
/// defined beside its rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineOpts {
    pub io_uring: IoUringOpts,
    /// io_uring_cmd's own (fio 3.42): write mode, metadata, protection information, FUA.
    pub io_uring_cmd: UringCmdOpts,
    pub libaio: LibaioOpts,
    pub pvsync2: Pvsync2Opts,
    pub cmdprio: CmdPrioOpts,
    pub sg: SgOpts,
    pub cpuio: CpuioOpts,
    pub exec: ExecOpts,
    pub e4defrag: E4defragOpts,
    pub net: NetOpts,
    pub rdma: RdmaOpts,
    pub mtd: MtdOpts,
    pub nbd: NbdOpts,
    /// libiscsi: the initiator's iSCSI name.
    pub libiscsi: LibiscsiOpts,
    /// nfs: the export, as a libnfs URL.
    pub nfs: NfsOpts,
    pub gfapi: GfapiOpts,
    /// libblkio (fio 3.42): the driver, its path and properties, and how to wait.
    pub libblkio: LibblkioOpts,
    /// rbd and rados: which cluster, client, configuration, pool and image.
    pub ceph: CephOpts,
    /// http: the server, authentication mode and credentials (`https`, `http_*`).
    pub http: HttpOpts,
}

#[rustfmt::skip]
pub(super) static DEFS: &[O] = &[
    O::new("ioengine", K::Choice(ENGINES), C::Engine, "How the job does its I/O").def("psync").to(|s, v| {
        s.ioengine = v.choice();
        Ok(())
    }),
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
    Choice { word: "rdma", help: "RDMA writes, reads or sends to a peer (libibverbs, librdmacm)" },
    Choice { word: "gfapi", help: "GlusterFS" },
    Choice { word: "gfapi_async", help: "GlusterFS, asynchronous" },
    Choice { word: "mtd", help: "Raw flash on an MTD character device (/dev/mtdN); trims erase whole erase blocks" },
    Choice {
        word: "pmemblk",
        help: "Blocks of a libpmemblk pool (package libpmemblk1) on a DAX-mounted file system; needs thread",
    },
    Choice { word: "dev-dax", help: "Device DAX (/dev/daxX.Y) through libpmem (package libpmem1)" },
    Choice { word: "libpmem", help: "Files on a DAX-mounted file system through libpmem (package libpmem1)" },
    Choice { word: "cpuio", help: "Burn CPU instead of doing I/O" },
    Choice { word: "falloc", help: "fallocate(2) calls" },
    Choice { word: "ftruncate", help: "ftruncate(2) calls" },
    Choice { word: "filecreate", help: "Create files and time it" },
    Choice { word: "filestat", help: "stat files and time it" },
    Choice { word: "filedelete", help: "Delete files and time it" },
    Choice { word: "exec", help: "Run a program alongside" },
    Choice { word: "e4defrag", help: "ext4 online defragmentation" },
    Choice { word: "http", help: "HTTP, WebDAV and S3" },
    Choice {
        word: "libblkio",
        help: "Block devices and files through libblkio's drivers (fio 3.42; package libblkio1)",
    },
    Choice { word: "libiscsi", help: "iSCSI LUNs through libiscsi (package libiscsi7), filename=iscsi://HOST/IQN/LUN" },
    // fio 3.33 engines that Debian's build leaves out (they need libraries or hardware Debian's
    // fio is not built with). fio's --parse-only accepts job files naming them, so fiox does
    // too; a run refuses them before any I/O.
    Choice { word: "nfs", help: "NFS client in user space through libnfs (package libnfs13)" },
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
