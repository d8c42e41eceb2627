//! `--showcmd`: turns each job file into the equivalent command line, one line per file, in
//! fio's exact layout (apart from the program name):
//!
//! - each `[global]` section prints all global options so far (command-line defaults included),
//!   without `--name=global`;
//! - each job prints `--name=JOB` and its own options as typed;
//! - every word is followed by a space, so lines end with one.

use crate::argv::CommandLine;
use crate::jobfile::{JobFile, RawOpt};

pub fn render(program: &str, cl: &CommandLine, files: &[JobFile]) -> String {
    let cli_globals: Vec<&RawOpt> = cl.sections.iter().filter(|s| s.is_global()).flat_map(|s| s.options.iter()).collect();
    let mut out = String::new();
    for f in files {
        out.push_str(program);
        out.push(' ');
        let mut chain = cli_globals.clone();
        for s in &f.sections {
            if s.is_global() {
                chain.extend(s.options.iter());
                for o in &chain {
                    push_opt(&mut out, o);
                }
            } else {
                out.push_str("--name=");
                out.push_str(&s.name);
                out.push(' ');
                for o in &s.options {
                    push_opt(&mut out, o);
                }
            }
        }
        out.push('\n');
    }
    out
}

fn push_opt(out: &mut String, o: &RawOpt) {
    out.push_str("--");
    out.push_str(&o.typed);
    if let Some(v) = &o.value {
        out.push('=');
        out.push_str(v);
    }
    out.push(' ');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{argv, jobfile};
    use std::path::Path;

    #[test]
    fn accumulates_globals_like_fio() {
        let f = jobfile::parse_text(
            "[global]\nioengine=libaio # c\ndirect=1\ngroup_reporting\n[job]\nruntime=10\n[global]\nbs=8k\n[job2]\nstonewall\n",
            Path::new("a.fio"),
            &|_| None,
        )
        .unwrap();
        let cl = argv::parse(["--bs=4k"]).unwrap();
        assert_eq!(
            render("fio", &cl, &[f]),
            "fio --bs=4k --ioengine=libaio --direct=1 --group_reporting --name=job --runtime=10 \
             --bs=4k --ioengine=libaio --direct=1 --group_reporting --bs=8k --name=job2 --stonewall \n"
        );
    }
}
