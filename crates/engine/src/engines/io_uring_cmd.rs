//! `io_uring_cmd` (`cmd_type=nvme`): NVMe commands passed through io_uring to the NVMe generic
//! character devices (/dev/ngXnY), bypassing the block layer. The ring has 128-byte submission
//! and 32-byte completion entries (IORING_SETUP_SQE128 | CQE32), as the kernel requires for
//! NVMe passthrough: each submission carries a whole NVMe command. Reads and writes are NVMe
//! Read/Write, trims are Dataset Management with the deallocate attribute, syncs are Flush.
//! `fixedbufs` (registered buffers, IORING_URING_CMD_FIXED), `registerfiles`, `sqthread_poll`,
//! `hipri` (IOPOLL; the device needs poll queues), `nonvectored` and `force_async` apply as for
//! `io_uring`; unlike that engine, fixed buffers and files are used only when asked for, as in
//! fio.
//!
//! fio 3.42's options for namespaces with metadata: `md_per_io_size` gives each I/O a separate
//! metadata buffer (the command's metadata pointer; `nlb × ms` bytes of it are transferred);
//! on a namespace with end-to-end protection information, `pi_act=1` lets the drive make and
//! strip the 8 bytes of PI (PRACT; no buffer is needed when they are all the metadata), and
//! `pi_act=0` has fiox write them: of the guard (T10-DIF CRC16 of the block), the reference
//! tag (the LBA's low 32 bits) and the application tag, only the fields `pi_chk` names, the
//! rest zero, as fio 3.42 does; reads then check those fields on the host too. `pi_chk` sets
//! the command's PRCHK bits, the reference tag (cdw14) only with REFTAG and the application
//! tag and mask (cdw15) only with APPTAG, as fio 3.42 does. `write_mode` makes writes Write
//! Uncorrectable, Write Zeroes (`deac`: with the deallocate bit) or Verify commands, which
//! carry no data; `readfua`/`writefua` set FUA. A failed command's NVMe status is the I/O's
//! error (fio's `err=`: the status field, e.g. 643 for sct 2, sc 0x83), reported with fio
//! 3.42's `cq entry status (sct=..; sc=..)` line. Namespaces formatted with extended LBAs
//! (metadata inline with the data) are refused.
//! `nowait` and a command priority (`cmdprio_percentage`) go into the submission's flags and
//! priority fields, as for `io_uring` (but `nowait` not with `fixedbufs`, as in fio 3.33); the
//! kernel decides (Linux 6.1 fails such commands with EINVAL, which is the I/O's error, as in
//! fio).
//!
//! Sizes come from the namespace itself (Identify Namespace): its capacity and LBA size.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};

use fiox_options::spec::{PiChk, UringCmdOpts, UringCmdWriteMode as WriteMode};

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use super::{devices, found, is_device, job_files};
use crate::{Completion, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

/// `struct nvme_uring_cmd` and `struct nvme_passthru_cmd` (linux/nvme_ioctl.h): the same 72
/// bytes, save that the ioctl form ends with the command's result.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct NvmeCmd {
    opcode: u8,
    flags: u8,
    rsvd1: u16,
    nsid: u32,
    cdw2: u32,
    cdw3: u32,
    metadata: u64,
    addr: u64,
    metadata_len: u32,
    data_len: u32,
    cdw10: u32,
    cdw11: u32,
    cdw12: u32,
    cdw13: u32,
    cdw14: u32,
    cdw15: u32,
    timeout_ms: u32,
    result: u32,
}

const _: () = assert!(std::mem::size_of::<NvmeCmd>() == 72);

/// ioctl numbers: _IO('N', 0x40), _IOWR('N', 0x41, 72 bytes), and the io_uring command
/// operations _IOWR('N', 0x80 / 0x81, 72 bytes) (plain buffer / vector of buffers).
const NVME_IOCTL_ID: libc::c_ulong = 0x4e40;
const NVME_IOCTL_ADMIN_CMD: libc::c_ulong = 0xc048_4e41;
const NVME_URING_CMD_IO: u32 = 0xc048_4e80;
const NVME_URING_CMD_IO_VEC: u32 = 0xc048_4e81;

/// `nowait`'s flag in a submission's `rw_flags` (which a command's `uring_cmd_flags` share).
const RWF_NOWAIT: u32 = 0x8;

