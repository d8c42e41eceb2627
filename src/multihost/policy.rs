//! What a server lets a coordinator's jobs do to its machine, checked on the planned job at
//! Prepare, before any file is laid out and before any I/O:
//! - `--allow-path=GLOB[,GLOB...]`: every file and device a job opens (its `filename`s, the
//!   names made under `directory` or by `filename_format`, `opendir`'s files, a replayed
//!   trace's files) and every log it writes must match a pattern or lie under a match. Paths
//!   are compared after resolving symbolic links, so a link cannot lead a job outside.
//!   Without the switch, a server reached over a socket allows its working directory's
//!   subtree only: a job that may write any path as the server's user could overwrite
//!   `~/.ssh/authorized_keys` with `buffer_pattern`, which is a command run by another name.
//!   Under ssh or `--rsh` (`--server=stdio`) the user could run the same job on the host
//!   directly, so the default there is a local run's: anything.
//! - `--allow-destructive`: writing to a device that is mounted or holds a file system or
//!   partition table needs the server's consent as well as the job's `allow_mounted_write=1`
//!   (a local run's guard, `crate::plan::device`). Under ssh or `--rsh` the job's option suffices.
//! - `--readonly`: any job that writes (write, trim and mixed modes, a file to lay out,
//!   `unlink`, engines that change files whatever the direction) is refused.

use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Result};

use crate::plan::Plan;

/// The server's rules, from its own command line.
#[derive(Clone, Debug)]
pub(crate) struct Rules {
    /// `None`: any path.
    paths: Option<Vec<Rule>>,
    /// As the user wrote it (or the default), for messages.
    paths_text: String,
    readonly: bool,
    destructive: bool,
}

/// One pattern, absolute, its literal leading directories resolved like the paths it is
/// matched against.
#[derive(Clone, Debug)]
struct Rule {
    pattern: String,
}

impl Rules {
    /// `allow_path` as given (relative patterns are under `cwd`); `stdio`: the server was
    /// started by ssh or `--rsh`, whose user could run the job locally.
    pub fn new(
        allow_path: &[String],
        readonly: bool,
        allow_destructive: bool,
        stdio: bool,
        cwd: &Path,
    ) -> Result<Rules> {
        let (paths, paths_text) = if !allow_path.is_empty() {
            let mut rules = Vec::new();
            for p in allow_path {
                check_pattern(p).map_err(|e| anyhow::anyhow!("--allow-path={p}: {e}"))?;
                let abs =
                    if p.starts_with('/') { p.clone() } else { format!("{}/{p}", escape(&cwd.to_string_lossy())) };
                rules.push(Rule { pattern: resolve_literal_prefix(&abs) });
            }
            (Some(rules), allow_path.join(","))
        } else if stdio {
            (None, String::new())
        } else {
            let dir = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
            let text = dir.to_string_lossy().into_owned();
            (
                Some(vec![Rule { pattern: escape(&text) }]),
                format!("{text} (the default: the server's working directory)"),
            )
        };
        Ok(Rules { paths, paths_text, readonly, destructive: allow_destructive || stdio })
    }

    /// Whether a job may open `path` (relative paths are the server's working directory's).
    pub fn allows(&self, path: &Path) -> bool {
        let Some(rules) = &self.paths else { return true };
        let real = resolve(path);
        let text = real.to_string_lossy();
        // The path or any directory above it.
        let mut candidates = vec![text.to_string()];
        let mut p = real.as_path();
        while let Some(parent) = p.parent() {
            candidates.push(parent.to_string_lossy().into_owned());
            p = parent;
        }
        rules.iter().any(|r| candidates.iter().any(|c| glob(r.pattern.as_bytes(), c.as_bytes())))
    }

    /// The paths a job names outright (`filename`, `opendir`, `read_iolog` and its redirect),
    /// checked before planning, which already opens some (a device's size, a directory's
    /// listing, the trace). [`Rules::check`] then checks every name the plan made.
    pub fn precheck(&self, set: &fiox_options::JobSet) -> Result<()> {
        if self.paths.is_none() {
            return Ok(());
        }
        for job in &set.jobs {
            let s = &job.spec;
            let local = fiox_engine::find(s.ioengine).is_some_and(|e| !e.diskless && !e.no_io && e.remote.is_none());
            let mut named: Vec<(&str, PathBuf)> = Vec::new();
            if local {
                let dirs = s.directory.as_deref().map(crate::plan::split_filenames).unwrap_or_default();
                let names = s.filename.as_deref().map(crate::plan::split_filenames).unwrap_or_default();
                for (i, n) in names.iter().enumerate() {
                    let p = match dirs.get(i % dirs.len().max(1)) {
                        Some(d) if Path::new(n).is_relative() => Path::new(d).join(n),
                        _ => PathBuf::from(n),
                    };
                    named.push(("filename", p));
                }
                named.extend(s.opendir.iter().map(|d| ("opendir", PathBuf::from(d))));
            }
            if let Some(r) = &s.replay {
                named.extend(r.paths.iter().map(|p| ("read_iolog", PathBuf::from(p))));
                named.extend(r.redirect.iter().map(|p| ("replay_redirect", PathBuf::from(p))));
            }
            if let Some((opt, p)) = named.iter().find(|(_, p)| !self.allows(p)) {
                bail!(self.outside(&s.name, opt, p));
            }
        }
        Ok(())
    }

