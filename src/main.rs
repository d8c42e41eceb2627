//! The `fiox` binary: everything happens in the library; errors are printed once, here.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so a write to a pipe whose reader left (`fiox man | head -1`) fails
    // with EPIPE, and `println!` panics on it. fio dies of the signal quietly; so does fiox, on
    // whichever path notices first. SIGPIPE stays ignored otherwise: a coordinator writing to a
    // dead ssh launcher or socket must get the error, not die of it.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if fiox_engine::sys::stdout_reader_gone() {
            fiox_engine::sys::die_of_sigpipe();
        }
        default_hook(info)
    }));
    match fiox::run(std::env::args().skip(1).collect()) {
        Ok(code) => code,
        Err(e) => {
            let broken_pipe = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe && fiox_engine::sys::stdout_reader_gone() {
                fiox_engine::sys::die_of_sigpipe();
            }
            eprintln!("fiox: {e:#}");
            ExitCode::from(1)
        }
    }
}
