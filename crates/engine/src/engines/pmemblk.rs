//! `pmemblk`: blocks of a libpmemblk pool on persistent memory. fio 3.33 lists it, but it needs
//! PMDK's libpmemblk (deprecated upstream) and a pmem device; fiox refuses the run before any
//! I/O, saying what is missing.

use super::{devices, found, Refused};
use crate::EngineInfo;

fn preflight(_spec: &fiox_options::JobSpec) -> Result<(), String> {
    Err(format!(
        "ioengine pmemblk needs PMDK's libpmemblk and a persistent memory device, which fiox does not use ({})",
        found(&devices("pmem")).replace("none", "no /dev/pmemN")
    ))
}

pub const INFO: EngineInfo =
    EngineInfo { preflight: Some(preflight), ..EngineInfo::base("pmemblk", || Box::new(Refused)) };
