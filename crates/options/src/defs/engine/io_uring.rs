//! io_uring (and io_uring_cmd) and the engines that share rows with it: libaio and pvsync2
//! take some of the same flags, and the cmdprio rows give I/O priorities with any of them. The
//! rows are in the order fio's `--enghelp=ENGINE` lists them for each of those engines; a row
//! several engines share binds into each owner's struct.

use crate::error::Result;
use crate::spec::{Arg, JobSpec, PrioRule};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O};
use crate::value::{PrioSplitEntry, Value};

const BOOL: K = K::Bool;

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    // Rows shared by several engines are in the order fio's `--enghelp=ENGINE` lists them for
    // each of those engines (io_uring, io_uring_cmd, libaio, pvsync2 and sg), since that listing
    // follows this table.
    O::new("userspace_reap", K::Flag, C::Engine, "Reap completions from user space instead of io_getevents").def("0").engines(&["libaio"]).to(|s, v| Ok(s.engine.libaio.userspace_reap = v.flag())),
    O::new("hipri", K::Flag, C::Engine, "Use polled I/O completions (needs poll queues)").def("0").engines(&["io_uring", "io_uring_cmd", "pvsync2", "sg", "libblkio"]).to(hipri),
    O::new("cmdprio_percentage", K::Int { min: 0, max: 100 }, C::Engine, "Percentage of I/Os sent with the cmdprio_class/cmdprio priority").per_dir().engines(&["io_uring", "io_uring_cmd", "libaio"]).to(|s, v| Ok(s.engine.cmdprio.percentage = v.per_dir_u64().map(|p| p as u32))),
    O::new("cmdprio_class", K::Int { min: 1, max: 3 }, C::Engine, "Priority class of those I/Os (1 realtime, 2 best effort, 3 idle)").per_dir().engines(&["io_uring", "io_uring_cmd", "libaio"]).to(|s, v| Ok(s.engine.cmdprio.class = v.per_dir().map(|d| match d { Some(Value::Int(c)) => Some(c as u32), _ => None }))),
    O::new("cmdprio", K::Int { min: 0, max: 7 }, C::Engine, "Priority level of those I/Os (0 is highest)").per_dir().engines(&["io_uring", "io_uring_cmd", "libaio"]).to(|s, v| Ok(s.engine.cmdprio.level = v.per_dir_u64().map(|l| l as u32))),
    O::new("cmdprio_bssplit", K::PrioSplit, C::Engine, "Priority percentages by block size (bs/pct[/class/level]:...)").per_dir().engines(&["io_uring", "io_uring_cmd", "libaio"]).to(|s, v| Ok(s.engine.cmdprio.bssplit = v.per_dir().map(|d| match d { Some(Value::PrioSplit(x)) => x, _ => Vec::new() }))),
    O::new("fixedbufs", K::Flag, C::Engine, "Register the I/O buffers with the ring").def("0").engines(&["io_uring", "io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring.fixedbufs = v.flag())),
    O::new("registerfiles", K::Flag, C::Engine, "Register the files with the ring").def("0").engines(&["io_uring", "io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring.registerfiles = v.flag())),
    O::new("sqthread_poll", K::Flag, C::Engine, "Let a kernel thread poll the submission queue").def("0").engines(&["io_uring", "io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring.sqthread_poll = v.flag())),
    O::new("sqthread_poll_cpu", K::Int { min: 0, max: 4096 }, C::Engine, "CPU of the submission polling thread").engines(&["io_uring", "io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring.sqthread_poll_cpu = Some(v.int() as u32))),
    O::new("nonvectored", K::Int { min: -1, max: 1 }, C::Engine, "Use non-vectored read/write commands (-1: when the kernel has them)").def("-1").engines(&["io_uring", "io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring.nonvectored = v.int() as i32)),
    O::new("hipri_percentage", K::Int { min: 0, max: 100 }, C::Engine, "Percentage of I/Os that are polled").def("100").engines(&["pvsync2"]).to(|s, v| Ok(s.engine.pvsync2.hipri_percentage = v.u32()?)),
    O::new("uncached", BOOL, C::Engine, "Drop the pages from the cache after buffered I/O (RWF_DONTCACHE)").def("0").engines(&["io_uring", "io_uring_cmd", "pvsync2"]).to(uncached),
    O::new("nowait", BOOL, C::Engine, "Fail instead of blocking (RWF_NOWAIT)").def("0").engines(&["io_uring", "io_uring_cmd", "libaio", "pvsync2"]).to(nowait),
    O::new("force_async", K::Int { min: 0, max: i64::MAX, }, C::Engine, "Mark every Nth request IOSQE_ASYNC").def("0").engines(&["io_uring", "io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring.force_async = v.u64())),
    O::new("cmd_type", K::Choice(CMD_TYPES), C::Engine, "Kind of pass-through command (io_uring_cmd; io_uring lists it too, as in fio)").def("nvme").engines(&["io_uring", "io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring.cmd_type = v.choice())),
];

/// io_uring's options (io_uring_cmd reads the same).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IoUringOpts {
    pub hipri: bool,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    pub nonvectored: i32,
    pub uncached: bool,
    pub nowait: bool,
    pub force_async: u64,
    /// io_uring_cmd: the kind of pass-through command (`cmd_type`).
    pub cmd_type: &'static str,
}

/// libaio's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LibaioOpts {
    pub userspace_reap: bool,
    pub nowait: bool,
}

/// pvsync2's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pvsync2Opts {
    pub hipri: bool,
    /// The share of I/Os (percent) sent with RWF_HIPRI when `hipri` is set.
    pub hipri_percentage: u32,
    pub uncached: bool,
    pub nowait: bool,
}

/// The cmdprio rows (io_uring, io_uring_cmd, libaio): which I/Os get a priority. The runner
/// applies them, whatever the engine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CmdPrioOpts {
    /// Per direction: the share of I/Os (percent) sent with priority `class`/`level`.
    pub percentage: [u32; 3],
    /// Per direction: `cmdprio_class`; `None` (not given) is realtime, 1.
    pub class: [Option<u32>; 3],
    /// Per direction: `cmdprio`, the level within the class.
    pub level: [u32; 3],
    /// Per direction: `(block size, percent, explicit (class, level))` (`cmdprio_bssplit`).
    pub bssplit: [Vec<PrioSplitEntry>; 3],
}

impl CmdPrioOpts {
    /// The priority rules of direction `d` (`cmdprio_bssplit`, else `cmdprio_percentage`);
    /// empty when neither is set. The first rule whose block size matches applies.
    pub fn rules(&self, d: usize) -> Vec<PrioRule> {
        let value = |class: u32, level: u32| ((class << 13) | level) as u16;
        let default = value(self.class[d].unwrap_or(1), self.level[d]);
        if !self.bssplit[d].is_empty() {
            return self.bssplit[d]
                .iter()
                .map(|&(bs, pct, p)| PrioRule { bs: Some(bs), pct, ioprio: p.map_or(default, |(c, l)| value(c, l)) })
                .collect();
        }
        if self.percentage[d] == 0 {
            return Vec::new();
        }
        vec![PrioRule { bs: None, pct: self.percentage[d] as f64, ioprio: default }]
    }
}

fn hipri(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let on = v.flag();
    (s.engine.io_uring.hipri, s.engine.pvsync2.hipri, s.engine.sg.hipri, s.engine.libblkio.hipri) = (on, on, on, on);
    Ok(())
}

fn uncached(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    (s.engine.io_uring.uncached, s.engine.pvsync2.uncached) = (v.flag(), v.flag());
    Ok(())
}

fn nowait(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let on = v.flag();
    (s.engine.io_uring.nowait, s.engine.libaio.nowait, s.engine.pvsync2.nowait) = (on, on, on);
    Ok(())
}

static CMD_TYPES: &[Choice] = &[Choice { word: "nvme", help: "NVMe pass-through commands" }];

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=libaio userspace_reap nowait=1", |s| s.engine.libaio.userspace_reap && s.engine.libaio.nowait),
            ("ioengine=io_uring hipri nowait=1 uncached=1", |s| {
                let o = &s.engine.io_uring;
                o.hipri && o.nowait && o.uncached
            }),
            ("ioengine=io_uring fixedbufs registerfiles sqthread_poll sqthread_poll_cpu=1", |s| {
                let o = &s.engine.io_uring;
                o.fixedbufs && o.registerfiles && o.sqthread_poll && o.sqthread_poll_cpu == Some(1)
            }),
            ("ioengine=io_uring nonvectored=0 force_async=2", |s| {
                s.engine.io_uring.nonvectored == 0 && s.engine.io_uring.force_async == 2
            }),
            ("ioengine=pvsync2 hipri hipri_percentage=50 uncached=1 nowait=1", |s| {
                let o = &s.engine.pvsync2;
                o.hipri && o.hipri_percentage == 50 && o.uncached && o.nowait
            }),
            ("ioengine=io_uring cmdprio_percentage=10 cmdprio_class=3 cmdprio=2", |s| {
                s.engine.cmdprio.rules(1)[0].pct == 10.0 && s.engine.cmdprio.rules(1)[0].ioprio == (3 << 13) | 2
            }),
            ("ioengine=io_uring cmdprio_percentage=10", |s| s.engine.cmdprio.rules(0)[0].ioprio == 1 << 13),
            ("ioengine=libaio cmdprio_bssplit=4k/30", |s| s.engine.cmdprio.rules(0)[0].bs == Some(4096)),
            ("", |s| {
                s.engine.io_uring.nonvectored == -1
                    && s.engine.io_uring.cmd_type == "nvme"
                    && s.engine.pvsync2.hipri_percentage == 100
                    && s.engine.cmdprio.rules(0).is_empty()
            }),
        ]);
    }
}
