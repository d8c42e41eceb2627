//! The man page and the shell completions: the checked-in files are what the option table makes
//! today, the page renders through man(1) without a warning from groff or mandoc, and each
//! completion script, loaded into the real shell, completes options, values, engines,
//! subcommands and files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{fiox, scratch};

const REGENERATE: &str = "cargo run -- man > docs/fiox.1 && \
     for s in bash zsh fish; do cargo run -- completions $s > completions/fiox.$s; done \
     (or FIOX_BLESS=1 cargo test --test integration docs::)";

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A program the tests need; scripts/test.sh installs them all.
fn tool(name: &str) -> &str {
    let found = Command::new("sh").args(["-c", &format!("command -v {name}")]).output().unwrap().status.success();
    assert!(found, "{name} is not installed: run the tests with scripts/test.sh, which installs it");
    name
}

/// The generated files, as `fiox` makes them now.
fn generated() -> Vec<(&'static str, String)> {
    let dir = scratch();
    let mut v = Vec::new();
    let man = fiox(dir.path(), &["man"]);
    assert_eq!((man.code, man.stderr.as_str()), (0, ""), "fiox man failed");
    v.push(("docs/fiox.1", man.stdout));
    for (shell, file) in
        [("bash", "completions/fiox.bash"), ("zsh", "completions/fiox.zsh"), ("fish", "completions/fiox.fish")]
    {
        let out = fiox(dir.path(), &["completions", shell]);
        assert_eq!((out.code, out.stderr.as_str()), (0, ""), "fiox completions {shell} failed");
        v.push((file, out.stdout));
    }
    v
}

#[test]
fn checked_in_files_are_what_the_table_makes() {
    let bless = std::env::var_os("FIOX_BLESS").is_some();
    let mut stale = Vec::new();
    for (rel, text) in generated() {
        let path = repo(rel);
        if bless {
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(rel);
        }
    }
    assert!(stale.is_empty(), "{} differ from what the option table makes; regenerate: {REGENERATE}", stale.join(", "));
}

