//! One file per engine, named as in fio.

pub mod falloc;
pub mod filemeta;
pub mod ftruncate;
pub mod io_uring;
pub mod libaio;
pub mod mmap;
pub mod null;
pub mod posixaio;
pub mod sync;