const OP_FLUSH: u8 = 0x00;
const OP_WRITE: u8 = 0x01;
const OP_READ: u8 = 0x02;
const OP_WRITE_UNCOR: u8 = 0x04;
const OP_WRITE_ZEROES: u8 = 0x08;
const OP_DSM: u8 = 0x09;
const OP_VERIFY: u8 = 0x0c;
const ADMIN_IDENTIFY: u8 = 0x06;
/// Dataset Management's "deallocate" attribute (cdw11 bit 2).
const DSM_DEALLOCATE: u32 = 1 << 2;
/// cdw12 of reads and writes: force unit access, the protection information action (PRACT)
/// and checks (PRCHK: guard, application tag, reference tag), and Write Zeroes' deallocate.
const CDW12_FUA: u32 = 1 << 30;
const CDW12_PRACT: u32 = 1 << 29;
const CDW12_CHECK_GUARD: u32 = 1 << 28;
const CDW12_CHECK_APPTAG: u32 = 1 << 27;
const CDW12_CHECK_REFTAG: u32 = 1 << 26;
const CDW12_DEAC: u32 = 1 << 25;
/// Bytes of one LBA's protection information (16-bit guard format).
const PI_BYTES: usize = 8;

/// A namespace as the engine addresses it.
#[derive(Debug, Clone, Copy)]
pub struct Namespace {
    pub nsid: u32,
    /// log2 of the LBA size.
    pub lba_shift: u32,
    /// Capacity in LBAs.
    pub lbas: u64,
    /// Metadata bytes per LBA (0: none).
    pub ms: u32,
    /// End-to-end protection information type (0: none, 1-3).
    pub pi_type: u8,
    /// The PI is the first 8 bytes of an LBA's metadata (else the last).
    pub pi_first: bool,
    /// Metadata inline, at the end of each LBA's data (extended LBAs).
    pub extended: bool,
}

impl Namespace {
    pub fn lba_size(&self) -> u64 {
        1 << self.lba_shift
    }

    pub fn bytes(&self) -> u64 {
        self.lbas << self.lba_shift
    }

    /// Whether a read or write needs a metadata buffer: the namespace has separate metadata,
    /// and it is not PI alone that the drive inserts and strips (`pi_act=1`).
    fn needs_metadata(&self, pi_act: bool) -> bool {
        self.ms > 0 && !(pi_act && self.pi_type != 0 && self.ms as usize == PI_BYTES)
    }

    /// Where an LBA's PI starts within its metadata.
    fn pi_offset(&self) -> usize {
        if self.pi_first {
            0
        } else {
            self.ms as usize - PI_BYTES
        }
    }
}

/// Asks the device behind `fd` (an NVMe namespace, block or generic character device) which
/// namespace it is, and its size and LBA format (Identify Namespace).
pub fn identify(fd: RawFd) -> io::Result<Namespace> {
    // SAFETY: NVME_IOCTL_ID takes no argument.
    let nsid = unsafe { libc::ioctl(fd, NVME_IOCTL_ID) };
    if nsid < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut data = vec![0u8; 4096];
    let mut cmd = NvmeCmd {
        opcode: ADMIN_IDENTIFY,
        nsid: nsid as u32,
        addr: data.as_mut_ptr() as u64,
        data_len: data.len() as u32,
        ..NvmeCmd::default()
    };
    // SAFETY: the command is 72 bytes as the ioctl expects, and its data pointer names a
    // 4096-byte buffer that lives across the call (Identify returns exactly 4096 bytes).
    if unsafe { libc::ioctl(fd, NVME_IOCTL_ADMIN_CMD, &mut cmd) } < 0 {
        return Err(io::Error::last_os_error());
    }
    parse_identify(nsid as u32, &data)
}

/// Identify Namespace's data: NSZE at byte 0, FLBAS at 26 (its low 4 bits, and bits 5-6 above
/// 16 formats, pick the format; bit 4: extended LBAs), DPS at 29 (PI type in bits 0-2, bit 3:
/// PI first), the LBA formats from byte 128, 4 bytes each: MS (metadata bytes, 16 bits), then
/// LBADS (log2 of the LBA size).
fn parse_identify(nsid: u32, data: &[u8]) -> io::Result<Namespace> {
    let lbas = u64::from_le_bytes(data[0..8].try_into().expect("8 bytes"));
    let flbas = data[26] as usize;
    let format = (flbas & 0xf) | ((flbas >> 5) & 0x3) << 4;
    let entry = &data[128 + 4 * format..][..4];
    let lba_shift = entry[2] as u32;
    if !(9..=16).contains(&lba_shift) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("LBA format {format} has size 2^{lba_shift}")));
    }
    let ms = u16::from_le_bytes([entry[0], entry[1]]) as u32;
    let (dps, pi_type) = (data[29], data[29] & 0x7);
    Ok(Namespace {
        nsid,
        lba_shift,
        lbas,
        ms,
        pi_type: if ms as usize >= PI_BYTES { pi_type } else { 0 },
        pi_first: dps & 0x8 != 0,
        extended: flbas & 0x10 != 0,
    })
}

