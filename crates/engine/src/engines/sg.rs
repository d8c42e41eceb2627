//! `sg`: SCSI commands through the SG_IO ioctl, on a SCSI generic device (/dev/sgN) or a SCSI
//! block device (/dev/sdX). Reads are READ(10) or READ(16) (16 when the LBA or the block count
//! does not fit the 10-byte form), writes WRITE(10/16) or, by `sg_write_mode`, WRITE AND VERIFY,
//! WRITE SAME (with or without a data-out buffer), VERIFY (BYTCHK 00, 01 or 11) or WRITE
//! STREAM(16); trims are UNMAP, syncs SYNCHRONIZE CACHE(10). `readfua`/`writefua` set the FUA bit.
//! Each command completes inside `queue` (fio's sg engine completes them one by one too on a
//! block device). A command the device fails reports its SCSI status and sense data, as fio's
//! error details do. Sizes come from READ CAPACITY(10), or (16) for large devices.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

use super::{devices, found, is_device, job_files};
use crate::{Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

/// `struct sg_io_hdr` (scsi/sg.h), the SG_IO ioctl's argument.
#[repr(C)]
struct SgIoHdr {
    interface_id: i32,
    dxfer_direction: i32,
    cmd_len: u8,
    mx_sb_len: u8,
    iovec_count: u16,
    dxfer_len: u32,
    dxferp: *mut u8,
    cmdp: *const u8,
    sbp: *mut u8,
    timeout: u32,
    flags: u32,
    pack_id: i32,
    usr_ptr: *mut libc::c_void,
    status: u8,
    masked_status: u8,
    msg_status: u8,
    sb_len_wr: u8,
    host_status: u16,
    driver_status: u16,
    resid: i32,
    duration: u32,
    info: u32,
}

const SG_IO: libc::c_ulong = 0x2285;
const SG_DXFER_NONE: i32 = -1;
const SG_DXFER_TO_DEV: i32 = -2;
const SG_DXFER_FROM_DEV: i32 = -3;
const SG_INFO_CHECK: u32 = 1;
/// The command timeout: long enough for a slow drive's cache flush.
const TIMEOUT_MS: u32 = 60_000;

/// The UNMAP command's operation code.
const OP_UNMAP: u8 = 0x42;

/// How one command went: Ok(bytes not transferred) or the error details.
struct Outcome {
    ok: bool,
    resid: i32,
    details: String,
}

/// Sends one command. `data` is the data-in or data-out buffer (`to_dev` tells which).
///
/// # Safety
/// `data` must point to at least `len` bytes that stay valid (and, for data-in, writable) for
/// the call.
unsafe fn sg_io(fd: RawFd, cdb: &[u8], data: *mut u8, len: u32, to_dev: bool) -> io::Result<Outcome> {
    let mut sense = [0u8; 64];
    let mut hdr = SgIoHdr {
        interface_id: b'S' as i32,
        dxfer_direction: if len == 0 {
            SG_DXFER_NONE
        } else if to_dev {
            SG_DXFER_TO_DEV
        } else {
            SG_DXFER_FROM_DEV
        },
        cmd_len: cdb.len() as u8,
        mx_sb_len: sense.len() as u8,
        iovec_count: 0,
        dxfer_len: len,
        dxferp: data,
        cmdp: cdb.as_ptr(),
        sbp: sense.as_mut_ptr(),
        timeout: TIMEOUT_MS,
        flags: 0,
        pack_id: 0,
        usr_ptr: std::ptr::null_mut(),
        status: 0,
        masked_status: 0,
        msg_status: 0,
        sb_len_wr: 0,
        host_status: 0,
        driver_status: 0,
        resid: 0,
        duration: 0,
        info: 0,
    };
    // SAFETY: the header, command and sense buffer live on this frame for the call; the data
    // buffer's validity is the caller's promise.
    if unsafe { libc::ioctl(fd, SG_IO, &mut hdr) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let ok = hdr.info & SG_INFO_CHECK == 0 && hdr.status == 0 && hdr.host_status == 0 && hdr.driver_status == 0;
    let details = if ok {
        String::new()
    } else {
        // UNMAP's parameter list (the block descriptors) is part of fio's account of it.
        let list = (cdb.first() == Some(&OP_UNMAP) && !data.is_null())
            // SAFETY: `data` holds `len` bytes (the caller's promise), unchanged since the call.
            .then(|| unsafe { std::slice::from_raw_parts(data.cast_const(), len as usize) });
        describe(&hdr, &sense, cdb, list)
    };
    Ok(Outcome { ok, resid: hdr.resid, details })
}

/// The details of a failed command, in the words fio's sg engine uses: the host, driver and
/// SCSI status, the sense data, what was not transferred, and the command.
fn describe(hdr: &SgIoHdr, sense: &[u8], cdb: &[u8], unmap_list: Option<&[u8]>) -> String {
    let mut m = String::new();
    if hdr.host_status != 0 {
        let name = match hdr.host_status {
            0x01 => "SG_ERR_DID_NO_CONNECT",
            0x02 => "SG_ERR_DID_BUS_BUSY",
            0x03 => "SG_ERR_DID_TIME_OUT",
            0x04 => "SG_ERR_DID_BAD_TARGET",
            0x05 => "SG_ERR_DID_ABORT",
            0x06 => "SG_ERR_DID_PARITY",
            0x07 => "SG_ERR_DID_ERROR",
            0x08 => "SG_ERR_DID_RESET",
            0x09 => "SG_ERR_DID_BAD_INTR",
            0x0a => "SG_ERR_DID_PASSTHROUGH",
            0x0b => "SG_ERR_DID_SOFT_ERROR",
            0x0c => "SG_ERR_DID_IMM_RETRY",
            0x0d => "SG_ERR_DID_REQUEUE",
            _ => "Unknown",
        };
        m += &format!("SG Host Status: 0x{:02x}; {name}. ", hdr.host_status);
    }
    if hdr.driver_status != 0 {
        let name = match hdr.driver_status & 0x0f {
            0x01 => "SG_ERR_DRIVER_BUSY",
            0x02 => "SG_ERR_DRIVER_SOFT",
            0x03 => "SG_ERR_DRIVER_MEDIA",
            0x04 => "SG_ERR_DRIVER_ERROR",
            0x05 => "SG_ERR_DRIVER_INVALID",
            0x06 => "SG_ERR_DRIVER_TIMEOUT",
            0x07 => "SG_ERR_DRIVER_HARD",
            0x08 => "SG_ERR_DRIVER_SENSE",
            _ => "Unknown",
        };
        // fio's words, its "; ." included.
        m += &format!("SG Driver Status: 0x{:02x}; {name}; . ", hdr.driver_status);
    }
    if hdr.status != 0 {
        let name = match hdr.status {
            0x02 => "CHECK_CONDITION",
            0x04 => "CONDITION_MET",
            0x08 => "BUSY",
            0x10 => "INTERMEDIATE",
            0x14 => "INTERMEDIATE_CONDITION_MET",
            0x18 => "RESERVATION_CONFLICT",
            0x22 => "COMMAND_TERMINATED",
            0x28 => "TASK_SET_FULL",
            0x30 => "ACA_ACTIVE",
            0x40 => "TASK_ABORTED",
            _ => "Unknown",
        };
        m += &format!("SG SCSI Status: 0x{:02x}; {name}. ", hdr.status);
    }
    let n = (hdr.sb_len_wr as usize).min(sense.len());
    if n > 0 {
        m += &format!("Sense Data ({n} bytes):");
        for b in &sense[..n] {
            m += &format!(" {b:02x}");
        }
        m += ". ";
    }
    if hdr.resid != 0 {
        m += &format!("SG Driver: {} bytes out of {} not transferred. ", hdr.resid, hdr.dxfer_len);
    }
    // The command as fio shows it: a read or write as a whole 16-byte block, whatever the
    // command's length; an UNMAP as its 10 bytes, then its parameter list (fio 3.33, seen on
    // a write-protected scsi_debug disk).
    let mut block = [0u8; 16];
    block[..cdb.len().min(16)].copy_from_slice(&cdb[..cdb.len().min(16)]);
    let shown = if unmap_list.is_some() { &block[..cdb.len().min(16)] } else { &block[..] };
    m += "cdb:";
    for b in shown {
        m += &format!(" {b:02x}");
    }
    m += ". ";
    if let Some(list) = unmap_list {
        m += "dxferp:";
        for b in list {
            m += &format!(" {b:02x}");
        }
        m += ". ";
    }
    m
}

/// READ CAPACITY: (last LBA + 1, block length), from the 10-byte command or, when the device
/// is too large for it, the 16-byte one.
fn read_capacity(fd: RawFd) -> Result<(u64, u64), String> {
    let mut buf = [0u8; 32];
    let cdb = [0x25u8, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    // SAFETY: an 8-byte data-in buffer that lives across the call.
    let r = unsafe { sg_io(fd, &cdb, buf.as_mut_ptr(), 8, false) }.map_err(|e| e.to_string())?;
    if !r.ok {
        return Err(format!("READ CAPACITY(10) failed: {}", r.details.trim_end()));
    }
    let last = u32::from_be_bytes(buf[0..4].try_into().expect("4 bytes")) as u64;
    let bs = u32::from_be_bytes(buf[4..8].try_into().expect("4 bytes")) as u64;
    if last != 0xffff_ffff {
        return Ok((last + 1, bs));
    }
    let mut cdb = [0u8; 16];
    cdb[0] = 0x9e;
    cdb[1] = 0x10;
    cdb[13] = 32;
    // SAFETY: a 32-byte data-in buffer that lives across the call.
    let r = unsafe { sg_io(fd, &cdb, buf.as_mut_ptr(), 32, false) }.map_err(|e| e.to_string())?;
    if !r.ok {
        return Err(format!("READ CAPACITY(16) failed: {}", r.details.trim_end()));
    }
    let last = u64::from_be_bytes(buf[0..8].try_into().expect("8 bytes"));
    let bs = u32::from_be_bytes(buf[8..12].try_into().expect("4 bytes")) as u64;
    Ok((last + 1, bs))
}

fn device_size(path: &Path) -> Result<(u64, u64), String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot open '{}': {e}", path.display()))?;
    let (blocks, bs) =
        read_capacity(f.as_raw_fd()).map_err(|e| format!("'{}' does not answer READ CAPACITY: {e}", path.display()))?;
    if bs == 0 || !bs.is_power_of_two() {
        return Err(format!("'{}' reports a block length of {bs} bytes", path.display()));
    }
    Ok((blocks * bs, bs))
}

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let sg = devices("sg");
    for f in job_files(spec) {
        if !is_device(&f, true) && !is_device(&f, false) {
            return Err(format!(
                "ioengine sg needs a SCSI generic device (/dev/sgN) or a SCSI block device as filename; '{}' is neither ({})",
                f.display(),
                found(&sg)
            ));
        }
    }
    Ok(())
}

/// Which command a write is (`sg_write_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum WriteMode {
    #[default]
    Write,
    WriteAndVerify,
    WriteSame,
    WriteSameNdob,
    Verify(u8),
    WriteStream,
}

