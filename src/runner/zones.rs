//! `zonemode=strided`: I/O is done `zonesize` bytes at a time in zones of `zonerange` bytes,
//! `zoneskip` bytes apart, from the start of each file's region, as fio 3.33's offsets show
//! (docs/fio-observed/replay-and-zones.md). The generator still decides direction, file and
//! length; [`Zones`] only moves the offset into the current zone: sequentially from the zone's
//! start, or at random within the zone's range. A zone is left once `zonesize` bytes were done
//! in it (an I/O that starts inside may end past `zonesize`, as in fio); after the last zone
//! that starts inside the region, the first comes again.

use fiox_engine::Ddir;
use fiox_options::ZoneSpec;

use super::offsets::Rng;
use crate::plan::io::NextIo;

/// Where one file's I/O is in its zones.
#[derive(Debug, Clone)]
struct Cursor {
    /// The file's region.
    start: u64,
    len: u64,
    /// Start of the current zone, relative to the region, and bytes done in it.
    zone: u64,
    done: u64,
}

pub struct Zones {
    size: u64,
    range: u64,
    /// Distance from one zone's start to the next.
    stride: u64,
    /// Random offsets within a zone are multiples of this.
    align: u64,
    random: bool,
    files: Vec<Cursor>,
    rng: Rng,
}

impl Zones {
    pub fn new(z: &ZoneSpec, regions: &[(u64, u64)], align: u64, random: bool, seed: u64) -> Zones {
        Zones {
            size: z.size.max(1),
            range: z.range.max(z.size).max(1),
            stride: z.range.max(z.size).max(1).saturating_add(z.skip),
            align: align.max(1),
            random,
            files: regions.iter().map(|&(start, len)| Cursor { start, len, zone: 0, done: 0 }).collect(),
            rng: Rng::new(seed ^ 0x7a6f_6e65),
        }
    }

    /// Moves the generator's I/O into the current zone of its file.
    #[inline]
    pub fn place(&mut self, mut io: NextIo) -> NextIo {
        if !matches!(io.ddir(), Ddir::Read | Ddir::Write | Ddir::Trim) {
            return io;
        }
        let len = io.len() as u64;
        let Some(c) = self.files.get_mut(io.file()) else { return io };
        // An I/O that would run past the region's end starts over at the first zone.
        if c.zone + c.done + len > c.len && !self.random {
            c.zone = 0;
            c.done = 0;
        }
        let rel = if self.random {
            let room = self.range.min(c.len.saturating_sub(c.zone)).saturating_sub(len);
            c.zone + self.rng.below(room / self.align + 1) * self.align
        } else {
            c.zone + c.done
        };
        io.offset = c.start + rel;
        c.done += len;
        if c.done >= self.size {
            c.done = 0;
            c.zone = c.zone.saturating_add(self.stride);
            if c.zone >= c.len {
                c.zone = 0;
            }
        }
        io
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(z: ZoneSpec, random: bool, bs: u32, n: usize) -> Vec<u64> {
        let mut zones = Zones::new(&z, &[(0, 64 << 10)], bs as u64, random, 1);
        (0..n).map(|_| zones.place(NextIo::new(Ddir::Read, 0, 0, bs)).offset >> 10).collect()
    }

    fn strided(size: u64, range: u64, skip: u64) -> ZoneSpec {
        ZoneSpec { mode: fiox_options::ZoneMode::Strided, size, range, skip, ..ZoneSpec::default() }
    }

    /// The offsets fio 3.33 did for the same jobs (64 KiB file).
    #[test]
    fn sequential_offsets_are_fios() {
        let k = 1024;
        assert_eq!(offsets(strided(8 * k, 8 * k, 8 * k), false, 4096, 10), [0, 4, 16, 20, 32, 36, 48, 52, 0, 4]);
        assert_eq!(
            offsets(strided(12 * k, 16 * k, 0), false, 4096, 13),
            [0, 4, 8, 16, 20, 24, 32, 36, 40, 48, 52, 56, 0]
        );
        assert_eq!(offsets(strided(12 * k, 16 * k, 0), false, 8192, 8), [0, 8, 16, 24, 32, 40, 48, 56]);
        assert_eq!(offsets(strided(8 * k, 16 * k, 16 * k), false, 4096, 5), [0, 4, 32, 36, 0]);
    }

    #[test]
    fn random_offsets_stay_in_the_zone_range() {
        let k = 1024;
        let o = offsets(strided(16 * k, 32 * k, 0), true, 4096, 12);
        for (i, zone) in [0, 32, 0].iter().enumerate() {
            assert!(o[i * 4..i * 4 + 4].iter().all(|&x| x >= *zone && x < zone + 32 && x % 4 == 0), "{o:?}");
        }
    }
}
