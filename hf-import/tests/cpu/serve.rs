//! The embedding service (`hf_import::serve`) with the tiny sentence-transformers fixture: many
//! concurrent clients get exactly (bitwise) the vectors of sequential library calls, and bad requests
//! get a JSON error with a 4xx status while the service keeps answering.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;

use common::fixture;
use oxtorch_hf_import::serve::EmbeddingServer;
use oxtorch_hf_import::SentenceTransformer;
use serde_json::Value;

fn model() -> Arc<SentenceTransformer> {
    Arc::new(SentenceTransformer::load(&fixture("sentence_tiny"), None).unwrap())
}

/// Sends `raw` bytes as one request and returns the status code and the body.
fn send_raw(addr: SocketAddr, raw: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(raw).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("a complete response");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    assert!(head.contains("Content-Type: application/json"), "{head}");
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .expect("Content-Length")
        .parse()
        .unwrap();
    assert_eq!(length, body.len(), "Content-Length");
    (status, body.to_string())
}

fn request(method: &str, path: &str, body: &str) -> Vec<u8> {
    format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n{body}", body.len())
        .into_bytes()
}

fn post_embed(addr: SocketAddr, sentences: &[String]) -> (u16, String) {
    let body = serde_json::json!({ "sentences": sentences }).to_string();
    send_raw(addr, &request("POST", "/embed", &body))
}

/// The body the service must answer for `sentences`: the library's `encode`, each float32 printed as
/// its shortest round-trip decimal. Equal text is therefore equal bits.
fn expected_body(st: &SentenceTransformer, sentences: &[String]) -> String {
    let texts: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let emb = st.encode(&texts).unwrap();
    let dim = emb.dims()[1];
    let rows: Vec<Vec<f32>> = emb.to_vec::<f32>().unwrap().chunks(dim).map(<[f32]>::to_vec).collect();
    format!("{{\"embeddings\":{}}}", serde_json::to_string(&rows).unwrap())
}

/// Request `i`'s sentences: 1 to 5 of them, of varied lengths (so batches pad differently).
fn sentences(i: usize) -> Vec<String> {
    let words =
        ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "tensor", "ünïcode", "日本"];
    (0..1 + i % 5)
        .map(|j| {
            (0..1 + (i * 7 + j * 3) % 23)
                .map(|k| words[(i + j + k * 5) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn concurrent_clients_get_the_library_vectors_bitwise() {
    let st = model();
    const REQUESTS: usize = 96;
    let expected: Vec<String> = (0..REQUESTS).map(|i| expected_body(&st, &sentences(i))).collect();
    let server = EmbeddingServer::bind("127.0.0.1:0", Arc::clone(&st), 4).unwrap();
    let addr = server.local_addr();
    let expected = Arc::new(expected);
    const CLIENTS: usize = 16;
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let expected = Arc::clone(&expected);
            std::thread::spawn(move || {
                for i in (c..REQUESTS).step_by(CLIENTS) {
                    let (status, body) = post_embed(addr, &sentences(i));
                    assert_eq!(status, 200, "request {i}: {body}");
                    assert_eq!(body, expected[i], "request {i}: vectors differ from the library's");
                }
            })
        })
        .collect();
    for c in clients {
        c.join().expect("a client failed");
    }
    // The answer is JSON of the right shape, unit-norm rows (the fixture normalises).
    let (_, body) = post_embed(addr, &sentences(3));
    let json: Value = serde_json::from_str(&body).unwrap();
    let rows = json["embeddings"].as_array().unwrap();
    assert_eq!(rows.len(), sentences(3).len());
    for row in rows {
        let norm: f64 = row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap().powi(2)).sum();
        assert!((norm - 1.0).abs() < 1e-5, "norm² {norm}");
    }
    server.shutdown();
}

#[test]
fn bad_requests_get_json_errors_and_the_service_survives() {
    let st = model();
    let server = EmbeddingServer::bind("127.0.0.1:0", Arc::clone(&st), 2).unwrap();
    let addr = server.local_addr();
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        ("not JSON", request("POST", "/embed", "{\"sentences\": [\"a\""), 400, "invalid JSON"),
        ("no sentences", request("POST", "/embed", "{\"texts\": [\"a\"]}"), 400, "\"sentences\""),
        ("not a list", request("POST", "/embed", "{\"sentences\": \"a\"}"), 400, "list of strings"),
        ("a number", request("POST", "/embed", "{\"sentences\": [\"a\", 3]}"), 400, "[1] is 3"),
        ("a list body", request("POST", "/embed", "[\"a\"]"), 400, "\"sentences\""),
        ("empty body", request("POST", "/embed", ""), 400, "invalid JSON"),
        ("GET /embed", request("GET", "/embed", ""), 405, "use POST"),
        ("unknown path", request("POST", "/nothing", "{}"), 404, "no route /nothing"),
        ("garbage", b"hello\r\n\r\n".to_vec(), 400, "malformed request line"),
        ("HTTP/2", b"POST /embed HTTP/2.0\r\n\r\n".to_vec(), 505, "HTTP version"),
        (
            "huge body",
            b"POST /embed HTTP/1.1\r\nContent-Length: 999999999999\r\n\r\n".to_vec(),
            413,
            "exceeds the limit",
        ),
        (
            "chunked",
            b"POST /embed HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".to_vec(),
            411,
            "Content-Length",
        ),
        (
            "bad length",
            b"POST /embed HTTP/1.1\r\nContent-Length: ten\r\n\r\n".to_vec(),
            400,
            "Content-Length",
        ),
        ("short body", b"POST /embed HTTP/1.1\r\nContent-Length: 50\r\n\r\n{}".to_vec(), 400, "shorter"),
        ("head without end", b"POST /embed HTTP/1.1\r\nHost: x".to_vec(), 400, "incomplete"),
    ];
    for (what, raw, status, needle) in cases {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(&raw).unwrap();
        // Half-close so that a truncated request reads as one.
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{what}: {response:?}"));
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{what}: {head}");
        let json: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{what}: {e}: {body}"));
        let msg = json["error"].as_str().unwrap_or_else(|| panic!("{what}: {body}"));
        assert!(msg.contains(needle), "{what}: {msg:?} lacks {needle:?}");
    }
    // Still serving, and the edge cases that are not errors.
    assert_eq!(send_raw(addr, &request("GET", "/health", "")), (200, "{\"status\":\"ok\"}".to_string()));
    assert_eq!(post_embed(addr, &[]), (200, "{\"embeddings\":[]}".to_string()));
    let one = vec![String::new()];
    assert_eq!(post_embed(addr, &one), (200, expected_body(&st, &one)));
    server.shutdown();
}
