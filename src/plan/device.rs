//! Block devices: their size, and the safety check that keeps fiox from writing over data the
//! user did not mean to destroy. A write job on a block device that is mounted, has mounted
//! partitions, or holds a recognisable file system or partition table is refused unless the job
//! sets `allow_mounted_write=1`. fio only checks for mounts; fiox also looks at the data, since an
//! unmounted disk with a file system on it is just as easy to destroy by a typo.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::{bail, Context, Result};

pub fn size(path: &Path) -> Result<u64> {
    let f = File::open(path).with_context(|| format!("cannot open block device '{}'", path.display()))?;
    fiox_engine::sys::block_device_size(f.as_raw_fd())
        .with_context(|| format!("cannot read the size of '{}'", path.display()))
}

/// The device's logical block size: the unit of O_DIRECT sizes and offsets.
pub fn logical_block_size(path: &Path) -> Result<u64> {
    let f = File::open(path).with_context(|| format!("cannot open block device '{}'", path.display()))?;
    fiox_engine::sys::logical_block_size(f.as_raw_fd())
        .map(u64::from)
        .with_context(|| format!("cannot read the logical block size of '{}'", path.display()))
}

/// `major:minor` of the device and of its partitions.
fn dev_numbers(path: &Path) -> Result<Vec<String>> {
    let rdev = std::fs::metadata(path)?.rdev();
    let (major, minor) = (libc_major(rdev), libc_minor(rdev));
    let mut out = vec![format!("{major}:{minor}")];
    let sys = Path::new("/sys/dev/block").join(format!("{major}:{minor}"));
    if let Ok(entries) = std::fs::read_dir(&sys) {
        for e in entries.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Ok(dev) = std::fs::read_to_string(p.join("dev")) {
                    out.push(dev.trim().to_string());
                }
            }
        }
    }
    Ok(out)
}

fn libc_major(dev: u64) -> u64 {
    ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)
}

fn libc_minor(dev: u64) -> u64 {
    ((dev >> 12) & 0xffff_ff00) | (dev & 0xff)
}

/// Where the device (or one of its partitions) is mounted, if anywhere.
fn mount_point(path: &Path) -> Result<Option<String>> {
    let devs = dev_numbers(path)?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in info.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() > 4 && devs.iter().any(|d| d == f[2]) {
            return Ok(Some(f[4].to_string()));
        }
    }
    Ok(None)
}

/// Names what the first 68 KiB of a device look like, if they hold a known signature.
pub fn signature(head: &[u8]) -> Option<&'static str> {
    let at = |off: usize, magic: &[u8]| head.len() >= off + magic.len() && &head[off..off + magic.len()] == magic;
    if at(1080, &[0x53, 0xef]) {
        return Some("an ext2/3/4 file system");
    }
    if at(0, b"XFSB") {
        return Some("an XFS file system");
    }
    if at(65600, b"_BHRfS_M") {
        return Some("a btrfs file system");
    }
    if at(0, b"LUKS\xba\xbe") {
        return Some("a LUKS volume");
    }
    if at(512, b"LABELONE") || at(24, b"LVM2 001") {
        return Some("an LVM physical volume");
    }
    if at(512, b"EFI PART") {
        return Some("a GPT partition table");
    }
    if at(4086, b"SWAPSPACE2") {
        return Some("swap space");
    }
    if at(510, &[0x55, 0xaa]) && head[446..510].iter().any(|&b| b != 0) {
        return Some("an MBR partition table");
    }
    None
}

/// Why writing to the device would destroy something (it or a partition on it is mounted, or
/// it holds a recognisable file system or partition table), if it would.
pub fn in_use(path: &Path) -> Result<Option<String>> {
    if let Some(mp) = mount_point(path)? {
        return Ok(Some(format!("it (or a partition on it) is mounted at {mp}")));
    }
    let mut head = vec![0u8; 68 * 1024];
    let mut f = File::open(path).with_context(|| format!("cannot open '{}'", path.display()))?;
    let n = f.read(&mut head).unwrap_or(0);
    Ok(signature(&head[..n]).map(|what| format!("it holds {what}")))
}

/// Refuses to plan writes to a device that is in use or holds data.
/// The block device a SCSI generic (/dev/sgN) or NVMe generic (/dev/ngXnY) character device
/// stands for, when it has one, from sysfs: what a write through the character device changes.
pub fn block_device_of(path: &Path) -> Option<std::path::PathBuf> {
    let rdev = std::fs::metadata(path).ok()?.rdev();
    let sys = std::fs::canonicalize(format!("/sys/dev/char/{}:{}", libc_major(rdev), libc_minor(rdev))).ok()?;
    let name = sys.file_name()?.to_string_lossy().into_owned();
    // An NVMe generic device ngXnY is namespace Y of controller X, as the block device nvmeXnY.
    if let Some(rest) = name.strip_prefix("ng") {
        let disk = Path::new("/dev").join(format!("nvme{rest}"));
        return disk.exists().then_some(disk);
    }
    let disk = std::fs::read_dir(sys.join("device/block")).ok()?.flatten().next()?.file_name();
    let disk = Path::new("/dev").join(disk);
    disk.exists().then_some(disk)
}

pub fn check_writable(path: &Path, job: &str) -> Result<()> {
    if let Some(why) = in_use(path)? {
        bail!(
            "job '{job}': refusing to write to '{}': {why}; \
             set allow_mounted_write=1 to write anyway, destroying its data",
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        let mut head = vec![0u8; 70 * 1024];
        assert_eq!(signature(&head), None);
        head[1080] = 0x53;
        head[1081] = 0xef;
        assert_eq!(signature(&head), Some("an ext2/3/4 file system"));
        let mut gpt = vec![0u8; 4096];
        gpt[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(signature(&gpt), Some("a GPT partition table"));
    }
}
