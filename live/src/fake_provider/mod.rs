//! A loopback fake model provider for the live tier.
//!
//! The real CLIs are pointed at it (by base URL) and resume a session we wrote; the fake answers
//! every model request with a short text ("ok") in the wire shape the CLI asked for, and keeps every
//! request it received so the live checks can read the history the CLI actually sent.
//!
//! It speaks, on `127.0.0.1` only:
//! - Anthropic Messages: `POST …/v1/messages` (SSE when `"stream": true`) and
//!   `POST …/v1/messages/count_tokens`;
//! - OpenAI Responses: `POST …/responses` (SSE when `"stream": true`);
//! - OpenAI Chat Completions: `POST …/chat/completions` (SSE chunks + `[DONE]` when streamed);
//! - Gemini: `POST …/models/<model>:generateContent`, `:streamGenerateContent` (SSE with
//!   `alt=sse`, else a JSON array) and `:countTokens`.
//!
//! Every model request is checked with `handoff-dialects`' validator of the endpoint's dialect
//! first: one that breaks a provider rule (A1–A15, R1–R7, C1–C5, G1–G7) is answered with HTTP 400
//! in the API's error shape, naming the rule, the history index and the field, as the real API
//! would refuse it ([`FakeProviderOptions::validate`] turns this off).
//!
//! It runs on its own tokio runtime in its own thread, so synchronous callers (the suite, tests)
//! can use it: [`FakeProvider::start`], [`FakeProvider::base_url`], [`FakeProvider::requests`],
//! [`FakeProvider::shutdown`] (also on drop).

mod reply;
mod server;

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use reply::Endpoint;

/// How a fake provider behaves.
#[derive(Clone, Debug)]
pub struct FakeProviderOptions {
    /// The text every model request is answered with.
    pub reply_text: String,
    /// Also append every request as one JSON line to this file.
    pub log_file: Option<PathBuf>,
    /// Check every model request with core's validator of its dialect
    /// ([`handoff_dialects::Dialect::validate`]) and answer one that breaks a provider rule
    /// with HTTP 400 naming the rule, as the real API refuses it. On by default; the pinned CLIs'
    /// requests pass (see `docs/formats/wire-dialects.md`).
    pub validate: bool,
    /// Tool calls (name, JSON arguments) to answer a Chat Completions request with, in parallel,
    /// when its last message is the user's and it offers tools; a request that ends on tool
    /// results is answered with `reply_text`. Empty (the default): always `reply_text`. How
    /// genuine tool sessions of a CLI that speaks Chat Completions are recorded.
    pub tool_calls: Vec<(String, Value)>,
}

impl Default for FakeProviderOptions {
    fn default() -> Self {
        FakeProviderOptions {
            reply_text: "ok".into(),
            log_file: None,
            validate: true,
            tool_calls: Vec::new(),
        }
    }
}

/// One request the fake provider received.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoggedRequest {
    /// Its position in the log, from 0.
    pub seq: usize,
    /// When it arrived, in milliseconds since the epoch.
    pub received_ms: i64,
    /// The HTTP method.
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query string, if any.
    pub query: Option<String>,
    /// Which endpoint it hit.
    pub endpoint: Endpoint,
    /// Whether it was answered with a stream.
    pub streamed: bool,
    /// The request headers (lower-case names); credentials are replaced by `<redacted>`.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON (`Null` when it was empty or not JSON; see `body_error`).
    pub body: Value,
    /// Why the body is not JSON, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_error: Option<String>,
    /// The HTTP status it was answered with.
    pub status: u16,
    /// Why it was refused, when it broke a provider rule (the 400's message: rule, index, field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

impl LoggedRequest {
    /// Whether this request asked a model for a turn (not a token count, not an unknown path).
    pub fn is_model_turn(&self) -> bool {
        self.endpoint.is_model_turn()
    }
}

/// Why a fake provider could not start.
#[derive(Debug, thiserror::Error)]
pub enum FakeProviderError {
    /// Binding the loopback socket failed.
    #[error("fake provider: cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    /// The log file cannot be opened.
    #[error("fake provider: cannot open request log {}: {source}", path.display())]
    LogFile {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The runtime could not be built.
    #[error("fake provider: cannot start its runtime: {0}")]
    Runtime(std::io::Error),
}

/// The request log shared by the server tasks and the handle.
#[derive(Debug)]
pub(crate) struct RequestLog {
    requests: Mutex<Vec<LoggedRequest>>,
    file: Option<(PathBuf, Mutex<std::fs::File>)>,
}

impl RequestLog {
    fn new(log_file: Option<&Path>) -> Result<Self, FakeProviderError> {
        let file = match log_file {
            None => None,
            Some(path) => {
                let f = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|source| FakeProviderError::LogFile {
                        path: path.to_owned(),
                        source,
                    })?;
                Some((path.to_owned(), Mutex::new(f)))
            }
        };
        Ok(RequestLog {
            requests: Mutex::new(Vec::new()),
            file,
        })
    }

    /// Records a request, giving it the next sequence number.
    pub(crate) fn push(&self, mut request: LoggedRequest) {
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        request.seq = requests.len();
        if let Some((path, file)) = &self.file {
            // One write of one whole line, so a reader never sees half a request.
            let mut line = serde_json::to_vec(&request).unwrap_or_default();
            line.push(b'\n');
            let mut f = file.lock().unwrap_or_else(PoisonError::into_inner);
            if let Err(e) = f.write_all(&line) {
                tracing::warn!("fake provider: cannot append to {}: {e}", path.display());
            }
        }
        requests.push(request);
    }

    fn snapshot(&self) -> Vec<LoggedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn clear(&self) {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// A running fake provider. Dropping it shuts it down.
pub struct FakeProvider {
    addr: SocketAddr,
    log: Arc<RequestLog>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeProvider {
    /// Starts a fake provider on `127.0.0.1` on a free port, answering "ok".
    pub fn start() -> Result<Self, FakeProviderError> {
        Self::start_with(FakeProviderOptions::default())
    }

    /// Starts a fake provider with these options.
    pub fn start_with(options: FakeProviderOptions) -> Result<Self, FakeProviderError> {
        let listener =
            std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(FakeProviderError::Bind)?;
        let addr = listener.local_addr().map_err(FakeProviderError::Bind)?;
        listener
            .set_nonblocking(true)
            .map_err(FakeProviderError::Bind)?;
        let log = Arc::new(RequestLog::new(options.log_file.as_deref())?);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(FakeProviderError::Runtime)?;
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let state = Arc::new(server::State {
            log: Arc::clone(&log),
            reply_text: options.reply_text,
            tool_calls: options.tool_calls,
            validate: options.validate,
            next_id: std::sync::atomic::AtomicUsize::new(0),
        });
        let thread = std::thread::Builder::new()
            .name(format!("fake-provider-{}", addr.port()))
            .spawn(move || runtime.block_on(server::serve(listener, state, stopped)))
            .map_err(FakeProviderError::Runtime)?;
        Ok(FakeProvider {
            addr,
            log,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (no trailing slash); append `/v1` for OpenAI-style base URLs.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.log.snapshot()
    }

    /// The requests that asked a model for a turn, in arrival order.
    pub fn model_requests(&self) -> Vec<LoggedRequest> {
        self.requests()
            .into_iter()
            .filter(LoggedRequest::is_model_turn)
            .collect()
    }

    /// Forgets the requests received so far (the JSONL file, if any, keeps them).
    pub fn clear(&self) {
        self.log.clear();
    }

    /// Stops serving and waits for the server thread.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.stop_now();
    }
}

impl std::fmt::Debug for FakeProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeProvider")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}