/// The T10-DIF CRC16 (polynomial 0x8BB7, no reflection, initial value 0, no final XOR), the
/// guard of 16-bit protection information, continued from `crc` over `data`.
fn crc16_t10dif(mut crc: u16, data: &[u8]) -> u16 {
    for &b in data {
        crc = CRC16_TABLE[((crc >> 8) as u8 ^ b) as usize] ^ (crc << 8);
    }
    crc
}

static CRC16_TABLE: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 0x8000 != 0 { (c << 1) ^ 0x8bb7 } else { c << 1 };
            bit += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// The protection information fiox writes for the LBAs of `data` (pi_act=0) into `md` (their
/// metadata, `ms` bytes each): of the guard, application tag and reference tag (big-endian),
/// only the fields `chk` names; the others are zero, as fio 3.42 writes them.
fn fill_pi(ns: &Namespace, chk: PiChk, apptag: u16, slba: u64, data: &[u8], md: &mut [u8]) {
    let (lba, ms, at) = (ns.lba_size() as usize, ns.ms as usize, ns.pi_offset());
    for (i, (block, meta)) in data.chunks(lba).zip(md.chunks_mut(ms)).enumerate() {
        let guard = if chk.guard { crc16_t10dif(crc16_t10dif(0, block), &meta[..at]) } else { 0 };
        let reftag = if chk.reftag { (slba + i as u64) as u32 } else { 0 };
        let pi = &mut meta[at..at + PI_BYTES];
        pi[0..2].copy_from_slice(&guard.to_be_bytes());
        pi[2..4].copy_from_slice(&(if chk.apptag { apptag } else { 0 }).to_be_bytes());
        pi[4..8].copy_from_slice(&reftag.to_be_bytes());
    }
}

/// Checks the protection information read with `data` (pi_act=0): the fields `chk` names,
/// the application tag under `mask`. The first mismatch, in words, as the error's detail.
fn check_pi(ns: &Namespace, o: &UringCmdOpts, slba: u64, data: &[u8], md: &[u8]) -> Result<(), String> {
    let (lba, ms, at) = (ns.lba_size() as usize, ns.ms as usize, ns.pi_offset());
    for (i, (block, meta)) in data.chunks(lba).zip(md.chunks(ms)).enumerate() {
        let pi = &meta[at..at + PI_BYTES];
        let n = slba + i as u64;
        let guard = u16::from_be_bytes([pi[0], pi[1]]);
        let app = u16::from_be_bytes([pi[2], pi[3]]);
        let reftag = u32::from_be_bytes([pi[4], pi[5], pi[6], pi[7]]);
        if o.pi_chk.guard {
            let want = crc16_t10dif(crc16_t10dif(0, block), &meta[..at]);
            if guard != want {
                return Err(format!("LBA {n}: guard 0x{guard:04x}, expected 0x{want:04x}"));
            }
        }
        if o.pi_chk.apptag && (app ^ o.apptag) & o.apptag_mask != 0 {
            return Err(format!("LBA {n}: application tag 0x{app:04x}, expected 0x{:04x}", o.apptag));
        }
        if o.pi_chk.reftag && reftag != n as u32 {
            return Err(format!("LBA {n}: reference tag 0x{reftag:08x}, expected 0x{:08x}", n as u32));
        }
    }
    Ok(())
}

/// The namespace behind a generic character device, for the planner: its size and LBA size.
fn device_size(path: &Path) -> Result<(u64, u64), String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot open '{}': {e}", path.display()))?;
    let ns = identify(f.as_raw_fd())
        .map_err(|e| format!("'{}' does not answer NVMe Identify Namespace: {e}", path.display()))?;
    Ok((ns.bytes(), ns.lba_size()))
}

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let ng = devices("ng");
    for f in job_files(spec) {
        if !is_device(&f, true) {
            return Err(format!(
                "ioengine io_uring_cmd needs an NVMe generic character device (/dev/ngXnY) as filename; '{}' is not one ({})",
                f.display(),
                found(&ng)
            ));
        }
    }
    Ok(())
}

type Ring = IoUring<squeue::Entry128, cqueue::Entry32>;

#[derive(Default)]
pub struct UringCmd {
    ring: Option<Ring>,
    namespaces: Vec<Namespace>,
    fixedbufs: bool,
    registerfiles: bool,
    vectored: bool,
    force_async: u64,
    /// `nowait`: RWF_NOWAIT in each command's flags.
    rw_flags: u32,
    queued_count: u64,
    /// Per unit, stable while the ring lives: the iovec of a vectored command and the range of
    /// a Dataset Management command (context attributes, LBA count, first LBA).
    iovecs: Vec<libc::iovec>,
    ranges: Vec<[u32; 4]>,
    unqueued: u32,
    wait_limit: Option<std::time::Duration>,
    /// The ring's registered index for this thread, or -1 (as io_uring's).
    reg: i32,
    /// fio 3.42's options: write mode, FUA, metadata and protection information.
    cmd: UringCmdOpts,
    paths: Vec<PathBuf>,
}

