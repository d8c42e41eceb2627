//! `nbd`: an NBD client through libnbd (`uri=nbd://...`). fiox does not link libnbd; its option
//! is parsed, and a run is refused before any I/O with what is missing. An export attached with
//! `nbd-client` (/dev/nbdN) can be used with any block engine instead.

use super::Refused;
use crate::EngineInfo;

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    match spec.engine.nbd.uri.as_deref() {
        None => Err("ioengine nbd needs uri= (the NBD export, e.g. nbd://localhost/disk)".to_string()),
        Some(u) => Err(format!(
            "ioengine nbd needs libnbd, which fiox does not use, to reach uri={u}; attach the export with nbd-client and use its /dev/nbdN with another engine"
        )),
    }
}

pub const INFO: EngineInfo = EngineInfo { preflight: Some(preflight), ..EngineInfo::base("nbd", || Box::new(Refused)) };
