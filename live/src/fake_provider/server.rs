//! The HTTP side: accept loopback connections, log each request, send its answer.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;

use super::reply::{answer, bad_request, check, rule_broken, Context, Endpoint, Reply};
use super::{LoggedRequest, RequestLog};

/// The largest request body the fake reads (the corpus has a 1 MB text; CLIs add their tools).
const MAX_BODY: usize = 256 * 1024 * 1024;

/// Headers whose values are secrets, even dummy ones: logged as `<redacted>`.
const CREDENTIAL_HEADERS: &[&str] = &["authorization", "x-api-key", "x-goog-api-key", "cookie"];

pub(crate) struct State {
    pub log: Arc<RequestLog>,
    pub reply_text: String,
    /// See [`super::FakeProviderOptions::tool_calls`].
    pub tool_calls: Vec<(String, serde_json::Value)>,
    pub validate: bool,
    pub next_id: AtomicUsize,
}

/// Serves until `stopped` fires (or its sender is dropped).
pub(crate) async fn serve(
    listener: std::net::TcpListener,
    state: Arc<State>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("fake provider: cannot use its socket: {e}");
            return;
        }
    };
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let state = Arc::clone(&state);
                    tokio::spawn(async move {
                        let service = service_fn(move |req| handle(req, Arc::clone(&state)));
                        if let Err(e) = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await
                        {
                            tracing::debug!("fake provider: connection ended: {e}");
                        }
                    });
                }
                Err(e) => {
                    // Out of descriptors or similar: wait instead of spinning.
                    tracing::warn!("fake provider: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
}

async fn handle(
    request: Request<Incoming>,
    state: Arc<State>,
) -> Result<Response<ChunkedBody>, Infallible> {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().map(str::to_owned);
    let headers: BTreeMap<String, String> = request
        .headers()
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_ascii_lowercase();
            let value = if CREDENTIAL_HEADERS.contains(&name.as_str()) {
                "<redacted>".to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect();
    let endpoint = Endpoint::classify(&method, &path);

    let (body, body_error) = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Err(e) => (Value::Null, Some(format!("cannot read the body: {e}"))),
        Ok(collected) => parse_body(&collected.to_bytes(), headers.get("content-encoding")),
    };

    let seq = state.next_id.fetch_add(1, Ordering::Relaxed);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let refusal = match &body_error {
        None if state.validate => check(endpoint, &body),
        _ => None,
    };
    let reply: Reply = match (&body_error, &refusal) {
        (Some(why), _) if endpoint != Endpoint::Unknown => bad_request(endpoint, why),
        (_, Some(why)) => rule_broken(endpoint, why),
        _ => answer(
            endpoint,
            &path,
            query.as_deref(),
            &body,
            &Context {
                seq,
                now_secs: now.as_secs() as i64,
                text: &state.reply_text,
                tool_calls: &state.tool_calls,
            },
        ),
    };

    state.log.push(LoggedRequest {
        seq: 0,
        received_ms: now.as_millis() as i64,
        method,
        path,
        query,
        endpoint,
        streamed: reply.streamed,
        headers,
        body,
        body_error,
        status: reply.status,
        refusal: refusal.map(|v| v.to_string()),
    });

    let mut response = Response::builder()
        .status(reply.status)
        .header("content-type", reply.content_type)
        .header("request-id", format!("req_fake{seq:06}"))
        .header("x-request-id", format!("req_fake{seq:06}"));
    if reply.streamed {
        response = response.header("cache-control", "no-cache");
    }
    let body = ChunkedBody {
        chunks: reply.chunks.into(),
    };
    Ok(response.body(body).unwrap_or_else(|e| {
        // Only reachable if a header above were invalid; answer 500 rather than drop the client.
        let mut fallback = Response::new(ChunkedBody {
            chunks: VecDeque::from([Bytes::from(format!("fake provider: {e}"))]),
        });
        *fallback.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
        fallback
    }))
}

/// The body as JSON, or why it is not.
fn parse_body(bytes: &[u8], encoding: Option<&String>) -> (Value, Option<String>) {
    if let Some(enc) = encoding.filter(|e| !e.eq_ignore_ascii_case("identity")) {
        return (
            Value::Null,
            Some(format!(
                "body is compressed ({enc}); the fake provider does not decode it"
            )),
        );
    }
    if bytes.is_empty() {
        return (Value::Null, Some("empty body".into()));
    }
    match serde_json::from_slice(bytes) {
        Ok(v) => (v, None),
        Err(e) => (Value::Null, Some(format!("body is not JSON: {e}"))),
    }
}

/// A response body sent as a sequence of chunks (one per SSE event), like a real stream.
pub(crate) struct ChunkedBody {
    chunks: VecDeque<Bytes>,
}

impl Body for ChunkedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.chunks.pop_front().map(|c| Ok(Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        // A single chunk has a known length; a stream goes out chunked, as real SSE does.
        match self.chunks.len() {
            0 => SizeHint::with_exact(0),
            1 => SizeHint::with_exact(self.chunks[0].len() as u64),
            _ => SizeHint::default(),
        }
    }
}
