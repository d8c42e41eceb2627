//! `zonemode=zbd` before any I/O: every file must be a zoned block device (its zones are read
//! with the kernel's zone report), the job's zone options must fit the device, and each file's
//! region is rounded to whole zones as fio 3.33 does (it says so on standard output:
//! `/dev/nvme0n1: rounded up offset from 1048576 to 16777216`). The runner
//! (`runner/zbd.rs`) reads the zones again when the job starts, as another job may have
//! written them since.

use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::{bail, Context, Result};
use fiox_engine::zoned::{report_zones, Zone, ZoneType};
use fiox_engine::EngineInfo;
use fiox_options::{JobSpec, RwMode};

use super::FilePlan;

/// The most zones the device lets be open at once (`queue/max_open_zones`; 0: no limit).
pub fn device_max_open(path: &Path) -> u32 {
    sysfs_queue(path, "max_open_zones").and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// The zones of the block device at `path` (or behind it: [`zone_node`]).
pub fn zones_of(path: &Path) -> Result<Vec<Zone>> {
    let f = std::fs::File::open(zone_node(path)).with_context(|| format!("cannot open '{}'", path.display()))?;
    report_zones(f.as_raw_fd()).with_context(|| format!("cannot read the zones of '{}'", path.display()))
}

/// The open-zone limit a job works under: `max_open_zones`, or the device's limit when the
/// job sets none (0: none at all).
pub fn open_limit(spec: &JobSpec, device: u32) -> u32 {
    match spec.zones.max_open_zones {
        0 if spec.zones.ignore_zone_limits => 0,
        0 => device,
        n => n,
    }
}

/// Checks a `zonemode=zbd` job's files and rounds their regions to whole zones; the lines fio
/// prints about the rounding are added to `notes`. The checks and their words are fio 3.33's,
/// in its order: the zone size, direct I/O, the region (zoneskip, rounding), the block sizes.
pub fn plan(spec: &JobSpec, files: &mut [FilePlan], engine: &EngineInfo, notes: &mut Vec<String>) -> Result<()> {
    let name = &spec.name;
    if engine.diskless || files.is_empty() {
        bail!("job '{name}': zonemode=zbd needs a zoned block device, and ioengine={} has no file", spec.ioengine);
    }
    for f in files {
        if !f.block_device {
            bail!(
                "job '{name}': zonemode=zbd: '{}' is not a zoned block device (it is a regular file)",
                f.path.display()
            );
        }
        let (model, sysfs) = zoned_model(&f.path);
        if !matches!(model.as_str(), "host-managed" | "host-aware") {
            bail!(
                "job '{name}': zonemode=zbd: '{}' is not a zoned block device ({sysfs} says '{model}')",
                f.path.display()
            );
        }
        let managed = model == "host-managed";
        let zones = zones_of(&f.path).with_context(|| format!("job '{name}'"))?;
        let Some(first) = zones.first() else {
            bail!("job '{name}': zonemode=zbd: '{}' reports no zones", f.path.display());
        };
        let zsize = first.len;
        let path = f.path.display().to_string();
        if spec.zones.size > 0 && spec.zones.size != zsize {
            bail!(
                "job '{name}': {path} job parameter zonesize {} does not match disk zone size {zsize}.",
                spec.zones.size
            );
        }
        // Buffered writes could reach a host-managed device out of write-pointer order
        // (passthrough commands have no page cache to go through).
        if managed && !spec.direct && spec.rw.writes() && zone_node(&f.path) == f.path {
            bail!("job '{name}': Using direct I/O is mandatory for writing to ZBD drives");
        }
        let device = if managed { device_max_open(&f.path) } else { 0 };
        let max = spec.zones.max_open_zones;
        if max > 0 && device > 0 && max > device && !spec.zones.ignore_zone_limits {
            bail!("job '{name}': Specified --max_open_zones ({max}) is larger than max ({device})");
        }
        if spec.zones.job_max_open_zones > 0 && open_limit(spec, device) == 0 {
            bail!("job '{name}': 'job_max_open_zones' cannot be used without a global open zones limit");
        }
        let bs = crate::plan::io::max_block(spec);
        if bs > zsize {
            bail!("job '{name}': zonemode=zbd: the block size {bs} exceeds the zone size {zsize} of '{path}'");
        }
        // fio checks the region only where it holds a zone with a write pointer (host-aware
        // zones have none for fio: it writes them anywhere, as conventional ones).
        let end = f.region_start + f.region_len;
        let sequential =
            zones.iter().any(|z| z.kind == ZoneType::SeqRequired && z.start < end && f.region_start < z.start + z.len);
        if sequential {
            region(spec, f, zsize, notes)?;
        }
        block_sizes(spec, &path, zsize)?;
    }
    Ok(())
}

/// zoneskip, and the region rounded to whole zones: its start up, its end down (not for a
/// sequential read, which fio leaves as it is).
fn region(spec: &JobSpec, f: &mut FilePlan, zsize: u64, notes: &mut Vec<String>) -> Result<()> {
    let (name, path) = (&spec.name, f.path.display().to_string());
    let skip = spec.zones.skip;
    if skip % zsize != 0 {
        bail!("job '{name}': {path}: zoneskip {skip} is not a multiple of the device zone size {zsize}.");
    }
    if spec.rw == RwMode::Read {
        return Ok(());
    }
    let end = f.region_start + f.region_len;
    let mut start = f.region_start;
    if start % zsize != 0 {
        start = start.div_ceil(zsize) * zsize;
        if start >= end {
            bail!("job '{name}': {path}: io_size must be at least one zone");
        }
        notes.push(format!("{path}: rounded up offset from {} to {start}", f.region_start));
    }
    let whole_end = end / zsize * zsize;
    if whole_end != end {
        if whole_end <= start {
            bail!("job '{name}': {path}: io_size must be at least one zone");
        }
        notes.push(format!("{path}: rounded down io_size from {} to {}", end - start, whole_end - start));
    }
    f.region_start = start;
    f.region_len = whole_end - start;
    Ok(())
}

/// A trim is a whole zone (one block size: it becomes a zone reset); with verify, every block
/// size divides the zone size, so that no block straddles two zones.
fn block_sizes(spec: &JobSpec, path: &str, zsize: u64) -> Result<()> {
    let name = &spec.name;
    if spec.rw.trims() {
        let (lo, hi) = crate::plan::io::block_range(spec, 2);
        if lo != hi || !spec.bssplit[2].is_empty() {
            bail!("job '{name}': bsrange and bssplit are not allowed for trim with zonemode=zbd");
        }
        if spec.bs[2] != zsize {
            bail!("job '{name}': {path}: trim block size {} is not the zone size {zsize}", spec.bs[2]);
        }
    }
    if spec.verify.is_some() {
        if let Some(bs) = spec.bs.iter().find(|&&b| b == 0 || zsize % b != 0) {
            bail!("job '{name}': {path}: block size {bs} is not a divisor of the zone size {zsize}");
        }
    }
    Ok(())
}

/// The block device whose zones a job's file has: itself, or for an NVMe generic character
/// device (`/dev/ngXnY`, io_uring_cmd's passthrough node) its namespace's block device
/// (`/dev/nvmeXnY`), through which the kernel reports and resets the zones.
pub fn zone_node(path: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::FileTypeExt;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let is_char = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device());
    if let (true, Some(ns)) = (is_char, name.strip_prefix("ng")) {
        let block = path.with_file_name(format!("nvme{ns}"));
        if std::fs::metadata(&block).is_ok_and(|m| m.file_type().is_block_device()) {
            return block;
        }
    }
    path.to_path_buf()
}

