//! `net` and `netsplice`: placeholder, filled in below.

use super::Refused;
use crate::EngineInfo;

fn preflight(_spec: &fiox_options::JobSpec) -> Result<(), String> {
    Err("ioengine net: not implemented yet".to_string())
}

pub const NET: EngineInfo = EngineInfo { preflight: Some(preflight), ..EngineInfo::base("net", || Box::new(Refused)) };
pub const NETSPLICE: EngineInfo =
    EngineInfo { preflight: Some(preflight), ..EngineInfo::base("netsplice", || Box::new(Refused)) };
