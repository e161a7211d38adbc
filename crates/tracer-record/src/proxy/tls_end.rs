//! An upstream TLS connection the server closed without `close_notify` reads as a plain end
//! of stream (as curl, browsers and Python's `ssl` take it), and says so: the framing above
//! (Content-Length, chunked) still tells a cut body from a whole one.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use http::Uri;
use hyper::rt;
use hyper_rustls::MaybeHttpsStream;
use hyper_util::client::legacy::connect::{Connected, Connection};

/// Whether the upstream's TLS connection ended without `close_notify`; every response that
/// came over the connection carries it in its extensions.
#[derive(Debug, Clone, Default)]
pub(crate) struct RaggedEof(Arc<AtomicBool>);

impl RaggedEof {
    /// True once the connection's TCP stream ended with no `close_notify` before it.
    pub(crate) fn happened(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    fn mark(&self) {
        self.0.store(true, Ordering::Release);
    }
}

/// An upstream stream (plain or TLS) whose TLS end without `close_notify` is a clean end.
pub(crate) struct EndingStream<T> {
    inner: MaybeHttpsStream<T>,
    ragged: RaggedEof,
}

impl<T: Connection + rt::Read + rt::Write + Unpin> Connection for EndingStream<T> {
    fn connected(&self) -> Connected {
        self.inner.connected().extra(self.ragged.clone())
    }
}

impl<T: rt::Read + rt::Write + Unpin> rt::Read for EndingStream<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = Pin::get_mut(self);
        let tls = matches!(this.inner, MaybeHttpsStream::Https(_));
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            // rustls's word for a TCP end with no close_notify: nothing more will come, and
            // nothing that came was lost (a record cut in half never became plaintext).
            Poll::Ready(Err(error)) if tls && error.kind() == io::ErrorKind::UnexpectedEof => {
                this.ragged.mark();
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<T: rt::Read + rt::Write + Unpin> rt::Write for EndingStream<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut Pin::get_mut(self).inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut Pin::get_mut(self).inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut Pin::get_mut(self).inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut Pin::get_mut(self).inner).poll_write_vectored(cx, bufs)
    }
}

/// Wraps a connector's streams in [`EndingStream`].
#[derive(Clone)]
pub(crate) struct EndingConnector<C>(pub(crate) C);

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Connecting<T> = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send>>;

impl<C, T> tower_service::Service<Uri> for EndingConnector<C>
where
    C: tower_service::Service<Uri, Response = MaybeHttpsStream<T>, Error = BoxError>,
    C::Future: Send + 'static,
    T: 'static,
{
    type Response = EndingStream<T>;
    type Error = BoxError;
    type Future = Connecting<EndingStream<T>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let connecting = self.0.call(dst);
        Box::pin(async move {
            let inner = connecting.await?;
            Ok(EndingStream {
                inner,
                ragged: RaggedEof::default(),
            })
        })
    }
}
