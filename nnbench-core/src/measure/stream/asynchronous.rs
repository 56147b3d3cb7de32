//! The requests of an async case that streams: a future that gives a
//! `Stream` of tokens, each timed as the harness takes it.

use std::future::Future;
use std::pin::pin;
use std::time::Instant;

use futures_util::{Stream, StreamExt};

use super::{Start, inputs, keep};

impl Start {
    /// Awaits the call's future, keeping the input it took with
    /// [`request_input`](super::request_input) on whichever thread each of
    /// its polls ran.
    pub async fn made<F: Future>(mut self, call: F) -> (Self, F::Output) {
        let mut call = pin!(call);
        let out = std::future::poll_fn(|cx| {
            inputs::take();
            let polled = call.as_mut().poll(cx);
            if let Some(input) = inputs::take() {
                self.input = Some(input);
            }
            polled
        })
        .await;
        (self, out)
    }

    /// Takes every item of `items`, timing each, and keeps the request;
    /// the number of items is the call's value.
    pub async fn drain_stream<S: Stream>(self, items: S) -> usize {
        // A request's times stay with it, not with a thread's buffer: its
        // items may be taken on several threads.
        let mut times = Vec::new();
        let mut items = pin!(items);
        while let Some(item) = items.next().await {
            times.push(Instant::now());
            drop(std::hint::black_box(item));
        }
        let end = times.last().copied().unwrap_or_else(Instant::now);
        keep(self.at, end, &times, self.input);
        times.len()
    }
}