/// A value of the block device's request queue in sysfs (for a partition, its disk's).
fn sysfs_queue(path: &Path, what: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(zone_node(path)).map(|m| m.rdev()).ok()?;
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    ["queue", "../queue"]
        .iter()
        .find_map(|q| std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/{q}/{what}")).ok())
        .map(|v| v.trim().to_string())
}

/// The zoned model the kernel reports for a block device (`none`, `host-aware`,
/// `host-managed`), and the sysfs file it came from.
fn zoned_model(path: &Path) -> (String, String) {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(zone_node(path)).map(|m| m.rdev()).unwrap_or(0);
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    // A partition has no queue of its own; its disk's is one level up.
    for rel in ["queue/zoned", "../queue/zoned"] {
        let p = format!("/sys/dev/block/{major}:{minor}/{rel}");
        if let Ok(v) = std::fs::read_to_string(&p) {
            // Named as users know it: /sys/block/<disk>/queue/zoned.
            let disk = std::fs::canonicalize(&p).ok().and_then(|c| {
                c.parent().and_then(Path::parent).and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned())
            });
            let shown = disk.map_or(p, |d| format!("/sys/block/{d}/queue/zoned"));
            return (v.trim().to_string(), shown);
        }
    }
    ("unknown".into(), format!("/sys/dev/block/{major}:{minor}/queue/zoned"))
}
