//! Zoned block devices: the kernel's zone report (`BLKREPORTZONE`) and zone reset
//! (`BLKRESETZONE`), as `<linux/blkzoned.h>` defines them. Offsets and lengths are bytes here;
//! the kernel counts 512-byte sectors.

use std::io;
use std::os::fd::RawFd;

/// `_IOWR(0x12, 130, struct blk_zone_report)`: the report header is 16 bytes.
const BLKREPORTZONE: libc::c_ulong = 0xc010_1282;
/// `_IOW(0x12, 131, struct blk_zone_range)`: a range is two u64s.
const BLKRESETZONE: libc::c_ulong = 0x4010_1283;
/// `struct blk_zone_report`'s flag: the zones' `capacity` field is filled in.
const REP_CAPACITY: u32 = 1;
const SECTOR: u64 = 512;

/// What a zone accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneType {
    /// Written anywhere: no write pointer.
    Conventional,
    /// Written only at its write pointer (host-managed).
    SeqRequired,
    /// Best written at its write pointer (host-aware).
    SeqPreferred,
}

/// One zone as the kernel reports it, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone {
    pub start: u64,
    pub len: u64,
    /// Where the next write must go; `start + len` for a full zone.
    pub wp: u64,
    /// Writable bytes from `start` (the zone's length where the device has no capacity).
    pub capacity: u64,
    pub kind: ZoneType,
    /// The kernel's zone condition (`BLK_ZONE_COND_*`): 0xe full, 0xd read-only, 0xf offline.
    pub cond: u8,
}

impl Zone {
    pub const COND_FULL: u8 = 0xe;
    pub const COND_READONLY: u8 = 0xd;
    pub const COND_OFFLINE: u8 = 0xf;
}

/// `struct blk_zone`, 64 bytes.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawZone {
    start: u64,
    len: u64,
    wp: u64,
    kind: u8,
    cond: u8,
    non_seq: u8,
    reset: u8,
    resv: [u8; 4],
    capacity: u64,
    reserved: [u8; 24],
}

/// `struct blk_zone_report` followed by room for `N` zones.
#[repr(C)]
struct Report<const N: usize> {
    sector: u64,
    nr_zones: u32,
    flags: u32,
    zones: [RawZone; N],
}

/// Every zone of an open zoned block device, in order.
pub fn report_zones(fd: RawFd) -> io::Result<Vec<Zone>> {
    const BATCH: usize = 128;
    let size = crate::sys::block_device_size(fd)?;
    let mut out = Vec::new();
    let mut sector = 0u64;
    while sector * SECTOR < size {
        let mut rep = Report::<BATCH> { sector, nr_zones: BATCH as u32, flags: 0, zones: [RawZone::default(); BATCH] };
        // SAFETY: BLKREPORTZONE reads the header and writes at most `nr_zones` (BATCH) zones
        // into the array that follows it in the same live, properly laid out struct.
        if unsafe { libc::ioctl(fd, BLKREPORTZONE, &mut rep as *mut Report<BATCH>) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = (rep.nr_zones as usize).min(BATCH);
        if n == 0 {
            break;
        }
        for z in &rep.zones[..n] {
            let kind = match z.kind {
                1 => ZoneType::Conventional,
                2 => ZoneType::SeqRequired,
                _ => ZoneType::SeqPreferred,
            };
            let (start, len) = (z.start * SECTOR, z.len * SECTOR);
            let capacity = if rep.flags & REP_CAPACITY != 0 && z.capacity > 0 { z.capacity * SECTOR } else { len };
            let wp = match (kind, z.cond) {
                (ZoneType::Conventional, _) => start,
                (_, Zone::COND_FULL) => start + len,
                _ => z.wp * SECTOR,
            };
            out.push(Zone { start, len, wp, capacity, kind, cond: z.cond });
        }
        let last = &rep.zones[n - 1];
        sector = last.start + last.len.max(1);
    }
    Ok(out)
}

/// Resets the write pointers of the zones in `start..start + len` (zone-aligned bytes).
pub fn reset_zones(fd: RawFd, start: u64, len: u64) -> io::Result<()> {
    let range = [start / SECTOR, len / SECTOR];
    // SAFETY: BLKRESETZONE reads one struct blk_zone_range (two u64s) from the pointer, which
    // lives for the call.
    if unsafe { libc::ioctl(fd, BLKRESETZONE, range.as_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_the_kernels() {
        assert_eq!(std::mem::size_of::<RawZone>(), 64);
        assert_eq!(std::mem::size_of::<Report<1>>(), 16 + 64);
    }

    #[test]
    fn a_character_device_has_no_zones() {
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open("/dev/null").unwrap();
        assert!(report_zones(f.as_raw_fd()).is_err());
        assert!(reset_zones(f.as_raw_fd(), 0, 4096).is_err());
    }
}
