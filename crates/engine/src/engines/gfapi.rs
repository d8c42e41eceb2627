//! `gfapi` and `gfapi_async`: files on a GlusterFS volume through libgfapi. Their options
//! (`volume`, `brick`, `single-instance`) are parsed; a run is refused before any I/O, saying
//! what is missing.

use super::Refused;
use crate::EngineInfo;

fn check(engine: &str, spec: &fiox_options::JobSpec) -> Result<(), String> {
    let o = &spec.engine.gfapi;
    match (&o.volume, &o.brick) {
        (Some(v), Some(b)) => Err(format!(
            "ioengine {engine} needs GlusterFS's libgfapi, which fiox does not use, to reach volume={v} on brick={b}; mount the volume (mount -t glusterfs) and use another engine"
        )),
        _ => Err(format!("ioengine {engine} needs volume= and brick= (the GlusterFS volume and the server to reach it through)")),
    }
}

pub const GFAPI: EngineInfo =
    EngineInfo { preflight: Some(|s| check("gfapi", s)), ..EngineInfo::base("gfapi", || Box::new(Refused)) };
pub const GFAPI_ASYNC: EngineInfo = EngineInfo {
    preflight: Some(|s| check("gfapi_async", s)),
    sync: false,
    ..EngineInfo::base("gfapi_async", || Box::new(Refused))
};
