//! `io_uring_cmd` (`cmd_type=nvme`): NVMe commands passed through io_uring to the NVMe generic
//! character devices (/dev/ngXnY), bypassing the block layer. The ring has 128-byte submission
//! and 32-byte completion entries (IORING_SETUP_SQE128 | CQE32), as the kernel requires for
//! NVMe passthrough: each submission carries a whole NVMe command. Reads and writes are NVMe
//! Read/Write, trims are Dataset Management with the deallocate attribute, syncs are Flush.
//! `fixedbufs` (registered buffers, IORING_URING_CMD_FIXED), `registerfiles`, `sqthread_poll`,
//! `hipri` (IOPOLL; the device needs poll queues), `nonvectored` and `force_async` apply as for
//! `io_uring`; unlike that engine, fixed buffers and files are used only when asked for, as in
//! fio. fio 3.33 has no metadata or protection-information options for this engine.
//! `nowait` and a command priority (`cmdprio_percentage`) go into the submission's flags and
//! priority fields, as for `io_uring` (but `nowait` not with `fixedbufs`, as in fio 3.33); the
//! kernel decides (Linux 6.1 fails such commands with EINVAL, which is the I/O's error, as in
//! fio).
//!
//! Sizes come from the namespace itself (Identify Namespace): its capacity and LBA size.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

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
const OP_DSM: u8 = 0x09;
const ADMIN_IDENTIFY: u8 = 0x06;
/// Dataset Management's "deallocate" attribute (cdw11 bit 2).
const DSM_DEALLOCATE: u32 = 1 << 2;

/// A namespace as the engine addresses it.
#[derive(Debug, Clone, Copy)]
pub struct Namespace {
    pub nsid: u32,
    /// log2 of the LBA size.
    pub lba_shift: u32,
    /// Capacity in LBAs.
    pub lbas: u64,
}

impl Namespace {
    pub fn lba_size(&self) -> u64 {
        1 << self.lba_shift
    }

    pub fn bytes(&self) -> u64 {
        self.lbas << self.lba_shift
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
    // Identify Namespace: NSZE at byte 0, FLBAS at 26 (its low 4 bits, and bits 5-6 above
    // 16 formats, pick the format), the LBA formats from byte 128, 4 bytes each with LBADS
    // (log2 of the LBA size) in the third.
    let lbas = u64::from_le_bytes(data[0..8].try_into().expect("8 bytes"));
    let flbas = data[26] as usize;
    let format = (flbas & 0xf) | ((flbas >> 5) & 0x3) << 4;
    let lba_shift = data[128 + 4 * format + 2] as u32;
    if !(9..=16).contains(&lba_shift) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("LBA format {format} has size 2^{lba_shift}")));
    }
    Ok(Namespace { nsid: nsid as u32, lba_shift, lbas })
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

/// A command's completion. The result is the command's: 0, a negative errno from the kernel,
/// or a positive NVMe status, which is reported negated (as fio reports it) so that any failure
/// is below zero; a success reports the command's bytes.
fn completion(cqe: &cqueue::Entry32, lens: &[u32]) -> Completion {
    let index = cqe.user_data() as u32;
    let result = match cqe.result() {
        0 => lens.get(index as usize).copied().unwrap_or(0) as i64,
        r if r > 0 => -(r as i64),
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

/// The length of each unit's current command, so a successful completion reports its bytes.
/// Kept outside the engine struct's borrow of the ring.
#[derive(Default)]
struct Lens(Vec<u32>);

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
            e.namespaces.push(ns);
        }
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
        self.lens.0 = vec![0; units];
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
        match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Read | Ddir::Write => {
                if io.offset & (ns.lba_size() - 1) != 0 || io.len as u64 & (ns.lba_size() - 1) != 0 || nlb == 0 {
                    return Ok(QueueStatus::Completed(-(libc::EINVAL as i64)));
                }
                cmd.opcode = if io.ddir == Ddir::Write { OP_WRITE } else { OP_READ };
                cmd.cdw10 = slba as u32;
                cmd.cdw11 = (slba >> 32) as u32;
                cmd.cdw12 = (nlb - 1) as u32;
                if e.vectored {
                    let iov = &mut e.iovecs[index as usize];
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
            Ddir::Trim => {
                if nlb == 0 || nlb > u32::MAX as u64 {
                    return Ok(QueueStatus::Completed(-(libc::EINVAL as i64)));
                }
                let range = &mut e.ranges[index as usize];
                *range = [0, nlb as u32, slba as u32, (slba >> 32) as u32];
                cmd.opcode = OP_DSM;
                cmd.addr = range.as_ptr() as u64;
                cmd.data_len = 16;
                cmd.cdw10 = 0; // one range
                cmd.cdw11 = DSM_DEALLOCATE;
            }
            Ddir::Sync | Ddir::DataSync => cmd.opcode = OP_FLUSH,
        }
        self.lens.0[index as usize] = if matches!(io.ddir, Ddir::Sync | Ddir::DataSync) { 0 } else { io.len };
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
        // SAFETY: the command's buffer (and its iovec or DSM range) belong to unit `index`; the
        // IoQueue lends that buffer to nobody and frees no buffer until this unit's completion
        // is reaped, and the iovec and range vectors are not resized while the ring lives.
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
        let (e, lens) = (&mut self.inner, &self.lens.0);
        let ring = e.ring.as_mut().expect("io_uring_cmd used before init");
        super::io_uring::reap(ring, e.reg, &mut e.unqueued, e.wait_limit, min, max, out, |cqe| completion(cqe, lens))
    }
}

#[derive(Default)]
pub struct UringCmdEngine {
    inner: UringCmd,
    lens: Lens,
}

pub const INFO: EngineInfo = EngineInfo {
    sync: false,
    preflight: Some(preflight),
    device_size: Some(device_size),
    ..EngineInfo::base("io_uring_cmd", || Box::new(UringCmdEngine::default()))
};
