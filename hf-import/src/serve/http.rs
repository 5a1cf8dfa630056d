//! The little of HTTP/1.1 the embedding service needs: one request per connection, read with limits,
//! and a JSON response with `Connection: close`.

use std::io::{BufRead, BufReader, Read, Write};

/// The largest request head (request line and headers) accepted, in bytes.
pub const MAX_HEAD: usize = 16 * 1024;

/// A parsed request.
#[derive(Debug)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// the request target, e.g. `/embed`
    pub path: String,
    /// the body (`Content-Length` bytes)
    pub body: Vec<u8>,
}

/// A request that cannot be served: the status code and a one-line reason.
#[derive(Debug)]
pub struct HttpError {
    /// the status code
    pub status: u16,
    /// why
    pub msg: String,
}

impl HttpError {
    /// An error with `status` and `msg`.
    pub fn new(status: u16, msg: impl Into<String>) -> Self {
        HttpError { status, msg: msg.into() }
    }
}

/// Reads one request from `stream`, its body at most `max_body` bytes.
pub fn read_request(stream: impl Read, max_body: usize) -> Result<Request, HttpError> {
    let mut reader = BufReader::new(stream.take((MAX_HEAD + max_body) as u64));
    let mut head_len = 0usize;
    let mut line = String::new();
    let mut next_line = |reader: &mut BufReader<_>, line: &mut String| -> Result<(), HttpError> {
        line.clear();
        let n =
            reader.read_line(line).map_err(|e| HttpError::new(400, format!("cannot read request: {e}")))?;
        head_len += n;
        if n == 0 || !line.ends_with('\n') {
            return Err(HttpError::new(400, "incomplete request head"));
        }
        if head_len > MAX_HEAD {
            return Err(HttpError::new(431, "request head too large"));
        }
        Ok(())
    };
    next_line(&mut reader, &mut line)?;
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HttpError::new(400, "malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(HttpError::new(505, format!("unsupported HTTP version {version}")));
    }
    let (method, path) = (method.to_string(), path.to_string());
    let mut content_length: Option<usize> = None;
    loop {
        next_line(&mut reader, &mut line)?;
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(HttpError::new(400, format!("malformed header line {header:?}")));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let n = value.parse::<usize>().map_err(|_| HttpError::new(400, "invalid Content-Length"))?;
            if content_length.is_some_and(|m| m != n) {
                return Err(HttpError::new(400, "conflicting Content-Length headers"));
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(HttpError::new(411, "chunked bodies are not supported: send Content-Length"));
        }
    }
    let len = content_length.unwrap_or(0);
    if len > max_body {
        return Err(HttpError::new(413, format!("body of {len} bytes exceeds the limit of {max_body}")));
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).map_err(|_| HttpError::new(400, "body shorter than Content-Length"))?;
    Ok(Request { method, path, body })
}

/// The reason phrase of a status code.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        505 => "HTTP Version Not Supported",
        _ => "Internal Server Error",
    }
}

/// Writes a complete response with a JSON `body`, then closes the connection (`Connection: close`).
pub fn write_json(mut stream: impl Write, status: u16, body: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reason(status),
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

/// The JSON error body `{"error": msg}`.
pub fn error_body(msg: &str) -> String {
    serde_json::json!({ "error": msg }).to_string()
}
