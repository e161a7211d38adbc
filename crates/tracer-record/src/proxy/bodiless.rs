//! The body of a `304 Not Modified` that must keep its `Content-Length` (the length of the
//! representation it stands for): hyper writes that header only for a body that might not be
//! empty, then sends no body for a 304 anyway.

use std::pin::Pin;
use std::task::{Context, Poll};

use http_body::{Body, Frame, SizeHint};

/// Passes `B` through but never claims to be empty or of known length.
pub(crate) struct KeepLength<B>(pub(crate) B);

impl<B: Body + Unpin> Body for KeepLength<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        false
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}
