//! Laying out a job's files before its phase starts (fio's "Laying out IO file"): files
//! smaller than planned are created or extended, with real data for jobs that read so that
//! reads reach the device, or only reserved for jobs that only write.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::fd::AsRawFd;

use anyhow::{bail, Context, Result};
use fiox_engine::sys;
use fiox_options::Fallocate;

use crate::plan::mix64;
use crate::plan::WorkerPlan;
use crate::runner::offsets::Rng;

/// The files fiox created in this run (laid out from nothing): the only ones
/// `unlink_each_loop` may delete. A file the user named that existed before is never deleted
/// between loops (fio would delete it).
static CREATED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Whether fiox created the file at `path` in this run.
pub(super) fn created_here(path: &std::path::Path) -> bool {
    CREATED.lock().map(|c| c.iter().any(|p| p == path)).unwrap_or(false)
}

/// Creates or extends a worker's files to their planned size (fio's "Laying out IO file").
pub fn layout(plan: &WorkerPlan, diag: &mut dyn Write) -> Result<()> {
    // create_on_open: the job's open() creates the files; nothing is laid out beforehand.
    if plan.spec.create_on_open && !plan.spec.rw.reads() {
        return Ok(());
    }
    // fio's libpmem engine prepares its files itself, announcing each one, laid out or not.
    if plan.engine.prepopulates {
        for f in &plan.files {
            let _ = writeln!(diag, "{}: Prepopulating IO file ({})", plan.spec.name, f.path.display());
        }
    }
    let need: Vec<&crate::plan::FilePlan> = plan
        .files
        .iter()
        .filter(|f| !f.block_device && std::fs::metadata(&f.path).map(|m| m.len() < f.layout_size).unwrap_or(true))
        .collect();
    if need.is_empty() {
        return Ok(());
    }
    let total: u64 = need.iter().map(|f| f.layout_size).sum();
    // fio prints whole MiB here, so small files show as "0MiB".
    let size = format!("{}MiB", total >> 20);
    let _ = if plan.engine.prepopulates {
        Ok(())
    } else if need.len() == 1 {
        writeln!(diag, "{}: Laying out IO file (1 file / {size})", plan.spec.name)
    } else {
        writeln!(diag, "{}: Laying out IO files ({} files / total {size})", plan.spec.name, need.len())
    };
    for f in need {
        if let Some(dir) = f.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                bail!("job '{}': directory '{}' does not exist", plan.spec.name, dir.display());
            }
        }
        let existed = f.path.exists();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&f.path)
            .with_context(|| format!("job '{}': cannot create '{}'", plan.spec.name, f.path.display()))?;
        if !existed {
            if let Ok(mut c) = CREATED.lock() {
                c.push(f.path.clone());
            }
        }
        // The job runs as uid/gid: the files it laid out must be theirs, as fio's are (it
        // switches user before creating them).
        let (uid, gid) = (plan.spec.host.uid, plan.spec.host.gid);
        if uid.is_some() || gid.is_some() {
            std::os::unix::fs::fchown(&file, uid, gid)
                .with_context(|| format!("job '{}': cannot give '{}' to uid/gid", plan.spec.name, f.path.display()))?;
        }
        let have = file.metadata()?.len();
        // Jobs that only write get the space reserved and no data, as in fio; jobs that read
        // (or overwrite=1) get real data so that reads hit the device.
        if !plan.spec.rw.reads() && !plan.spec.overwrite {
            let how = match plan.spec.fallocate {
                Fallocate::None | Fallocate::Truncate => sys::Prealloc::None,
                Fallocate::Keep => sys::Prealloc::KeepSize,
                Fallocate::Native | Fallocate::Posix => sys::Prealloc::Allocate,
            };
            // A failed preallocation (ENOSPC on a small file system) is not an error, and fio
            // says nothing of it: the writes meet the full disk themselves, and the job then
            // reports what it wrote and the ENOSPC it stopped on.
            // fill_device writes until the file system is full: reserving it first would make
            // the first write fail.
            if !plan.spec.fill_device {
                let _ = sys::preallocate(file.as_raw_fd(), how, f.layout_size);
            }
            // `none` leaves the size to the writes, `keep` reserves without growing the file.
            // fill_device's size is larger than the free space: the writes alone grow it.
            if (how == sys::Prealloc::Allocate || plan.spec.fallocate == Fallocate::Truncate) && !plan.spec.fill_device
            {
                file.set_len(f.layout_size.max(have))?;
            }
            continue;
        }
        // Written with real data (not just allocated) so that reads hit the device, as in fio.
        let chunk = 1usize << 20;
        let mut buf = vec![0u8; chunk];
        let mut rng = Rng::new(mix64(have ^ f.layout_size));
        if !plan.spec.zero_buffers {
            for w in buf.chunks_mut(8) {
                w.copy_from_slice(&rng.next_u64().to_le_bytes()[..w.len()]);
            }
        }
        let mut off = have;
        while off < f.layout_size {
            let n = chunk.min((f.layout_size - off) as usize);
            std::os::unix::fs::FileExt::write_all_at(&file, &buf[..n], off)
                .with_context(|| format!("job '{}': cannot lay out '{}'", plan.spec.name, f.path.display()))?;
            off += n as u64;
        }
        file.flush()?;
        if plan.spec.create_fsync {
            file.sync_all().ok();
        }
    }
    Ok(())
}