impl Drop for UringCmd {
    fn drop(&mut self) {
        if let Some(ring) = &self.ring {
            use std::os::fd::AsRawFd;
            super::io_uring::unregister_ring_fd(ring.as_raw_fd(), self.reg);
        }
    }
}

impl UringCmd {
    fn ring(&mut self) -> &mut Ring {
        self.ring.as_mut().expect("io_uring_cmd used before init")
    }
}

/// Refuses, before any I/O, a namespace the job's options cannot drive: one formatted with
/// extended LBAs, one whose metadata needs a larger `md_per_io_size` than given (fio 3.42's
/// words; fiox also refuses a buffer too small for the job's largest block, which crashed
/// Linux 6.1 under fio), and a `write_mode` other than write in a job that does not write.
fn check_namespace(ns: &Namespace, path: &Path, o: &UringCmdOpts, max_bs: usize, writes: bool) -> io::Result<()> {
    let refuse = |msg: String| Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    if ns.extended && ns.ms > 0 {
        return refuse(format!(
            "{}: the namespace is formatted with extended LBAs ({} bytes of metadata inline with each block), which fiox does not do",
            path.display(),
            ns.ms
        ));
    }
    let needed = (max_bs as u64 >> ns.lba_shift) * ns.ms as u64;
    if ns.needs_metadata(o.pi_act) && o.md_per_io_size < needed {
        return refuse(format!("{}: md_per_io_size should be at least {needed} bytes", path.display()));
    }
    if o.write_mode != WriteMode::Write && !writes {
        return refuse(format!("{}: 'readwrite=|rw=' has no write (write_mode is for writes)", path.display()));
    }
    Ok(())
}

/// A command's completion. The result is the command's: 0, a negative errno from the kernel,
/// or a positive NVMe status, which is reported negated (as fio reports it) so that any failure
/// is below zero, and kept for the error's detail; a success reports the command's bytes.
fn completion(cqe: &cqueue::Entry32, units: &Units) -> Completion {
    let index = cqe.user_data() as u32;
    let result = match cqe.result() {
        0 => units.lens.get(index as usize).copied().unwrap_or(0) as i64,
        r if r > 0 => {
            if let Some(s) = units.status.get(index as usize) {
                s.set(r as u32);
            }
            -(r as i64)
        }
        r => r as i64,
    };
    Completion { index, result }
}

/// `entry` with `rw_flags` added to its command flags and `ioprio` as its priority: fields the
/// io-uring crate sets for reads and writes but not for commands.
fn with_flags_and_prio(entry: squeue::Entry128, rw_flags: u32, ioprio: u16) -> squeue::Entry128 {
    // The kernel's `struct io_uring_sqe`: `ioprio` (u16) at byte 2, the flags' union (u32) at
    // byte 28.
    // SAFETY: Entry128 is #[repr(C)] over the kernel's 128-byte submission entry (a 64-byte
    // `struct io_uring_sqe` and its 64-byte command tail), plain data of exactly 128 bytes, so
    // it may be read as bytes and any bytes read back as it.
    let mut raw: [u8; 128] = unsafe { std::mem::transmute(entry) };
    raw[2..4].copy_from_slice(&ioprio.to_ne_bytes());
    let flags = u32::from_ne_bytes(raw[28..32].try_into().unwrap()) | rw_flags;
    raw[28..32].copy_from_slice(&flags.to_ne_bytes());
    // SAFETY: as above; every byte pattern is a valid entry.
    unsafe { std::mem::transmute::<[u8; 128], squeue::Entry128>(raw) }
}

/// What the engine keeps per unit, outside the engine struct's borrow of the ring.
#[derive(Default)]
struct Units {
    /// The length of each unit's current command, so a successful completion reports its bytes.
    lens: Vec<u32>,
    /// The file of each unit's current command, for the error's detail.
    files: Vec<u32>,
    /// The NVMe status of each unit's last failed command (0: none).
    status: Vec<Cell<u32>>,
    /// Each unit's separate metadata buffer (`md_per_io_size` bytes; empty without).
    md: Vec<Vec<u8>>,
    /// A read whose protection information fiox checks (pi_act=0) when it completes: its
    /// first LBA and its data (the unit's buffer, lent to the engine until then).
    checks: Vec<Option<(u64, usize, usize)>>,
    /// Why a unit's read failed fiox's own check of its protection information.
    host_errors: Vec<Option<String>>,
}

