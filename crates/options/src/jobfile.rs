//! Job files: INI-like sections as fio reads them.
//!
//! - `[global]` sections (any number) hold defaults for the jobs after them in the same file.
//! - Any other `[name]` section is a job.
//! - `#` and `;` start a comment anywhere on a line, so `ioengine=libaio # 异步IO` works.
//! - `include FILE` reads another file in place (relative to the including file's folder).
//! - `${VAR}` is replaced by the environment variable's value.
//!
//! This module reads files but does nothing else with the outside world.

use std::path::{Path, PathBuf};

use crate::error::{Error, Origin, Result};
use crate::table::{self, OptDef};

/// One option as the user wrote it.
#[derive(Debug, Clone)]
pub struct RawOpt {
    pub def: &'static OptDef,
    /// The name as typed (it may be an alias), kept for the JSON echo and `--showcmd`.
    pub typed: String,
    /// `None` for a flag written without `=`.
    pub value: Option<String>,
    pub origin: Origin,
    /// Inherited from a `[global]` section (fio lets a global option for another engine pass
    /// silently in a job that uses a different one).
    pub global: bool,
}

/// One `[section]` (or one `--name=` on the command line).
#[derive(Debug, Clone)]
pub struct Section {
    pub name: String,
    pub options: Vec<RawOpt>,
    pub origin: Origin,
}

impl Section {
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// The sections of one job file, in order.
#[derive(Debug, Clone)]
pub struct JobFile {
    pub path: PathBuf,
    pub sections: Vec<Section>,
}

/// Environment lookup, passed in so tests can be deterministic.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Reads and parses a job file (`-` is standard input).
pub fn read(path: &Path, env: Env<'_>) -> Result<JobFile> {
    let mut sections = Vec::new();
    read_into(path, env, &mut sections, 0, None)?;
    Ok(JobFile { path: path.to_path_buf(), sections })
}

fn read_bytes(path: &Path, included_from: Option<&Origin>) -> Result<Vec<u8>> {
    let read_err = |error| Error::Read { path: path.to_path_buf(), error, included_from: included_from.cloned() };
    if path == Path::new("-") {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).map_err(read_err)?;
        Ok(buf)
    } else {
        std::fs::read(path).map_err(read_err)
    }
}

fn read_into(
    path: &Path,
    env: Env<'_>,
    sections: &mut Vec<Section>,
    depth: usize,
    included_from: Option<&Origin>,
) -> Result<()> {
    let bytes = read_bytes(path, included_from)?;
    let text = decode(&bytes, path)?;
    parse_str(&text, path, env, sections, depth)
}

/// Job-file bytes as text. fio reads bytes, so a file written in Latin-1 (or any 8-bit code
/// page) runs there; fiox reads such bytes where they cannot change what runs: in a comment
/// (dropped) and in `description=` (each byte read as the Latin-1 character it stands for).
/// Anywhere else (an option name or value, a section name, a file name) a byte that is not
/// UTF-8 is refused with its file, line and column, since fiox could not say which name it means.
fn decode(bytes: &[u8], path: &Path) -> Result<String> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(bytes.len());
    for (idx, raw) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        if let Ok(line) = std::str::from_utf8(raw) {
            out.push_str(line);
            continue;
        }
        let cut = raw.iter().position(|b| matches!(b, b'#' | b';')).unwrap_or(raw.len());
        let (body, comment) = raw.split_at(cut);
        let body = match std::str::from_utf8(body) {
            Ok(body) => body.to_string(),
            Err(_) if is_description(body) => body.iter().map(|&b| b as char).collect(),
            Err(e) => {
                let at = e.valid_up_to();
                return Err(Error::Syntax {
                    origin: Origin::File { path: path.to_path_buf(), line: idx + 1 },
                    message: format!(
                        "byte 0x{:02x} at column {} is not UTF-8 text; fiox reads other bytes only in comments and description=",
                        body[at],
                        at + 1
                    ),
                });
            }
        };
        out.push_str(&body);
        if !comment.is_empty() {
            // The comment's text does not matter, only that it is one.
            out.push('#');
            if comment.ends_with(b"\n") {
                out.push('\n');
            }
        }
    }
    Ok(out)
}

fn is_description(line: &[u8]) -> bool {
    let key = line.split(|&b| b == b'=').next().unwrap_or_default();
    line.contains(&b'=') && key.trim_ascii() == b"description"
}

/// Parses job-file text; `path` is used for messages and for resolving `include`.
pub fn parse_text(text: &str, path: &Path, env: Env<'_>) -> Result<JobFile> {
    let mut sections = Vec::new();
    parse_str(text, path, env, &mut sections, 0)?;
    Ok(JobFile { path: path.to_path_buf(), sections })
}