    /// Refuses what this server does not allow in a planned job; the error names the job, the
    /// option and the path.
    pub fn check(&self, plan: &Plan) -> Result<()> {
        for w in &plan.workers {
            let s = &w.spec;
            let writes = s.rw.writes() || s.rw.trims();
            if self.readonly {
                if writes {
                    bail!("job '{}': rw={} writes, and this server is read-only (--readonly)", s.name, s.rw.name());
                }
                if w.engine.writes_any_direction
                    || matches!(w.engine.name, "filecreate" | "filedelete" | "ftruncate" | "e4defrag")
                {
                    bail!(
                        "job '{}': ioengine={} changes files, and this server is read-only (--readonly)",
                        s.name,
                        w.engine.name
                    );
                }
                if s.unlink || s.unlink_each_loop {
                    bail!("job '{}': unlink=1 deletes its files, and this server is read-only (--readonly)", s.name);
                }
                for f in &w.files {
                    let have = std::fs::metadata(&f.path).map(|m| m.len()).ok();
                    if !f.block_device
                        && f.layout_size > 0
                        && have.is_none_or(|n| n < f.layout_size)
                        && !w.engine.creates_files
                    {
                        bail!(
                            "job '{}': '{}' would be laid out (written) first ({} bytes needed), and this server is read-only (--readonly)",
                            s.name,
                            f.path.display(),
                            f.layout_size
                        );
                    }
                }
            }
            let local = !w.engine.diskless && !w.engine.no_io && w.engine.remote.is_none();
            if local {
                for f in &w.files {
                    if !self.allows(&f.path) {
                        bail!(self.outside(&s.name, file_option(s), &f.path));
                    }
                }
            }
            let logs = [
                ("write_iolog", &s.write_iolog),
                ("write_bw_log", &s.write_bw_log),
                ("write_lat_log", &s.write_lat_log),
                ("write_iops_log", &s.write_iops_log),
                ("write_hist_log", &s.write_hist_log),
                ("write_intended_lat_log", &s.write_intended_lat_log),
            ];
            for (opt, p) in logs {
                if let Some(p) = p.as_deref().filter(|p| !p.is_empty()) {
                    if !self.allows(Path::new(p)) {
                        bail!(self.outside(&s.name, opt, Path::new(p)));
                    }
                }
            }
            if writes && !self.destructive && local {
                for f in w.files.iter().filter(|f| f.block_device) {
                    if let Some(why) = crate::plan::device::in_use(&f.path)? {
                        bail!(
                            "job '{}': refusing to write to '{}': {why}; the job's allow_mounted_write=1 is not enough on a server, which must consent too (start it with --allow-destructive)",
                            s.name,
                            f.path.display()
                        );
                    }
                }
            }
        }
        Ok(())
    }

    fn outside(&self, job: &str, option: &str, path: &Path) -> String {
        let real = resolve(path);
        let shown =
            if real == path { path.display().to_string() } else { format!("{} ({})", path.display(), real.display()) };
        format!(
            "job '{job}': {option}: '{shown}' is outside this server's --allow-path={}; refused before any I/O",
            self.paths_text
        )
    }
}

/// The option a job's file name comes from, for messages.
fn file_option(s: &fiox_options::JobSpec) -> &'static str {
    if s.replay.is_some() {
        "read_iolog"
    } else if !s.opendir.is_empty() {
        "opendir"
    } else if s.filename.is_some() {
        "filename"
    } else if s.directory.is_some() {
        "directory"
    } else {
        "filename_format"
    }
}

/// `path` made absolute and free of symbolic links: the longest part that exists is
/// resolved by the kernel, the rest (not there yet) is taken as written, `..` applied.
fn resolve(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")).join(path)
    };
    let mut head = abs.clone();
    let mut tail: Vec<std::ffi::OsString> = Vec::new();
    let real = loop {
        if let Ok(r) = std::fs::canonicalize(&head) {
            break r;
        }
        match (head.file_name().map(|n| n.to_os_string()), head.parent()) {
            (Some(n), Some(p)) => {
                tail.push(n);
                head = p.to_path_buf();
            }
            _ => break head,
        }
    };
    let mut out = real;
    for part in tail.iter().rev() {
        for c in Path::new(part).components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::Normal(n) => out.push(n),
                _ => {}
            }
        }
    }
    // `..` and `.` left in the part that exists were resolved by canonicalize; any in the
    // tail by the loop above (file_name() skips a trailing `..`, so normalise once more).
    let mut clean = PathBuf::from("/");
    for c in out.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::Normal(n) => clean.push(n),
            _ => {}
        }
    }
    clean
}

