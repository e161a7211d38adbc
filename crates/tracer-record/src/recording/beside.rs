//! Work that runs beside a recording over its store until it finishes (grouping hops into
//! traces, keeping readings, announcing routes), and the last step it may leave.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tracer_store::{Store, StoreError};

/// What a piece of work leaves to do once the writer has written every hop (e.g. grouping the
/// last hops into traces).
pub struct LastStep(BoxFuture<'static, Result<(), StoreError>>);

impl LastStep {
    pub fn new(step: impl Future<Output = Result<(), StoreError>> + Send + 'static) -> LastStep {
        LastStep(Box::pin(step))
    }

    /// Takes the step.
    pub(super) async fn take(self) -> Result<(), StoreError> {
        self.0.await
    }
}

/// A last step and the words that name it in the line reporting its failure.
pub(super) type NamedLastStep = (&'static str, LastStep);

type Work = Box<dyn FnOnce(Store, StopAsked) -> BoxFuture<'static, Option<NamedLastStep>> + Send>;

/// Work to run beside a recording: given the recording's store and a future that resolves when
/// the recording finishes (or is dropped), in a task of its own.
pub struct Beside {
    work: Work,
}

impl Beside {
    /// Work that runs until it is asked to stop and leaves nothing to do after.
    pub fn until_stopped<F, Fut>(work: F) -> Beside
    where
        F: FnOnce(Store, StopAsked) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        Beside {
            work: Box::new(move |store, stop| {
                Box::pin(async move {
                    work(store, stop).await;
                    None
                })
            }),
        }
    }

    /// Work that, asked to stop, hands back a last step. The step is taken once the writer has
    /// written every hop, and not when the database refused some (they wait in the journal for
    /// the next tracer on it); `doing` names it when it fails ("grouping the last hops into
    /// traces").
    pub fn then_last_step<F, Fut>(doing: &'static str, work: F) -> Beside
    where
        F: FnOnce(Store, StopAsked) -> Fut + Send + 'static,
        Fut: Future<Output = LastStep> + Send + 'static,
    {
        Beside {
            work: Box::new(move |store, stop| {
                Box::pin(async move { Some((doing, work(store, stop).await)) })
            }),
        }
    }

    /// Starts the work over `store`.
    pub(super) fn spawn(self, store: Store) -> Running {
        let (stop, asked) = oneshot::channel();
        Running {
            stop,
            task: tokio::spawn((self.work)(store, StopAsked(asked))),
        }
    }
}

/// Resolves when the recording asks the work beside it to stop (or is dropped unfinished).
pub struct StopAsked(oneshot::Receiver<()>);

impl Future for StopAsked {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(|_| ())
    }
}

/// Work beside a recording, running.
pub(super) struct Running {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Option<NamedLastStep>>,
}

impl Running {
    /// Asks the work to stop and waits for it; its last step, if it left one (none if it
    /// panicked).
    pub(super) async fn stop(self) -> Option<NamedLastStep> {
        let _ = self.stop.send(());
        self.task.await.ok().flatten()
    }
}
