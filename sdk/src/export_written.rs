//! The plugin's side of the v5 ids ([`handoff_abi::growth`]): a create reports the file it
//! writes to the host, and a reader reads a file the host's writer is still writing, pulling its
//! growth from the host.

use std::cell::RefCell;
use std::fs::File;
use std::path::{Path, PathBuf};

use handoff_abi::binary_call::Received;
use handoff_abi::growth::{decode_growth, WriteReport};
use handoff_abi::wire::ReaderRequestV5;
use handoff_capability::{Growth, PluginError, ReadFrom, ReadOutcome, WrittenFile};
use handoff_store::tap::WriteTap;

use crate::export::{guarded, instance, plugin_name, to_json};
use crate::export_binary::Stream;

/// A tap that reports each step of the create to the host.
pub(crate) fn reporting(host: Received) -> Box<dyn WriteTap> {
    Box::new(Reporter {
        host,
        bytes: Vec::new(),
    })
}

struct Reporter {
    host: Received,
    bytes: Vec<u8>,
}

impl Reporter {
    fn report(&mut self, report: WriteReport<'_>) {
        report.encode(&mut self.bytes);
        self.host.push(&self.bytes);
    }
}

impl WriteTap for Reporter {
    fn began(&mut self, temp: &Path) {
        self.report(WriteReport::Began(temp));
    }
    fn written(&mut self, len: u64) {
        self.report(WriteReport::Written(len));
    }
    fn ended(&mut self, whole: bool) {
        self.report(WriteReport::Ended(whole));
    }
}

/// `read_written_each`: the plugin's reader reads the host's file as it grows, its events
/// streamed back in batches; answers whether it read it.
pub(crate) fn read_written(
    request: ReaderRequestV5<'_>,
    mut host: Received,
) -> Result<String, PluginError> {
    let method = request.method();
    guarded(method, || {
        let reader = instance()?.reader();
        let ReaderRequestV5::ReadWrittenEach { target, file, name } = request;
        let written = Pulled {
            host: RefCell::new(host.clone()),
            file: file.into_owned(),
            name: name.into_owned(),
        };
        let outcome = Stream::to(&mut host).each(reader, ReadFrom::Written(&target, &written))?;
        to_json(method, &(outcome == ReadOutcome::Read))
    })
}

/// The host's file, its growth pulled from the host.
struct Pulled {
    host: RefCell<Received>,
    file: PathBuf,
    name: PathBuf,
}

impl WrittenFile for Pulled {
    fn open(&self) -> std::io::Result<File> {
        File::open(&self.file)
    }

    fn name(&self) -> &Path {
        &self.name
    }

    /// The host waits past the largest length it lent before, which is the `len` a
    /// [`crate::GrowingRead`] asks past.
    fn wait_past(&self, _len: u64) -> Growth {
        match self.host.borrow_mut().pull() {
            Ok(Some(bytes)) => decode_growth(bytes).unwrap_or_else(|| {
                tracing::warn!(
                    plugin = %plugin_name(),
                    "the host lent something that is not a file's growth"
                );
                Growth::Abandoned
            }),
            Ok(None) | Err(_) => Growth::Abandoned,
        }
    }
}
