//! Where and as whom a job runs: its user and group, NUMA placement, cgroup and the I/O
//! scheduler of the devices under its files.

use crate::error::Result;
use crate::host::{self, MemPolicy};
use crate::spec::{Arg, MEMPOLICY_FORMS};
use crate::table::{Category as C, Kind as K, OptDef as O};

const ID: K = K::Int { min: 0, max: u32::MAX as i64 };

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(super) static DEFS: &[O] = &[
    O::new("uid", ID, C::Process, "Run the job as this user id (its files are created as that user)").to(|s, v| Ok(s.host.uid = Some(v.int() as u32))),
    O::new("gid", ID, C::Process, "Run the job as this group id").to(|s, v| Ok(s.host.gid = Some(v.int() as u32))),
    O::new("numa_cpu_nodes", K::Str, C::Process, "Run the job on the CPUs of these NUMA nodes (a list like 0,2-3)").to(|s, v| Ok(s.host.numa_cpu_nodes = node_list(v)?)),
    O::new("numa_mem_policy", K::Str, C::Process, "NUMA memory policy of the job: default, local, prefer:N, bind:LIST or interleave:LIST").to(|s, v| Ok(s.host.numa_mem_policy = Some(v.custom(MemPolicy::parse, MEMPOLICY_FORMS)?))),
    O::new("cgroup", K::Str, C::Process, "Run the job in this blkio cgroup (created if missing)").to(|s, v| Ok(s.host.cgroup = v.trimmed())),
    O::new("cgroup_weight", K::Int { min: 100, max: 1000 }, C::Process, "blkio weight of the job's cgroup").to(|s, v| Ok(s.host.cgroup_weight = Some(v.int() as u32))),
    O::new("cgroup_nodelete", K::Bool, C::Process, "Keep the job's cgroup after the run (default: remove it if fiox created it)").def("0").to(|s, v| Ok(s.host.cgroup_nodelete = v.flag())),
    O::new("ioscheduler", K::Str, C::Target, "Switch the devices under the job's files to this I/O scheduler before the job").to(|s, v| Ok(s.host.ioscheduler = v.trimmed())),
    O::new("gtod_cpu", K::Int { min: 0, max: 4096 }, C::Process, "fio: a CPU for a thread that keeps the time of day; fiox reads the clock directly, so this only checks the CPU exists").to(|s, v| Ok(s.host.gtod_cpu = Some(v.int() as usize))),
];

/// A list of CPUs or nodes (`0,2-3`), refused with the option's name.
fn node_list(v: &Arg<'_>) -> Result<Vec<usize>> {
    let list = v.text();
    host::node_list(&list).map_err(|e| v.err(format!("{}={list}: {e}", v.name())))
}

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("uid=1 gid=2", |s| s.host.uid == Some(1) && s.host.gid == Some(2)),
            ("numa_cpu_nodes=0", |s| s.host.numa_cpu_nodes == [0]),
            ("numa_mem_policy=local", |s| s.host.numa_mem_policy.is_some()),
            ("cgroup=fiox cgroup_weight=200 cgroup_nodelete=1", |s| {
                s.host.cgroup.as_deref() == Some("fiox") && s.host.cgroup_weight == Some(200) && s.host.cgroup_nodelete
            }),
            ("ioscheduler=none gtod_cpu=0", |s| {
                s.host.ioscheduler.as_deref() == Some("none") && s.host.gtod_cpu == Some(0)
            }),
            ("", |s| s.host == Default::default()),
        ]);
    }
}
