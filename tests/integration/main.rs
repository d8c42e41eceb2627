//! fiox's integration tests: one test binary (one link step), one module per area. Tests run the
//! real `fiox` binary; differential tests also run the real fio 3.33.

mod ceph;
mod ceph_more;
mod cli;
mod differential;
mod dists;
mod docs;
mod engines_more;
mod examples;
mod faults;
mod files2;
mod host;
mod intended;
mod lab;
mod live;
mod logz;
mod metrics;
mod multihost;
mod multihost_secure;
mod multihost_timing;
mod nbd_faults;
mod netns;
mod objstore;
mod offload;
mod profiles;
mod repeat;
mod replay;
mod runner;
mod seeds;
mod snapshots;
mod steady;
mod surface;
mod util;
mod verify;
mod verify_faults;