fn parse_str(text: &str, path: &Path, env: Env<'_>, sections: &mut Vec<Section>, depth: usize) -> Result<()> {
    for (idx, raw_line) in text.lines().enumerate() {
        let origin = Origin::File { path: path.to_path_buf(), line: idx + 1 };
        let line = strip_comment(raw_line);
        let (line, empty_var) = expand_env(line, env, &origin)?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .ok_or_else(|| Error::Syntax {
                    origin: origin.clone(),
                    message: format!("section header '{line}' has no closing ']'"),
                })?
                .trim();
            if name.is_empty() {
                return Err(Error::Syntax { origin, message: "section header '[]' has no name".into() });
            }
            sections.push(Section { name: name.to_string(), options: Vec::new(), origin });
            continue;
        }
        if let Some(inc) = line.strip_prefix("include").filter(|r| r.starts_with(char::is_whitespace)) {
            if depth >= 16 {
                return Err(Error::Syntax { origin, message: "include nested more than 16 deep (a loop?)".into() });
            }
            let inc = Path::new(inc.trim());
            let target = if inc.is_relative() {
                path.parent().map(|p| p.join(inc)).unwrap_or_else(|| inc.to_path_buf())
            } else {
                inc.to_path_buf()
            };
            read_into(&target, env, sections, depth + 1, Some(&origin))?;
            continue;
        }
        let (key, value) = match line.split_once('=') {
            // fio keeps spaces after '=' in the raw value (`--showcmd` prints `iodepth= 2`);
            // value parsing trims them.
            Some((k, v)) => (k.trim(), Some(v.to_string())),
            None => (line, None),
        };
        let Some(section) = sections.last_mut() else {
            return Err(Error::Syntax {
                origin,
                message: format!("option '{key}' comes before any [section]; put it under [global] or a job"),
            });
        };
        let opt = raw_opt(key, value, origin)?;
        if let (Some(var), Some("")) = (&empty_var, opt.value.as_deref().map(str::trim)) {
            // A number, size, time or word cannot be empty; say which variable left it so
            // (fio only says "failed parsing").
            if !matches!(opt.def.kind, table::Kind::Str) {
                return Err(Error::Syntax {
                    origin: opt.origin,
                    message: format!(
                        "option '{key}' is empty because environment variable '{var}' is empty; {key} takes {}",
                        opt.def.forms()
                    ),
                });
            }
        }
        section.options.push(opt);
    }
    Ok(())
}

/// Looks an option up and checks that a value is present where one is needed.
pub(crate) fn raw_opt(key: &str, value: Option<String>, origin: Origin) -> Result<RawOpt> {
    let def = table::lookup(key).ok_or_else(|| Error::UnknownOption {
        name: key.to_string(),
        origin: origin.clone(),
        suggestions: table::suggest(key),
    })?;
    if value.is_none() && !matches!(def.kind, table::Kind::Flag | table::Kind::Bool) && !def.bare_job_name {
        return Err(Error::MissingValue { option: key.to_string(), origin, forms: def.forms() });
    }
    Ok(RawOpt { def, typed: key.to_string(), value, origin, global: false })
}

/// Cuts a line at the first `#` or `;`, as fio does.
fn strip_comment(line: &str) -> &str {
    match line.find(['#', ';']) {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Replaces `${VAR}` with the variable's value. An unset variable is an error naming it; fio
/// would silently substitute nothing, which has sent many benchmarks to the wrong device.
/// Also returns the last variable that was set but empty, for the message if the value it
/// leaves is empty.
fn expand_env(line: &str, env: Env<'_>, origin: &Origin) -> Result<(String, Option<String>)> {
    if !line.contains("${") {
        return Ok((line.to_string(), None));
    }
    let mut empty = None;
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| Error::Syntax {
            origin: origin.clone(),
            message: format!("'${{' without a closing '}}' in '{line}'"),
        })?;
        let var = &after[..end];
        match env(var) {
            Some(v) if v.is_empty() => empty = Some(var.to_string()),
            Some(v) => out.push_str(&v),
            None => {
                return Err(Error::Syntax {
                    origin: origin.clone(),
                    message: format!("environment variable '{var}' is not set"),
                })
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok((out, empty))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<JobFile> {
        parse_text(text, Path::new("t.fio"), &|v| (v == "DEV").then(|| "/dev/loop7".to_string()))
    }

    #[test]
    fn sections_comments_and_flags() {
        let f = parse(
            "; leading comment\n[global]\nioengine=libaio # 异步IO\ndirect=1 ; why\ngroup_reporting\n\n[job]\nruntime=10 # 本次测试runtime\n",
        )
        .unwrap();
        assert_eq!(f.sections.len(), 2);
        assert!(f.sections[0].is_global());
        let g = &f.sections[0].options;
        assert_eq!(g[0].value.as_deref(), Some("libaio"));
        assert_eq!(g[1].value.as_deref(), Some("1"));
        assert_eq!(g[2].def.name, "group_reporting");
        assert_eq!(g[2].value, None);
        assert_eq!(f.sections[1].options[0].value.as_deref(), Some("10"));
        assert_eq!(f.sections[1].options[0].origin, Origin::File { path: "t.fio".into(), line: 8 });
    }

    #[test]
    fn env_expansion() {
        let f = parse("[j]\nfilename=${DEV}\n").unwrap();
        assert_eq!(f.sections[0].options[0].value.as_deref(), Some("/dev/loop7"));
        let e = parse("[j]\nfilename=${NOPE}\n").unwrap_err().to_string();
        assert!(e.contains("'NOPE' is not set") && e.contains("line 2"), "{e}");
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse("[j]\nblocksize2=4k\n").unwrap_err().to_string();
        assert_eq!(e, "unknown option 'blocksize2' (t.fio, line 2); did you mean 'blocksize'?");
        let e = parse("bs=4k\n[j]\n").unwrap_err().to_string();
        assert!(e.contains("before any [section]"), "{e}");
        assert!(parse("[j\n").is_err());
        assert!(parse("[]\n").is_err());
        let e = parse("[j]\nbs\n").unwrap_err().to_string();
        assert!(e.contains("option 'bs' needs a value"), "{e}");
    }

    #[test]
    fn include_reads_relative_file() {
        let dir = std::env::temp_dir().join(format!("fiox-inc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("common.fio"), "[global]\nbs=8k\n").unwrap();
        std::fs::write(dir.join("main.fio"), "include common.fio\n[j]\nrw=read\n").unwrap();
        let f = read(&dir.join("main.fio"), &|_| None).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(f.sections.len(), 2);
        assert_eq!(f.sections[0].options[0].value.as_deref(), Some("8k"));
    }
}
