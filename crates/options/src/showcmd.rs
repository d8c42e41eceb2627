//! `--showcmd`: turns each job file into the equivalent command line, one line per file, in
//! fio's exact layout (apart from the program name):
//!
//! - each `[global]` section prints all global options so far, without `--name=global`
//!   (command-line defaults count as the first file's global options);
//! - each job prints `--name=JOB` and its own options as typed;
//! - every word is followed by a space, so lines end with one.

use crate::argv::CommandLine;
use crate::jobfile::{JobFile, RawOpt};

pub fn render(program: &str, cl: &CommandLine, files: &[JobFile]) -> String {
    let cli_globals: Vec<&RawOpt> =
        cl.sections.iter().filter(|s| s.is_global()).flat_map(|s| s.options.iter()).collect();
    let mut out = String::new();
    for (i, f) in files.iter().enumerate() {
        out.push_str(program);
        out.push(' ');
        // Command-line defaults belong to the first file's global options: they are printed
        // wherever that file has a [global] section, and not at all for later files.
        let mut chain: Vec<&RawOpt> = Vec::new();
        if i == 0 {
            chain.extend(fio_order(&cli_globals));
        }
        for s in &f.sections {
            let own: Vec<&RawOpt> = s.options.iter().collect();
            if s.is_global() {
                chain.extend(fio_order(&own));
                for o in &chain {
                    push_opt(&mut out, o);
                }
            } else {
                out.push_str("--name=");
                out.push_str(&s.name);
                out.push(' ');
                for o in fio_order(&own) {
                    push_opt(&mut out, o);
                }
            }
        }
        out.push('\n');
    }
    out
}

/// fio handles a few options before the others (the units ones, since they change how other
/// values read) and the file names last; `--showcmd` shows that order. The sort is stable.
fn fio_order<'a>(opts: &[&'a RawOpt]) -> Vec<&'a RawOpt> {
    let rank = |o: &RawOpt| match o.def.name {
        "kb_base" | "unit_base" | "lockfile" | "cpus_allowed_policy" => 0,
        "filename" | "filename_format" => 2,
        _ => 1,
    };
    let mut v = opts.to_vec();
    v.sort_by_key(|o| rank(o));
    v
}

fn push_opt(out: &mut String, o: &RawOpt) {
    out.push_str("--");
    out.push_str(o.def.name);
    if let Some(v) = &o.value {
        out.push('=');
        // Only `description` is quoted, and without escaping, as fio does.
        if o.def.name == "description" {
            out.push('"');
            out.push_str(v);
            out.push('"');
        } else {
            out.push_str(v);
        }
    }
    out.push(' ');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{argv, jobfile};
    use std::path::Path;

    #[test]
    fn canonical_names_order_and_quoting() {
        let f = jobfile::parse_text(
            "[global]\ndescription=hello \"q\"\n[my job]\nfilename=a b\nblocksize=8k\nkb_base=1000\niodepth= 2\n",
            Path::new("q.fio"),
            &|_| None,
        )
        .unwrap();
        let cl = argv::parse(Vec::<String>::new()).unwrap();
        assert_eq!(
            render("fio", &cl, &[f]),
            "fio --description=\"hello \"q\"\" --name=my job --kb_base=1000 --bs=8k --iodepth= 2 --filename=a b \n"
        );
    }

    #[test]
    fn cli_defaults_without_global_section() {
        let f = jobfile::parse_text("[x]\nrw=read\n[global]\nbs=8k\n[y]\n", Path::new("n.fio"), &|_| None).unwrap();
        let cl = argv::parse(["--bs=1k"]).unwrap();
        assert_eq!(render("fio", &cl, &[f]), "fio --name=x --rw=read --bs=1k --bs=8k --name=y \n");
    }

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
            render("fio", &cl, &[f.clone(), f]),
            "fio --bs=4k --ioengine=libaio --direct=1 --group_reporting --name=job --runtime=10 \
             --bs=4k --ioengine=libaio --direct=1 --group_reporting --bs=8k --name=job2 --stonewall \n\
             fio --ioengine=libaio --direct=1 --group_reporting --name=job --runtime=10 \
             --ioengine=libaio --direct=1 --group_reporting --bs=8k --name=job2 --stonewall \n"
        );
    }
}
