//! `rbd`: Ceph images through librbd. Not implemented yet: its options parse (so job
//! files for it are accepted) and a run is refused before any I/O, saying so.

use super::Refused;
use crate::EngineInfo;

fn preflight(_spec: &fiox_options::JobSpec) -> Result<(), String> {
    Err("ioengine 'rbd' is not supported yet by fiox: it does not talk to Ceph yet (fio's rbd engine needs librbd1)"
        .into())
}

pub const INFO: EngineInfo = EngineInfo { preflight: Some(preflight), ..EngineInfo::base("rbd", || Box::new(Refused)) };
