//! fio's output formats as pure functions: `(&RunReport, ...) -> String`. No clock, no
//! environment, no I/O: the runner gathers everything into a [`RunReport`] first.
#![forbid(unsafe_code)]

pub mod model;

pub use model::{DiskUtil, JobReport, RunReport, Units};
