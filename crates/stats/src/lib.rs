//! fiox-stats
