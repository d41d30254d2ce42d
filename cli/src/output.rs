//! The one way a command prints. What goes to stdout goes through here, so a reader that stops
//! early (`handoff read … --json | head -c1`) ends the command quietly: a closed pipe is
//! [`CliError::OutputClosed`], which `main` turns into a silent success (the reader asked for no
//! more), never a panic. Notes on stderr are best effort: when stderr is gone too there is no one
//! left to tell.

use std::fmt;
use std::io::{self, Write};

use crate::error::CliError;

/// Prints a line on stdout (`println!` that reports a closed pipe).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}
pub(crate) use outln;

/// Writes `args` and a newline on stdout.
pub fn line(args: fmt::Arguments<'_>) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(failed)
}

/// Writes `text` on stdout as it is.
pub fn text(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(failed)
}

/// Writes `value` on stdout as pretty JSON and a newline, streamed (a transcript is not copied
/// into a string first).
pub fn json(value: &impl serde::Serialize) -> Result<(), CliError> {
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| match e.io_error_kind() {
        Some(kind) => failed(kind.into()),
        None => CliError::Failed(format!("cannot print the output as JSON: {e}")),
    })?;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(failed)
}

/// Writes a line on stderr; a failure to is ignored (see the module's doc).
pub fn note(args: fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

fn failed(e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::OutputClosed
    } else {
        CliError::Io {
            path: "<stdout>".into(),
            message: format!("cannot write the output: {e}"),
        }
    }
}
