//! One file per engine, named as in fio.

pub mod io_uring;
pub mod libaio;
pub mod null;
pub mod sync;