/// A pattern's leading directories without wildcards resolved as paths are (`/tmp` may be a
/// link), so that a pattern and the paths it names compare alike.
fn resolve_literal_prefix(pattern: &str) -> String {
    let parts: Vec<&str> = pattern.split('/').collect();
    let literal = parts.iter().take_while(|p| !p.contains(['*', '?', '[', '\\'])).count();
    if literal <= 1 {
        return pattern.to_string();
    }
    let prefix = parts[..literal].join("/");
    let real = resolve(Path::new(&prefix));
    let mut out = escape(&real.to_string_lossy());
    for p in &parts[literal..] {
        out.push('/');
        out.push_str(p);
    }
    out
}

/// A literal path as a pattern.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Refuses a pattern that cannot mean what it looks like: an unclosed `[`, an empty set, a
/// trailing `\`.
fn check_pattern(p: &str) -> std::result::Result<(), String> {
    let b = p.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if i + 1 == b.len() => return Err("a '\\' at the end escapes nothing".into()),
            b'\\' => i += 2,
            b'[' => {
                let end = set_end(b, i).ok_or("a '[' without its ']'")?;
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// Where the set starting at `b[i] == '['` ends (its `]`): a `]` first in the set (after an
/// optional `!`) is a member.
fn set_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    if b.get(j) == Some(&b'!') {
        j += 1;
    }
    if b.get(j) == Some(&b']') {
        j += 1;
    }
    while j < b.len() {
        if b[j] == b']' {
            return Some(j);
        }
        j += 1;
    }
    None
}

/// Shell-style matching of a whole path: `*` and `?` stop at `/`, `**` crosses it, `[a-z]`
/// and `[!a-z]` are sets, `\` quotes the next character.
fn glob(p: &[u8], s: &[u8]) -> bool {
    if p.is_empty() {
        return s.is_empty();
    }
    match p[0] {
        b'*' if p.get(1) == Some(&b'*') => {
            let rest = &p[2..];
            (0..=s.len()).any(|k| glob(rest, &s[k..]))
        }
        b'*' => {
            let rest = &p[1..];
            let mut k = 0;
            loop {
                if glob(rest, &s[k..]) {
                    return true;
                }
                if k == s.len() || s[k] == b'/' {
                    return false;
                }
                k += 1;
            }
        }
        b'?' => !s.is_empty() && s[0] != b'/' && glob(&p[1..], &s[1..]),
        b'[' => {
            let Some(end) = set_end(p, 0) else { return false };
            let Some(&c) = s.first() else { return false };
            if c == b'/' {
                return false;
            }
            let mut set = &p[1..end];
            let negate = set.first() == Some(&b'!');
            if negate {
                set = &set[1..];
            }
            let mut hit = false;
            let mut j = 0;
            while j < set.len() {
                if j + 2 < set.len() && set[j + 1] == b'-' {
                    hit |= set[j] <= c && c <= set[j + 2];
                    j += 3;
                } else {
                    hit |= set[j] == c;
                    j += 1;
                }
            }
            hit != negate && glob(&p[end + 1..], &s[1..])
        }
        b'\\' if p.len() > 1 => !s.is_empty() && s[0] == p[1] && glob(&p[2..], &s[1..]),
        c => !s.is_empty() && s[0] == c && glob(&p[1..], &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let m = |p: &str, s: &str| glob(p.as_bytes(), s.as_bytes());
        assert!(m("/dev/loop*", "/dev/loop0"));
        assert!(!m("/dev/loop*", "/dev/loop0/x"));
        assert!(m("/scratch/**/x", "/scratch/a/b/x"));
        assert!(m("/dev/nvme[0-3]n1", "/dev/nvme2n1"));
        assert!(!m("/dev/nvme[!0-3]n1", "/dev/nvme2n1"));
        assert!(m("/a?c", "/abc"));
        assert!(!m("/a?c", "/a/c"));
        assert!(m("/a\\*", "/a*"));
        assert!(!m("/a\\*", "/ab"));
        assert!(m("/d/[]]", "/d/]"));
        assert!(check_pattern("/dev/[ab").is_err());
        assert!(check_pattern("/x\\").is_err());
        assert!(check_pattern("/d/[]]").is_ok());
    }

    #[test]
    fn paths_under_a_match_and_links_resolved() {
        let dir = std::env::temp_dir().join(format!("fiox-policy-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("ok/sub")).unwrap();
        let _ = std::os::unix::fs::symlink("/etc/passwd", dir.join("ok/link"));
        let r = Rules::new(&[format!("{}/ok", dir.display())], false, false, false, Path::new("/")).unwrap();
        assert!(r.allows(&dir.join("ok/sub/new-file")));
        assert!(r.allows(&dir.join("ok")));
        assert!(!r.allows(&dir.join("ok/link")), "a link out of the allowed tree");
        assert!(!r.allows(&dir.join("ok/../other")));
        assert!(!r.allows(Path::new("/etc/passwd")));
        let stdio = Rules::new(&[], false, false, true, Path::new("/")).unwrap();
        assert!(stdio.allows(Path::new("/etc/passwd")));
        let default = Rules::new(&[], false, false, false, &dir.join("ok")).unwrap();
        assert!(default.allows(&dir.join("ok/sub")));
        assert!(!default.allows(&dir));
        assert!(Rules::new(&["/x/[".into()], false, false, false, Path::new("/")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
