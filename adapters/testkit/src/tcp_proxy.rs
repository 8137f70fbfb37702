//! A loopback TCP forwarder a test starts, stops and starts again on the same port: the
//! database behind it "goes away" (every connection cut, new ones refused) and "comes
//! back", without touching the machine's server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support: a failed step should fail the test"
)]

use std::io::ErrorKind;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Forwards `127.0.0.1:<port>` to a target address while running.
pub struct TcpProxy {
    port: u16,
    target: String,
    running: Option<Running>,
}

struct Running {
    stop: Arc<AtomicBool>,
    /// Both ends of every forwarded connection, to cut them on stop.
    streams: Arc<Mutex<Vec<TcpStream>>>,
    accept: JoinHandle<()>,
}

impl TcpProxy {
    /// Listens on a free loopback port and forwards to `target` (`host:port`).
    pub fn start(target: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut proxy = Self {
            port,
            target: target.to_owned(),
            running: None,
        };
        proxy.run(listener);
        proxy
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The outage: no more connections, and every open one cut.
    pub fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop.store(true, Ordering::SeqCst);
            let _ = running.accept.join();
            for stream in running.streams.lock().unwrap().drain(..) {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
    }

    /// Back again, on the same port.
    pub fn resume(&mut self) {
        if self.running.is_none() {
            let listener = TcpListener::bind(("127.0.0.1", self.port)).unwrap();
            self.run(listener);
        }
    }

    fn run(&mut self, listener: TcpListener) {
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let streams = Arc::new(Mutex::new(Vec::new()));
        let (flag, list, target) = (Arc::clone(&stop), Arc::clone(&streams), self.target.clone());
        let accept = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => forward(client, &target, &list),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            // The listener is dropped here: the port refuses connections until `resume`.
        });
        self.running = Some(Running {
            stop,
            streams,
            accept,
        });
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Connects `client` to `target` and copies both ways on two threads until either side
/// ends (or `stop` cuts them).
fn forward(client: TcpStream, target: &str, streams: &Mutex<Vec<TcpStream>>) {
    let _ = client.set_nonblocking(false);
    let Ok(server) = TcpStream::connect(target) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let mut list = streams.lock().unwrap();
    list.push(client.try_clone().unwrap());
    list.push(server.try_clone().unwrap());
    drop(list);
    let pipe = |mut from: TcpStream, mut to: TcpStream| {
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut from, &mut to);
            let _ = from.shutdown(Shutdown::Both);
            let _ = to.shutdown(Shutdown::Both);
        });
    };
    pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
    pipe(server, client);
}
