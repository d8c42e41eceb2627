//! The command lines of `plot` and `compare`: options written `--name VALUE` or `--name=VALUE`,
//! mixed with the results to read.

use anyhow::{Context, Result};

/// Walks a subcommand's arguments in order.
pub struct Args<'a> {
    args: &'a [String],
    next: usize,
    command: &'static str,
}

impl<'a> Args<'a> {
    pub fn new(command: &'static str, args: &'a [String]) -> Args<'a> {
        Args { args, next: 0, command }
    }

    /// The next argument as typed.
    pub fn next_arg(&mut self) -> Option<&'a str> {
        let a = self.args.get(self.next)?;
        self.next += 1;
        Some(a)
    }

    /// If `arg` is option `name`, its value: after `=`, or the following argument.
    pub fn value(&mut self, arg: &str, name: &str) -> Result<Option<String>> {
        if let Some(v) = arg.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')) {
            return Ok(Some(v.to_string()));
        }
        if arg != name {
            return Ok(None);
        }
        let v = self.next_arg().with_context(|| format!("{}: {name} needs a value", self.command))?;
        Ok(Some(v.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_and_a_missing_value() {
        let args: Vec<String> = ["--out=a", "x.json", "--out", "b", "--out"].map(String::from).to_vec();
        let mut it = Args::new("plot", &args);
        let mut seen = Vec::new();
        while let Some(a) = it.next_arg() {
            match it.value(a, "--out") {
                Ok(Some(v)) => seen.push(format!("out={v}")),
                Ok(None) => seen.push(a.to_string()),
                Err(e) => seen.push(format!("error: {e}")),
            }
        }
        assert_eq!(seen, ["out=a", "x.json", "out=b", "error: plot: --out needs a value"]);
        let mut it = Args::new("plot", &args);
        assert_eq!(it.value("--output=z", "--out").unwrap(), None);
    }
}
