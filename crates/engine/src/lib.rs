//! fiox-engine
