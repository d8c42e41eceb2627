//! The job's place on the machine, as its options ask: user, group, NUMA nodes and memory
//! policy, cgroup, and the I/O scheduler of its devices (options in `defs/host.rs`). The
//! worker applies them to its own thread before opening the job's files.

/// A NUMA memory policy (`numa_mem_policy`), as set_mempolicy(2) takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemPolicy {
    Default,
    Local,
    Prefer(usize),
    Bind(Vec<usize>),
    Interleave(Vec<usize>),
}

impl MemPolicy {
    /// Reads fio's forms: `default`, `local`, `prefer:N`, `bind:LIST`, `interleave:LIST`.
    pub fn parse(text: &str) -> Result<MemPolicy, String> {
        let text = text.trim();
        let (mode, nodes) = match text.split_once(':') {
            Some((m, n)) => (m.trim(), Some(n.trim())),
            None => (text, None),
        };
        let list = |what: &str| -> Result<Vec<usize>, String> {
            let n = nodes.ok_or_else(|| format!("'{what}' needs a node list, as in {what}:0-1"))?;
            node_list(n)
        };
        match mode {
            "default" if nodes.is_none() => Ok(MemPolicy::Default),
            "local" if nodes.is_none() => Ok(MemPolicy::Local),
            "prefer" => match list("prefer")?.as_slice() {
                [one] => Ok(MemPolicy::Prefer(*one)),
                _ => Err("'prefer' takes one node, as in prefer:0".into()),
            },
            "bind" => list("bind").map(MemPolicy::Bind),
            "interleave" => list("interleave").map(MemPolicy::Interleave),
            "default" | "local" => Err(format!("'{mode}' takes no node list")),
            _ => Err(format!("'{mode}' is not a policy (default, local, prefer:N, bind:LIST, interleave:LIST)")),
        }
    }

    /// The nodes the policy names.
    pub fn nodes(&self) -> Vec<usize> {
        match self {
            MemPolicy::Default | MemPolicy::Local => Vec::new(),
            MemPolicy::Prefer(n) => vec![*n],
            MemPolicy::Bind(v) | MemPolicy::Interleave(v) => v.clone(),
        }
    }
}

/// A list of node (or CPU) numbers like `0,2-3`, sorted, without repeats.
pub fn node_list(list: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let bad = || format!("'{part}' is not a number or a range like 0-3");
        let lo: usize = lo.parse().map_err(|_| bad())?;
        let hi: usize = hi.parse().map_err(|_| bad())?;
        if lo > hi || hi >= 4096 {
            return Err(format!("'{part}' is not a valid range"));
        }
        out.extend(lo..=hi);
    }
    if out.is_empty() {
        return Err("the list is empty".into());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A `cpus_allowed` list, checked against the machine's CPUs while the job is parsed, as fio
/// does ("CPU 5 too large (max=1)"), rather than failing once the job has started.
pub fn cpu_list(list: &str) -> Result<Vec<usize>, String> {
    let cpus = node_list(list)?;
    let highest = configured_cpus().saturating_sub(1);
    match cpus.iter().find(|&&c| c > highest) {
        Some(c) => Err(format!("CPU {c} is too large: this machine's highest CPU is {highest}")),
        None => Ok(cpus),
    }
}

/// The CPUs the system is configured with (what fio counts, `_SC_NPROCESSORS_CONF`): the
/// highest number in /sys/devices/system/cpu/possible plus one, or the CPUs this process may
/// use when that file cannot be read.
pub fn configured_cpus() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|s| node_list(s.trim()).ok())
        .and_then(|cpus| cpus.last().map(|c| c + 1))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The CPUs of a bit mask (`cpumask`): bit N set means CPU N.
pub fn cpus_of_mask(mask: u64) -> Vec<usize> {
    (0..64).filter(|bit| mask & (1 << bit) != 0).collect()
}

/// What the job asks of its thread's place on the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostSettings {
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// NUMA nodes whose CPUs the job runs on (`numa_cpu_nodes`).
    pub numa_cpu_nodes: Vec<usize>,
    pub numa_mem_policy: Option<MemPolicy>,
    /// The blkio cgroup the job's thread joins, its weight, and whether to keep it afterwards.
    pub cgroup: Option<String>,
    pub cgroup_weight: Option<u32>,
    pub cgroup_nodelete: bool,
    /// The I/O scheduler the devices under the job's files switch to.
    pub ioscheduler: Option<String>,
    /// `gtod_cpu`: checked to exist, nothing more (see the option's help).
    pub gtod_cpu: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_policies() {
        assert_eq!(MemPolicy::parse("default"), Ok(MemPolicy::Default));
        assert_eq!(MemPolicy::parse(" local "), Ok(MemPolicy::Local));
        assert_eq!(MemPolicy::parse("prefer:1"), Ok(MemPolicy::Prefer(1)));
        assert_eq!(MemPolicy::parse("bind:0-2,5"), Ok(MemPolicy::Bind(vec![0, 1, 2, 5])));
        assert_eq!(MemPolicy::parse("interleave:1,0"), Ok(MemPolicy::Interleave(vec![0, 1])));
        for bad in ["prefer:0-1", "bind", "bind:", "local:0", "wild", "bind:3-1", "interleave:x"] {
            assert!(MemPolicy::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn masks() {
        assert_eq!(cpus_of_mask(0b1011), vec![0, 1, 3]);
        assert!(cpus_of_mask(0).is_empty());
    }
}
