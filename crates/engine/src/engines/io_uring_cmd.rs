//! `io_uring_cmd`: NVMe pass-through commands on io_uring, on the NVMe generic character
//! devices (/dev/ngXnY). fiox parses its options (io_uring's plus `cmd_type`) so that job files
//! for it are accepted; a run is refused before any I/O with what is missing.

use super::{devices, found, is_device, job_files, Refused};
use crate::EngineInfo;

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let ng = devices("ng");
    for f in job_files(spec) {
        if !is_device(&f, true) {
            return Err(format!(
                "ioengine io_uring_cmd needs an NVMe generic character device (/dev/ngXnY) as filename; '{}' is not one ({})",
                f.display(),
                found(&ng)
            ));
        }
    }
    Err("ioengine io_uring_cmd: fiox does not send NVMe pass-through commands yet".to_string())
}

pub const INFO: EngineInfo =
    EngineInfo { preflight: Some(preflight), ..EngineInfo::base("io_uring_cmd", || Box::new(Refused)) };
