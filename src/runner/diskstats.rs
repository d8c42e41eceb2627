//! Disk utilisation statistics: which block devices a run's files live on, their counters in
//! `/sys/block/<dev>/stat`, and the per-device figures of fio's "Disk stats (read/write):" section
//! and JSON `disk_util` array. Formatting belongs to `fiox-report`; this module only finds the
//! devices, reads them and does the arithmetic.
//!
//! The rules below were observed with fio 3.33 on Linux 6.18: on the root disk, on a loop device,
//! on a partition added to a loop device, on ext4 on that partition, and for dm/md stacks on a fake
//! tree bind-mounted over `/sys/block` in a private mount namespace while a script advanced its
//! counters (this kernel has neither device-mapper nor md).
//!
//! - **Which devices.** Each file of each job that keeps `disk_util=1` (the default; the option is
//!   per job) and uses an engine that does file I/O (`null` does not) is taken in job order, then
//!   file order. A block device file stands for itself (`st_rdev`); any other file for the device
//!   of its file system (`st_dev`). The number is looked up among the `dev` files of
//!   `/sys/block/*` and of the partitions below them. A match whose parent directory has a `queue`
//!   directory is a partition and is replaced by its whole disk: a file on ext4 on `loop0p2`, or
//!   `/dev/loop0p1` itself, is listed as `loop0`. Numbers that are not found (tmpfs, overlayfs,
//!   btrfs and other anonymous devices) are skipped; when nothing is left, fio prints no section
//!   and no `disk_util` key.
//! - **Stacking.** After a device is added, the entries of its `slaves/` directory are followed in
//!   directory order, each replaced by its whole disk if it is a partition, and added after it,
//!   depth first: `dm-1` on `dm-0` on `sda` and `sdb` is listed as dm-1, dm-0, sda, sdb. A device
//!   is listed once, where it first appears, and a slave that was already listed (as a job's own
//!   device or in another stack) does not count as a slave of the device that reaches it later.
//! - **Figures.** Each is the difference between two readings of the stat line: `ios` is fields
//!   1 and 5 (reads/writes), `merge` fields 2 and 6, `ticks` fields 4 and 8 (ms spent by the
//!   requests), `in_queue` field 11 (the kernel's weighted ms in queue, which is not the sum of the
//!   ticks), and `util` is 100 × field 10 (ms the device was busy) / elapsed ms, capped at 100. A
//!   device with slaves also gets aggregate figures: the sums of its slaves' figures divided by the
//!   number of slaves, truncated, and as `util` the largest of the slaves' (capped) utils.
//! - **Odd content.** A stat file that is missing or has fewer than 11 numbers reads as nothing:
//!   the device is still listed, with zeros, and still counts as a slave. fio subtracts the
//!   counters as plain 64-bit numbers, so a 32-bit millisecond counter that wraps during the run
//!   prints as about 1.8e19; fiox reads a decrease as a wrap (see `counter_delta`).
//! - **Timing.** fio reads every device once after laying out the files, just before the jobs
//!   start, then every 250 ms while they run, and reports up to the last of those readings (slaves
//!   are read once more when the report is made), so the last fraction of a run is missed. fiox
//!   reads once before the jobs start and once after they end; `elapsed_ms` is the time between.
//!
//! How fio prints a device with slaves: in the normal output the line is indented by four spaces
//! instead of two and ends with `, aggrios=R/W, aggrmerge=R/W, aggrticks=R/W, aggrin_queue=N,
//! aggrutil=U%`; in JSON it gets `aggr_read_ios`, `aggr_write_ios`, `aggr_read_merges`,
//! `aggr_write_merge` (sic), `aggr_read_ticks`, `aggr_write_ticks`, `aggr_in_queue`, `aggr_util`
//! after `util`; in terse output its nine fields are followed by `slaves` and the eight aggregate
//! ones.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A device number, `(major, minor)`.
type DevNum = (u32, u32);

/// The stat fields fio reads, reads at index 0 and writes at index 1 (see the kernel's
/// Documentation/block/stat.rst). The times are milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub sectors: [u64; 2],
    pub ticks: [u64; 2],
    /// Time the device had requests in flight (field 10).
    pub io_ticks: u64,
    /// Weighted time in queue (field 11).
    pub time_in_queue: u64,
}

/// One block device's counters from /sys/block/<name>/stat (and its stacking info).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskSnapshot {
    /// The name under `/sys/block`, e.g. `vda` or `dm-0`.
    pub name: String,
    /// `None` when the stat file could not be read or had fewer than 11 numbers.
    pub counters: Option<DiskCounters>,
    /// The devices whose figures are aggregated under this one, in fio's order.
    pub slaves: Vec<String>,
}

/// One device's figures over a run: the report's own type, so nothing is converted.
pub use fiox_report::{DiskAggr, DiskFigures, DiskUtil as DiskDelta};

