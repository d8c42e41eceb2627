//! Shell completions for bash, zsh and fish, generated from the option table and the switch
//! table: option names (`--iodepth=`), the words a choice option takes (`--rw=randr`), every
//! engine fio 3.33 names, file names for options that name files, and the subcommands with
//! their flags (given by the binary, which owns them). Pure: the scripts are returned as text.
//!
//! The three scripts share one model ([`Model`]); only the shells' syntax differs. Their
//! behaviour is tested by the integration tests, which drive real shells with them.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::argv::{Arg, SWITCHES};
use crate::manpage::choices;
use crate::table::{self, Support};

/// The shells fiox writes completions for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl Shell {
    pub const ALL: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

    pub fn name(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
        }
    }

    pub fn parse(s: &str) -> Option<Shell> {
        Shell::ALL.into_iter().find(|sh| sh.name() == s)
    }
}

/// What a value completes to.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Free text: nothing to offer.
    Text,
    File,
    Dir,
    Words(Vec<String>),
    /// `OPTION=VALUE` (sweep's `--vary`): option names, then that option's values.
    OptionAssign,
}

/// A subcommand's flag.
#[derive(Debug, Clone)]
pub struct Flag {
    /// With its dashes: `--out`.
    pub name: String,
    /// `None` for a flag without a value.
    pub value: Option<Value>,
    /// Whether the value is attached with `=` (`quick --size=1g`) rather than the next word.
    pub attached: bool,
    pub help: String,
}

/// What a subcommand takes besides its flags.
#[derive(Debug, Clone, PartialEq)]
pub enum Operands {
    /// fio's options and job files, as fiox itself takes them (`sweep`'s base job).
    Fio,
    Files,
    Dirs,
    Words(Vec<String>),
    Nothing,
}

/// A subcommand, as the binary describes it.
#[derive(Debug, Clone)]
pub struct Subcommand {
    pub name: String,
    pub summary: String,
    pub flags: Vec<Flag>,
    pub operands: Operands,
}

/// Job options whose value names a file (or a prefix of files' names).
const PATH_OPTIONS: &[&str] = &[
    "filename",
    "directory",
    "opendir",
    "read_iolog",
    "write_iolog",
    "verify_journal",
    "replay_redirect",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "donorname",
    "program",
];

/// One name fio's command line accepts: a job option (or its alias) or a global switch.
struct Name {
    name: &'static str,
    takes_value: bool,
    help: &'static str,
    value: Value,
}

/// Everything the scripts complete, from the tables.
struct Model<'a> {
    /// Job options and aliases the runner honours (a "not supported yet" option is left out: it
    /// can only be set to its default).
    options: Vec<Name>,
    switches: Vec<Name>,
    /// Switches whose value must be attached (`--cmdhelp=bs`): the next word is not theirs.
    optional: Vec<&'static str>,
    subcommands: &'a [Subcommand],
}

fn words(v: &[&str]) -> Value {
    Value::Words(v.iter().map(|s| s.to_string()).collect())
}

impl<'a> Model<'a> {
    fn new(subcommands: &'a [Subcommand]) -> Self {
        let mut options = Vec::new();
        for o in table::all().filter(|o| o.support != Support::NotYet) {
            let value = if PATH_OPTIONS.contains(&o.name) {
                Value::File
            } else {
                let c = choices(o);
                if c.is_empty() {
                    Value::Text
                } else {
                    Value::Words(c.iter().map(|(w, _)| w.to_string()).collect())
                }
            };
            for name in std::iter::once(o.name).chain(o.aliases.iter().copied()) {
                options.push(Name { name, takes_value: !o.takes_no_value(), help: o.help, value: value.clone() });
            }
        }
        let engines: Vec<&'static str> =
            choices(table::lookup("ioengine").expect("ioengine is an option")).into_iter().map(|(w, _)| w).collect();
        let option_names: Vec<&str> = std::iter::once("all").chain(options.iter().map(|o| o.name)).collect();
        // A switch that is also a job option (`readonly`, a flag either way) is offered once.
        let switches = SWITCHES
            .iter()
            .filter(|s| s.supported && table::lookup(s.name).is_none())
            .map(|s| Name {
                name: s.name,
                takes_value: s.arg != Arg::None,
                help: s.help,
                value: match s.name {
                    _ if s.file => Value::File,
                    _ if !s.words.is_empty() => words(s.words),
                    "cmdhelp" => words(&option_names),
                    "enghelp" => words(&engines),
                    _ => Value::Text,
                },
            })
            .collect();
        let optional = SWITCHES.iter().filter(|s| s.supported && s.arg == Arg::Optional).map(|s| s.name).collect();
        Model { options, switches, optional, subcommands }
    }

