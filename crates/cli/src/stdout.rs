//! Standard output that a closed reader or a full disk cannot turn into a panic (`println!`
//! panics when its write fails: `smpsched real | head -1`, `> /dev/full`). Every line the
//! command prints goes through [`text`]; the first failed write is remembered and the lines
//! after it are dropped, while the command goes on with what it writes to files (results are
//! never lost for want of a reader); [`finish`] then says how the command ended.

use std::io::{ErrorKind, Write};
use std::process::ExitCode;
use std::sync::OnceLock;

/// The first write to standard output that failed: its kind and message.
static FAILED: OnceLock<(ErrorKind, String)> = OnceLock::new();

/// Writes `s` to standard output, unless a write has already failed.
pub fn text(s: &str) {
    if FAILED.get().is_some() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        let _ = FAILED.set((e.kind(), e.to_string()));
    }
}

/// Writes `s` and a newline to standard output, unless a write has already failed.
pub fn line(s: &str) {
    text(&format!("{s}\n"));
}

/// Whether a write to standard output has failed (its reader is gone, or its disk full).
pub fn failed() -> bool {
    FAILED.get().is_some()
}

/// The command's exit code once standard output is considered: a reader that closed the pipe
/// (`| head`) leaves it as it is; another failed write (a full disk) is said on standard error
/// and makes a successful command exit with 1, as an error the command could not report on
/// standard output.
pub fn finish(code: ExitCode) -> ExitCode {
    match FAILED.get() {
        Some((ErrorKind::BrokenPipe, _)) | None => code,
        Some((_, message)) => {
            eprintln!("error: could not write to standard output: {message}");
            if code == ExitCode::SUCCESS {
                ExitCode::from(1)
            } else {
                code
            }
        }
    }
}
