//! cpuio: burns CPU instead of doing I/O.

use crate::error::Result;
use crate::spec::{Arg, JobSpec};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const BOOL: K = K::Bool;

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    // cpuio
    O::new("cpuload", K::Int { min: i32::MIN as i64, max: u32::MAX as i64 }, C::Engine, "Share of one CPU to burn, in percent (required; above 100 means 100)").engines(&["cpuio"]).to(cpuload),
    O::new("cpuchunks", K::Int { min: 0, max: u32::MAX as i64 }, C::Engine, "Length of one burn, in microseconds").def("50000").engines(&["cpuio"]).child_of("cpuload").to(|s, v| Ok(s.engine.cpuio.cpuchunks = v.u32()?)),
    O::new("cpumode", K::Choice(CPU_MODES), C::Engine, "How the CPU is burnt").def("noop").engines(&["cpuio"]).to(|s, v| Ok(s.engine.cpuio.cpumode_qsort = v.choice() == "qsort")),
    O::new("exit_on_io_done", BOOL, C::Engine, "Stop once every job that does I/O has finished").def("0").engines(&["cpuio"]).to(|s, v| Ok(s.engine.cpuio.exit_on_io_done = v.flag())),
];

/// cpuio's options: the share of a CPU to burn (0: not given; values above 100, and negative
/// ones as in fio, mean 100), the length of one burn in microseconds, qsort instead of a busy
/// loop, and whether to stop once the jobs doing I/O have finished.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuioOpts {
    pub cpuload: u32,
    pub cpuchunks: u32,
    pub cpumode_qsort: bool,
    pub exit_on_io_done: bool,
}

fn cpuload(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    s.engine.cpuio.cpuload = match v.int() {
        0 => 0,
        // fio stores the value unsigned, so a negative one wraps to a huge load, which is then
        // capped like any load above 100.
        l if !(0..=100).contains(&l) => 100,
        l => l as u32,
    };
    Ok(())
}

static CPU_MODES: &[Choice] =
    &[Choice { word: "noop", help: "A busy loop" }, Choice { word: "qsort", help: "Sorting arrays" }];

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=cpuio cpuload=50 cpuchunks=100 cpumode=qsort exit_on_io_done=1", |s| {
                let o = &s.engine.cpuio;
                o.cpuload == 50 && o.cpuchunks == 100 && o.cpumode_qsort && o.exit_on_io_done
            }),
            ("ioengine=cpuio cpuload=150", |s| s.engine.cpuio.cpuload == 100),
            ("ioengine=cpuio cpuload=-1", |s| s.engine.cpuio.cpuload == 100),
            ("", |s| s.engine.cpuio.cpuload == 0 && s.engine.cpuio.cpuchunks == 50000),
        ]);
    }
}