    fn names(&self) -> impl Iterator<Item = &Name> {
        self.options.iter().chain(&self.switches)
    }

    /// Names grouped by what their value completes to, in a stable order, for `case` arms.
    fn by_value(&self) -> Vec<(String, Vec<&'static str>)> {
        let mut groups: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
        for n in self.names().filter(|n| n.takes_value) {
            let key = match &n.value {
                Value::Text | Value::OptionAssign => continue,
                Value::File => "@file".to_string(),
                Value::Dir => "@dir".to_string(),
                Value::Words(w) => w.join(" "),
            };
            groups.entry(key).or_default().push(n.name);
        }
        groups.into_iter().collect()
    }
}

/// The script for `shell`.
pub fn render(shell: Shell, subcommands: &[Subcommand]) -> String {
    let m = Model::new(subcommands);
    match shell {
        Shell::Bash => bash(&m),
        Shell::Zsh => zsh(&m),
        Shell::Fish => fish(&m),
    }
}

fn header(out: &mut String, shell: Shell) {
    let _ = writeln!(
        out,
        "# {} completion for fiox: subcommands, fio's options and their values, engines, job files.\n\
         # Generated by `fiox completions {}` from fiox's option table; do not edit.",
        shell.name(),
        shell.name()
    );
}

/// A word list as one single-quoted shell word (the words hold no quotes, but be safe).
fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A subcommand flag's value as the bash and zsh functions name it.
fn value_token(v: &Value) -> String {
    match v {
        Value::Text => "@text".into(),
        Value::File => "@file".into(),
        Value::Dir => "@dir".into(),
        Value::OptionAssign => "@option".into(),
        Value::Words(w) => w.join(" "),
    }
}

fn operands_token(o: &Operands) -> String {
    match o {
        Operands::Fio => "@fio".into(),
        Operands::Files => "@file".into(),
        Operands::Dirs => "@dir".into(),
        Operands::Words(w) => w.join(" "),
        Operands::Nothing => String::new(),
    }
}

/// The case arms shared by the bash and zsh scripts (their `case` syntax is the same): the
/// value of each option and switch, each subcommand's flags, their values and operands.
fn case_functions(out: &mut String, m: &Model, var: &str) {
    out.push_str("\n# The words an option's or switch's value may be; @file for a file name.\n");
    let _ = writeln!(out, "_fiox_values() {{\n    case $1 in");
    for (value, names) in m.by_value() {
        let _ = writeln!(out, "        ({}) {var}={} ;;", names.join("|"), sq(&value));
    }
    let _ = writeln!(out, "        (*) {var}= ;;\n    esac\n}}");

    out.push_str("\n# A subcommand's flags (NAME= when the value is attached), the values of its flags, and\n# what comes after them (@fio: fio's options and job files).\n");
    let _ = writeln!(out, "_fiox_sub_flags() {{\n    case $1 in");
    for s in m.subcommands {
        let flags: Vec<String> = s
            .flags
            .iter()
            .map(|f| if f.attached && f.value.is_some() { format!("{}=", f.name) } else { f.name.clone() })
            .collect();
        let _ = writeln!(out, "        ({}) {var}={} ;;", s.name, sq(&flags.join(" ")));
    }
    let _ = writeln!(out, "        (*) {var}= ;;\n    esac\n}}");
    let _ = writeln!(out, "_fiox_sub_values() {{\n    case $1:$2 in");
    for s in m.subcommands {
        for f in &s.flags {
            if let Some(v) = f.value.as_ref().map(value_token) {
                let eq = if f.attached { "=" } else { "" };
                let _ = writeln!(out, "        ({}:{}{eq}) {var}={} ;;", s.name, f.name, sq(&v));
            }
        }
    }
    let _ = writeln!(out, "        (*) {var}= ;;\n    esac\n}}");
    let _ = writeln!(out, "_fiox_sub_operands() {{\n    case $1 in");
    for s in m.subcommands {
        let _ = writeln!(out, "        ({}) {var}={} ;;", s.name, sq(&operands_token(&s.operands)));
    }
    let _ = writeln!(out, "        (*) {var}= ;;\n    esac\n}}");
}

