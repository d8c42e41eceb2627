//! `rdma`: RDMA verbs through libibverbs and librdmacm. Its options (`hostname`, `bindname`,
//! `port`, `verb`) are parsed; a run is refused before any I/O, saying what is missing.

use super::Refused;
use crate::EngineInfo;

fn preflight(_spec: &fiox_options::JobSpec) -> Result<(), String> {
    let mut devs: Vec<String> = std::fs::read_dir("/sys/class/infiniband")
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    devs.sort();
    if devs.is_empty() {
        Err("ioengine rdma needs an RDMA device (/sys/class/infiniband is empty or missing on this machine) and libibverbs, which fiox does not use".to_string())
    } else {
        Err(format!(
            "ioengine rdma needs libibverbs and librdmacm, which fiox does not use (RDMA devices here: {})",
            devs.join(", ")
        ))
    }
}

pub const INFO: EngineInfo =
    EngineInfo { preflight: Some(preflight), ..EngineInfo::base("rdma", || Box::new(Refused)) };
