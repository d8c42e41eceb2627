//! libblkio's options (fio 3.42): which libblkio driver, the device or file it opens (`path`),
//! extra properties set before connecting and before starting, the driver's ring or queue
//! size, and how requests are submitted and waited for. `hipri` (poll queues) is io_uring's
//! row, which binds here too.

use crate::error::Result;
use crate::spec::{Arg, JobSpec};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const BOOL: K = K::Bool;
/// libblkio's ring and queue sizes are C ints of at least 1 (fio warns and keeps the default
/// below that).
const COUNT: K = K::Int { min: 1, max: i32::MAX as i64 };

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    O::new("libblkio_driver", K::Str, C::Engine, "Name of the libblkio driver (io_uring, nvme-io_uring, virtio-blk-vhost-user, ...)").engines(&["libblkio"]).to(|s, v| Ok(s.engine.libblkio.driver = v.trimmed())),
    O::new("libblkio_path", K::Str, C::Engine, "Value of the driver's \"path\" property (the file, device or socket)").engines(&["libblkio"]).to(|s, v| Ok(s.engine.libblkio.path = v.written())),
    O::new("libblkio_pre_connect_props", K::Str, C::Engine, "More properties set before connecting, as name=value:... (\\: is a colon)").engines(&["libblkio"]).to(|s, v| props(s, v, false)),
    O::new("libblkio_num_entries", COUNT, C::Engine, "Value of the driver's \"num-entries\" property (io_uring ring size)").engines(&["libblkio"]).to(|s, v| Ok(s.engine.libblkio.num_entries = Some(v.int() as i32))),
    O::new("libblkio_queue_size", COUNT, C::Engine, "Value of the driver's \"queue-size\" property (virtio-blk queue size)").engines(&["libblkio"]).to(|s, v| Ok(s.engine.libblkio.queue_size = Some(v.int() as i32))),
    O::new("libblkio_pre_start_props", K::Str, C::Engine, "More properties set before starting, as name=value:... (\\: is a colon)").engines(&["libblkio"]).to(|s, v| props(s, v, true)),
    O::new("libblkio_vectored", BOOL, C::Engine, "Submit reads and writes as blkioq_readv/blkioq_writev").def("0").engines(&["libblkio"]).to(|s, v| Ok(s.engine.libblkio.vectored = v.flag())),
    O::new("libblkio_write_zeroes_on_trim", BOOL, C::Engine, "Submit trims as write-zeroes requests instead of discards").def("0").engines(&["libblkio"]).to(|s, v| Ok(s.engine.libblkio.write_zeroes_on_trim = v.flag())),
    O::new("libblkio_wait_mode", K::Choice(WAIT_MODES), C::Engine, "How to wait for completions").def("block").engines(&["libblkio"]).to(|s, v| Ok(s.engine.libblkio.wait_mode = v.typed(WaitMode::from_word))),
    O::new("libblkio_force_enable_completion_eventfd", BOOL, C::Engine, "Enable the queue's completion eventfd even when it is not waited on").def("0").engines(&["libblkio"]).to(|s, v| Ok(s.engine.libblkio.force_enable_completion_eventfd = v.flag())),
];

static WAIT_MODES: &[Choice] = &[
    Choice { word: "block", help: "Blocking blkioq_do_io()" },
    Choice { word: "eventfd", help: "Blocking read() on the completion eventfd" },
    Choice { word: "loop", help: "Busy loop with non-blocking blkioq_do_io()" },
];

/// How the engine waits for completions (`libblkio_wait_mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WaitMode {
    /// blkioq_do_io() waits for them.
    #[default]
    Block,
    /// A blocking read of the queue's completion eventfd, then a non-blocking blkioq_do_io().
    Eventfd,
    /// Non-blocking blkioq_do_io() calls in a busy loop.
    Loop,
}

impl WaitMode {
    fn from_word(word: &str) -> Option<WaitMode> {
        Some(match word {
            "block" => WaitMode::Block,
            "eventfd" => WaitMode::Eventfd,
            "loop" => WaitMode::Loop,
            _ => return None,
        })
    }

    pub fn word(self) -> &'static str {
        match self {
            WaitMode::Block => "block",
            WaitMode::Eventfd => "eventfd",
            WaitMode::Loop => "loop",
        }
    }
}