impl IoEngine for UringCmdEngine {
    fn set_wait_limit(&mut self, limit: Option<std::time::Duration>) {
        self.inner.wait_limit = limit;
    }

    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        let o = &setup.opts.io_uring;
        let e = &mut self.inner;
        for (i, &fd) in setup.fds.iter().enumerate() {
            let ns = identify(fd).map_err(|err| {
                io::Error::new(
                    err.kind(),
                    format!("io_uring_cmd: '{}' is not an NVMe namespace: {err}", setup.paths[i].display()),
                )
            })?;
            check_namespace(&ns, &setup.paths[i], &setup.opts.io_uring_cmd, setup.buffers.unit_size(), setup.writes)?;
            e.namespaces.push(ns);
        }
        e.cmd = setup.opts.io_uring_cmd.clone();
        e.paths = setup.paths.to_vec();
        let depth = setup.depth.max(1).next_power_of_two();
        let mut b = Ring::builder();
        b.setup_cqsize(depth * 2);
        if o.sqthread_poll {
            b.setup_sqpoll(1000);
            if let Some(cpu) = o.sqthread_poll_cpu {
                b.setup_sqpoll_cpu(cpu);
            }
        }
        if o.hipri {
            b.setup_iopoll();
        }
        let ring = b.build(depth).map_err(|err| {
            io::Error::new(
                err.kind(),
                format!("io_uring_cmd: cannot set up a ring of {depth} 128-byte entries (SQE128|CQE32): {err}"),
            )
        })?;
        if o.fixedbufs {
            let iovecs: Vec<libc::iovec> =
                setup.buffers.regions().map(|(p, l)| libc::iovec { iov_base: p.cast(), iov_len: l }).collect();
            // SAFETY: the buffers belong to the job's pool, which the IoQueue keeps alive until
            // after this engine (and so the ring and its registration) is dropped.
            unsafe { ring.submitter().register_buffers(&iovecs) }.map_err(|err| {
                io::Error::new(
                    err.kind(),
                    format!(
                        "io_uring_cmd: cannot register {} buffers (fixedbufs; check ulimit -l): {err}",
                        iovecs.len()
                    ),
                )
            })?;
            e.fixedbufs = true;
        }
        if o.registerfiles || o.sqthread_poll {
            ring.submitter()
                .register_files(setup.fds)
                .map_err(|err| io::Error::new(err.kind(), format!("io_uring_cmd: cannot register files: {err}")))?;
            e.registerfiles = true;
        }
        // A vectored command takes one iovec; a plain one the buffer itself. Plain is the
        // default (nonvectored=-1), as every kernel with NVMe passthrough has both.
        e.vectored = o.nonvectored == 0 && !e.fixedbufs;
        e.force_async = o.force_async;
        e.rw_flags = if o.nowait { RWF_NOWAIT } else { 0 };
        let units = setup.buffers.count();
        e.iovecs = vec![libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; units];
        e.ranges = vec![[0; 4]; units];
        let md = e.cmd.md_per_io_size as usize;
        self.units = Units {
            lens: vec![0; units],
            files: vec![0; units],
            status: (0..units).map(|_| Cell::new(0)).collect(),
            md: (0..units).map(|_| vec![0u8; md]).collect(),
            checks: vec![None; units],
            host_errors: vec![None; units],
        };
        e.reg = -1;
        if !o.sqthread_poll {
            use std::os::fd::AsRawFd;
            e.reg = super::io_uring::register_ring_fd(ring.as_raw_fd());
        }
        e.ring = Some(ring);
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let e = &mut self.inner;
        let ns = e.namespaces[io.file_index as usize];
        let slba = io.offset >> ns.lba_shift;
        let nlb = (io.len as u64) >> ns.lba_shift;
        let mut cmd = NvmeCmd { nsid: ns.nsid, ..NvmeCmd::default() };
        let mut op = NVME_URING_CMD_IO;
        let mut buf_index = None;
        let u = &mut self.units;
        let i = index as usize;
        (u.checks[i], u.host_errors[i], u.files[i]) = (None, None, io.file_index);
        u.status[i].set(0);
        match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Read | Ddir::Write => {
                if io.offset & (ns.lba_size() - 1) != 0 || io.len as u64 & (ns.lba_size() - 1) != 0 || nlb == 0 {
                    return Ok(QueueStatus::Completed(-(libc::EINVAL as i64)));
                }
                let data = read_write(&mut cmd, &e.cmd, io.ddir, slba, nlb);
                if data {
                    if e.vectored {
                        let iov = &mut e.iovecs[i];
                        *iov = libc::iovec { iov_base: io.buf.cast(), iov_len: io.len as usize };
                        cmd.addr = iov as *const libc::iovec as u64;
                        cmd.data_len = 1;
                        op = NVME_URING_CMD_IO_VEC;
                    } else {
                        cmd.addr = io.buf as u64;
                        cmd.data_len = io.len;
                        if e.fixedbufs {
                            buf_index = Some(index as u16);
                        }
                    }
                }
                protect(&mut cmd, &ns, &e.cmd, u, i, io, data);
            }
            Ddir::Trim => {
                if nlb == 0 || nlb > u32::MAX as u64 {
                    return Ok(QueueStatus::Completed(-(libc::EINVAL as i64)));
                }
                let range = &mut e.ranges[i];
                *range = [0, nlb as u32, slba as u32, (slba >> 32) as u32];
                cmd.opcode = OP_DSM;
                cmd.addr = range.as_ptr() as u64;
                cmd.data_len = 16;
                cmd.cdw10 = 0; // one range
                cmd.cdw11 = DSM_DEALLOCATE;
            }
            Ddir::Sync | Ddir::DataSync => cmd.opcode = OP_FLUSH,
        }
        u.lens[i] = if matches!(io.ddir, Ddir::Sync | Ddir::DataSync) { 0 } else { io.len };
        let mut bytes = [0u8; 80];
        // SAFETY: NvmeCmd is plain old data of 72 bytes, copied into the first 72 of the 80.
        let raw = unsafe { std::slice::from_raw_parts((&cmd as *const NvmeCmd).cast::<u8>(), 72) };
        bytes[..72].copy_from_slice(raw);
        let entry = if e.registerfiles {
            opcode::UringCmd80::new(types::Fixed(io.file_index), op)
        } else {
            opcode::UringCmd80::new(types::Fd(io.fd), op)
        };
        let mut entry = entry.cmd(bytes).buf_index(buf_index).build().user_data(index as u64);
        // A command on a registered buffer carries only that flag: fio 3.33 runs `nowait` with
        // `fixedbufs` on Linux 6.1, where it fails any other command with RWF_NOWAIT.
        let rw_flags = if buf_index.is_some() { 0 } else { e.rw_flags };
        if rw_flags != 0 || io.ioprio != 0 {
            entry = with_flags_and_prio(entry, rw_flags, io.ioprio);
        }
        e.queued_count += 1;
        if e.force_async > 0 && e.queued_count % e.force_async == 0 {
            entry = entry.flags(squeue::Flags::ASYNC);
        }
        // SAFETY: the command's buffer (and its iovec, DSM range and metadata buffer) belong to
        // unit `index`; the IoQueue lends that buffer to nobody and frees no buffer until this
        // unit's completion is reaped, and the iovec, range and metadata vectors are not resized
        // while the ring lives.
        let pushed = unsafe { e.ring().submission().push(&entry) };
        match pushed {
            Ok(()) => {
                e.unqueued += 1;
                Ok(QueueStatus::Queued)
            }
            Err(_) => Ok(QueueStatus::Busy),
        }
    }

    fn commit(&mut self) -> io::Result<u32> {
        let e = &mut self.inner;
        let ring = e.ring.as_mut().expect("io_uring_cmd used before init");
        super::io_uring::commit(ring, e.reg, &mut e.unqueued)
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let (e, units) = (&mut self.inner, &mut self.units);
        let ring = e.ring.as_mut().expect("io_uring_cmd used before init");
        let before = out.len();
        super::io_uring::reap(ring, e.reg, &mut e.unqueued, e.wait_limit, min, max, out, |cqe| completion(cqe, units))?;
        for c in &mut out[before..] {
            let i = c.index as usize;
            let Some((slba, buf, len)) = units.checks[i].take() else { continue };
            if c.result < 0 {
                continue;
            }
            let ns = &e.namespaces[units.files[i] as usize];
            // SAFETY: `buf` is the unit's buffer of at least `len` bytes, which the IoQueue lent
            // to this engine with the read and gets back only with this completion; the kernel
            // has finished writing it (the command completed).
            let data = unsafe { std::slice::from_raw_parts(buf as *const u8, len) };
            let md = &units.md[i][..(len as u64 >> ns.lba_shift) as usize * ns.ms as usize];
            if let Err(why) = check_pi(ns, &e.cmd, slba, data, md) {
                let path = e.paths[units.files[i] as usize].display();
                units.host_errors[i] =
                    Some(format!("io_uring_cmd: {path}: protection information check failed: {why}"));
                c.result = -(libc::EIO as i64);
            }
        }
        Ok(())
    }

    fn error_detail(&mut self, index: u32) -> Option<crate::ErrorDetail> {
        let u = &mut self.units;
        let i = index as usize;
        if let Some(why) = u.host_errors.get_mut(i).and_then(Option::take) {
            return Some(crate::ErrorDetail::Lines(why));
        }
        let status = u.status.get(i).map_or(0, |s| s.replace(0));
        (status != 0).then(|| {
            let path = self.inner.paths.get(u.files[i] as usize).map(|p| p.display().to_string()).unwrap_or_default();
            crate::ErrorDetail::Device(format!(
                "io_uring_cmd: {path}: cq entry status (sct=0x{:02x}; sc=0x{:02x})",
                (status >> 8) & 0x7,
                status & 0xff
            ))
        })
    }
}

