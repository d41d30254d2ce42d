//! Step 2 and 3: load the root module and wrap it back into the plain traits.

use std::borrow::Cow;
use std::path::Path;

use abi_stable::library::{lib_header_from_path, LibraryError};
use abi_stable::std_types::{RResult, RStr};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::probe::Probe;
use super::{log, summarise_layout_error, LoadError, PluginFile};
use crate::abi::wire::{decode_error, ReaderRequest, ResumeRequest, WriterRequest};
use crate::abi::{CapabilityBox, PluginModuleRef, READER_V1, RESUME_V1, WRITER_V1};
use crate::capability::{
    CreateOptions, Manifest, Plugin, PluginError, Reader, ResumePlan, Resumer, SessionInfo,
    SessionRef, Writer,
};
use crate::store::StoreRoot;
use crate::transcript::{Event, Transcript};

/// A plugin loaded from a shared library, seen through the same [`Plugin`] trait as a linked-in
/// one. Every call crosses the boundary as one JSON request and one JSON answer.
pub struct LoadedPlugin {
    file: PluginFile,
    manifest: Manifest,
    writer: RemoteWriter,
    reader: RemoteReader,
    resumer: RemoteResumer,
}

impl std::fmt::Debug for LoadedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPlugin")
            .field("file", &self.file)
            .field("manifest", &self.manifest.name)
            .finish()
    }
}

impl LoadedPlugin {
    /// Loads a plugin whose declaration [`super::probe`] accepted.
    pub fn load_probed(probe: Probe) -> Result<Self, LoadError> {
        let Probe { file, copy } = probe;
        let path = file.path.clone();
        let module = lib_header_from_path(copy.path())
            .and_then(|header| header.init_root_module::<PluginModuleRef>())
            .map_err(|e| abi_error(&path, copy.path(), e))?;
        (module.set_host_logger())(log::host_logger());
        let manifest = match (module.manifest_json())() {
            RResult::ROk(json) => {
                serde_json::from_str::<Manifest>(&json).map_err(|e| LoadError::Manifest {
                    path: path.clone(),
                    message: format!("not a handoff manifest: {e}"),
                })?
            }
            RResult::RErr(json) => {
                return Err(LoadError::Manifest {
                    path: path.clone(),
                    message: decode_error(&file.declaration.name, "manifest", &json).to_string(),
                })
            }
        };
        let capability = |id: &'static str| Remote {
            plugin: manifest.name.clone(),
            id,
            object: (module.get_capability())(RStr::from_str(id)).into_option(),
        };
        let plugin = LoadedPlugin {
            writer: RemoteWriter(capability(WRITER_V1)),
            reader: RemoteReader(capability(READER_V1)),
            resumer: RemoteResumer(capability(RESUME_V1)),
            file,
            manifest,
        };
        // The private copy is unlinked: the library stays mapped (abi_stable never unloads one),
        // and no temporary file outlives the load.
        drop(copy);
        Ok(plugin)
    }

    /// The file it was loaded from, its sha256 and its declaration.
    pub fn file(&self) -> &PluginFile {
        &self.file
    }

    /// Which of the v1 capabilities the plugin offers.
    pub fn capabilities(&self) -> Vec<&'static str> {
        [&self.writer.0, &self.reader.0, &self.resumer.0]
            .into_iter()
            .filter(|c| c.object.is_some())
            .map(|c| c.id)
            .collect()
    }
}

fn abi_error(path: &Path, copy: &Path, error: LibraryError) -> LoadError {
    let report = error
        .to_string()
        .replace(&copy.display().to_string(), "the file");
    tracing::debug!(plugin = %path.display(), "abi_stable refused the plugin:\n{report}");
    LoadError::Abi {
        path: path.to_owned(),
        summary: summarise_layout_error(&report),
    }
}

impl Plugin for LoadedPlugin {
    fn manifest(&self) -> Manifest {
        self.manifest.clone()
    }
    fn writer(&self) -> &dyn Writer {
        &self.writer
    }
    fn reader(&self) -> &dyn Reader {
        &self.reader
    }
    fn resumer(&self) -> &dyn Resumer {
        &self.resumer
    }
}

/// One capability object of a loaded plugin (or its absence).
struct Remote {
    plugin: String,
    id: &'static str,
    object: Option<CapabilityBox>,
}

impl Remote {
    fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        request: &impl Serialize,
    ) -> Result<T, PluginError> {
        let object = self.object.as_ref().ok_or_else(|| {
            PluginError::Other(format!(
                "plugin {} does not offer capability {} (needed for {method})",
                self.plugin, self.id
            ))
        })?;
        let request = serde_json::to_string(request)
            .map_err(|e| PluginError::Other(format!("cannot encode the {method} request: {e}")))?;
        match object.call(RStr::from_str(&request)) {
            RResult::ROk(answer) => serde_json::from_str(&answer).map_err(|e| {
                PluginError::Other(format!(
                    "plugin {} answered {method} with unreadable JSON: {e}",
                    self.plugin
                ))
            }),
            RResult::RErr(error) => Err(decode_error(&self.plugin, method, &error)),
        }
    }
}

struct RemoteWriter(Remote);
struct RemoteReader(Remote);
struct RemoteResumer(Remote);

impl Writer for RemoteWriter {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let request = WriterRequest::Create {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
            transcript: Cow::Borrowed(transcript),
            options: Cow::Borrowed(options),
        };
        self.0.call("create", &request)
    }

    fn append(
        &self,
        root: &StoreRoot,
        target: &str,
        id: &str,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        let request = WriterRequest::Append {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
            id: Cow::Borrowed(id),
            events: Cow::Borrowed(events),
        };
        self.0.call("append", &request)
    }

    fn remove(&self, root: &StoreRoot, target: &str, id: &str) -> Result<(), PluginError> {
        let request = WriterRequest::Remove {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
            id: Cow::Borrowed(id),
        };
        self.0.call("remove", &request)
    }
}

impl Reader for RemoteReader {
    fn read(&self, root: &StoreRoot, target: &str, id: &str) -> Result<Transcript, PluginError> {
        let request = ReaderRequest::Read {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
            id: Cow::Borrowed(id),
        };
        self.0.call("read", &request)
    }

    fn read_path(&self, target: &str, path: &Path) -> Result<Transcript, PluginError> {
        let request = ReaderRequest::ReadPath {
            target: Cow::Borrowed(target),
            path: Cow::Borrowed(path),
        };
        self.0.call("read_path", &request)
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        let request = ReaderRequest::List {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
        };
        self.0.call("list", &request)
    }
}

impl Resumer for RemoteResumer {
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError> {
        let request = ResumeRequest::Resolve {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
            id: Cow::Borrowed(id),
        };
        self.0.call("resolve", &request)
    }

    fn plan(
        &self,
        root: &StoreRoot,
        target: &str,
        id: &str,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        let request = ResumeRequest::Plan {
            root: Cow::Borrowed(root.path()),
            target: Cow::Borrowed(target),
            id: Cow::Borrowed(id),
            prompt: Cow::Borrowed(prompt),
        };
        self.0.call("plan", &request)
    }
}
