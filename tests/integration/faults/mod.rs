//! Faults made for real: local ones (blkio throttling, signals, full and shrinking file systems;
//! `local`), disks with planted errors and stalls served by nbdkit (`nbd`), verification under
//! those faults (`verify`), and fiox's intended latency across a stall (`intended`).

mod intended;
pub(crate) mod local;
pub(crate) mod nbd;
mod verify;
