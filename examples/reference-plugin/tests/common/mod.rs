//! The reference plugin with its writer or its reader swapped for a test's own; the rest (the
//! manifest, the resumer and the other half) stays the reference plugin's.

use handoff_host::{
    Event, Manifest, Plugin, PluginError, ReadFrom, ReadOutcome, Reader, Resumer, SessionInfo,
    StoreRoot, Transcript, Writer,
};
use handoff_reference::ReferencePlugin;

/// A plugin made of this writer and this reader.
pub struct Swapped<W, R> {
    writer: W,
    reader: R,
}

impl<W, R> Swapped<W, R> {
    /// The test's reader, as itself.
    #[allow(dead_code)] // each test file uses what it needs
    pub fn test_reader(&self) -> &R {
        &self.reader
    }
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

/// A reader whose read-back (of a session, whole or streamed as the verify reads it, and of a
/// session as it is written) is the reference plugin's changed by `alter`; a source read by path
/// stays as it is.
pub struct AlteredReadBack<F>(pub F);

impl<F: Fn(&mut Transcript) + Send + Sync> Reader for AlteredReadBack<F> {
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        if let ReadFrom::File(..) = from {
            return ReferencePlugin.read_each(from, sink);
        }
        let mut t = Transcript::new(Vec::new());
        ReferencePlugin.read_each(from, &mut |e| {
            t.events.push(e);
            true
        })?;
        (self.0)(&mut t);
        t.events.into_iter().all(sink);
        Ok(ReadOutcome::Read)
    }
    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        ReferencePlugin.cwd(from)
    }
    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        ReferencePlugin.list(root, target)
    }
}

/// A reader that loses the last event of any session longer than `keep` events it reads back.
pub fn lossy_reader(keep: usize) -> AlteredReadBack<impl Fn(&mut Transcript) + Send + Sync> {
    AlteredReadBack(move |t: &mut Transcript| {
        if t.events.len() > keep {
            t.events.pop();
        }
    })
}
