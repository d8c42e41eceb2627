//! fio 3.42's `sprandom`: the layout of a preconditioning job (its physical size, regions and
//! the share of each region's blocks that the next region invalidates), and the rules fio
//! applies when it starts such a job.
//!
//! Everything here was established from fio 3.42's documentation and by observing its runs:
//! its `--debug=sprandom` summary (physical size, region size, writes per region), the
//! invalidation shares it keeps per region (read from a fio 3.42 built with symbols, under
//! gdb, for seven combinations of `spr_op`, `spr_num_regions`, size and block size), and its
//! messages for the combinations it refuses. The observations are in
//! docs/fio-observed/sprandom.md.

use anyhow::{bail, Result};
use fiox_options::{JobSpec, RandomGenerator, RwMode};

/// Invalidation shares are kept in hundredths of a percent, as fio 3.42 keeps them.
pub const SHARE_SCALE: u32 = 10_000;

/// A preconditioning job's layout over one file region.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The block size: every write is one block.
    pub bs: u64,
    /// The blocks of the region (fio's "logical size" in blocks); the LFSR visits each once.
    pub blocks: u64,
    /// The SSD's physical capacity in blocks: the logical size plus the over-provisioning,
    /// rounded up to a whole block. The job writes at most this many blocks.
    pub physical_blocks: u64,
    /// A region's size in bytes: the physical size over the number of regions.
    pub region_bytes: u64,
    /// Writes per region: the whole blocks of a region.
    pub writes_per_region: u64,
    /// For each region, the share (in [`SHARE_SCALE`]ths) of the blocks written in it that
    /// the next region writes again.
    pub invalidate: Vec<u32>,
    /// `spr_cs` is set: a region's invalidating writes come after its new blocks, not first.
    pub deferred: bool,
}

impl Layout {
    /// The layout of `spec`'s sprandom over a region of `len` bytes, or the reason fio 3.42
    /// refuses it (in its words where it has some).
    pub fn new(spec: &JobSpec, len: u64) -> std::result::Result<Layout, String> {
        let spr = &spec.sprandom;
        if spr.regions < 1 {
            return Err("requires at least one region".into());
        }
        let regions = spr.regions as u64;
        let bs = spec.bs[1].max(1);
        let physical_blocks = ((len as f64 * (1.0 + spr.op)) / bs as f64).ceil() as u64;
        let physical = physical_blocks * bs;
        let region_bytes = physical / regions;
        if spr.cache > region_bytes {
            return Err(format!(
                "sprandom: spr_cs [{}] must be smaller than region_sz [{region_bytes}] which means [{}] regions allowed",
                spr.cache,
                physical / spr.cache.max(1)
            ));
        }
        let writes_per_region = region_bytes / bs;
        // fio 3.42 dies of a division by zero here (SIGFPE); fiox says why instead.
        if writes_per_region == 0 {
            return Err(format!(
                "sprandom: region_sz [{region_bytes}] is smaller than the block size [{bs}]: spr_num_regions={} is too many for a {physical}-byte physical size",
                spr.regions
            ));
        }
        Ok(Layout {
            bs,
            blocks: len / bs,
            physical_blocks,
            region_bytes,
            writes_per_region,
            invalidate: invalidation_shares(spr.op, regions as usize),
            deferred: spr.cache > 0,
        })
    }
}

/// The validity of the oldest region at steady state for over-provisioning `op`; the newest
/// region is wholly valid. fio 3.42's curve (observed: 0.752066… = 4.55/6.05 at op 0.15,
/// 0.203539… = 2.3/11.3 at op 0.9, and so on for ten values of op).
fn oldest_validity(op: f64) -> f64 {
    (5.0 - 3.0 * op) / (5.0 + 7.0 * op)
}

/// `n` evenly spaced values from `a` to `b`, both included.
fn linspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![a];
    }
    let step = (b - a) / (n - 1) as f64;
    (0..n).map(|i| a + i as f64 * step).collect()
}

/// The piecewise linear function through the points `(xs[i], ys[i])` (`xs` rising) at each of
/// the rising `at`, held flat beyond the ends.
fn interpolate(at: &[f64], xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let (first, last) = (xs[0], xs[xs.len() - 1]);
    let mut j = 0;
    at.iter()
        .map(|&x| {
            if x <= first {
                return ys[0];
            }
            if x >= last {
                return ys[ys.len() - 1];
            }
            while xs[j + 1] < x {
                j += 1;
            }
            let t = (x - xs[j]) / (xs[j + 1] - xs[j]);
            ys[j] + t * (ys[j + 1] - ys[j])
        })
        .collect()
}

