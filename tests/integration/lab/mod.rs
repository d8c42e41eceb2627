//! What fiox adds around a run: `sweep`, `plot` and `compare` (`commands`), repeated runs to a
//! confidence bound (`repeat`), the live page (`live`) and the Prometheus endpoint (`metrics`).

pub(crate) mod commands;
mod live;
pub(crate) mod metrics;
mod repeat;
