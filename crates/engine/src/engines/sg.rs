//! `sg`: SCSI commands through the SCSI generic driver (SG_IO). fiox does not send SCSI
//! commands yet; its options are parsed so that job files for it are accepted, and a run is
//! refused before any I/O with what is missing: a SCSI generic device (/dev/sgN).

use super::{devices, found, is_device, job_files, Refused};
use crate::EngineInfo;

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let sg = devices("sg");
    for f in job_files(spec) {
        if !is_device(&f, true) && !is_device(&f, false) {
            return Err(format!(
                "ioengine sg needs a SCSI generic device (/dev/sgN) or a SCSI block device as filename; '{}' is neither ({})",
                f.display(),
                found(&sg)
            ));
        }
    }
    Err(format!("ioengine sg: fiox does not send SCSI commands yet ({})", found(&sg).replace("none", "no /dev/sgN")))
}

pub const INFO: EngineInfo = EngineInfo { preflight: Some(preflight), ..EngineInfo::base("sg", || Box::new(Refused)) };
