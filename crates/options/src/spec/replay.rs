//! The replay options (`read_iolog` and its companions) and the zone options (`zonemode`,
//! `zonesize`, ...) resolved into [`ReplaySpec`] and [`ZoneSpec`], with fio 3.33's checks.

use super::Merged;
use crate::error::Result;
use crate::value::Value;

/// `read_iolog` and how it is replayed.
#[derive(Debug, Clone, PartialEq)]
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
}

fn floats(m: &Merged<'_>, name: &str) -> Result<Vec<f64>> {
    Ok(match m.one(name)? {
        Some(Value::Floats(v)) => v,
        _ => Vec::new(),
    })
}

fn float(m: &Merged<'_>, name: &str) -> Result<Option<f64>> {
    Ok(match m.one(name)? {
        Some(Value::Float(v)) => Some(v),
        _ => None,
    })
}

/// The replay options, `None` without `read_iolog`. The companions are read either way, so
/// that none is silently ignored by the option-coverage test.
pub(super) fn replay(m: &Merged<'_>) -> Result<Option<ReplaySpec>> {
    let align = m.int("replay_align")?.unwrap_or(0) as u64;
    if align != 0 && !align.is_power_of_two() {
        // fio refuses the option while parsing it ("must be a power-of-2").
        return Err(m.job_err(format!("replay_align={align} must be a power of two")));
    }
    let mut skip = [false; 4];
    if let Some(list) = m.string("replay_skip") {
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let i = match word {
                "read" => 0,
                "write" => 1,
                "trim" => 2,
                "sync" => 3,
                _ => {
                    return Err(
                        m.job_err(format!("replay_skip={list}: '{word}' is not an I/O kind (read, write, trim, sync)"))
                    )
                }
            };
            skip[i] = true;
        }
    }
    let spec = ReplaySpec {
        paths: Vec::new(),
        no_stall: m.flag("replay_no_stall")?,
        redirect: m.string("replay_redirect").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()),
        align,
        // fio takes replay_scale=0 as no scaling.
        scale: (m.int("replay_scale")?.unwrap_or(1) as u64).max(1),
        time_scale: m.int("replay_time_scale")?.unwrap_or(100).max(1) as u64,
        skip,
        merge_file: m.string("merge_blktrace_file").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()),
        merge_scalars: floats(m, "merge_blktrace_scalars")?,
        merge_iters: floats(m, "merge_blktrace_iters")?,
        chunked: m.flag("read_iolog_chunked")?,
    };
    let Some(list) = m.string("read_iolog").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let paths: Vec<String> = list.split(':').filter(|p| !p.is_empty()).map(str::to_string).collect();
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
    Ok(Some(ReplaySpec { paths, ..spec }))
}

/// The zone options, with fio 3.33's refusals: `zonesize` is needed by `strided` and means
/// nothing without a zone mode.
pub(super) fn zones(m: &Merged<'_>) -> Result<ZoneSpec> {
    let mode = match m.choice("zonemode")? {
        "strided" => ZoneMode::Strided,
        "zbd" => ZoneMode::Zbd,
        _ => ZoneMode::None,
    };
    let size = m.size("zonesize")?.unwrap_or(0);
    let range = m.size("zonerange")?.unwrap_or(0);
    let z = ZoneSpec {
        mode,
        size,
        range: if range == 0 { size } else { range },
        skip: m.size("zoneskip")?.unwrap_or(0),
        capacity: m.size("zonecapacity")?.unwrap_or(0),
        read_beyond_wp: m.flag("read_beyond_wp")?,
        max_open_zones: m.u32("max_open_zones", 0)?,
        job_max_open_zones: m.u32("job_max_open_zones", 0)?,
        ignore_zone_limits: m.flag("ignore_zone_limits")?,
        reset_threshold: float(m, "zone_reset_threshold")?,
        reset_frequency: float(m, "zone_reset_frequency")?,
    };
    match mode {
        ZoneMode::None if size > 0 => {
            return Err(m.job_err("zonesize is set without zonemode: fio 3.33 refuses this too (add zonemode=strided for zones of zonesize bytes)".into()))
        }
        ZoneMode::Strided if size == 0 => return Err(m.job_err("zonemode=strided needs zonesize".into())),
        ZoneMode::Strided if z.range < size => {
            return Err(m.job_err(format!("zonerange={} is smaller than zonesize={size}", z.range)))
        }
        _ => {}
    }
    Ok(z)
}