fn bash(m: &Model) -> String {
    let mut out = String::new();
    header(&mut out, Shell::Bash);
    out.push_str("# Install: fiox completions bash > ~/.local/share/bash-completion/completions/fiox\n");
    let spell = |n: &Name| if n.takes_value { format!("{}=", n.name) } else { n.name.to_string() };
    out.push_str("\n# Job options and global switches: NAME= when they take a value, NAME for a flag.\n");
    let _ = writeln!(out, "_fiox_options={}", sq(&m.options.iter().map(spell).collect::<Vec<_>>().join(" ")));
    let _ = writeln!(out, "_fiox_switches={}", sq(&m.switches.iter().map(spell).collect::<Vec<_>>().join(" ")));
    let _ = writeln!(out, "_fiox_optional={}", sq(&m.optional.join(" ")));
    let subs: Vec<&str> = m.subcommands.iter().map(|s| s.name.as_str()).collect();
    let _ = writeln!(out, "_fiox_subcommands={}", sq(&subs.join(" ")));
    case_functions(&mut out, m, "_fiox_w");
    out.push_str(BASH_BODY);
    out
}

/// The bash functions that do the completing; the data above them comes from the tables.
const BASH_BODY: &str = r#"
# Adds the words of $1 (or files, directories) that start with $2 to COMPREPLY, each after $3.
_fiox_reply() {
    local c
    local -a found=()
    case $1 in
        @file) compopt -o filenames 2>/dev/null; mapfile -t found < <(compgen -f -- "$2") ;;
        @dir) compopt -o filenames 2>/dev/null; mapfile -t found < <(compgen -d -- "$2") ;;
        @text) ;;
        *) mapfile -t found < <(compgen -W "$1" -- "$2") ;;
    esac
    for c in "${found[@]}"; do COMPREPLY+=("$3$c"); done
}

# Completes the value in NAME=VALUE ($1) with the words $2. When '=' breaks words (bash's
# default), bash replaces only the text after it, so the candidates are bare values.
_fiox_assigned() {
    local lead=${1%%=*}=
    [[ $COMP_WORDBREAKS == *=* ]] && lead=
    _fiox_reply "$2" "${1#*=}" "$lead"
}

