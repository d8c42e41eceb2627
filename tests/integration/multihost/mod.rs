//! Multi-host runs: fiox servers and coordinators on loopback (`runs`), the transports' security
//! (`secure`: TLS and ssh), the start barrier and its timing (`timing`), and the network
//! namespaces the last two use as hosts (`netns`).

mod netns;
mod runs;
mod secure;
mod timing;
