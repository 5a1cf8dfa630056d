//! A sentence-embedding service over HTTP/1.1 (std::net only): one model, shared by a pool of worker
//! threads, each answering one connection at a time.
//!
//! `POST /embed` with `{"sentences": ["...", ...]}` answers `{"embeddings": [[...], ...]}` (float32,
//! printed as the shortest decimal that reads back to the same bits), exactly what
//! [`SentenceTransformer::encode`] returns for that list. `GET /health` answers `{"status": "ok"}`.
//! Every bad request gets a 4xx status with `{"error": "..."}`; a failure inside the model a 500.
//!
//! ```no_run
//! use std::sync::Arc;
//! use oxtorch_hf_import::{serve::EmbeddingServer, SentenceTransformer};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = Arc::new(SentenceTransformer::load("model_dir".as_ref(), None)?);
//! let server = EmbeddingServer::bind("127.0.0.1:8080", model, 4)?;
//! println!("listening on {}", server.local_addr());
//! server.wait();
//! # Ok(()) }
//! ```

pub mod http;

use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use crate::error::Error;
use crate::sentence::SentenceTransformer;
use http::{error_body, read_request, write_json, HttpError, Request};

/// The largest request body accepted, in bytes.
pub const MAX_BODY: usize = 4 * 1024 * 1024;
/// The most sentences one request may hold.
pub const MAX_SENTENCES: usize = 1024;
/// How long a worker waits for a slow client before giving up on its connection.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// A running embedding service: worker threads accepting on one listener.
pub struct EmbeddingServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<()>>,
}

impl EmbeddingServer {
    /// Listens on `addr` (port 0 picks a free one) and starts `workers` threads (at least one) that
    /// answer requests with `model`.
    pub fn bind(
        addr: impl ToSocketAddrs,
        model: Arc<SentenceTransformer>,
        workers: usize,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let workers = (0..workers.max(1))
            .map(|i| {
                let listener = listener.try_clone()?;
                let (model, stop) = (Arc::clone(&model), Arc::clone(&stop));
                std::thread::Builder::new()
                    .name(format!("embed-worker-{i}"))
                    .spawn(move || worker(&listener, &model, &stop))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(EmbeddingServer { addr, stop, workers })
    }

    /// The address the service listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Blocks until the workers end (that is, forever unless another thread shuts the service down).
    pub fn wait(self) {
        for w in self.workers {
            let _ = w.join();
        }
    }

    /// Stops accepting, lets the requests in flight finish, and joins the workers.
    pub fn shutdown(self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake every worker blocked in accept(): each takes one of these connections and sees the flag.
        for _ in &self.workers {
            let _ = TcpStream::connect(self.addr);
        }
        self.wait();
    }
}

/// One worker: accept, answer, repeat until the stop flag is set.
fn worker(listener: &TcpListener, model: &SentenceTransformer, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let Ok((stream, _)) = listener.accept() else { continue };
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
        let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
        // A panic in a request must not take the worker down: it becomes a 500.
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| serve_connection(&stream, model)));
        if result.is_err() {
            let _ = write_json(&stream, 500, &error_body("internal error"));
        }
        let _ = stream.shutdown(Shutdown::Both);
    }
}

/// Reads one request from `stream` and writes its response.
fn serve_connection(stream: &TcpStream, model: &SentenceTransformer) {
    let (status, body) = match read_request(stream, MAX_BODY).and_then(|req| respond(&req, model)) {
        Ok(body) => (200, body),
        Err(e) => (e.status, error_body(&e.msg)),
    };
    let mut out = std::io::BufWriter::new(stream);
    let _ = write_json(&mut out, status, &body).and_then(|()| out.flush());
}

/// The JSON body answering `req`.
pub fn respond(req: &Request, model: &SentenceTransformer) -> Result<String, HttpError> {
    match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/embed") => {
            let sentences = parse_sentences(&req.body)?;
            let texts: Vec<&str> = sentences.iter().map(String::as_str).collect();
            let rows = embed(model, &texts)?;
            let json = serde_json::to_string(&rows).map_err(|e| HttpError::new(500, e.to_string()))?;
            Ok(format!("{{\"embeddings\":{json}}}"))
        }
        ("GET", "/health") => Ok("{\"status\":\"ok\"}".to_string()),
        (_, "/embed") => Err(HttpError::new(405, format!("{} /embed: use POST", req.method))),
        (_, "/health") => Err(HttpError::new(405, format!("{} /health: use GET", req.method))),
        (_, path) => Err(HttpError::new(404, format!("no route {path} (try POST /embed)"))),
    }
}

/// The `sentences` list of a request body.
pub fn parse_sentences(body: &[u8]) -> Result<Vec<String>, HttpError> {
    let json: Value =
        serde_json::from_slice(body).map_err(|e| HttpError::new(400, format!("invalid JSON body: {e}")))?;
    let list = json
        .get("sentences")
        .ok_or_else(|| HttpError::new(400, "the body must be an object with a \"sentences\" list"))?
        .as_array()
        .ok_or_else(|| HttpError::new(400, "\"sentences\" must be a list of strings"))?;
    if list.len() > MAX_SENTENCES {
        return Err(HttpError::new(
            413,
            format!("{} sentences exceed the limit of {MAX_SENTENCES} per request", list.len()),
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            s.as_str()
                .map(str::to_string)
                .ok_or_else(|| HttpError::new(400, format!("\"sentences\"[{i}] is {s}, expected a string")))
        })
        .collect()
}

/// The embeddings of `texts`, one row each: exactly `model.encode(texts)`.
pub fn embed(model: &SentenceTransformer, texts: &[&str]) -> Result<Vec<Vec<f32>>, HttpError> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let status = |e: &Error| if matches!(e, Error::Input(_)) { 400 } else { 500 };
    let emb = model.encode(texts).map_err(|e| HttpError::new(status(&e), e.to_string()))?;
    let dim = emb.dims().last().copied().unwrap_or(0);
    let flat = emb
        .to_dtype(oxtorch_tensor::DType::F32)
        .and_then(|t| t.to_vec::<f32>())
        .map_err(|e| HttpError::new(500, e.to_string()))?;
    Ok(flat.chunks(dim.max(1)).map(<[f32]>::to_vec).collect())
}
