//! fiox's integration tests: one test binary (one link step), one module per area, areas with
//! several files in folders. Tests run the real `fiox` binary; differential tests also run the
//! real fio 3.33. Helpers every area uses live in `util/`; an area's own helpers live in its
//! folder's `mod.rs`.

mod ceph;
mod cli;
mod conformance;
mod devices;
mod differential;
mod docs;
mod engines;
mod examples;
mod faults;
mod fio_tests;
mod lab;
mod multihost;
mod netengines;
mod objstore;
mod options;
mod profiles;
mod runner;
mod seeds;
mod snapshots;
mod tidy;
mod util;
mod verify;