/// Fills in a read or write command (`write_mode` picks the write's command, `readfua` and
/// `writefua` its FUA bit); returns whether it moves data (Write Uncorrectable, Write Zeroes
/// and Verify do not).
fn read_write(cmd: &mut NvmeCmd, o: &UringCmdOpts, ddir: Ddir, slba: u64, nlb: u64) -> bool {
    cmd.cdw10 = slba as u32;
    cmd.cdw11 = (slba >> 32) as u32;
    cmd.cdw12 = (nlb - 1) as u32;
    let (opcode, fua) = match (ddir, o.write_mode) {
        (Ddir::Read, _) => (OP_READ, o.readfua),
        (_, WriteMode::Write) => (OP_WRITE, o.writefua),
        (_, WriteMode::Uncor) => (OP_WRITE_UNCOR, false),
        (_, WriteMode::Zeroes) => {
            if o.deac {
                cmd.cdw12 |= CDW12_DEAC;
            }
            (OP_WRITE_ZEROES, o.writefua)
        }
        (_, WriteMode::Verify) => (OP_VERIFY, false),
    };
    cmd.opcode = opcode;
    if fua {
        cmd.cdw12 |= CDW12_FUA;
    }
    matches!(opcode, OP_READ | OP_WRITE)
}

/// Protection information and metadata of a read, write or verify command on a namespace
/// with PI: the action and check bits, the reference tag only when checked, the application
/// tag and mask only when checked (as fio 3.42 sets them). A command that moves data gets the
/// unit's metadata buffer when the namespace needs one; with `pi_act=0`, fiox writes the PI of
/// a write into it, and notes a read for the check of its PI when it completes.
fn protect(cmd: &mut NvmeCmd, ns: &Namespace, o: &UringCmdOpts, u: &mut Units, i: usize, io: &IoUnit, data: bool) {
    let slba = io.offset >> ns.lba_shift;
    if ns.pi_type != 0 && matches!(cmd.opcode, OP_READ | OP_WRITE | OP_VERIFY) {
        let c = o.pi_chk;
        for (on, bit) in [
            (o.pi_act, CDW12_PRACT),
            (c.guard, CDW12_CHECK_GUARD),
            (c.apptag, CDW12_CHECK_APPTAG),
            (c.reftag, CDW12_CHECK_REFTAG),
        ] {
            if on {
                cmd.cdw12 |= bit;
            }
        }
        if c.reftag {
            cmd.cdw14 = slba as u32;
        }
        if c.apptag {
            cmd.cdw15 = o.apptag as u32 | (o.apptag_mask as u32) << 16;
        }
    }
    if !data || !ns.needs_metadata(o.pi_act) {
        return;
    }
    let md_len = (io.len as usize >> ns.lba_shift) * ns.ms as usize;
    let md = &mut u.md[i][..md_len];
    cmd.metadata = md.as_mut_ptr() as u64;
    cmd.metadata_len = md_len as u32;
    if ns.pi_type == 0 || o.pi_act {
        return;
    }
    if io.ddir == Ddir::Write {
        // SAFETY: the unit's buffer holds at least `len` bytes (the queue checks) and is the
        // engine's from `queue` until its completion is reaped; nothing writes it meanwhile.
        let block = unsafe { std::slice::from_raw_parts(io.buf as *const u8, io.len as usize) };
        fill_pi(ns, o.pi_chk, o.apptag, slba, block, md);
    } else if o.pi_chk.any() {
        u.checks[i] = Some((slba, io.buf as usize, io.len as usize));
    }
}

