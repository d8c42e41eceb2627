//! fio's triggers (`--trigger-file`, `--trigger-timeout`, `--trigger`): at a set time, or when
//! a file appears, every job stops (its verify state saved, as at any end) and a command runs.
//! Used for power-cut tests: the command cuts the device's power, a later run verifies with
//! `verify_state_load` (or fiox's `verify_journal`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

struct Trigger {
    at: Option<Instant>,
    file: Option<PathBuf>,
}

static TRIGGER: OnceLock<Trigger> = OnceLock::new();
static FIRED: AtomicBool = AtomicBool::new(false);

/// Arms the trigger for this run: after `timeout`, or when `file` exists.
pub fn arm(timeout: Option<Duration>, file: Option<PathBuf>) {
    if timeout.is_some() || file.is_some() {
        let _ = TRIGGER.set(Trigger { at: timeout.map(|t| Instant::now() + t), file });
    }
}

/// Whether the trigger fires now (checked by the runner while the jobs run); it fires once.
pub fn check() -> bool {
    let Some(t) = TRIGGER.get() else { return false };
    if FIRED.load(Ordering::Relaxed) {
        return false;
    }
    let due = t.at.is_some_and(|at| Instant::now() >= at) || t.file.as_ref().is_some_and(|f| f.exists());
    if due {
        FIRED.store(true, Ordering::Relaxed);
    }
    due
}

/// Whether the trigger fired during the run.
pub fn fired() -> bool {
    FIRED.load(Ordering::Relaxed)
}
