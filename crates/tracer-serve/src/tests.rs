//! The accept loop's stop: a stop cut short with nothing open says nothing.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;

use super::*;

/// What the log lines said, kept in memory.
#[derive(Clone, Default)]
struct Logged(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logged {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_stop_cut_short_with_no_connection_open_warns_of_nothing() {
    let logged = Logged::default();
    let writer = logged.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // The stop and its cut are both there at once: which the wait sees first is
        // chance, so the stop is tried many times.
        for _ in 0..64 {
            let stats = runtime.block_on(async {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                let shutdown = Shutdown::new(async {}).cut_short_by(async {});
                let make_service = |_| {
                    hyper::service::service_fn(|_request| async {
                        Ok::<_, Infallible>(Response::new(Full::new(Bytes::new())))
                    })
                };
                serve_http(listener, make_service, shutdown, Duration::from_secs(30)).await
            });
            assert_eq!(stats.cut_off, 0);
        }
    });
    let text = String::from_utf8(logged.0.lock().unwrap().clone()).unwrap();
    assert!(!text.contains("cutting off"), "{text}");
}