/// libblkio's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LibblkioOpts {
    pub driver: Option<String>,
    pub path: Option<String>,
    /// `(name, value)` pairs set after the engine's own properties, before blkio_connect().
    pub pre_connect_props: Vec<(String, String)>,
    pub num_entries: Option<i32>,
    pub queue_size: Option<i32>,
    /// `(name, value)` pairs set after the engine's own properties, before blkio_start().
    pub pre_start_props: Vec<(String, String)>,
    /// `hipri`: a poll queue instead of a regular one.
    pub hipri: bool,
    pub vectored: bool,
    pub write_zeroes_on_trim: bool,
    pub wait_mode: WaitMode,
    pub force_enable_completion_eventfd: bool,
}

impl LibblkioOpts {
    /// Options that cannot go together, in fio's words; `None` when they can.
    pub fn conflict(&self) -> Option<String> {
        if !self.hipri {
            return None;
        }
        if self.wait_mode == WaitMode::Eventfd {
            return Some("option hipri is incompatible with option libblkio_wait_mode=eventfd".into());
        }
        if self.force_enable_completion_eventfd {
            return Some("option hipri is incompatible with option libblkio_force_enable_completion_eventfd".into());
        }
        None
    }
}

/// `name=value:name=value`, where `\:` is a colon of a name or value (fio 3.42's form).
fn props(s: &mut JobSpec, v: &Arg<'_>, start: bool) -> Result<()> {
    let text = v.text();
    let name = if start { "libblkio_pre_start_props" } else { "libblkio_pre_connect_props" };
    let list = split_props(&text)
        .map_err(|item| v.err(format!("{name}={text}: missing '=' in '{item}' (each property is name=value)")))?;
    if start {
        s.engine.libblkio.pre_start_props = list;
    } else {
        s.engine.libblkio.pre_connect_props = list;
    }
    Ok(())
}

/// The pairs of a property list, or the first item without `=`. Empty items are skipped.
pub fn split_props(text: &str) -> std::result::Result<Vec<(String, String)>, String> {
    let mut items = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                items.last_mut().expect("one item at least").push(':');
            }
            ':' => items.push(String::new()),
            c => items.last_mut().expect("one item at least").push(c),
        }
    }
    items
        .into_iter()
        .filter(|i| !i.is_empty())
        .map(|i| match i.split_once('=') {
            Some((name, value)) => Ok((name.to_string(), value.to_string())),
            None => Err(i),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{split_props, WaitMode};
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=libblkio libblkio_driver=io_uring libblkio_path=/tmp/f libblkio_num_entries=64", |s| {
                let o = &s.engine.libblkio;
                o.driver.as_deref() == Some("io_uring") && o.path.as_deref() == Some("/tmp/f") && o.num_entries == Some(64)
            }),
            ("ioengine=libblkio libblkio_queue_size=32 libblkio_vectored=1 libblkio_write_zeroes_on_trim=1", |s| {
                let o = &s.engine.libblkio;
                o.queue_size == Some(32) && o.vectored && o.write_zeroes_on_trim
            }),
            ("ioengine=libblkio libblkio_wait_mode=loop libblkio_force_enable_completion_eventfd=1 hipri", |s| {
                let o = &s.engine.libblkio;
                o.wait_mode == WaitMode::Loop && o.force_enable_completion_eventfd && o.hipri
            }),
            ("ioengine=libblkio libblkio_pre_connect_props=direct=1:read-only=0 libblkio_pre_start_props=num-queues=1", |s| {
                let o = &s.engine.libblkio;
                o.pre_connect_props == [("direct".into(), "1".into()), ("read-only".into(), "0".into())]
                    && o.pre_start_props == [("num-queues".into(), "1".into())]
            }),
            ("", |s| s.engine.libblkio.wait_mode == WaitMode::Block && s.engine.libblkio.conflict().is_none()),
        ]);
    }

    #[test]
    fn property_lists_split_on_unescaped_colons() {
        assert_eq!(
            split_props(r"path=/a\:b:x=1::y="),
            Ok(vec![("path".into(), "/a:b".into()), ("x".into(), "1".into()), ("y".into(), String::new())])
        );
        assert_eq!(split_props("a=1:oops"), Err("oops".to_string()));
        assert_eq!(split_props(""), Ok(vec![]));
    }

    #[test]
    fn hipri_conflicts_as_in_fio() {
        let mut o = super::LibblkioOpts { hipri: true, wait_mode: WaitMode::Eventfd, ..Default::default() };
        assert!(o.conflict().unwrap().contains("libblkio_wait_mode=eventfd"));
        o.wait_mode = WaitMode::Loop;
        assert!(o.conflict().is_none());
        o.force_enable_completion_eventfd = true;
        assert!(o.conflict().unwrap().contains("libblkio_force_enable_completion_eventfd"));
    }
}
