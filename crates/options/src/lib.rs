//! fio-compatible options: the option table, value syntax, job files and command lines.
//!
//! Architecture Invariant: this crate does no I/O besides reading job files; it never touches a
//! device, and it has no `unsafe`.
#![forbid(unsafe_code)]
// Errors carry the option, value, origin and accepted forms so messages can name them all; they
// are built once per run at most, so their size costs nothing worth boxing for.
#![allow(clippy::result_large_err)]

pub mod argv;
pub mod choices;
pub mod completions;
mod defs;
pub mod errno;
pub mod error;
mod expr;
pub mod fuzz;
pub mod help;
pub mod host;
pub mod iolog;
pub mod job;
pub mod jobfile;
pub mod manpage;
pub mod profile;
pub mod repeat;
pub mod showcmd;
pub mod spec;
pub mod table;
pub mod value;

pub use choices::{
    ClockSource, DedupeMode, ErrorPolicy, ExitWhat, Fadvise, Fallocate, FileService, LockMode, MemKind,
    RandomGenerator, UnifiedRw,
};
pub use defs::{Placement, PlacementMode};
pub use error::{Error, Origin};
pub use job::{assemble, Job, JobSet};
pub use spec::{
    CephOpts, JobSpec, LatencyTarget, PrioRule, RandomDist, ReplaySpec, SizeSpec, Sprandom, SteadyState, SyncFileRange,
    VerifySpec, ZoneMode, ZoneSpec,
};
pub use value::{Ctx, RwMode};

thread_local! {
    static LENIENCIES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Records a value read leniently, as fio reads it (once per option and place).
pub(crate) fn note_leniency(note: String) {
    LENIENCIES.with(|l| {
        let mut l = l.borrow_mut();
        if !l.contains(&note) {
            l.push(note);
        }
    });
}

/// The values read leniently since the last call (`size=65536)` read as 65536, ignoring
/// ')'), each with its file and line, for `--parse-only` to print.
pub fn take_leniencies() -> Vec<String> {
    LENIENCIES.with(|l| std::mem::take(&mut *l.borrow_mut()))
}
