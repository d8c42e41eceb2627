//! `--idle-prof=system|percpu|calibrate`: how idle the CPUs stayed while the jobs ran, measured
//! as fio measures it: a thread per CPU, pinned there at SCHED_IDLE priority, repeats a fixed
//! "unit of work" whenever nothing else wants the CPU; idleness is the time those units took
//! (units done times a unit's calibrated duration) over the run's time. Printed after the
//! normal report (`CPU idleness:` lines) and as the JSON document's `cpu_idleness` object.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `--idle-prof` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    System,
    PerCpu,
    Calibrate,
}

impl Mode {
    pub fn parse(v: &str) -> anyhow::Result<Mode> {
        match v {
            "system" => Ok(Mode::System),
            "percpu" => Ok(Mode::PerCpu),
            "calibrate" => Ok(Mode::Calibrate),
            _ => anyhow::bail!("--idle-prof={v}: takes system, percpu or calibrate"),
        }
    }
}

/// One unit of work: a few microseconds of arithmetic the optimiser cannot drop.
fn unit() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..2000u64 {
        x = black_box(x.rotate_left(7) ^ i).wrapping_mul(0x2545_f491_4f6c_dd1d);
    }
    black_box(x);
}

/// A unit's mean duration and standard deviation in microseconds, from timed batches on the
/// current thread.
pub fn calibrate() -> (f64, f64) {
    const BATCHES: usize = 50;
    const PER_BATCH: u32 = 20;
    let mut samples = Vec::with_capacity(BATCHES);
    for _ in 0..BATCHES {
        let t = Instant::now();
        for _ in 0..PER_BATCH {
            unit();
        }
        samples.push(t.elapsed().as_secs_f64() * 1e6 / PER_BATCH as f64);
    }
    // The fastest half: a busy machine inflates some batches, never deflates one.
    samples.sort_by(f64::total_cmp);
    samples.truncate(BATCHES / 2);
    let mean = samples.iter().sum::<f64>() / samples.len() as f64;
    let var = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (samples.len() - 1) as f64;
    (mean, var.sqrt())
}

/// The measuring threads, started before the jobs.
pub struct IdleProf {
    mode: Mode,
    unit_us: (f64, f64),
    stop: Arc<AtomicBool>,
    counts: Vec<Arc<AtomicU64>>,
    threads: Vec<std::thread::JoinHandle<()>>,
    started: Instant,
}

/// What the threads measured.
pub struct Idleness {
    pub mode: Mode,
    pub system: f64,
    pub per_cpu: Vec<f64>,
    pub unit_mean: f64,
    pub unit_stddev: f64,
}

impl IdleProf {
    pub fn start(mode: Mode) -> IdleProf {
        let unit_us = calibrate();
        let stop = Arc::new(AtomicBool::new(false));
        let cpus = fiox_options::host::configured_cpus();
        let mut counts = Vec::new();
        let mut threads = Vec::new();
        // The jobs start once every thread sits on its CPU, as in fio.
        let ready = Arc::new(AtomicU64::new(0));
        for cpu in 0..cpus {
            let count = Arc::new(AtomicU64::new(0));
            let (c, s, r) = (count.clone(), stop.clone(), ready.clone());
            let spawned = std::thread::Builder::new().name(format!("idle-prof-{cpu}")).spawn(move || {
                // A CPU this process may not use counts as busy (nothing is measured there).
                let placed =
                    fiox_engine::sys::set_affinity(&[cpu]).is_ok() && fiox_engine::sys::set_sched_idle().is_ok();
                r.fetch_add(1, Ordering::Relaxed);
                if !placed {
                    return;
                }
                while !s.load(Ordering::Relaxed) {
                    unit();
                    c.fetch_add(1, Ordering::Relaxed);
                }
            });
            if let Ok(t) = spawned {
                threads.push(t);
            }
            counts.push(count);
        }
        let wait = Instant::now();
        while ready.load(Ordering::Relaxed) < threads.len() as u64 && wait.elapsed() < Duration::from_secs(1) {
            std::thread::sleep(Duration::from_millis(1));
        }
        IdleProf { mode, unit_us, stop, counts, threads, started: Instant::now() }
    }

    pub fn finish(self) -> Idleness {
        let elapsed = self.started.elapsed().max(Duration::from_micros(1));
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
        let per_cpu: Vec<f64> = self
            .counts
            .iter()
            .map(|c| {
                let idle_us = c.load(Ordering::Relaxed) as f64 * self.unit_us.0;
                (idle_us / (elapsed.as_secs_f64() * 1e6) * 100.0).min(100.0)
            })
            .collect();
        let system = per_cpu.iter().sum::<f64>() / per_cpu.len().max(1) as f64;
        Idleness { mode: self.mode, system, per_cpu, unit_mean: self.unit_us.0, unit_stddev: self.unit_us.1 }
    }
}

/// fio's lines for `--idle-prof=calibrate`, which measures and exits.
pub fn calibrate_text() -> String {
    let (mean, sd) = calibrate();
    format!("CPU idleness:\n  unit work: mean={mean:.2}us, stddev={sd:.2}\n")
}

impl Idleness {
    /// The normal report's section (after the disk stats, a blank line before it).
    pub fn normal(&self) -> String {
        let mut s = format!("\nCPU idleness:\n  system: {:.2}%\n", self.system);
        if self.mode == Mode::PerCpu {
            let cpus: Vec<String> = self.per_cpu.iter().map(|p| format!("{p:.2}%")).collect();
            s.push_str(&format!("  percpu: {}\n", cpus.join(", ")));
        }
        s.push_str(&format!("  unit work: mean={:.2}us, stddev={:.2}\n", self.unit_mean, self.unit_stddev));
        s
    }

    /// Adds `cpu_idleness` as the last member of each JSON document in `text` (a document
    /// is a line that is just `{` through the next line that is just `}`).
    pub fn add_to_json(&self, text: &str) -> String {
        let mut members = vec![format!("    \"system\" : {:.6}", self.system)];
        if self.mode == Mode::PerCpu {
            for (i, p) in self.per_cpu.iter().enumerate() {
                members.push(format!("    \"cpu-{i}\" : {p:.6}"));
            }
        }
        members.push(format!("    \"unit_mean\" : {:.6}", self.unit_mean));
        members.push(format!("    \"unit_stddev\" : {:.6}", self.unit_stddev));
        let object = format!(",\n  \"cpu_idleness\" : {{\n{}\n  }}\n}}", members.join(",\n"));
        let mut out = String::with_capacity(text.len() + object.len());
        let mut in_doc = false;
        for line in text.split_inclusive('\n') {
            match line.trim_end_matches('\n') {
                "{" => in_doc = true,
                "}" if in_doc => {
                    in_doc = false;
                    // Replace the newline after the last member with the new member.
                    if out.ends_with('\n') {
                        out.pop();
                    }
                    out.push_str(&object);
                    out.push_str(&line[1..]);
                    continue;
                }
                _ => {}
            }
            out.push_str(line);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_gets_the_member_last() {
        let i =
            Idleness { mode: Mode::PerCpu, system: 50.0, per_cpu: vec![40.0, 60.0], unit_mean: 6.8, unit_stddev: 0.02 };
        let text = "note\n{\n  \"jobs\" : []\n}\nterse\n";
        let out = i.add_to_json(text);
        let doc: serde_json::Value = serde_json::from_str(&out[5..out.len() - 6]).unwrap();
        assert_eq!(doc["cpu_idleness"]["cpu-1"], 60.0);
        assert!(out.starts_with("note\n{") && out.ends_with("}\nterse\n"), "{out}");
    }
}
