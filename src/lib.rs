//! fiox