#[derive(Default)]
pub struct UringCmdEngine {
    inner: UringCmd,
    units: Units,
}

pub const INFO: EngineInfo = EngineInfo {
    sync: false,
    preflight: Some(preflight),
    device_size: Some(device_size),
    ..EngineInfo::base("io_uring_cmd", || Box::new(UringCmdEngine::default()))
};

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(ms: u32, pi_first: bool) -> Namespace {
        Namespace { nsid: 1, lba_shift: 9, lbas: 1024, ms, pi_type: 1, pi_first, extended: false }
    }

    #[test]
    fn crc16_is_t10_dif() {
        // The catalogue's check value of CRC-16/T10-DIF.
        assert_eq!(crc16_t10dif(0, b"123456789"), 0xd0db);
        // Continued in two parts, the same.
        assert_eq!(crc16_t10dif(crc16_t10dif(0, b"1234"), b"56789"), 0xd0db);
    }

    #[test]
    fn pi_fields_only_as_checked_and_found_again() {
        let data: Vec<u8> = (0..1024u32).map(|i| (i * 7 % 251) as u8).collect();
        let all = PiChk { guard: true, reftag: true, apptag: true };
        let mut md = vec![0u8; 16];
        fill_pi(&ns(8, false), all, 0x1234, 8, &data, &mut md);
        let guard = crc16_t10dif(0, &data[..512]);
        assert_eq!(md[..8], [(guard >> 8) as u8, guard as u8, 0x12, 0x34, 0, 0, 0, 8]);
        assert_eq!(&md[12..16], &[0, 0, 0, 9]);
        // Only the application tag: guard and reference tag stay zero, as fio 3.42 writes them.
        let mut only = vec![0xffu8; 16];
        fill_pi(&ns(8, false), PiChk { apptag: true, ..PiChk::default() }, 0x77, 8, &data, &mut only);
        assert_eq!(only[..8], [0, 0, 0, 0x77, 0, 0, 0, 0]);
        let o = UringCmdOpts { pi_chk: all, apptag: 0x1234, apptag_mask: 0xffff, ..UringCmdOpts::default() };
        assert_eq!(check_pi(&ns(8, false), &o, 8, &data, &md), Ok(()));
        let wrong = UringCmdOpts { apptag: 0x1111, ..o.clone() };
        assert!(check_pi(&ns(8, false), &wrong, 8, &data, &md).unwrap_err().contains("application tag 0x1234"));
        let masked = UringCmdOpts { apptag: 0x1200, apptag_mask: 0xff00, ..o.clone() };
        assert_eq!(check_pi(&ns(8, false), &masked, 8, &data, &md), Ok(()));
        assert!(check_pi(&ns(8, false), &o, 9, &data, &md).unwrap_err().contains("reference tag"));
        let mut bad = data.clone();
        bad[600] ^= 1;
        assert!(check_pi(&ns(8, false), &o, 8, &bad, &md).unwrap_err().starts_with("LBA 9: guard"));
    }

    #[test]
    fn pi_first_or_last_of_larger_metadata() {
        let data = vec![0x5au8; 512];
        let all = PiChk { guard: true, reftag: true, apptag: true };
        // First: the guard covers the data alone.
        let mut md = vec![0xeeu8; 16];
        fill_pi(&ns(16, true), all, 1, 3, &data, &mut md);
        assert_eq!(u16::from_be_bytes([md[0], md[1]]), crc16_t10dif(0, &data));
        assert_eq!(md[8..], [0xee; 8]);
        // Last: it covers the data and the metadata bytes before it.
        let mut md = vec![0xeeu8; 16];
        fill_pi(&ns(16, false), all, 1, 3, &data, &mut md);
        assert_eq!(u16::from_be_bytes([md[8], md[9]]), crc16_t10dif(crc16_t10dif(0, &data), &[0xee; 8]));
        assert_eq!(md[12..], [0, 0, 0, 3]);
    }

    #[test]
    fn identify_reads_metadata_format() {
        let mut data = vec![0u8; 4096];
        data[0..8].copy_from_slice(&1000u64.to_le_bytes());
        data[26] = 0x01; // format 1, separate metadata
        data[29] = 0x09; // type 1, PI first
        data[132..136].copy_from_slice(&[16, 0, 9, 0]);
        let n = parse_identify(3, &data).unwrap();
        assert_eq!((n.ms, n.pi_type, n.pi_first, n.extended, n.lba_shift), (16, 1, true, false, 9));
        assert!(n.needs_metadata(true) && n.needs_metadata(false));
        data[132] = 8;
        let n = parse_identify(3, &data).unwrap();
        assert!(!n.needs_metadata(true) && n.needs_metadata(false));
        data[26] = 0x11;
        assert!(parse_identify(3, &data).unwrap().extended);
    }

    #[test]
    fn write_modes_and_fua() {
        let o = UringCmdOpts { write_mode: WriteMode::Zeroes, deac: true, writefua: true, ..UringCmdOpts::default() };
        let mut c = NvmeCmd::default();
        assert!(!read_write(&mut c, &o, Ddir::Write, 0x1_0000_0002, 8));
        assert_eq!((c.opcode, c.cdw10, c.cdw11, c.cdw12), (OP_WRITE_ZEROES, 2, 1, 7 | CDW12_DEAC | CDW12_FUA));
        let mut c = NvmeCmd::default();
        assert!(read_write(&mut c, &UringCmdOpts { readfua: true, ..o.clone() }, Ddir::Read, 0, 1));
        assert_eq!((c.opcode, c.cdw12), (OP_READ, CDW12_FUA));
        for (mode, op) in [(WriteMode::Uncor, OP_WRITE_UNCOR), (WriteMode::Verify, OP_VERIFY)] {
            let mut c = NvmeCmd::default();
            assert!(!read_write(&mut c, &UringCmdOpts { write_mode: mode, ..o.clone() }, Ddir::Write, 0, 1));
            assert_eq!((c.opcode, c.cdw12), (op, 0));
        }
    }
}
