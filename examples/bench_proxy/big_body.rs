//! 1 GiB through tracer each way (an upload the upstream drains, a download it generates), to
//! see that the proxy's memory stays bounded while a body far larger than `--max-body` streams.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;

use crate::upstream::BIG_BODY;

/// Seconds each way, and whether every byte arrived.
#[derive(Debug, Default)]
pub struct BigBody {
    pub upload: Duration,
    pub download: Duration,
    pub uploaded: u64,
    pub downloaded: u64,
}

pub async fn measure(proxy: SocketAddr) -> anyhow::Result<BigBody> {
    let stream = tokio::net::TcpStream::connect(proxy).await?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let chunk = Bytes::from(vec![b'u'; 64 * 1024]);
    let chunks = futures_util::stream::iter(
        (0..BIG_BODY / chunk.len() as u64)
            .map(move |_| Ok::<_, std::convert::Infallible>(Frame::data(chunk.clone()))),
    );
    let started = Instant::now();
    let request = http::Request::post("/big")
        .header("host", proxy.to_string())
        .body(StreamBody::new(chunks).boxed())?;
    let answer = sender
        .send_request(request)
        .await?
        .into_body()
        .collect()
        .await?;
    let uploaded: u64 = String::from_utf8_lossy(&answer.to_bytes()).parse()?;
    let upload = started.elapsed();
    // The connection takes the next request once it has settled after the last answer.
    sender
        .ready()
        .await
        .map_err(|e| anyhow::anyhow!("the connection after the upload: {e}"))?;
    let started = Instant::now();
    let request = http::Request::get("/big")
        .header("host", proxy.to_string())
        .body(
            http_body_util::Empty::<Bytes>::new()
                .map_err(|never| match never {})
                .boxed(),
        )?;
    let mut body = sender.send_request(request).await?.into_body();
    let mut downloaded = 0u64;
    while let Some(frame) = body.frame().await {
        downloaded += frame?.data_ref().map_or(0, |d| d.len() as u64);
    }
    Ok(BigBody {
        upload,
        download: started.elapsed(),
        uploaded,
        downloaded,
    })
}
