//! fio's device engines and zoned I/O, run by fio 3.33 and fiox on the same emulated devices in
//! a qemu guest the tests boot (`guest.rs`). Each test boots one guest for a batch of runs.

mod guest;
mod nvme;
mod nvme_pi;
mod pmem;
mod rdma;
mod sg;
mod zbd;