/// Finds the block devices under the given paths (files or block devices), resolving
/// partitions/dm/md the way fio does. `sys_root` is "/sys" in production (a temp dir in tests).
pub fn devices_for(paths: &[PathBuf], sys_root: &Path) -> Vec<String> {
    // Each device once, in the order of the first path on it: a job of 10,000 files on one
    // disk walks sysfs once, not 10,000 times.
    let mut numbers: Vec<DevNum> = Vec::new();
    for n in paths.iter().filter_map(|p| device_number(p)) {
        if !numbers.contains(&n) {
            numbers.push(n);
        }
    }
    devices_for_numbers(&numbers, sys_root)
}

/// Reads the counters of those devices now.
///
/// `devices` should be what [`devices_for`] returned: the stacking is worked out again from sysfs
/// by walking the list in order, which gives the same slaves as the first walk did, and only
/// slaves that are themselves in the list are kept.
pub fn snapshot(devices: &[String], sys_root: &Path) -> Vec<DiskSnapshot> {
    let mut walk = Walk::default();
    for name in devices {
        if let Some(dir) = locate(name, sys_root) {
            walk.add(&dir);
        }
    }
    devices
        .iter()
        .map(|name| match walk.nodes.iter().find(|n| &n.name == name) {
            Some(node) => DiskSnapshot {
                name: name.clone(),
                counters: read_counters(&node.dir.join("stat")),
                slaves: node
                    .slaves
                    .iter()
                    .map(|&i| walk.nodes[i].name.clone())
                    .filter(|s| devices.contains(s))
                    .collect(),
            },
            None => DiskSnapshot { name: name.clone(), counters: None, slaves: Vec::new() },
        })
        .collect()
}

/// The utilisation of each device between two snapshots over `elapsed_ms` of wall time, in the
/// order of `before`. A device that could not be read in either snapshot gets zeros, as in fio.
pub fn deltas(before: &[DiskSnapshot], after: &[DiskSnapshot], elapsed_ms: u64) -> Vec<DiskDelta> {
    let own: Vec<DiskDelta> = before
        .iter()
        .map(|b| {
            let end = after.iter().find(|a| a.name == b.name).and_then(|a| a.counters);
            let d = match (b.counters, end) {
                (Some(start), Some(end)) => difference(&start, &end),
                _ => DiskCounters::default(),
            };
            DiskDelta {
                name: b.name.clone(),
                figures: DiskFigures {
                    read_ios: d.ios[0],
                    write_ios: d.ios[1],
                    read_merges: d.merges[0],
                    write_merges: d.merges[1],
                    read_ticks: d.ticks[0],
                    write_ticks: d.ticks[1],
                    in_queue: d.time_in_queue,
                    util: util_percent(d.io_ticks, elapsed_ms),
                    read_bytes: d.sectors[0] * 512,
                    write_bytes: d.sectors[1] * 512,
                },
                aggr: None,
            }
        })
        .collect();
    before
        .iter()
        .zip(&own)
        .map(|(b, d)| {
            let mut d = d.clone();
            if !b.slaves.is_empty() {
                let slaves: Vec<Option<&DiskDelta>> =
                    b.slaves.iter().map(|s| own.iter().find(|o| &o.name == s)).collect();
                d.aggr = Some(aggregate(&slaves));
            }
            d
        })
        .collect()
}

/// fio's aggregate of a stacked device's slaves. A slave without figures still counts, as zeros,
/// because fio counts every slave it attached, readable or not.
fn aggregate(slaves: &[Option<&DiskDelta>]) -> DiskAggr {
    let n = slaves.len().max(1) as u128;
    // Sums are taken in u128 so that many large (or wrapped) figures cannot overflow.
    let avg = |f: fn(&DiskDelta) -> u64| -> u64 {
        let sum: u128 = slaves.iter().flatten().map(|d| f(d) as u128).sum();
        (sum / n) as u64
    };
    DiskAggr {
        read_ios: avg(|d| d.read_ios),
        write_ios: avg(|d| d.write_ios),
        read_merges: avg(|d| d.read_merges),
        write_merges: avg(|d| d.write_merges),
        read_ticks: avg(|d| d.read_ticks),
        write_ticks: avg(|d| d.write_ticks),
        in_queue: avg(|d| d.in_queue),
        util: slaves.iter().flatten().map(|d| d.util).fold(0.0, f64::max),
        read_bytes: avg(|d| d.read_bytes),
        write_bytes: avg(|d| d.write_bytes),
    }
}

/// Busy time as a percent of the elapsed time. It is capped because the kernel's busy time and
/// our clock are not read at the same instants, and fio caps it too.
fn util_percent(io_ticks: u64, elapsed_ms: u64) -> f64 {
    if elapsed_ms == 0 {
        return 0.0;
    }
    (100.0 * io_ticks as f64 / elapsed_ms as f64).min(100.0)
}