/// The invalidation share of each region, oldest first. The validity falls linearly from 1
/// to [`oldest_validity`] over the regions in order of age; since a region of validity v holds
/// 1/v times the blocks of a wholly valid one, the curve is resampled evenly over the
/// cumulative block counts, then read from the oldest region: region i's share is one minus
/// that validity (observed: fio 3.42's shares for seven layouts, to the last hundredth of a
/// percent).
pub fn invalidation_shares(op: f64, regions: usize) -> Vec<u32> {
    let validity = linspace(1.0, oldest_validity(op), regions);
    let mut total = 0.0;
    let cumulative: Vec<f64> = validity
        .iter()
        .map(|v| {
            total += 1.0 / v;
            total
        })
        .collect();
    let even = linspace(1.0, total, regions);
    let resampled = interpolate(&even, &cumulative, &validity);
    resampled.iter().rev().map(|v| ((1.0 - v) * SHARE_SCALE as f64).round() as u32).collect()
}

/// fio 3.42's rules for a sprandom job that need no file (it checks them when it starts the
/// job, so `--parse-only` passes them), and the combinations fiox does not run yet.
pub fn rules(spec: &JobSpec) -> Result<()> {
    if !spec.sprandom.on {
        return Ok(());
    }
    let name = &spec.name;
    if !spec.rw.is_random() || !spec.rw.writes() {
        bail!("job '{name}': sprandom requires random write, random_generator=lfsr, norandommap=1");
    }
    if spec.random_generator != RandomGenerator::Lfsr {
        bail!("job '{name}': sprandom requires random_generator=lfsr");
    }
    if !spec.norandommap {
        bail!("job '{name}': sprandom requires norandommap=1");
    }
    // fio 3.42 runs these too, with results that follow no documented rule (a mixed job
    // stops after a few hundred I/Os, block size ranges write fewer blocks); fiox refuses
    // them rather than guess.
    let unsupported = [
        (spec.rw != RwMode::RandWrite, format!("rw={}", spec.rw.name())),
        (spec.bsrange[1].is_some() || !spec.bssplit[1].is_empty(), "a range or split of block sizes".into()),
        (spec.blockalign[1] != 0 && spec.blockalign[1] != spec.bs[1], "blockalign other than bs".into()),
        (spec.percentage_random[1] < 100, "percentage_random".into()),
        (!matches!(spec.random_distribution, fiox_options::RandomDist::Random), "random_distribution".into()),
        (spec.zones.mode != fiox_options::ZoneMode::None, "zonemode".into()),
        (spec.nrfiles > 1 || spec.filename.as_deref().is_some_and(|f| f.contains(':')), "more than one file".into()),
        (spec.replay.is_some(), "read_iolog".into()),
    ];
    if let Some((_, what)) = unsupported.iter().find(|(on, _)| *on) {
        bail!("job '{name}': sprandom with {what} is not supported yet (fio 3.42's sprandom example: one file, one block size, rw=randwrite)");
    }
    Ok(())
}

/// fio 3.42's notes for what sprandom chose, printed before the job header.
pub fn notes(spec: &JobSpec) -> Vec<String> {
    let spr = &spec.sprandom;
    let mut out = Vec::new();
    if spr.on && spr.set_lfsr {
        out.push("fio: sprandom sets random_generator=lfsr".to_string());
    }
    if spr.on && spr.set_norandommap {
        out.push("fio: sprandom sets norandommap=1".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.42's shares (read under gdb from its `sprandom_info`), for `spr_op` and
    /// `spr_num_regions`.
    #[test]
    fn shares_are_fios() {
        assert_eq!(invalidation_shares(0.15, 10), [2479, 2237, 1988, 1730, 1464, 1190, 906, 614, 312, 0]);
        assert_eq!(invalidation_shares(0.9, 10), [7965, 7562, 7160, 6617, 5992, 5223, 4271, 3110, 1714, 0]);
        assert_eq!(invalidation_shares(0.7, 10), [7071, 6638, 6185, 5637, 5002, 4272, 3427, 2452, 1311, 0]);
        assert_eq!(invalidation_shares(0.5, 7), [5882, 5223, 4482, 3616, 2594, 1394, 0]);
        let s = invalidation_shares(0.3, 37);
        assert_eq!(s[..6], [4225, 4137, 4047, 3955, 3863, 3769]);
        assert_eq!(s[30..], [876, 735, 593, 448, 301, 152, 0]);
        let s = invalidation_shares(0.15, 100);
        assert_eq!(s[..8], [2479, 2458, 2436, 2414, 2392, 2370, 2348, 2326]);
        assert_eq!(s[92..], [199, 171, 143, 114, 86, 57, 29, 0]);
        assert_eq!(invalidation_shares(0.15, 1), [0]);
    }

    #[test]
    fn oldest_validity_is_fios() {
        // The values fio 3.42 printed (its validity_distribution's last entry).
        for (op, v) in [(0.05, 97.0 / 107.0), (0.2, 0.6875), (0.5, 7.0 / 17.0), (0.99, 2.03 / 11.93)] {
            assert!((oldest_validity(op) - v).abs() < 1e-15, "op {op}");
        }
    }
}