#[derive(Default)]
pub struct Sg {
    /// Per file: log2 of the block length.
    shifts: Vec<u32>,
    mode: WriteMode,
    readfua: bool,
    writefua: bool,
    stream_id: u16,
    /// Per unit: the details of its last failed command.
    errors: Vec<Option<String>>,
}

impl Sg {
    /// The READ/WRITE-family command for `op10`/`op16` at `lba` for `blocks` blocks.
    fn rw_cdb(op10: u8, op16: u8, lba: u64, blocks: u64, byte1: u8, force16: bool) -> ([u8; 16], usize) {
        let mut c = [0u8; 16];
        if lba <= u32::MAX as u64 && blocks <= u16::MAX as u64 && !force16 {
            c[0] = op10;
            c[1] = byte1;
            c[2..6].copy_from_slice(&(lba as u32).to_be_bytes());
            c[7..9].copy_from_slice(&(blocks as u16).to_be_bytes());
            (c, 10)
        } else {
            c[0] = op16;
            c[1] = byte1;
            c[2..10].copy_from_slice(&lba.to_be_bytes());
            c[10..14].copy_from_slice(&(blocks as u32).to_be_bytes());
            (c, 16)
        }
    }
}

const FUA: u8 = 0x08;

impl IoEngine for Sg {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        for (i, &fd) in setup.fds.iter().enumerate() {
            let (_, bs) = read_capacity(fd).map_err(|e| {
                io::Error::other(format!("sg: '{}' does not answer READ CAPACITY: {e}", setup.paths[i].display()))
            })?;
            self.shifts.push(bs.trailing_zeros());
        }
        let o = &setup.opts.sg;
        self.mode = match o.write_mode {
            "write_and_verify" | "verify" => WriteMode::WriteAndVerify,
            "write_same" | "same" => WriteMode::WriteSame,
            "write_same_ndob" => WriteMode::WriteSameNdob,
            "verify_bytchk_00" => WriteMode::Verify(0),
            "verify_bytchk_01" => WriteMode::Verify(1),
            "verify_bytchk_11" => WriteMode::Verify(3),
            "write_stream" => WriteMode::WriteStream,
            _ => WriteMode::Write,
        };
        self.readfua = o.readfua;
        self.writefua = o.writefua;
        self.stream_id = o.stream_id as u16;
        self.errors = vec![None; setup.buffers.count()];
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let shift = self.shifts[io.file_index as usize];
        let bs = 1u64 << shift;
        let (lba, blocks) = (io.offset >> shift, io.len as u64 >> shift);
        if matches!(io.ddir, Ddir::Read | Ddir::Write | Ddir::Trim)
            && (io.offset & (bs - 1) != 0 || io.len as u64 & (bs - 1) != 0 || blocks == 0)
        {
            return Ok(QueueStatus::Completed(-(libc::EINVAL as i64)));
        }
        let mut unmap = [0u8; 24];
        // The command, its data buffer and length, and whether data goes to the device.
        let (cdb, len, data, to_dev): (([u8; 16], usize), u32, *mut u8, bool) = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Read => {
                let fua = if self.readfua { FUA } else { 0 };
                (Self::rw_cdb(0x28, 0x88, lba, blocks, fua, false), io.len, io.buf, false)
            }
            Ddir::Write => {
                let fua = if self.writefua { FUA } else { 0 };
                match self.mode {
                    WriteMode::Write => (Self::rw_cdb(0x2a, 0x8a, lba, blocks, fua, false), io.len, io.buf, true),
                    // BYTCHK 0: the device checks the medium, with no data comparison; FUA
                    // does not apply.
                    WriteMode::WriteAndVerify => {
                        (Self::rw_cdb(0x2e, 0x8e, lba, blocks, 0, false), io.len, io.buf, true)
                    }
                    // One block of data, repeated by the device over the range.
                    WriteMode::WriteSame => (Self::rw_cdb(0x41, 0x93, lba, blocks, 0, false), bs as u32, io.buf, true),
                    // No data-out buffer: the device writes zeros (WRITE SAME(16) only).
                    WriteMode::WriteSameNdob => {
                        (Self::rw_cdb(0x41, 0x93, lba, blocks, 0x01, true), 0, std::ptr::null_mut(), true)
                    }
                    WriteMode::Verify(bytchk) => {
                        let (c, n) = Self::rw_cdb(0x2f, 0x8f, lba, blocks, bytchk << 1, false);
                        let len = match bytchk {
                            0 => 0,
                            3 => bs as u32,
                            _ => io.len,
                        };
                        ((c, n), len, io.buf, true)
                    }
                    WriteMode::WriteStream => {
                        let mut c = [0u8; 16];
                        c[0] = 0x9a;
                        c[1] = fua;
                        c[2..10].copy_from_slice(&lba.to_be_bytes());
                        c[10..12].copy_from_slice(&self.stream_id.to_be_bytes());
                        c[12..14].copy_from_slice(&(blocks as u16).to_be_bytes());
                        ((c, 16), io.len, io.buf, true)
                    }
                }
            }
            Ddir::Trim => {
                // UNMAP with one block descriptor: an 8-byte header (data length 22,
                // descriptor length 16), then LBA, block count and 4 reserved bytes.
                unmap[0..2].copy_from_slice(&22u16.to_be_bytes());
                unmap[2..4].copy_from_slice(&16u16.to_be_bytes());
                unmap[8..16].copy_from_slice(&lba.to_be_bytes());
                unmap[16..20].copy_from_slice(&(blocks as u32).to_be_bytes());
                let mut c = [0u8; 16];
                c[0] = OP_UNMAP;
                c[7..9].copy_from_slice(&24u16.to_be_bytes());
                ((c, 10), 24, unmap.as_mut_ptr(), true)
            }
            Ddir::Sync | Ddir::DataSync => {
                let mut c = [0u8; 16];
                c[0] = 0x35;
                ((c, 10), 0, std::ptr::null_mut(), false)
            }
        };
        // SAFETY: `data` is the unit's buffer (at least io.len bytes, and a write-same block is
        // no longer than the I/O), the UNMAP list on this frame, or null with length 0; the
        // queue lends the unit's buffer to nobody until this call returns.
        let r = unsafe { sg_io(io.fd, &cdb.0[..cdb.1], data, len, to_dev) };
        let result = match r {
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
            Ok(o) if !o.ok => {
                self.errors[index as usize] = Some(o.details);
                -(libc::EIO as i64)
            }
            Ok(o) if matches!(io.ddir, Ddir::Read | Ddir::Write) && len == io.len => io.len as i64 - o.resid as i64,
            Ok(_) if matches!(io.ddir, Ddir::Sync | Ddir::DataSync) => 0,
            Ok(_) => io.len as i64,
        };
        Ok(QueueStatus::Completed(result))
    }

    fn error_detail(&mut self, index: u32) -> Option<crate::ErrorDetail> {
        self.errors.get_mut(index as usize).and_then(Option::take).map(crate::ErrorDetail::Lines)
    }
}

pub const INFO: EngineInfo = EngineInfo {
    preflight: Some(preflight),
    device_size: Some(device_size),
    ..EngineInfo::base("sg", || Box::new(Sg::default()))
};
