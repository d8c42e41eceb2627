//! `dev-dax`: loads and stores on a mapping of a device DAX character device (/dev/daxX.Y).
//! fiox refuses the run before any I/O, saying what is missing.

use super::{devices, found, is_device, job_files, Refused};
use crate::EngineInfo;

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let dax = devices("dax");
    for f in job_files(spec) {
        if !is_device(&f, true) || !f.to_string_lossy().starts_with("/dev/dax") {
            return Err(format!(
                "ioengine dev-dax needs a device DAX character device (/dev/daxX.Y) as filename; '{}' is not one ({})",
                f.display(),
                found(&dax)
            ));
        }
    }
    Err("ioengine dev-dax: fiox does not map device DAX yet".to_string())
}

pub const INFO: EngineInfo =
    EngineInfo { preflight: Some(preflight), ..EngineInfo::base("dev-dax", || Box::new(Refused)) };
