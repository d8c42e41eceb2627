//! Where and as whom a job runs: its user and group, NUMA placement, cgroup and the I/O
//! scheduler of the devices under its files.

use crate::table::{Category as C, Kind as K, OptDef as O};

const ID: K = K::Int { min: 0, max: u32::MAX as i64 };

#[rustfmt::skip]
pub(super) static DEFS: &[O] = &[
    O::new("uid", ID, C::Process, "Run the job as this user id (its files are created as that user)"),
    O::new("gid", ID, C::Process, "Run the job as this group id"),
    O::new("numa_cpu_nodes", K::Str, C::Process, "Run the job on the CPUs of these NUMA nodes (a list like 0,2-3)"),
    O::new("numa_mem_policy", K::Str, C::Process, "NUMA memory policy of the job: default, local, prefer:N, bind:LIST or interleave:LIST"),
    O::new("cgroup", K::Str, C::Process, "Run the job in this blkio cgroup (created if missing)"),
    O::new("cgroup_weight", K::Int { min: 100, max: 1000 }, C::Process, "blkio weight of the job's cgroup"),
    O::new("cgroup_nodelete", K::Bool, C::Process, "Keep the job's cgroup after the run (default: remove it if fiox created it)").def("0"),
    O::new("ioscheduler", K::Str, C::Target, "Switch the devices under the job's files to this I/O scheduler before the job"),
    O::new("gtod_cpu", K::Int { min: 0, max: 4096 }, C::Process, "fio: a CPU for a thread that keeps the time of day; fiox reads the clock directly, so this only checks the CPU exists"),
];
