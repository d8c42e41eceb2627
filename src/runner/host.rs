//! A job's place on the machine (`fiox_options::host`): its user and group, the CPUs of its
//! NUMA nodes and its memory policy, its blkio cgroup, and the I/O scheduler of the devices
//! under its files. Each is applied by the worker to its own thread before the files are
//! opened; what the machine lacks is refused with what exactly is missing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{bail, Context, Result};
use fiox_engine::sys;
use fiox_options::host::{HostSettings, MemPolicy};

use crate::plan::WorkerPlan;

const NODES: &str = "/sys/devices/system/node";

/// Applies the job's host settings to the calling thread. The returned guard takes the thread
/// out of its cgroup again (and removes the cgroup fiox made) when the worker ends.
pub(crate) fn apply(plan: &WorkerPlan) -> Result<Option<CgroupMember>> {
    let h: &HostSettings = &plan.spec.host;
    let job = &plan.spec.name;
    if let Some(cpu) = h.gtod_cpu {
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
        let cpus = fiox_options::host::node_list(online.trim()).unwrap_or_default();
        if !cpus.contains(&cpu) {
            bail!("job '{job}': gtod_cpu={cpu}: this machine has no CPU {cpu} online (CPUs {})", list(&cpus));
        }
    }
    if !h.numa_cpu_nodes.is_empty() {
        let mut cpus = Vec::new();
        for &n in &h.numa_cpu_nodes {
            cpus.extend(node_cpus(n).with_context(|| format!("job '{job}': numa_cpu_nodes"))?);
        }
        sys::set_affinity(&cpus).with_context(|| format!("job '{job}': cannot run on the CPUs of NUMA nodes"))?;
    }
    if let Some(policy) = &h.numa_mem_policy {
        for n in policy.nodes() {
            node_cpus(n).with_context(|| format!("job '{job}': numa_mem_policy"))?;
        }
        let mode = match policy {
            MemPolicy::Default => sys::NumaMode::Default,
            MemPolicy::Local => sys::NumaMode::Local,
            MemPolicy::Prefer(_) => sys::NumaMode::Preferred,
            MemPolicy::Bind(_) => sys::NumaMode::Bind,
            MemPolicy::Interleave(_) => sys::NumaMode::Interleave,
        };
        sys::set_mempolicy(mode, &policy.nodes())
            .with_context(|| format!("job '{job}': cannot set numa_mem_policy"))?;
    }
    if let Some(name) = &h.ioscheduler {
        let paths: Vec<PathBuf> = plan.files.iter().map(|f| f.path.clone()).collect();
        for dev in crate::runner::diskstats::devices_for(&paths, Path::new("/sys")) {
            switch_scheduler(&dev, name).with_context(|| format!("job '{job}': ioscheduler={name}"))?;
        }
    }
    let member = match &h.cgroup {
        Some(name) => Some(
            join_cgroup(name, h.cgroup_weight, h.cgroup_nodelete)
                .with_context(|| format!("job '{job}': cgroup={name}"))?,
        ),
        None => None,
    };
    // Last: a thread that gave up root can no longer do the above.
    if h.uid.is_some() || h.gid.is_some() {
        sys::set_thread_ids(h.uid, h.gid)
            .with_context(|| format!("job '{job}': cannot switch to uid={} gid={}", opt(h.uid), opt(h.gid)))?;
    }
    Ok(member)
}

fn opt(v: Option<u32>) -> String {
    v.map_or_else(|| "(unchanged)".into(), |v| v.to_string())
}

fn list(v: &[usize]) -> String {
    v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(",")
}

/// The CPUs of NUMA node `n`, or what nodes the machine has.
fn node_cpus(n: usize) -> Result<Vec<usize>> {
    let path = format!("{NODES}/node{n}/cpulist");
    match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => Ok(Vec::new()),
        Ok(text) => fiox_options::host::node_list(text.trim()).map_err(|e| anyhow::anyhow!("{path}: {e}")),
        Err(_) => {
            let have = std::fs::read_to_string(format!("{NODES}/online")).unwrap_or_default();
            let have = have.trim();
            if have.is_empty() {
                bail!("this machine reports no NUMA nodes ({NODES} is missing)")
            }
            bail!("this machine has no NUMA node {n} (nodes: {have})")
        }
    }
}

