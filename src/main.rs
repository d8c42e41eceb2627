//! The `fiox` binary: everything happens in the library; errors are printed once, here.

use std::process::ExitCode;

fn main() -> ExitCode {
    match fiox::run(std::env::args().skip(1).collect()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fiox: {e:#}");
            ExitCode::from(1)
        }
    }
}
