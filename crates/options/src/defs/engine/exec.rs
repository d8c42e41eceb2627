//! exec: runs a program alongside the other jobs.

use crate::table::{Category as C, Kind as K, OptDef as O};

const BOOL: K = K::Bool;

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    // exec
    O::new("program", K::Str, C::Engine, "Program to run for the job's runtime (required)").engines(&["exec"]).to(|s, v| Ok(s.engine.exec.program = v.written())),
    O::new("arguments", K::Str, C::Engine, "Its arguments, separated by spaces; %r is the runtime in seconds, %n the job's name").engines(&["exec"]).to(|s, v| Ok(s.engine.exec.arguments = v.written())),
    O::new("grace_time", K::Int { min: 0, max: u32::MAX as i64 }, C::Engine, "Seconds between SIGTERM and SIGKILL at the end").def("1").engines(&["exec"]).to(|s, v| Ok(s.engine.exec.grace_time = v.u32()?)),
    O::new("std_redirect", BOOL, C::Engine, "Send the program's output to JOBNAME.stdout and JOBNAME.stderr").def("1").engines(&["exec"]).to(|s, v| Ok(s.engine.exec.std_redirect = v.flag())),
];

/// exec's options: the program, its raw argument string, seconds between SIGTERM and SIGKILL,
/// and whether its output goes to JOBNAME.stdout/.stderr.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecOpts {
    pub program: Option<String>,
    pub arguments: Option<String>,
    pub grace_time: u32,
    pub std_redirect: bool,
}

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=exec program=/bin/true arguments=-x grace_time=3 std_redirect=0", |s| {
                let o = &s.engine.exec;
                o.program.as_deref() == Some("/bin/true")
                    && o.arguments.as_deref() == Some("-x")
                    && o.grace_time == 3
                    && !o.std_redirect
            }),
            ("", |s| s.engine.exec.grace_time == 1 && s.engine.exec.std_redirect),
        ]);
    }
}
