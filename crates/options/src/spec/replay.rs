//! The replay options (`read_iolog` and its companions) and the zone options (`zonemode`,
//! `zonesize`, ...) resolved into [`ReplaySpec`] and [`ZoneSpec`], with fio 3.33's checks.

use super::{JobSpec, Merged};
use crate::error::Result;

/// `read_iolog` and how it is replayed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplaySpec {
    /// The log, or several blktrace files to merge (`a.bin:b.bin`).
    pub paths: Vec<String>,
    /// Keep no time between I/Os (`replay_no_stall`).
    pub no_stall: bool,
    /// Every I/O goes to this file or device (`replay_redirect`).
    pub redirect: Option<String>,
    /// Offsets are rounded down to a multiple of this (a power of two; 0: not at all).
    pub align: u64,
    /// Offsets are divided by this (at least 1).
    pub scale: u64,
    /// `replay_time_scale`: the wait between I/Os is the log's times 100 / this.
    pub time_scale: u64,
    /// Kinds of blktrace I/O left out: read, write, trim, sync (`replay_skip`).
    pub skip: [bool; 4],
    /// `merge_blktrace_file`, with the per-trace time scalars (percent) and repeat counts.
    pub merge_file: Option<String>,
    pub merge_scalars: Vec<f64>,
    pub merge_iters: Vec<f64>,
    /// `read_iolog_chunked`: accepted; fiox reads the log whole (it only saves fio memory).
    pub chunked: bool,
}

/// How zones divide a job's region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZoneMode {
    #[default]
    None,
    /// `zonesize` bytes of I/O in each `zonerange`, `zoneskip` bytes between zones.
    Strided,
    /// A zoned block device.
    Zbd,
}

/// `zonemode` and its sizes (bytes); the zbd-only options are kept as given.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ZoneSpec {
    pub mode: ZoneMode,
    pub size: u64,
    /// The zone's extent; `zonesize` when not given.
    pub range: u64,
    pub skip: u64,
    pub capacity: u64,
    pub read_beyond_wp: bool,
    pub max_open_zones: u32,
    pub job_max_open_zones: u32,
    pub ignore_zone_limits: bool,
    pub reset_threshold: Option<f64>,
    pub reset_frequency: Option<f64>,
    /// fio 3.42's `write_zone_remainder` and `recover_zbd_write_error` (zonemode=zbd only).
    pub write_remainder: bool,
    pub recover_write_error: bool,
}

impl JobSpec {
    /// The replay settings the replay rows bind into; `replay` keeps them only with a log.
    pub(crate) fn replay_mut(&mut self) -> &mut ReplaySpec {
        self.replay.get_or_insert_default()
    }
}

/// The replay rules, once the rows are bound: no replay without `read_iolog`; several
/// blktrace files only merged, with one scalar and one repeat count per file.
pub(super) fn replay(m: &Merged<'_>, spec: Option<ReplaySpec>) -> Result<Option<ReplaySpec>> {
    let Some(spec) = spec.filter(|r| !r.paths.is_empty()) else {
        return Ok(None);
    };
    let (paths, list) = (&spec.paths, m.string("read_iolog").unwrap_or_default());
    let list = list.trim();
    if paths.len() > 1 && spec.merge_file.is_none() {
        return Err(m.job_err(format!(
            "read_iolog={list} names {} files: several blktrace files are replayed only merged (set merge_blktrace_file)",
            paths.len()
        )));
    }
    for (name, v) in [("merge_blktrace_scalars", &spec.merge_scalars), ("merge_blktrace_iters", &spec.merge_iters)] {
        if !v.is_empty() && v.len() != paths.len() {
            return Err(m.job_err(format!(
                "{name} has {} values for {} files in read_iolog: give one per file",
                v.len(),
                paths.len()
            )));
        }
        if v.iter().any(|&x| x <= 0.0) {
            return Err(m.job_err(format!("{name}: every value must be above 0")));
        }
    }
    Ok(Some(spec))
}

/// The zone rules, once the rows are bound, with fio 3.33's refusals: `zonesize` is needed by
/// `strided` and means nothing without a zone mode.
pub(super) fn zones(m: &Merged<'_>, mut z: ZoneSpec) -> Result<ZoneSpec> {
    let size = z.size;
    if z.range == 0 {
        z.range = size;
    }
    match z.mode {
        ZoneMode::None if size > 0 => {
            return Err(m.job_err("zonesize is set without zonemode: fio 3.33 refuses this too (add zonemode=strided for zones of zonesize bytes)".into()))
        }
        ZoneMode::Strided if size == 0 => return Err(m.job_err("zonemode=strided needs zonesize".into())),
        ZoneMode::Strided if z.range < size => {
            return Err(m.job_err(format!("zonerange={} is smaller than zonesize={size}", z.range)))
        }
        // fiox's zbd mode finishes zones and stops at a failed write, as fio 3.33 does.
        ZoneMode::Zbd if z.write_remainder || z.recover_write_error => {
            let name = if z.write_remainder { "write_zone_remainder" } else { "recover_zbd_write_error" };
            return Err(m.job_err(format!("{name}=1 with zonemode=zbd is not supported yet")));
        }
        _ => {}
    }
    Ok(z)
}
