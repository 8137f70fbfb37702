//! A minimal event-sink receiver for the end-to-end suite: HTTP/1.1 on a loopback port,
//! every POST body kept with its Authorization header, answered 200.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// (Authorization header, body) of each request, in arrival order.
pub type Received = Arc<Mutex<Vec<(Option<String>, Value)>>>;

pub struct Receiver {
    pub url: String,
    pub received: Received,
}

impl Receiver {
    pub fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}/events", listener.local_addr()?);
        let received: Received = Arc::default();
        let shared = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || serve_connection(stream, &shared));
            }
        });
        Ok(Self { url, received })
    }

    /// The bodies whose `interaction_id` is `run_id`, with their Authorization headers.
    pub fn of_run(&self, run_id: &str) -> Vec<(Option<String>, Value)> {
        self.received
            .lock()
            .map(|r| {
                r.iter()
                    .filter(|(_, b)| b["interaction_id"] == run_id)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn serve_connection(stream: TcpStream, received: &Received) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        let mut auth = None;
        let mut line = String::new();
        // Request line, then headers up to the blank line.
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap_or(0),
                    "authorization" => auth = Some(value.trim().to_owned()),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if let (Ok(value), Ok(mut all)) = (serde_json::from_slice(&body), received.lock()) {
            all.push((auth, value));
        }
        if writer
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .is_err()
        {
            return;
        }
    }
}
