//! fiox's Ceph subcommands: `fiox rados` (Ceph's `rados bench` and `cleanup`), `fiox rbd`
//! (Ceph's `rbd bench`), both with the same command line and output as Ceph's tools, and `fiox
//! ceph` (the object, block and fio layers measured on one cluster, one table). What fiox adds
//! to the two benches (histograms, a fio-layout JSON report) is `bench_report`'s.
//!
//! The order is one-way: `run` (runs the other two as child processes) → `rados_bench`,
//! `rbd_bench` → `bench_loop` (what their loops share) → `bench_report`. Nothing here uses the fio pipeline: the engines' Ceph clients
//! (`fiox_engine::{PoolClient, ImageClient}`) do the I/O.

pub mod args;
pub mod bench_loop;
pub mod bench_report;
pub mod rados_bench;
pub mod rbd_bench;
pub mod run;