/// Selects `name` in `/sys/block/DEV/queue/scheduler` and checks the kernel took it.
fn switch_scheduler(dev: &str, name: &str) -> Result<()> {
    let path = format!("/sys/block/{dev}/queue/scheduler");
    let before = std::fs::read_to_string(&path).with_context(|| format!("device {dev} has no {path}"))?;
    let offered: Vec<&str> = before.split_whitespace().map(|w| w.trim_matches(['[', ']'])).collect();
    if !offered.contains(&name) {
        bail!("device {dev} offers only: {} (a scheduler built as a module must be loaded first)", offered.join(", "));
    }
    std::fs::write(&path, name).with_context(|| format!("cannot write {path}"))?;
    let after = std::fs::read_to_string(&path).unwrap_or_default();
    if !after.split_whitespace().any(|w| w == format!("[{name}]")) {
        bail!("device {dev} did not switch: {path} reads '{}'", after.trim());
    }
    Ok(())
}

/// cgroups this run made, so that the last of their members removes them.
static MADE: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// The calling thread's membership of a blkio cgroup, undone on drop.
pub(crate) struct CgroupMember {
    dir: PathBuf,
    root: PathBuf,
    tid: u32,
    keep: bool,
}

impl Drop for CgroupMember {
    fn drop(&mut self) {
        // Under the lock, so that no other job joins the cgroup between the leaving and the
        // removal. A cgroup with members cannot be removed: the last member out removes a
        // cgroup this run made, unless cgroup_nodelete asks to keep it.
        let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
        let _ = std::fs::write(self.root.join("tasks"), self.tid.to_string());
        if self.keep {
            return;
        }
        let Some(made) = made.as_mut() else { return };
        for d in self.dir.ancestors() {
            if !made.contains(d) || std::fs::remove_dir(d).is_err() {
                break;
            }
            made.remove(d);
        }
    }
}

/// The mount point of the cgroup v1 hierarchy with the blkio controller.
fn blkio_root() -> Result<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut v2 = false;
    for line in mounts.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() < 4 {
            continue;
        }
        if w[2] == "cgroup" && w[3].split(',').any(|o| o == "blkio") {
            return Ok(PathBuf::from(w[1]));
        }
        v2 |= w[2] == "cgroup2";
    }
    if v2 {
        bail!(
            "this machine has only cgroup v2, which cannot hold one thread of a process apart from the others \
             (fiox runs each job as a thread); mount cgroup v1's blkio hierarchy to use cgroup="
        )
    }
    bail!("no cgroup file system with the blkio controller is mounted")
}

/// Moves the calling thread into blkio cgroup `name` (made if missing), with the weight.
fn join_cgroup(name: &str, weight: Option<u32>, keep: bool) -> Result<CgroupMember> {
    if name.split('/').any(|p| p == "..") {
        bail!("the cgroup name may not contain '..'");
    }
    let root = blkio_root()?;
    let dir = root.join(name.trim_start_matches('/'));
    // Held until the thread has joined, so that a job leaving the cgroup cannot remove it
    // between its creation (or our check) and our joining.
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    // Each level made here is recorded, so that a nested name (`cgroup=a/b`) leaves nothing.
    let mut missing: Vec<PathBuf> =
        dir.ancestors().take_while(|d| *d != root && !d.is_dir()).map(Path::to_path_buf).collect();
    missing.reverse();
    for d in missing {
        std::fs::create_dir(&d).with_context(|| format!("cannot create {}", d.display()))?;
        made.get_or_insert_with(HashSet::new).insert(d);
    }
    let tid = sys::gettid();
    let joined = set_weight_and_join(&dir, weight, tid);
    let member = CgroupMember { dir, root, tid, keep };
    // On failure, the guard's cleanup (after the lock is released) removes what was made.
    drop(made);
    joined?;
    Ok(member)
}

fn set_weight_and_join(dir: &Path, weight: Option<u32>, tid: u32) -> Result<()> {
    if let Some(w) = weight {
        // blkio.weight belonged to CFQ; with bfq the file is blkio.bfq.weight.
        let file = ["blkio.weight", "blkio.bfq.weight"].iter().map(|f| dir.join(f)).find(|p| p.exists());
        let Some(file) = file else {
            bail!(
                "cgroup_weight: {} has neither blkio.weight nor blkio.bfq.weight (a weight needs the bfq scheduler)",
                dir.display()
            )
        };
        std::fs::write(&file, w.to_string()).with_context(|| format!("cannot write {}", file.display()))?;
    }
    std::fs::write(dir.join("tasks"), tid.to_string())
        .with_context(|| format!("cannot move the job's thread into {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_zero_has_cpus_and_missing_nodes_are_named() {
        if Path::new(NODES).join("node0").exists() {
            assert!(!node_cpus(0).unwrap().is_empty());
        }
        let e = node_cpus(4000).unwrap_err().to_string();
        assert!(e.contains("no NUMA node 4000") || e.contains("no NUMA nodes"), "{e}");
    }
}
