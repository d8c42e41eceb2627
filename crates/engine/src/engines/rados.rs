//! `rados`: Ceph objects through librados. Not implemented yet: its options parse (so job
//! files for it are accepted) and a run is refused before any I/O, saying so.

use super::Refused;
use crate::EngineInfo;

fn preflight(_spec: &fiox_options::JobSpec) -> Result<(), String> {
    Err("ioengine 'rados' is not supported yet by fiox: it does not talk to Ceph yet (fio's rados engine needs librados2)".into())
}

pub const INFO: EngineInfo =
    EngineInfo { preflight: Some(preflight), ..EngineInfo::base("rados", || Box::new(Refused)) };
