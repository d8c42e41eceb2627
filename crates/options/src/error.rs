//! Parse errors. Every message names what was wrong (option, value), where it came from (command
//! line, or file and line) and, where it helps, what would have been accepted. Messages start
//! lower-case and have no trailing period; `main` adds the `fiox: ` prefix once.

use std::fmt;
use std::path::PathBuf;

/// Where an option or section came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    CommandLine,
    File { path: PathBuf, line: usize },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::CommandLine => write!(f, "command line"),
            Origin::File { path, line } => write!(f, "{}, line {line}", path.display()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("unknown option '{name}' ({origin}){}", hint(.suggestions))]
    UnknownOption { name: String, origin: Origin, suggestions: Vec<&'static str> },

    #[error("bad value '{value}' for option '{option}' ({origin}): {reason}; {option} takes {forms}")]
    BadValue { option: String, value: String, origin: Origin, reason: String, forms: String },

    #[error("option '{option}' needs a value ({origin}); it takes {forms}")]
    MissingValue { option: String, origin: Origin, forms: String },

    #[error("option '{option}' ({origin}) is not supported yet by fiox{}", only_note(.only))]
    NotSupported { option: String, origin: Origin, only: Option<String> },

    #[error("option '{option}' ({origin}) belongs to ioengine {owners}, but job '{job}' uses ioengine={engine}")]
    WrongEngine { option: String, origin: Origin, owners: String, job: String, engine: String },

    /// The OS error is part of the message, not a `source`, so that it is said once.
    #[error("cannot read job file '{}'{}: {error}", path.display(), include_note(.included_from))]
    Read { path: PathBuf, error: std::io::Error, included_from: Option<Origin> },

    #[error("{origin}: {message}")]
    Syntax { origin: Origin, message: String },

    #[error("job '{job}': {message}")]
    Job { job: String, message: String },

    #[error("{0}")]
    Usage(String),
}

fn include_note(origin: &Option<Origin>) -> String {
    match origin {
        Some(o) => format!(" (included from {o})"),
        None => String::new(),
    }
}

fn hint(suggestions: &[&str]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        let quoted: Vec<String> = suggestions.iter().map(|s| format!("'{s}'")).collect();
        format!("; did you mean {}?", quoted.join(" or "))
    }
}

fn only_note(only: &Option<String>) -> String {
    match only {
        Some(values) => format!(" with this value (accepted now: {values})"),
        None => String::new(),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
