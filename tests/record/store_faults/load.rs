//! A load generator: N keep-alive connections sending small JSON POSTs back to back, each with
//! an `x-seq` header, remembering which were answered whole.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};

pub struct Load {
    stop: Arc<AtomicBool>,
    answered: Arc<Mutex<Vec<u64>>>,
    workers: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    pub fn start(addr: SocketAddr, connections: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(Mutex::new(Vec::new()));
        let next = Arc::new(AtomicU64::new(0));
        let workers = (0..connections)
            .map(|_| {
                let (stop, answered, next) = (stop.clone(), answered.clone(), next.clone());
                tokio::spawn(async move {
                    let Ok(stream) = tokio::net::TcpStream::connect(addr).await else {
                        return;
                    };
                    let Ok((mut sender, conn)) = hyper::client::conn::http1::handshake(
                        hyper_util::rt::TokioIo::new(stream),
                    )
                    .await
                    else {
                        return;
                    };
                    tokio::spawn(conn);
                    while !stop.load(Ordering::Relaxed) {
                        let seq = next.fetch_add(1, Ordering::Relaxed);
                        let request = http::Request::post("/api/chat")
                            .header("host", addr.to_string())
                            .header("content-type", "application/json")
                            .header("x-seq", seq.to_string())
                            .body(Full::new(bytes::Bytes::from_static(
                                b"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                            )))
                            .unwrap();
                        let Ok(response) = sender.send_request(request).await else {
                            return;
                        };
                        let ok = response.status() == 200;
                        if response.into_body().collect().await.is_err() || !ok {
                            return;
                        }
                        answered.lock().unwrap().push(seq);
                    }
                })
            })
            .collect();
        Load {
            stop,
            answered,
            workers,
        }
    }

    pub fn answered(&self) -> usize {
        self.answered.lock().unwrap().len()
    }

    /// Waits until `count` requests were answered (generous deadline for a loaded machine).
    pub async fn wait_for(&self, count: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while self.answered() < count {
            assert!(
                std::time::Instant::now() < deadline,
                "only {} of {count} requests answered",
                self.answered()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops sending and returns the `x-seq` of every answered request.
    pub async fn stop(self) -> Vec<u64> {
        self.stop.store(true, Ordering::Relaxed);
        for worker in self.workers {
            let _ = tokio::time::timeout(Duration::from_secs(30), worker).await;
        }
        self.answered.lock().unwrap().clone()
    }
}
