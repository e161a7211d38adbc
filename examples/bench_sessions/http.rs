//! Plain HTTP/1.1 over std sockets: the scripted upstream (the model streams its answers as
//! chunked SSE, the MCP server answers JSON) and the agent's keep-alive client.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

use super::session::{Rng, mcp_result};

fn read_head(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Vec<String>>> {
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let line = line.trim_end().to_string();
        if line.is_empty() {
            return Ok(Some(lines));
        }
        lines.push(line);
    }
}

fn header<'a>(head: &'a [String], name: &str) -> Option<&'a str> {
    head.iter().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// A body by Content-Length or chunked transfer coding.
fn read_body(reader: &mut BufReader<TcpStream>, head: &[String]) -> std::io::Result<Vec<u8>> {
    if header(head, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        let mut body = Vec::new();
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim(), 16).map_err(std::io::Error::other)?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            chunk.truncate(size);
            body.extend_from_slice(&chunk);
            if size == 0 {
                return Ok(body);
            }
        }
    }
    let len: usize = header(head, "content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    Ok(body)
}

/// The scripted upstream: model answers come from `answers` in order (each a list of SSE
/// events), MCP calls are answered with generated tool results.
pub fn serve_upstream(listener: TcpListener, answers: Receiver<Vec<String>>) {
    let answers = Arc::new(Mutex::new(answers));
    let rng = Arc::new(Mutex::new(Rng::new(7)));
    for stream in listener.incoming().flatten() {
        let answers = answers.clone();
        let rng = rng.clone();
        std::thread::spawn(move || {
            let _ = serve_connection(stream, &answers, &rng);
        });
    }
}

fn serve_connection(
    stream: TcpStream,
    answers: &Mutex<Receiver<Vec<String>>>,
    rng: &Mutex<Rng>,
) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    while let Some(head) = read_head(&mut reader)? {
        let body = read_body(&mut reader, &head)?;
        if head[0].contains("/mcp") {
            let id = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["id"].as_u64())
                .unwrap_or(0);
            let answer = match rng.lock() {
                Ok(mut rng) => mcp_result(&mut rng, id),
                Err(_) => Vec::new(),
            };
            write!(
                writer,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                answer.len()
            )?;
            writer.write_all(&answer)?;
        } else {
            let events = answers
                .lock()
                .ok()
                .and_then(|a| a.recv().ok())
                .unwrap_or_default();
            write!(
                writer,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            )?;
            for event in events {
                write!(writer, "{:x}\r\n{event}\r\n", event.len())?;
                writer.flush()?;
            }
            writer.write_all(b"0\r\n\r\n")?;
        }
        writer.flush()?;
    }
    Ok(())
}

/// The agent's one keep-alive connection to a route of the proxy.
pub struct Client {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    host: String,
}

impl Client {
    pub fn connect(addr: &str) -> std::io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(Client {
            writer: stream.try_clone()?,
            reader: BufReader::new(stream),
            host: addr.to_string(),
        })
    }

    /// POSTs a JSON body and returns the response body.
    pub fn post(&mut self, path: &str, extra: &str, body: &[u8]) -> std::io::Result<Vec<u8>> {
        write!(
            self.writer,
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n",
            self.host,
            body.len()
        )?;
        self.writer.write_all(body)?;
        self.writer.flush()?;
        let head = read_head(&mut self.reader)?
            .ok_or_else(|| std::io::Error::other("the proxy closed the connection"))?;
        if !head[0].contains(" 200") {
            return Err(std::io::Error::other(format!("answered {}", head[0])));
        }
        read_body(&mut self.reader, &head)
    }
}
