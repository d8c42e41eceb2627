//! fiox-report