# No space after a single candidate that still needs its value.
_fiox_nospace() {
    if (( ${#COMPREPLY[@]} == 1 )) && [[ ${COMPREPLY[0]} == *= ]]; then
        compopt -o nospace 2>/dev/null
    fi
}

# fio's arguments: options (--name=, -name=), their values, switches, job files.
_fiox_fio() {
    local word=$1 prev=$2 name dash
    if [[ $word == -*=* ]]; then
        name=${word%%=*}
        name=${name#-}
        name=${name#-}
        _fiox_values "$name"
        _fiox_assigned "$word" "$_fiox_w"
    elif [[ $word == -* ]]; then
        dash=-
        [[ $word == --* ]] && dash=--
        _fiox_reply "$_fiox_options $_fiox_switches" "${word#"$dash"}" "$dash"
    else
        name=${prev#-}
        name=${name#-}
        if [[ $prev == -* && $prev != *=* && " $_fiox_options $_fiox_switches " == *" $name= "* &&
            " $_fiox_optional " != *" $name "* ]]; then
            _fiox_values "$name"
            _fiox_reply "$_fiox_w" "$word" ""
        else
            _fiox_reply @file "$word" ""
        fi
    fi
}

_fiox() {
    local line=${COMP_LINE:0:COMP_POINT} word= prev= sub= name
    local -a toks=()
    # The words before the cursor, split on blanks only (COMP_WORDS splits at '=' too).
    read -r -a toks <<< "$line"
    if [[ $line != *[[:space:]] ]] && (( ${#toks[@]} > 0 )); then
        word=${toks[${#toks[@]}-1]}
        unset "toks[${#toks[@]}-1]"
    fi
    (( ${#toks[@]} > 1 )) && prev=${toks[${#toks[@]}-1]}
    COMPREPLY=()
    if (( ${#toks[@]} <= 1 )); then
        if [[ $word != -* ]]; then
            _fiox_reply "$_fiox_subcommands" "$word" ""
            _fiox_reply @file "$word" ""
        else
            _fiox_fio "$word" "$prev"
            _fiox_nospace
        fi
        return 0
    fi
    [[ " $_fiox_subcommands " == *" ${toks[1]} "* ]] && sub=${toks[1]}
    if [[ -n $sub ]]; then
        # A flag's value in the next word (--out DIR, --vary OPTION=VALUES).
        if [[ $prev == --* ]]; then
            _fiox_sub_values "$sub" "$prev"
            if [[ $_fiox_w == @option ]]; then
                if [[ $word == *=* ]]; then
                    _fiox_values "${word%%=*}"
                    _fiox_assigned "$word" "$_fiox_w"
                else
                    local o
                    for o in $_fiox_options; do
                        [[ $o == *= && $o == "$word"* ]] && COMPREPLY+=("$o")
                    done
                    _fiox_nospace
                fi
                return 0
            elif [[ -n $_fiox_w ]]; then
                _fiox_reply "$_fiox_w" "$word" ""
                return 0
            fi
        fi
        # A flag's value after '=' (quick --ioengine=io_).
        if [[ $word == --*=* ]]; then
            _fiox_sub_values "$sub" "${word%%=*}="
            if [[ -n $_fiox_w ]]; then
                _fiox_assigned "$word" "$_fiox_w"
                return 0
            fi
        fi
        _fiox_sub_operands "$sub"
        local operands=$_fiox_w
        if [[ $word == -* ]]; then
            _fiox_sub_flags "$sub"
            _fiox_reply "$_fiox_w" "$word" ""
            if [[ $operands != @fio ]]; then
                _fiox_nospace
                return 0
            fi
        elif [[ $operands != @fio ]]; then
            _fiox_reply "$operands" "$word" ""
            return 0
        fi
    fi
    _fiox_fio "$word" "$prev"
    _fiox_nospace
    return 0
}

complete -F _fiox fiox
"#;

fn zsh(m: &Model) -> String {
    let mut out = String::from("#compdef fiox\n");
    header(&mut out, Shell::Zsh);
    out.push_str("# Install: fiox completions zsh > \"${fpath[1]}/_fiox\" (or any directory in $fpath)\n");
    // _describe's NAME:DESCRIPTION entries; a colon in a name would need escaping, and names
    // have none.
    let entry = |n: &Name, eq: bool| sq(&format!("{}{}:{}", n.name, if eq { "=" } else { "" }, n.help));
    let list = |v: &[Name], with_value: bool| -> String {
        v.iter()
            .filter(|n| n.takes_value == with_value)
            .map(|n| entry(n, with_value))
            .collect::<Vec<_>>()
            .join(" \\\n    ")
    };
    out.push_str("\n# Job options and global switches with their help: NAME= when they take a value.\n");
    let _ = writeln!(out, "_fiox_valued=(\n    {}\n)", list(&m.options, true));
    let _ = writeln!(out, "_fiox_flags=(\n    {}\n)", list(&m.options, false));
    let _ = writeln!(out, "_fiox_switch_valued=(\n    {}\n)", list(&m.switches, true));
    let _ = writeln!(out, "_fiox_switch_flags=(\n    {}\n)", list(&m.switches, false));
    let _ = writeln!(out, "_fiox_optional=({})", m.optional.join(" "));
    let subs: Vec<String> = m.subcommands.iter().map(|s| sq(&format!("{}:{}", s.name, s.summary))).collect();
    let _ = writeln!(out, "_fiox_subcommands=(\n    {}\n)", subs.join(" \\\n    "));
    case_functions(&mut out, m, "REPLY");
    out.push_str(ZSH_BODY);
    out
}

const ZSH_BODY: &str = r#"
# Offers the words of $1 (or files, directories); further arguments go to compadd.
_fiox_add() {
    local spec=$1
    local -a w
    shift
    case $spec in
        (@file) _files "$@" ;;
        (@dir) _files -/ "$@" ;;
        (@text|'') ;;
        (*)
            w=(${=spec})
            compadd "$@" -a w
            ;;
    esac
}

# fio's arguments: options (--name=, -name=), their values, switches, job files.
_fiox_fio() {
    local prev=$1 name
    if [[ $PREFIX == -*=* ]]; then
        name=${${PREFIX%%=*}##-##}
        compset -P '*='
        _fiox_values $name
        _fiox_add "$REPLY"
    elif [[ $PREFIX == -* ]]; then
        compset -P '-##'
        _describe -t job-options 'job option' _fiox_valued -S ''
        _describe -t job-flags 'job flag' _fiox_flags
        _describe -t switches 'switch' _fiox_switch_valued -S ''
        _describe -t switches 'switch' _fiox_switch_flags
    else
        name=${prev##-##}
        if [[ $prev == -* && $prev != *=* && -z ${_fiox_optional[(r)$name]} ]] &&
            (( ${_fiox_valued[(I)$name=:*]} || ${_fiox_switch_valued[(I)$name=:*]} )); then
            _fiox_values $name
            _fiox_add "$REPLY"
        else
            _files
        fi
    fi
}

_fiox() {
    local prev= sub= operands
    (( CURRENT > 2 )) && prev=$words[CURRENT-1]
    if (( CURRENT == 2 )); then
        if [[ $PREFIX == -* ]]; then
            _fiox_fio ''
        else
            _describe -t commands 'fiox subcommand' _fiox_subcommands
            _files
        fi
        return 0
    fi
    (( ${_fiox_subcommands[(I)$words[2]:*]} )) && sub=$words[2]
    if [[ -n $sub ]]; then
        # A flag's value in the next word (--out DIR, --vary OPTION=VALUES).
        if [[ $prev == --* ]]; then
            _fiox_sub_values $sub $prev
            if [[ $REPLY == @option ]]; then
                if [[ $PREFIX == *=* ]]; then
                    local name=${PREFIX%%=*}
                    compset -P '*='
                    _fiox_values $name
                    _fiox_add "$REPLY"
                else
                    _describe -t job-options 'job option' _fiox_valued -S ''
                fi
                return 0
            elif [[ -n $REPLY ]]; then
                _fiox_add "$REPLY"
                return 0
            fi
        fi
        # A flag's value after '=' (quick --ioengine=io_).
        if [[ $PREFIX == --*=* ]]; then
            _fiox_sub_values $sub "${PREFIX%%=*}="
            if [[ -n $REPLY ]]; then
                compset -P '*='
                _fiox_add "$REPLY"
                return 0
            fi
        fi
        _fiox_sub_operands $sub
        operands=$REPLY
        if [[ $PREFIX == -* ]]; then
            _fiox_sub_flags $sub
            local -a f
            f=(${=REPLY})
            compadd -S '' -- ${(M)f:#*=}
            compadd -- ${f:#*=}
            [[ $operands == @fio ]] || return 0
        elif [[ $operands != @fio ]]; then
            _fiox_add "$operands"
            return 0
        fi
    fi
    _fiox_fio "$prev"
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _fiox "$@"
else
    compdef _fiox fiox
fi
"#;

fn fish(m: &Model) -> String {
    let mut out = String::new();
    header(&mut out, Shell::Fish);
    out.push_str("# Install: fiox completions fish > ~/.config/fish/completions/fiox.fish\n\n");
    let fio_subs: Vec<&str> =
        m.subcommands.iter().filter(|s| s.operands == Operands::Fio).map(|s| s.name.as_str()).collect();
    let other_subs: Vec<&str> =
        m.subcommands.iter().filter(|s| s.operands != Operands::Fio).map(|s| s.name.as_str()).collect();
    let _ = writeln!(
        out,
        "# fio's options apply to fiox itself and to subcommands that take a job ({}).\n\
         function __fiox_fio_args\n    not __fish_seen_subcommand_from {}\nend\n",
        fio_subs.join(", "),
        other_subs.join(" ")
    );
    for s in m.subcommands {
        let _ = writeln!(out, "complete -c fiox -n '__fish_use_subcommand' -a {} -d {}", s.name, sq(&s.summary));
    }
    let cond = "-n __fiox_fio_args";
    for n in m.names() {
        // A choice option's words come with their help, one line each.
        let described: Vec<(&str, &str)> = match table::lookup(n.name).map(|o| o.kind) {
            Some(crate::table::Kind::Choice(_)) if n.takes_value => {
                choices(table::lookup(n.name).expect("just found")).into_iter().filter(|(_, h)| !h.is_empty()).collect()
            }
            _ => Vec::new(),
        };
        let mut line = format!("complete -c fiox {cond} -l {}", n.name);
        if n.takes_value {
            match &n.value {
                Value::File => line.push_str(" -r -F"),
                Value::Dir => line.push_str(" -x -a '(__fish_complete_directories)'"),
                Value::Words(w) if described.is_empty() => {
                    let _ = write!(line, " -x -a {}", sq(&w.join(" ")));
                }
                Value::Words(_) | Value::Text | Value::OptionAssign => line.push_str(" -x"),
            }
        }
        let _ = writeln!(line, " -d {}", sq(n.help));
        out.push_str(&line);
        for (w, h) in described {
            let _ = writeln!(out, "complete -c fiox {cond} -l {} -x -a {} -d {}", n.name, sq(w), sq(h));
        }
    }
    for s in m.subcommands {
        let seen = format!("-n '__fish_seen_subcommand_from {}'", s.name);
        for f in &s.flags {
            let Some(long) = f.name.strip_prefix("--") else { continue };
            let mut line = format!("complete -c fiox {seen} -l {long}");
            match &f.value {
                None => {}
                Some(Value::File) => line.push_str(" -r -F"),
                Some(Value::Dir) => line.push_str(" -x -a '(__fish_complete_directories)'"),
                Some(Value::Words(w)) => {
                    let _ = write!(line, " -x -a {}", sq(&w.join(" ")));
                }
                // The names of options that take a value; fish adds no space after a '='.
                Some(Value::OptionAssign) => {
                    let names: Vec<String> =
                        m.options.iter().filter(|n| n.takes_value).map(|n| format!("{}=", n.name)).collect();
                    let _ = write!(line, " -x -a {}", sq(&names.join(" ")));
                }
                Some(Value::Text) => line.push_str(" -x"),
            }
            if !f.help.is_empty() {
                let _ = write!(line, " -d {}", sq(&f.help));
            }
            let _ = writeln!(out, "{line}");
        }
        match &s.operands {
            Operands::Dirs => {
                let _ = writeln!(out, "complete -c fiox {seen} -x -a '(__fish_complete_directories)'");
            }
            Operands::Words(w) => {
                let _ = writeln!(out, "complete -c fiox {seen} -x -a {}", sq(&w.join(" ")));
            }
            Operands::Nothing => {
                let _ = writeln!(out, "complete -c fiox {seen} -f");
            }
            Operands::Fio | Operands::Files => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_options_are_options() {
        for n in PATH_OPTIONS {
            assert!(table::lookup(n).is_some(), "{n} is not in the option table");
        }
    }

    /// The scripts offer a switch that is also an option (`readonly`, `profile`) as the option,
    /// so the two must be written alike: both flags, or both with a value.
    #[test]
    fn switches_named_like_options_are_written_alike() {
        for s in SWITCHES {
            if let Some(o) = table::lookup(s.name) {
                assert!(
                    (s.arg == Arg::None) == o.takes_no_value(),
                    "switch {} and the option of that name are written differently",
                    s.name
                );
            }
        }
    }

    #[test]
    fn scripts_name_the_options_and_engines() {
        for sh in Shell::ALL {
            let s = render(sh, &[]);
            assert!(s.contains("iodepth"), "{sh:?}");
            assert!(s.contains("io_uring_cmd"), "{sh:?}");
            assert!(s.contains("randtrimwrite"), "{sh:?}");
        }
    }
}