fn difference(start: &DiskCounters, end: &DiskCounters) -> DiskCounters {
    let pair = |a: [u64; 2], b: [u64; 2]| [counter_delta(a[0], b[0]), counter_delta(a[1], b[1])];
    DiskCounters {
        ios: pair(start.ios, end.ios),
        merges: pair(start.merges, end.merges),
        sectors: pair(start.sectors, end.sectors),
        ticks: pair(start.ticks, end.ticks),
        io_ticks: counter_delta(start.io_ticks, end.io_ticks),
        time_in_queue: counter_delta(start.time_in_queue, end.time_in_queue),
    }
}

/// How much a counter advanced. The kernel prints the millisecond fields as 32-bit numbers (and
/// every field on a 32-bit kernel), and `read_ticks` of a busy disk wraps in weeks, so a decrease
/// from a value that fits in 32 bits is taken as a 32-bit wrap; a larger one can only be a 64-bit
/// wrap. fio does a plain subtraction here and prints about 1.8e19 instead.
fn counter_delta(start: u64, end: u64) -> u64 {
    if end >= start {
        end - start
    } else if start <= u64::from(u32::MAX) {
        end + (1u64 << 32) - start
    } else {
        end.wrapping_sub(start)
    }
}

/// Parses a stat line. Like fio, fewer than 11 numbers means no reading at all.
fn parse_stat(text: &str) -> Option<DiskCounters> {
    let mut f = [0u64; 11];
    let mut words = text.split_whitespace();
    for slot in f.iter_mut() {
        *slot = words.next()?.parse().ok()?;
    }
    Some(DiskCounters {
        ios: [f[0], f[4]],
        merges: [f[1], f[5]],
        sectors: [f[2], f[6]],
        ticks: [f[3], f[7]],
        io_ticks: f[9],
        time_in_queue: f[10],
    })
}

fn read_counters(stat: &Path) -> Option<DiskCounters> {
    parse_stat(&fs::read_to_string(stat).ok()?)
}

/// The device number a path's I/O goes to. A path that does not exist yet is judged by the
/// nearest directory above it that does, since that is where the file will be created.
fn device_number(path: &Path) -> Option<DevNum> {
    let mut p = path;
    let meta = loop {
        match fs::metadata(p) {
            Ok(m) => break m,
            Err(_) => {
                let parent = p.parent()?;
                p = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
            }
        }
    };
    let dev = if meta.file_type().is_block_device() { meta.rdev() } else { meta.dev() };
    Some(split_dev(dev))
}

/// Splits a `dev_t` the way glibc's `major()`/`minor()` do (12 + 20 bits, spread over 64).
fn split_dev(dev: u64) -> DevNum {
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff);
    (major as u32, minor as u32)
}

/// Reads a sysfs `dev` file (`"254:0\n"`).
fn read_dev_file(dir: &Path) -> Option<DevNum> {
    let text = fs::read_to_string(dir.join("dev")).ok()?;
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

fn devices_for_numbers(numbers: &[DevNum], sys_root: &Path) -> Vec<String> {
    if numbers.is_empty() {
        return Vec::new();
    }
    let table = scan_block(sys_root);
    let mut walk = Walk::default();
    for n in numbers {
        if let Some((_, dir)) = table.iter().find(|(m, _)| m == n) {
            walk.add(dir);
        }
    }
    walk.nodes.into_iter().map(|n| n.name).collect()
}

/// Every device directory with a `dev` file under `<sys_root>/block`: the disks, and one level
/// down their partitions. fio walks the whole tree, but nothing deeper has a device number, and
/// one scan serves every path of the run.
fn scan_block(sys_root: &Path) -> Vec<(DevNum, PathBuf)> {
    let mut found = Vec::new();
    let Ok(disks) = fs::read_dir(sys_root.join("block")) else {
        return found;
    };
    for disk in disks.flatten() {
        // The entries of /sys/block are symbolic links to the device directories, so these are
        // followed; the links inside a device directory (device, bdi, holders' and slaves'
        // targets) lead elsewhere and are not, as in fio.
        let dir = disk.path();
        if !dir.is_dir() {
            continue;
        }
        if let Some(n) = read_dev_file(&dir) {
            found.push((n, dir.clone()));
        }
        let Ok(subs) = fs::read_dir(&dir) else {
            continue;
        };
        for sub in subs.flatten() {
            if sub.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                let part = sub.path();
                if let Some(n) = read_dev_file(&part) {
                    found.push((n, part));
                }
            }
        }
    }
    found
}

/// The directory of a device listed by name: `/sys/block/<name>`, or a partition directory
/// below a disk for a partition that fio could not map to its disk.
fn locate(name: &str, sys_root: &Path) -> Option<PathBuf> {
    // A name is one path component; anything else must not lead outside the block tree.
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return None;
    }
    let block = sys_root.join("block");
    let direct = block.join(name);
    if direct.join("dev").is_file() {
        return Some(direct);
    }
    fs::read_dir(&block).ok()?.flatten().map(|d| d.path().join(name)).find(|p| p.join("dev").is_file())
}