#[test]
fn bad_arguments_are_refused() {
    let dir = scratch();
    let out = fiox(dir.path(), &["completions", "tcsh"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr, "fiox: completions: unknown shell 'tcsh'; use bash, zsh or fish\n");
    assert!(out.stdout.is_empty());
    let out = fiox(dir.path(), &["completions"]);
    assert_eq!((out.code, out.stderr.as_str()), (1, "fiox: completions: give one shell: bash, zsh or fish\n"));
    let out = fiox(dir.path(), &["man", "extra"]);
    assert_eq!((out.code, out.stderr.as_str()), (1, "fiox: man: takes no arguments (fiox man > fiox.1)\n"));
    // fiox's own --help names both.
    let help = fiox(dir.path(), &["--help"]).stdout;
    assert!(help.contains("fiox man ") && help.contains("fiox completions bash|zsh|fish"), "{help}");
}

/// The options `--cmdhelp` lists, by name.
fn option_names() -> Vec<String> {
    let dir = scratch();
    let list = fiox(dir.path(), &["--cmdhelp"]).stdout;
    list.lines()
        .filter(|l| l.starts_with("  "))
        .filter_map(|l| l.split(':').next())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// The words `--cmdhelp=NAME` lists under "valid values".
fn valid_values(name: &str) -> BTreeSet<String> {
    let dir = scratch();
    let text = fiox(dir.path(), &[&format!("--cmdhelp={name}")]).stdout;
    let after = &text[text.find("valid values:").expect("a choice option")..];
    after.lines().skip(1).filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect()
}

#[test]
fn man_page_renders_without_warnings() {
    let page = repo("docs/fiox.1");
    let page = page.to_str().unwrap();
    // groff: every warning category on, no output.
    let groff = Command::new(tool("groff")).args(["-ww", "-man", "-z", page]).output().unwrap();
    assert!(groff.status.success() && groff.stderr.is_empty(), "groff: {}", String::from_utf8_lossy(&groff.stderr));
    // mandoc: nothing at warning level or above (style remarks, like long source lines, allowed).
    let mandoc = Command::new(tool("mandoc")).args(["-T", "lint", "-W", "warning", page]).output().unwrap();
    assert!(
        mandoc.status.success() && mandoc.stdout.is_empty() && mandoc.stderr.is_empty(),
        "mandoc: {}{}",
        String::from_utf8_lossy(&mandoc.stdout),
        String::from_utf8_lossy(&mandoc.stderr)
    );
    // man itself, as a reader would open it.
    tool("man");
    tool("col");
    let shown = Command::new("sh")
        .args(["-c", "MANWIDTH=80 man -l \"$1\" | col -b", "sh", page])
        .env("LC_ALL", "C.UTF-8")
        .env("MANPAGER", "cat")
        // man-db's seccomp sandbox fails in some containers; the page is ours.
        .env("MAN_DISABLE_SECCOMP", "1")
        .output()
        .unwrap();
    let text = String::from_utf8(shown.stdout).unwrap();
    assert!(shown.status.success() && shown.stderr.is_empty(), "man: {}", String::from_utf8_lossy(&shown.stderr));
    for section in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "GLOBAL SWITCHES",
        "SUBCOMMANDS",
        "OPTIONS",
        "ENGINES",
        "DIFFERENCES FROM FIO",
        "EXIT STATUS",
        "SEE ALSO",
    ] {
        assert!(text.lines().any(|l| l == section), "no {section} section");
    }
    assert!(text.contains("fiox - a fio-compatible storage I/O benchmark"));
    assert!(text.contains("fio(1)"));
    // Every option, under its long form, with an ASCII hyphen (copied as typed).
    let names = option_names();
    assert!(names.len() > 250, "{} options", names.len());
    for n in &names {
        assert!(text.contains(&format!("--{n}")), "--{n} is not on the page");
    }
    // A choice option's values with their help, its default and its alias.
    let lockfile = &text[text.find("--lockfile=value").unwrap()..][..600];
    assert!(lockfile.contains("Default: none.") && lockfile.contains("exclusive"), "{lockfile}");
    let rw = &text[text.find("--rw=value").unwrap()..][..400];
    assert!(
        rw.contains("randtrimwrite") && rw.contains("Aliases: readwrite.") && rw.contains("Default: read."),
        "{rw}"
    );
    // Every engine, and the subcommands with their usage lines.
    let engines = &text[text.find("\nENGINES\n").unwrap()..text.find("\nDIFFERENCES FROM FIO\n").unwrap()];
    for e in valid_values("ioengine") {
        assert!(engines.lines().any(|l| l.trim_start().starts_with(&e)), "engine {e} is not under ENGINES");
    }
    for usage in ["usage: fiox quick [DIR]", "usage: fiox sweep --vary", "usage: fiox plot", "usage: fiox compare A B"]
    {
        assert!(text.contains(usage), "no '{usage}'");
    }
    // The README's differences, reflowed.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Fractional times mean what they say (runtime=1.5s is 1.5 s; fio truncates to 1 s)."),
        "{flat}"
    );
}

/// The checked-in script for `shell`, and a scratch folder with a job file and a folder in it.
fn setup() -> tempfile::TempDir {
    let dir = scratch();
    std::fs::write(dir.path().join("job1.fio"), "[j]\nrw=read\n").unwrap();
    std::fs::create_dir(dir.path().join("dirA")).unwrap();
    dir
}

fn set(words: &[&str]) -> BTreeSet<String> {
    words.iter().map(|s| s.to_string()).collect()
}

