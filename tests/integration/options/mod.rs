//! fio's job options, family by family, against fio 3.33 on the same jobs: the wide surface
//! (`surface`), files (`files`: dedupe, opendir, lockfile, create_serialize), where and as whom
//! a job runs (`host`), offset distributions (`dists`), iolog replay and zones (`replay`),
//! compressed logs (`logs`), steady state and latency targets (`steady`), and fio 3.42's new
//! options against fio 3.42 or its recorded behaviour (`fio342`, `sprandom`).

mod dists;
mod files;
mod fio342;
mod host;
mod logs;
mod replay;
mod sprandom;
mod steady;
pub(crate) mod surface;
mod values;
