//! The reference plugin with its writer or its reader swapped for a test's own; the rest (the
//! manifest, the resumer and the other half) stays the reference plugin's.

use handoff_core::{Manifest, Plugin, Reader, Resumer, Writer};
use handoff_reference::ReferencePlugin;

/// A plugin made of this writer and this reader.
pub struct Swapped<W, R> {
    writer: W,
    reader: R,
}

/// The reference plugin with `writer` instead of its own.
pub fn with_writer<W: Writer>(writer: W) -> Swapped<W, ReferencePlugin> {
    Swapped {
        writer,
        reader: ReferencePlugin,
    }
}

/// The reference plugin with `reader` instead of its own.
pub fn with_reader<R: Reader>(reader: R) -> Swapped<ReferencePlugin, R> {
    Swapped {
        writer: ReferencePlugin,
        reader,
    }
}

/// The reference plugin with both halves replaced.
#[allow(dead_code)] // each test file uses the constructors it needs
pub fn with_both<W: Writer, R: Reader>(writer: W, reader: R) -> Swapped<W, R> {
    Swapped { writer, reader }
}

impl<W: Writer, R: Reader> Plugin for Swapped<W, R> {
    fn manifest(&self) -> Manifest {
        ReferencePlugin.manifest()
    }
    fn writer(&self) -> &dyn Writer {
        &self.writer
    }
    fn reader(&self) -> &dyn Reader {
        &self.reader
    }
    fn resumer(&self) -> &dyn Resumer {
        &ReferencePlugin
    }
}