/// A partition's directory has its disk as parent, and only a disk has a `queue` directory: that
/// is fio's test, and the partition is then counted as its disk.
fn whole_disk(dir: &Path) -> PathBuf {
    // Resolving the links first makes `..` mean the real parent, as it does for the kernel when
    // fio appends `/../queue` to a path through `slaves/`.
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    match dir.parent() {
        Some(parent) if parent.join("queue").exists() => parent.to_path_buf(),
        _ => dir,
    }
}

/// A device found by the walk, with the indices of the slaves it brought in.
struct Node {
    name: String,
    dir: PathBuf,
    slaves: Vec<usize>,
}

/// fio's discovery order: depth first through `slaves/`, each device once.
#[derive(Default)]
struct Walk {
    nodes: Vec<Node>,
}

impl Walk {
    /// Adds the device in `dir` and, after it, its slaves; returns its index only if it is new,
    /// since a device that was already listed is not a slave of the device reaching it again.
    /// Adding before recursing also ends any cycle a broken sysfs might have.
    fn add(&mut self, dir: &Path) -> Option<usize> {
        let dir = whole_disk(dir);
        let name = dir.file_name()?.to_str()?.to_string();
        if self.nodes.iter().any(|n| n.name == name) {
            return None;
        }
        let index = self.nodes.len();
        self.nodes.push(Node { name, dir: dir.clone(), slaves: Vec::new() });
        let Ok(entries) = fs::read_dir(dir.join("slaves")) else {
            return Some(index);
        };
        for entry in entries.flatten() {
            let target = entry.path();
            // fio abandons all the remaining slaves at the first entry without a readable device
            // number; skipping only that entry keeps the figures of the others.
            if read_dev_file(&target).is_none() {
                continue;
            }
            if let Some(child) = self.add(&target) {
                self.nodes[index].slaves.push(child);
            }
        }
        Some(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::os::unix::fs::symlink;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fake sysfs in a temporary directory, removed when dropped.
    struct FakeSys {
        root: PathBuf,
    }

    impl FakeSys {
        fn new() -> FakeSys {
            static COUNT: AtomicUsize = AtomicUsize::new(0);
            let n = COUNT.fetch_add(1, Ordering::SeqCst);
            let root = std::env::temp_dir().join(format!("fiox-diskstats-{}-{n}", std::process::id()));
            let _ = fs::remove_dir_all(&root);
            fs::create_dir_all(root.join("block")).unwrap();
            FakeSys { root }
        }

        fn path(&self, rel: &str) -> PathBuf {
            self.root.join(rel)
        }

        /// A device directory at `rel` (relative to the root) with a `dev` file; disks get a
        /// `queue` directory and a `slaves` directory like the real ones.
        fn device(&self, rel: &str, dev: DevNum, disk: bool) -> &Self {
            let dir = self.path(rel);
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("dev"), format!("{}:{}\n", dev.0, dev.1)).unwrap();
            if disk {
                fs::create_dir_all(dir.join("queue")).unwrap();
                fs::create_dir_all(dir.join("slaves")).unwrap();
            }
            self
        }

        fn disk(&self, name: &str, dev: DevNum) -> &Self {
            self.device(&format!("block/{name}"), dev, true)
        }

        fn partition(&self, disk: &str, name: &str, dev: DevNum) -> &Self {
            self.device(&format!("block/{disk}/{name}"), dev, false)
        }

        /// A `slaves/<entry>` link of a device in /sys/block, pointing at `target` (relative).
        fn slave(&self, dev: &str, entry: &str, target: &str) -> &Self {
            let slaves = self.path(&format!("block/{dev}/slaves"));
            fs::create_dir_all(&slaves).unwrap();
            symlink(target, slaves.join(entry)).unwrap();
            self
        }

        fn stat(&self, rel: &str, text: &str) -> &Self {
            fs::write(self.path(rel).join("stat"), text).unwrap();
            self
        }
    }

    impl Drop for FakeSys {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.root);
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn set(v: &[String]) -> BTreeSet<String> {
        v.iter().cloned().collect()
    }

    /// A stat line with the given fields 1-11 and the kernel's six newer ones as zeros.
    fn stat_line(f: [u64; 11]) -> String {
        let mut s: Vec<String> = f.iter().map(|v| format!("{v:8}")).collect();
        s.extend(std::iter::repeat_n("0".to_string(), 6));
        s.join(" ") + "\n"
    }

    fn counters(ios: [u64; 2], merges: [u64; 2], ticks: [u64; 2], io_ticks: u64, in_queue: u64) -> DiskCounters {
        DiskCounters { ios, merges, sectors: [0, 0], ticks, io_ticks, time_in_queue: in_queue }
    }

    fn snap(name: &str, c: Option<DiskCounters>, slaves: &[&str]) -> DiskSnapshot {
        DiskSnapshot { name: name.to_string(), counters: c, slaves: names(slaves) }
    }

    #[test]
    fn parses_the_fields_fio_uses() {
        let line = "  767539    10763 28061002   724438   587418    27326 26512776   315280        0    54372  \
                    1042218    12157       69  4552184     2410     1448       87\n";
        let c = parse_stat(line).unwrap();
        assert_eq!(c.ios, [767539, 587418]);
        assert_eq!(c.merges, [10763, 27326]);
        assert_eq!(c.sectors, [28061002, 26512776]);
        assert_eq!(c.ticks, [724438, 315280]);
        assert_eq!(c.io_ticks, 54372);
        assert_eq!(c.time_in_queue, 1042218);
        // Kernels before 4.18 print 11 fields, which is all fio needs.
        assert!(parse_stat("1 2 3 4 5 6 7 8 9 10 11").is_some());
    }

    #[test]
    fn short_or_garbled_stat_lines_read_as_nothing() {
        for text in ["", "\n", "1 2 3 4 5 6 7 8 9 10", "abc def", "1 2 3 x 5 6 7 8 9 10 11", "-1 2 3 4 5 6 7 8 9 10 11"]
        {
            assert_eq!(parse_stat(text), None, "{text:?}");
        }
        assert_eq!(parse_stat("18446744073709551616 2 3 4 5 6 7 8 9 10 11"), None);
    }

    #[test]
    fn splits_device_numbers_like_glibc() {
        assert_eq!(split_dev(0xfe00), (254, 0));
        assert_eq!(split_dev(0x0801), (8, 1));
        // A large minor spills into the high bits: 259:300.
        let dev = (259u64 << 8) | (300 & 0xff) | ((300u64 & !0xff) << 12);
        assert_eq!(split_dev(dev), (259, 300));
    }

    #[test]
    fn a_regular_file_is_on_its_file_systems_device() {
        let sys = FakeSys::new();
        let dir = sys.path("files");
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f");
        fs::write(&file, b"x").unwrap();
        let dev = split_dev(fs::metadata(&file).unwrap().dev());
        sys.disk("vda", dev).disk("other", (dev.0, dev.1.wrapping_add(1)));
        assert_eq!(devices_for(std::slice::from_ref(&file), &sys.root), names(&["vda"]));
        // A file yet to be laid out is on the device of the directory it goes in.
        assert_eq!(devices_for(&[dir.join("not-yet/g")], &sys.root), names(&["vda"]));
        // The same device twice is listed once.
        assert_eq!(devices_for(&[file.clone(), file], &sys.root), names(&["vda"]));
    }

    #[test]
    fn a_block_device_is_itself() {
        // Making a device node needs privileges, so this uses one the machine has, if any.
        let Ok(entries) = fs::read_dir("/dev") else { return };
        let Some(node) = entries
            .flatten()
            .map(|e| e.path())
            .find(|p| fs::metadata(p).map(|m| m.file_type().is_block_device()).unwrap_or(false))
        else {
            return;
        };
        let sys = FakeSys::new();
        sys.disk("blk", split_dev(fs::metadata(&node).unwrap().rdev()));
        assert_eq!(devices_for(&[node], &sys.root), names(&["blk"]));
    }

    #[test]
    fn unknown_devices_and_missing_sysfs_give_nothing() {
        let sys = FakeSys::new();
        sys.disk("vda", (254, 0));
        assert!(devices_for_numbers(&[(0, 42)], &sys.root).is_empty());
        assert!(devices_for_numbers(&[], &sys.root).is_empty());
        let empty = sys.path("nothing-here");
        assert!(devices_for_numbers(&[(254, 0)], &empty).is_empty());
        let s = snapshot(&names(&["vda"]), &empty);
        assert_eq!(s, vec![snap("vda", None, &[])]);
    }

    #[test]
    fn a_partition_counts_as_its_disk() {
        let sys = FakeSys::new();
        sys.disk("loop0", (7, 0)).partition("loop0", "loop0p1", (259, 0)).partition("loop0", "loop0p2", (259, 1));
        sys.stat("block/loop0", &stat_line([5; 11])).stat("block/loop0/loop0p2", &stat_line([1; 11]));
        assert_eq!(devices_for_numbers(&[(259, 1), (259, 0), (7, 0)], &sys.root), names(&["loop0"]));
        let s = snapshot(&names(&["loop0"]), &sys.root);
        assert_eq!(s[0].counters.unwrap().ios, [5, 5]);
    }

    #[test]
    fn a_partition_whose_parent_has_no_queue_is_itself() {
        let sys = FakeSys::new();
        sys.device("block/odd", (8, 0), false).partition("odd", "odd1", (8, 1));
        sys.stat("block/odd/odd1", &stat_line([3; 11]));
        assert_eq!(devices_for_numbers(&[(8, 1)], &sys.root), names(&["odd1"]));
        let s = snapshot(&names(&["odd1"]), &sys.root);
        assert_eq!(s[0].counters.unwrap().ios, [3, 3]);
    }

    #[test]
    fn devices_keep_first_appearance_order() {
        let sys = FakeSys::new();
        sys.disk("vda", (254, 0)).disk("vdb", (254, 16));
        let got = devices_for_numbers(&[(254, 16), (254, 0), (254, 16)], &sys.root);
        assert_eq!(got, names(&["vdb", "vda"]));
    }

    /// dm-1 on dm-0 on a partition of sda and on sdb, as device-mapper lays it out.
    fn dm_stack(sys: &FakeSys) {
        sys.disk("sda", (8, 0)).partition("sda", "sda1", (8, 1)).disk("sdb", (8, 16));
        sys.disk("dm-0", (252, 0)).slave("dm-0", "sda1", "../../sda/sda1").slave("dm-0", "sdb", "../../sdb");
        sys.disk("dm-1", (252, 1)).slave("dm-1", "dm-0", "../../dm-0");
    }

    #[test]
    fn a_stack_is_listed_depth_first_below_its_top() {
        let sys = FakeSys::new();
        dm_stack(&sys);
        let got = devices_for_numbers(&[(252, 1)], &sys.root);
        assert_eq!(got[..2], names(&["dm-1", "dm-0"]));
        // Siblings come in directory order, which fio uses too.
        assert_eq!(set(&got[2..]), set(&names(&["sda", "sdb"])));
        let s = snapshot(&got, &sys.root);
        assert_eq!(s[0].slaves, names(&["dm-0"]));
        assert_eq!(set(&s[1].slaves), set(&names(&["sda", "sdb"])));
        assert!(s[2].slaves.is_empty() && s[3].slaves.is_empty());
    }

    #[test]
    fn md_slaves_through_real_sysfs_style_links() {
        // In sysfs, /sys/block/* and the slaves/ entries are links into /sys/devices.
        let sys = FakeSys::new();
        for (name, minor) in [("sda", 0), ("sdb", 16)] {
            sys.device(&format!("devices/pci0/host0/block/{name}"), (8, minor), true);
            symlink(format!("../devices/pci0/host0/block/{name}"), sys.path(&format!("block/{name}"))).unwrap();
        }
        sys.device("devices/pci0/host0/block/sdb/sdb1", (8, 17), false);
        sys.device("devices/virtual/block/md0", (9, 0), true);
        symlink("../devices/virtual/block/md0", sys.path("block/md0")).unwrap();
        let slaves = sys.path("devices/virtual/block/md0/slaves");
        symlink("../../../../pci0/host0/block/sda", slaves.join("sda")).unwrap();
        symlink("../../../../pci0/host0/block/sdb/sdb1", slaves.join("sdb1")).unwrap();
        sys.stat("devices/virtual/block/md0", &stat_line([9; 11]));
        let got = devices_for_numbers(&[(9, 0)], &sys.root);
        assert_eq!(got[0], "md0");
        assert_eq!(set(&got[1..]), set(&names(&["sda", "sdb"])));
        let s = snapshot(&got, &sys.root);
        assert_eq!(s[0].counters.unwrap().ios, [9, 9]);
        assert_eq!(set(&s[0].slaves), set(&names(&["sda", "sdb"])));
    }

    #[test]
    fn a_slave_listed_earlier_is_not_counted_again() {
        // Observed: a job on sdb, then one on dm-0 (slaves sda1, sdb) lists sdb, dm-0, sda, and
        // dm-0's aggregate covers sda only.
        let sys = FakeSys::new();
        dm_stack(&sys);
        let got = devices_for_numbers(&[(8, 16), (252, 0)], &sys.root);
        assert_eq!(got, names(&["sdb", "dm-0", "sda"]));
        let s = snapshot(&got, &sys.root);
        assert_eq!(s[1].slaves, names(&["sda"]));
        // And a device all of whose slaves were listed earlier has no aggregate at all.
        let got = devices_for_numbers(&[(8, 0), (8, 16), (252, 0)], &sys.root);
        assert_eq!(got, names(&["sda", "sdb", "dm-0"]));
        let s = snapshot(&got, &sys.root);
        assert!(s[2].slaves.is_empty());
        let d = deltas(&s, &s, 1000);
        assert_eq!(d[2].aggr, None);
    }

    #[test]
    fn broken_slave_entries_are_skipped_and_cycles_end() {
        let sys = FakeSys::new();
        sys.disk("sdb", (8, 16)).device("block/nodev", (0, 0), true);
        fs::write(sys.path("block/nodev/dev"), "garbage\n").unwrap();
        sys.disk("dm-0", (252, 0))
            .slave("dm-0", "gone", "../../nonexistent")
            .slave("dm-0", "nodev", "../../nodev")
            .slave("dm-0", "sdb", "../../sdb");
        assert_eq!(devices_for_numbers(&[(252, 0)], &sys.root), names(&["dm-0", "sdb"]));

        let sys = FakeSys::new();
        sys.disk("dm-0", (252, 0)).disk("dm-1", (252, 1));
        sys.slave("dm-0", "dm-1", "../../dm-1").slave("dm-1", "dm-0", "../../dm-0");
        assert_eq!(devices_for_numbers(&[(252, 0)], &sys.root), names(&["dm-0", "dm-1"]));
    }

    #[test]
    fn snapshot_reads_counters_and_tolerates_missing_files() {
        let sys = FakeSys::new();
        sys.disk("vda", (254, 0)).disk("vdb", (254, 16)).disk("vdc", (254, 32));
        sys.stat("block/vda", &stat_line([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])).stat("block/vdc", "1 2 3\n");
        let s = snapshot(&names(&["vda", "vdb", "vdc", "nosuch", "../block/vda"]), &sys.root);
        assert_eq!(
            s[0].counters,
            Some(DiskCounters {
                ios: [1, 5],
                merges: [2, 6],
                sectors: [3, 7],
                ticks: [4, 8],
                io_ticks: 10,
                time_in_queue: 11
            })
        );
        assert_eq!(
            s.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
            ["vda", "vdb", "vdc", "nosuch", "../block/vda"]
        );
        assert!(s[1..].iter().all(|d| d.counters.is_none()));
    }

    #[test]
    fn figures_are_differences_and_util_is_busy_over_elapsed() {
        // vda around a 1 s libaio run of fio 3.33, which printed ios=6021/56, merge=0/115,
        // ticks=366/21, in_queue=388, util=32.049948 over its 961 ms window.
        let before =
            [snap("vda", parse_stat("896637 10912 29278402 746334 587501 27330 26659432 315727 0 57792 1064593"), &[])];
        let after =
            [snap("vda", parse_stat("902658 10912 29326570 746700 587557 27445 26660800 315748 0 58100 1064981"), &[])];
        let d = &deltas(&before, &after, 961)[0];
        assert_eq!(
            (d.read_ios, d.write_ios, d.read_merges, d.write_merges, d.read_ticks, d.write_ticks, d.in_queue),
            (6021, 56, 0, 115, 366, 21, 388)
        );
        assert_eq!(format!("{:.6}", d.util), "32.049948");
        assert_eq!(d.aggr, None);
    }

    #[test]
    fn util_is_capped_and_zero_time_gives_zero() {
        let before = [snap("sdz", Some(DiskCounters::default()), &[])];
        let after = [snap("sdz", Some(counters([1, 0], [0, 0], [0, 0], 1500, 0)), &[])];
        assert_eq!(deltas(&before, &after, 1000)[0].util, 100.0);
        assert_eq!(deltas(&before, &after, 0)[0].util, 0.0);
    }

    #[test]
    fn counters_that_wrap_are_counted_across_the_wrap() {
        assert_eq!(counter_delta(5, 5), 0);
        assert_eq!(counter_delta(u64::from(u32::MAX) - 55, 14), 70);
        assert_eq!(counter_delta(u64::MAX - 79, 20), 100);
        let before =
            [snap("sdz", Some(counters([u64::MAX - 9, 10], [0, 0], [4294967290, 0], 4294967000, 4294967295)), &[])];
        let after = [snap("sdz", Some(counters([90, 20], [0, 0], [10, 0], 200, 5)), &[])];
        let d = &deltas(&before, &after, 1000)[0];
        assert_eq!((d.read_ios, d.write_ios, d.read_ticks, d.in_queue), (100, 10, 16, 6));
        assert_eq!(format!("{:.2}", d.util), "49.60");
    }

    #[test]
    fn unreadable_or_vanished_devices_get_zeros() {
        let c = Some(counters([10, 10], [1, 1], [5, 5], 100, 10));
        let before = [snap("a", None, &[]), snap("b", c, &[]), snap("c", c, &[])];
        let after = [snap("a", c, &[]), snap("b", None, &[])];
        for d in deltas(&before, &after, 1000) {
            assert_eq!((d.read_ios, d.write_ios, d.in_queue, d.util), (0, 0, 0, 0.0), "{}", d.name);
        }
    }

    /// Snapshots from zero to the given figures: `[r_ios, w_ios, r_merge, w_merge, r_ticks,
    /// w_ticks, in_queue, io_ticks]`.
    fn run(devs: &[(&str, [u64; 8], &[&str])], elapsed_ms: u64) -> Vec<DiskDelta> {
        let before: Vec<_> = devs.iter().map(|(n, _, s)| snap(n, Some(DiskCounters::default()), s)).collect();
        let after: Vec<_> = devs
            .iter()
            .map(|(n, f, s)| snap(n, Some(counters([f[0], f[1]], [f[2], f[3]], [f[4], f[5]], f[7], f[6])), s))
            .collect();
        deltas(&before, &after, elapsed_ms)
    }

    fn aggr_tuple(a: &DiskAggr) -> (u64, u64, u64, u64, u64, u64, u64, String) {
        let u = format!("{:.2}", a.util);
        (a.read_ios, a.write_ios, a.read_merges, a.write_merges, a.read_ticks, a.write_ticks, a.in_queue, u)
    }

    #[test]
    fn aggregates_average_the_slaves_and_take_the_busiest() {
        // fio 3.33 on the fake tree printed for dm-0 on sda and sdb:
        //   dm-0: ..., aggrios=66/16, aggrmerge=11/5, aggrticks=38/16, aggrin_queue=55, aggrutil=88.31%
        //   sda: ios=77/22, merge=22/11, ticks=44/22, in_queue=66, util=88.31%
        //   sdb: ios=55/11, merge=0/0, ticks=33/11, in_queue=44, util=19.68%
        let d = run(
            &[
                ("dm-0", [121, 44, 11, 11, 66, 33, 99, 0], &["sda", "sdb"]),
                ("sda", [77, 22, 22, 11, 44, 22, 66, 8831], &[]),
                ("sdb", [55, 11, 0, 0, 33, 11, 44, 1968], &[]),
            ],
            10000,
        );
        assert_eq!(aggr_tuple(d[0].aggr.as_ref().unwrap()), (66, 16, 11, 5, 38, 16, 55, "88.31".into()));
        assert!(d[1].aggr.is_none() && d[2].aggr.is_none());
    }

    #[test]
    fn aggregates_follow_the_stack_one_level_at_a_time() {
        // From a fio report on dm-31 on dm-7 on sdh and sdao (github.com/axboe/fio issue 719):
        //   dm-31: ..., aggrios=39320/56, aggrmerge=0/0, aggrticks=2032298/8043, aggrin_queue=2040445, aggrutil=99.82%
        //   dm-7: ios=39320/56, ..., aggrios=19663/28, aggrmerge=0/0, aggrticks=1015714/3909, aggrin_queue=1019621, aggrutil=99.81%
        //   sdh: ios=39323/56, merge=0/0, ticks=2031235/7818, in_queue=2039048, util=99.81%
        //   sdao: ios=3/0, merge=0/0, ticks=194/0, in_queue=194, util=0.32%
        let d = run(
            &[
                ("dm-31", [39320, 28, 0, 0, 2031857, 8043, 2039905, 9982], &["dm-7"]),
                ("dm-7", [39320, 56, 0, 0, 2032298, 8043, 2040445, 9982], &["sdh", "sdao"]),
                ("sdh", [39323, 56, 0, 0, 2031235, 7818, 2039048, 9981], &[]),
                ("sdao", [3, 0, 0, 0, 194, 0, 194, 32], &[]),
            ],
            10000,
        );
        assert_eq!(aggr_tuple(d[0].aggr.as_ref().unwrap()), (39320, 56, 0, 0, 2032298, 8043, 2040445, "99.82".into()));
        assert_eq!(aggr_tuple(d[1].aggr.as_ref().unwrap()), (19663, 28, 0, 0, 1015714, 3909, 1019621, "99.81".into()));
    }

    #[test]
    fn an_unreadable_slave_still_counts_in_the_average() {
        // Observed with sdb's stat file missing: sda ios=110/33, merge=11/11, ticks=55/22,
        // in_queue=77 gave md0 aggrios=55/16, aggrmerge=5/5, aggrticks=27/11, aggrin_queue=38.
        let before = [
            snap("md0", None, &["sda", "sdb"]),
            snap("sda", Some(DiskCounters::default()), &[]),
            snap("sdb", None, &[]),
        ];
        let after = [
            snap("md0", None, &[]),
            snap("sda", Some(counters([110, 33], [11, 11], [55, 22], 4942, 77)), &[]),
            snap("sdb", None, &[]),
        ];
        let d = deltas(&before, &after, 10000);
        assert_eq!(aggr_tuple(d[0].aggr.as_ref().unwrap()), (55, 16, 5, 5, 27, 11, 38, "49.42".into()));
        assert_eq!((d[0].read_ios, d[0].util), (0, 0.0));
    }

    #[test]
    fn a_capped_slave_caps_the_aggregate_and_huge_sums_do_not_overflow() {
        let d = run(
            &[
                ("md0", [0; 8], &["sda", "sdb"]),
                ("sda", [u64::MAX, 0, 0, 0, 0, 0, 0, 20000], &[]),
                ("sdb", [u64::MAX - 1, 0, 0, 0, 0, 0, 0, 1], &[]),
            ],
            10000,
        );
        let a = d[0].aggr.as_ref().unwrap();
        assert_eq!((a.read_ios, a.util), (u64::MAX - 1, 100.0));
    }
}
