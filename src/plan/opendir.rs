//! `opendir=DIR`: every regular file under a directory, recursively, joins a job's files.
//!
//! Measured against fio 3.33 (docs/fio-observed/files2.md): the walk follows the directory's
//! own order (what `readdir` returns, not sorted), descends into a subdirectory where it
//! appears in that order, keeps dotfiles, skips `.`/`..` and anything that is not a regular
//! file (symbolic links included, without following them), and names each file
//! `DIR + "/" + name`, so `opendir=D/` gives `D//a` as in fio's write_iolog.

use anyhow::{Context, Result};

/// The regular files under `dir`, in fio's order and with fio's names.
pub fn files_under(dir: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    walk(dir, &mut out)?;
    Ok(out)
}

fn walk(dir: &str, out: &mut Vec<String>) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("opendir={dir}: cannot read the directory"))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("opendir={dir}: cannot read the directory"))?;
        let name = entry.file_name();
        let path = format!("{dir}/{}", name.to_string_lossy());
        // file_type() does not follow symbolic links (fio uses lstat), so links are skipped.
        let kind = entry.file_type().with_context(|| format!("opendir: cannot stat '{path}'"))?;
        if kind.is_dir() {
            walk(&path, out)?;
        } else if kind.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recursive_regular_files_only() {
        let base = std::env::temp_dir().join(format!("fiox-opendir-{}", std::process::id()));
        let d = base.to_string_lossy().to_string();
        std::fs::create_dir_all(base.join("sub")).unwrap();
        std::fs::write(base.join("a"), b"x").unwrap();
        std::fs::write(base.join(".dot"), b"x").unwrap();
        std::fs::write(base.join("sub/c"), b"x").unwrap();
        std::os::unix::fs::symlink(base.join("a"), base.join("link")).unwrap();
        let mut got = files_under(&d).unwrap();
        got.sort();
        assert_eq!(got, vec![format!("{d}/.dot"), format!("{d}/a"), format!("{d}/sub/c")]);
        assert!(files_under(&format!("{d}/nope")).unwrap_err().to_string().contains("opendir="));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
