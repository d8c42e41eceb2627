//! `mtd`: raw flash through the Linux MTD character devices (/dev/mtdN). Its option
//! (`skip_bad`) is parsed; a run is refused before any I/O, saying what is missing.

use super::{devices, found, is_device, job_files, Refused};
use crate::EngineInfo;

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let mtd: Vec<String> = devices("mtd").into_iter().filter(|d| !d.ends_with("ro")).collect();
    for f in job_files(spec) {
        if !is_device(&f, true) || !f.to_string_lossy().starts_with("/dev/mtd") {
            return Err(format!(
                "ioengine mtd needs an MTD character device (/dev/mtdN) as filename; '{}' is not one ({})",
                f.display(),
                found(&mtd)
            ));
        }
    }
    Err("ioengine mtd: fiox does not drive MTD devices yet".to_string())
}

pub const INFO: EngineInfo = EngineInfo { preflight: Some(preflight), ..EngineInfo::base("mtd", || Box::new(Refused)) };