/// Completes each line (the cursor at its end) in a real bash with the script loaded: the
/// completion function bash registered for fiox is called as bash calls it, with COMP_LINE,
/// COMP_POINT, COMP_WORDS (split at COMP_WORDBREAKS, as readline does) and COMP_CWORD.
fn bash_complete(dir: &Path, lines: &[&str], wordbreaks: Option<&str>) -> Vec<BTreeSet<String>> {
    let driver = r#"
set -u
source "$1"
shift
[[ -n ${BREAKS-} ]] && COMP_WORDBREAKS=$BREAKS
spec=$(complete -p fiox)
fn=${spec#*-F }
fn=${fn%% *}
for line in "$@"; do
    COMP_LINE=$line
    COMP_POINT=${#line}
    # readline's split: blanks separate words, and each COMP_WORDBREAKS character is a word of its own.
    COMP_WORDS=()
    w=
    for ((i = 0; i < ${#line}; i++)); do
        c=${line:i:1}
        if [[ $c == [[:space:]] ]]; then
            [[ -n $w ]] && COMP_WORDS+=("$w")
            w=
        elif [[ $COMP_WORDBREAKS == *"$c"* && $c != '"' && $c != "'" ]]; then
            [[ -n $w ]] && COMP_WORDS+=("$w")
            COMP_WORDS+=("$c")
            w=
        else
            w+=$c
        fi
    done
    COMP_WORDS+=("$w")
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMPREPLY=()
    "$fn" fiox "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]-}"
    printf '%s\n' "${COMPREPLY[@]}" "@@END@@"
done
"#;
    let script = repo("completions/fiox.bash");
    let mut cmd = Command::new(tool("bash"));
    cmd.args(["--norc", "--noprofile", "-c", driver, "bash"]).arg(&script).args(lines).current_dir(dir);
    if let Some(b) = wordbreaks {
        cmd.env("BREAKS", b);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "bash: {stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut replies: Vec<BTreeSet<String>> = vec![BTreeSet::new()];
    for l in stdout.lines() {
        if l == "@@END@@" {
            replies.push(BTreeSet::new());
        } else if !l.is_empty() {
            replies.last_mut().unwrap().insert(l.to_string());
        }
    }
    replies.pop();
    assert_eq!(replies.len(), lines.len(), "{stdout}");
    replies
}

#[test]
fn bash_completes_options_values_engines_subcommands_and_files() {
    let dir = setup();
    let engines = valid_values("ioengine");
    let cases: &[(&str, &[&str])] = &[
        ("fiox --rw=randr", &["randread", "randrw"]),
        ("fiox --ioengine=io_", &["io_uring", "io_uring_cmd"]),
        ("fiox swe", &["sweep"]),
        ("fiox -iodepth_l", &["-iodepth_low="]),
        ("fiox --time_b", &["--time_based"]),
        ("fiox --rw randw", &["randwrite"]),
        ("fiox -rw=randw", &["randwrite"]),
        ("fiox --direct=", &["0", "1"]),
        ("fiox --output-format=j", &["json", "json+"]),
        ("fiox --filename=job", &["job1.fio"]),
        ("fiox job", &["job1.fio"]),
        ("fiox --cmdhelp=iodepth_l", &["iodepth_low"]),
        ("fiox quick --ioengine=libai", &["libaio"]),
        ("fiox quick di", &["dirA"]),
        ("fiox quick --s", &["--size="]),
        ("fiox sweep --vary rw=randw", &["randwrite"]),
        ("fiox sweep --out di", &["dirA"]),
        ("fiox sweep --fin", &["--find-knee"]),
        ("fiox sweep --vary numj", &["numjobs="]),
        ("fiox sweep --iodepth_l", &["--iodepth_low="]),
        ("fiox plot --t", &["--title"]),
        ("fiox compare --fail", &["--fail-if-slower"]),
        ("fiox completions z", &["zsh"]),
        ("fiox man ", &[]),
        ("fiox rados -p bench bench 10 write --no-c", &["--no-cleanup"]),
        ("fiox rados --format json-", &["json-pretty"]),
        ("fiox rados cl", &["cleanup"]),
        ("fiox rbd bench --io-type r", &["read", "readwrite", "rw"]),
        ("fiox rbd bench --io-p", &["--io-pattern"]),
        ("fiox ceph --fio", &["--fio-numjobs"]),
    ];
    let mut lines: Vec<&str> = cases.iter().map(|c| c.0).collect();
    lines.extend(["fiox --iod", "fiox --ioengine=", "fiox ", "fiox --enghelp="]);
    let got = bash_complete(dir.path(), &lines, None);
    for ((line, want), got) in cases.iter().zip(&got) {
        assert_eq!(got, &set(want), "bash: {line}");
    }
    let n = cases.len();
    assert!(got[n].contains("--iodepth=") && got[n].contains("--iodepth_batch="), "{:?}", got[n]);
    assert!(got[n].iter().all(|c| c.starts_with("--iod") && c.ends_with('=')), "{:?}", got[n]);
    assert_eq!(got[n + 1], engines, "every engine after --ioengine=");
    for w in ["quick", "sweep", "plot", "compare", "man", "completions", "job1.fio", "dirA"] {
        assert!(got[n + 2].contains(w), "first word: {w} missing from {:?}", got[n + 2]);
    }
    assert_eq!(got[n + 3], engines, "every engine after --enghelp=");

    // Without '=' among the word breaks bash completes the whole word, name included.
    let got = bash_complete(dir.path(), &["fiox --rw=randr", "fiox sweep --vary rw=randw"], Some(" \t\n\"'><;|&(:"));
    assert_eq!(got[0], set(&["--rw=randread", "--rw=randrw"]));
    assert_eq!(got[1], set(&["rw=randwrite"]));
}

/// Completes each line in a real interactive zsh (in a pseudo-terminal, through zsh/zpty) with
/// compinit and the script loaded, by typing the line and a Tab; `compadd` is wrapped to record
/// the matches zsh accepted (`-O`, after its own prefix matching) before adding them as usual.
fn zsh_complete(dir: &Path, lines: &[&str]) -> Vec<BTreeSet<String>> {
    // The prompt is typed as "<re""ady>" so that its echo does not look like the prompt; each
    // step waits for the prompt, so zle (in raw mode) is reading when the next keys arrive.
    let driver = r#"
zmodload zsh/zpty || exit 3
script=$1 log=$2
shift 2
zpty z zsh -f -i
zpty -w z 'PS1="<re""ady>" RPS1=""; autoload -U compinit; compinit -u -D'
zpty -w z "source ${(q)script} 2>>${(q)log}.err"
zpty -w z "compadd() { local -a m; builtin compadd -O m \"\$@\"; print -rl -- \${^m} >> ${(q)log}; builtin compadd \"\$@\"; }"
zpty -w z "print -r -- @@DONE\$(( 0 * 1 ))@@"
zpty -r -m z out "*@@DONE0@@*<ready>*" || exit 4
i=0
for line in "$@"; do
    (( i++ ))
    # The line and a Tab, then clear it and mark the end of its matches.
    zpty -w -n z "$line"$'\t\C-e\C-u'
    zpty -w z "print -r -- @@END@@ >> ${(q)log}; print -r -- @@DONE\$(( $i * 1 ))@@"
    zpty -r -m z out "*@@DONE$i@@*<ready>*" || exit 4
done
zpty -d z
"#;
    let log = dir.join("zsh-matches.log");
    let out = Command::new(tool("timeout"))
        .args(["60", tool("zsh"), "-f", "-c", driver, "zsh"])
        .arg(repo("completions/fiox.zsh"))
        .arg(&log)
        .args(lines)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "zsh driver failed: {}", String::from_utf8_lossy(&out.stderr));
    let err = std::fs::read_to_string(dir.join("zsh-matches.log.err")).unwrap_or_default();
    assert!(err.is_empty(), "sourcing the zsh script: {err}");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut replies: Vec<BTreeSet<String>> = vec![BTreeSet::new()];
    for l in text.lines() {
        if l == "@@END@@" {
            replies.push(BTreeSet::new());
        } else if !l.is_empty() {
            replies.last_mut().unwrap().insert(l.to_string());
        }
    }
    replies.pop();
    assert_eq!(replies.len(), lines.len(), "{text}");
    replies
}

#[test]
fn zsh_completes_options_values_engines_subcommands_and_files() {
    let dir = setup();
    // zsh keeps what precedes the completed part (the dashes, `--rw=`) out of the matches.
    let cases: &[(&str, &[&str])] = &[
        ("fiox --rw=randr", &["randread", "randrw"]),
        ("fiox --ioengine=io_", &["io_uring", "io_uring_cmd"]),
        ("fiox swe", &["sweep"]),
        ("fiox -iodepth_l", &["iodepth_low="]),
        ("fiox --time_b", &["time_based"]),
        ("fiox --rw randw", &["randwrite"]),
        ("fiox --filename=job", &["job1.fio"]),
        ("fiox quick --ioengine=libai", &["libaio"]),
        ("fiox sweep --vary rw=randw", &["randwrite"]),
        ("fiox sweep --fin", &["--find-knee"]),
        ("fiox completions z", &["zsh"]),
    ];
    let mut lines: Vec<&str> = cases.iter().map(|c| c.0).collect();
    lines.push("fiox --iod");
    let got = zsh_complete(dir.path(), &lines);
    for ((line, want), got) in cases.iter().zip(&got) {
        assert_eq!(got, &set(want), "zsh: {line}");
    }
    let iod = &got[cases.len()];
    assert!(iod.contains("iodepth=") && iod.contains("iodepth_batch="), "{iod:?}");
}

fn fish_complete(dir: &Path, line: &str) -> BTreeSet<String> {
    let script = repo("completions/fiox.fish");
    let out = Command::new(tool("fish"))
        .args(["--no-config", "-c", "source $argv[1]; and complete -C $argv[2]"])
        .arg(&script)
        .arg(line)
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "fish: {stderr}");
    // Each line is a candidate, a tab, then its description.
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.split('\t').next().unwrap().to_string()).collect()
}

#[test]
fn fish_completes_options_values_engines_subcommands_and_files() {
    let dir = setup();
    let cases: &[(&str, &[&str])] = &[
        ("fiox --rw=randr", &["--rw=randread", "--rw=randrw"]),
        ("fiox --ioengine=io_", &["--ioengine=io_uring", "--ioengine=io_uring_cmd"]),
        ("fiox swe", &["sweep"]),
        ("fiox --time_b", &["--time_based"]),
        ("fiox --filename=job", &["--filename=job1.fio"]),
        ("fiox quick --ioengine=libai", &["--ioengine=libaio"]),
        ("fiox completions z", &["zsh"]),
        ("fiox sweep --vary numj", &["numjobs="]),
    ];
    for (line, want) in cases {
        assert_eq!(fish_complete(dir.path(), line), set(want), "fish: {line}");
    }
    let iod = fish_complete(dir.path(), "fiox --iod");
    assert!(iod.contains("--iodepth") && iod.contains("--iodepth_low"), "{iod:?}");
    // Every engine, described.
    let engines: BTreeSet<String> = fish_complete(dir.path(), "fiox --ioengine=")
        .iter()
        .map(|c| c.trim_start_matches("--ioengine=").to_string())
        .collect();
    assert_eq!(engines, valid_values("ioengine"));
}

/// What an interactive bash (readline in a pseudo-terminal, driven through zsh's zpty) leaves on
/// the command line after each line and a Tab: a key bound with `bind -x` prints
/// `READLINE_LINE`, so trailing spaces (or their absence after `=`) are seen as typed.
fn bash_at_the_prompt(dir: &Path, lines: &[&str]) -> Vec<String> {
    let rc = dir.join("bashrc");
    let script = repo("completions/fiox.bash");
    std::fs::write(
        &rc,
        format!(
            "PS1='<ready>'\nsource '{}'\nbind -x '\"\\C-t\": printf \"@@%s@@\\n\" \"$READLINE_LINE\"'\n",
            script.display()
        ),
    )
    .unwrap();
    let driver = r#"
zmodload zsh/zpty || exit 3
rc=$1
shift
zpty b bash --rcfile $rc --noprofile -i
zpty -r -m b out '*<ready>*' || exit 4
for line in "$@"; do
    zpty -w -n b "$line"$'\t\C-t'
    zpty -r -m b out '*@@*@@*' || exit 4
    out=${out#*@@}
    print -r -- "[${out%%@@*}]"
    zpty -w -n b $'\C-e\C-u'
done
zpty -d b
"#;
    let out = Command::new(tool("timeout"))
        .args(["60", tool("zsh"), "-f", "-c", driver, "zsh"])
        .arg(&rc)
        .args(lines)
        .current_dir(dir)
        .env_remove("TERM")
        .output()
        .unwrap();
    assert!(out.status.success(), "bash at the prompt: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let got: Vec<String> = text.lines().map(|l| l.trim_start_matches('[').trim_end_matches(']').to_string()).collect();
    assert_eq!(got.len(), lines.len(), "{text}");
    got
}

#[test]
fn bash_inserts_completions_at_the_prompt() {
    let dir = setup();
    let cases = [
        // An option that takes a value: no space after '='.
        ("fiox --iodepth_lo", "fiox --iodepth_low="),
        ("fiox --rw=randw", "fiox --rw=randwrite "),
        ("fiox --rw=randr", "fiox --rw=randr"),
        ("fiox sw", "fiox sweep "),
        ("fiox --time_ba", "fiox --time_based "),
        ("fiox --filename=job", "fiox --filename=job1.fio "),
        ("fiox quick --ioengine=libai", "fiox quick --ioengine=libaio "),
        ("fiox sweep --vary numj", "fiox sweep --vary numjobs="),
    ];
    let lines: Vec<&str> = cases.iter().map(|c| c.0).collect();
    for ((line, want), got) in cases.iter().zip(bash_at_the_prompt(dir.path(), &lines)) {
        assert_eq!(&got, want, "bash: {line} and a Tab");
    }
}
