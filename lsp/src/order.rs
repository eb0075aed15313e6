//! The order in which the server handles messages: one at a time, in the order they
//! arrive, except that a document whose change is still being parsed does not hold up
//! messages about other documents.
//!
//! [`Ordered`] wraps the language server's service. Each message takes, the moment it
//! arrives, a place in one queue for every message (the server's turn) and, when its
//! params name a document (`textDocument.uri`), a place in that document's queue. Both
//! queues are FIFO ([`tokio::sync::Mutex`]). A message runs holding both turns, so
//! messages are handled one at a time in the order received, as with tower-lsp-server's
//! concurrency level 1. A message whose document is not free yet (a large change of it
//! is being parsed, see [`take_document_turn`]) gives the server's turn back and waits
//! for the document alone: it then runs after every earlier message of its document and
//! before every later one, while the messages behind it about other documents go on.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use tokio::sync::OwnedMutexGuard;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_service::Service;

/// How many messages may be in progress at once in tower-lsp-server's transport: one
/// running, the others waiting for a document whose parse has not ended. Past that,
/// reading messages waits.
pub const IN_PROGRESS: usize = 64;

/// A turn in a queue: the queue is the next message's once this is dropped.
pub type Turn = OwnedMutexGuard<()>;

tokio::task_local! {
    /// The running message's turn in its document's queue, for a handler that hands it
    /// on to work that outlives the handler ([`take_document_turn`]).
    static DOCUMENT_TURN: RefCell<Option<Turn>>;
}

/// Takes the running message's turn in its document's queue, so that work started by the
/// handler keeps the document's later messages waiting until it drops the turn; the
/// server's turn is given back when the handler returns. `None` outside [`Ordered`] or
/// for a message that names no document.
pub fn take_document_turn() -> Option<Turn> {
    DOCUMENT_TURN
        .try_with(|turn| turn.borrow_mut().take())
        .ok()
        .flatten()
}

/// The queues: the server's, and one per document (by URI).
#[derive(Default)]
struct Queues {
    server: Arc<tokio::sync::Mutex<()>>,
    documents: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Documents kept in the map before the queues no message holds are dropped.
const KEEP_DOCUMENTS: usize = 256;

impl Queues {
    fn document(&self, uri: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut documents = self
            .documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if documents.len() >= KEEP_DOCUMENTS {
            documents.retain(|_, queue| Arc::strong_count(queue) > 1);
        }
        Arc::clone(documents.entry(uri.to_string()).or_default())
    }
}

/// A place in a queue, taken when the message arrived.
type Place = Pin<Box<dyn Future<Output = Turn> + Send>>;

/// Takes a place in `queue` now: the first poll of a tokio mutex's lock joins its FIFO
/// queue (or takes the lock), whatever waker it is given; later polls bring their own.
fn join(queue: Arc<tokio::sync::Mutex<()>>) -> (Place, Option<Turn>) {
    let mut place: Place = Box::pin(queue.lock_owned());
    match place.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(turn) => (place_taken(), Some(turn)),
        Poll::Pending => (place, None),
    }
}

/// A place already served: never polled.
fn place_taken() -> Place {
    Box::pin(std::future::pending())
}

/// The document a message is about: `params.textDocument.uri`, as LSP's text document
/// notifications and requests carry it.
fn document_of(request: &Request) -> Option<&str> {
    request.params()?.get("textDocument")?.get("uri")?.as_str()
}

/// The language server's service with messages handled in order (the module's rules).
pub struct Ordered<S> {
    inner: S,
    queues: Arc<Queues>,
}

impl<S> Ordered<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Ordered<S> {
        Ordered {
            inner,
            queues: Arc::default(),
        }
    }
}

impl<S> Service<Request> for Ordered<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Option<Response>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // `$/cancelRequest` and the like touch no document and must reach a request that
        // waits for its document's turn.
        if request.method().starts_with("$/") {
            return Box::pin(self.inner.call(request));
        }
        let (server_place, server_turn) = join(Arc::clone(&self.queues.server));
        let document = document_of(&request).map(|uri| join(self.queues.document(uri)));
        let handle = self.inner.call(request);
        Box::pin(async move {
            let server_turn = match server_turn {
                Some(turn) => turn,
                None => server_place.await,
            };
            let document_turn = match document {
                None => None,
                Some((_, Some(turn))) => Some(turn),
                Some((mut place, None)) => {
                    let ready = std::future::poll_fn(|cx| Poll::Ready(place.as_mut().poll(cx)));
                    match ready.await {
                        Poll::Ready(turn) => Some(turn),
                        // The document is busy (its change is being parsed): let the
                        // messages behind this one go meanwhile.
                        Poll::Pending => {
                            drop(server_turn);
                            let turn = place.await;
                            return DOCUMENT_TURN.scope(RefCell::new(Some(turn)), handle).await;
                        }
                    }
                }
            };
            let response = DOCUMENT_TURN
                .scope(RefCell::new(document_turn), handle)
                .await;
            drop(server_turn);
            response
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex as StdMutex;

    use serde_json::json;
    use tokio::sync::oneshot;

    use super::*;

    /// A service whose handlers log their start and end, and which, for the method
    /// `hold`, hands its document's turn to a task that keeps it until `release` fires.
    #[derive(Clone, Default)]
    struct Fake {
        log: Arc<StdMutex<Vec<String>>>,
        release: Arc<StdMutex<Option<oneshot::Receiver<()>>>>,
    }

    impl Service<Request> for Fake {
        type Response = Option<Response>;
        type Error = std::convert::Infallible;
        type Future = Pin<Box<dyn Future<Output = Result<Option<Response>, Self::Error>> + Send>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request) -> Self::Future {
            let fake = self.clone();
            let name = request.method().to_string();
            Box::pin(async move {
                fake.log.lock().unwrap().push(format!("start {name}"));
                if name == "hold" {
                    let turn = take_document_turn().expect("a document turn");
                    let release = fake.release.lock().unwrap().take().unwrap();
                    let log = Arc::clone(&fake.log);
                    tokio::spawn(async move {
                        let _ = release.await;
                        log.lock().unwrap().push("released".to_string());
                        drop(turn);
                    });
                }
                // One yield, so that a handler that is not alone would be overtaken here.
                tokio::task::yield_now().await;
                fake.log.lock().unwrap().push(format!("end {name}"));
                Ok(None)
            })
        }
    }

    fn on(method: &str, uri: Option<&str>) -> Request {
        let params = match uri {
            Some(uri) => json!({"textDocument": {"uri": uri}}),
            None => json!({}),
        };
        Request::build(method.to_string()).params(params).finish()
    }

    /// A service whose `hold` message has run on `file:///a.md` and handed that
    /// document's turn to a task that keeps it until the returned sender fires.
    async fn holding_a() -> (Fake, oneshot::Sender<()>, Ordered<Fake>) {
        let fake = Fake::default();
        let (release, held) = oneshot::channel();
        *fake.release.lock().unwrap() = Some(held);
        let mut ordered = Ordered::new(fake.clone());
        ordered
            .call(on("hold", Some("file:///a.md")))
            .await
            .unwrap();
        (fake, release, ordered)
    }

    #[tokio::test]
    async fn messages_run_one_at_a_time_in_arrival_order_whatever_order_they_are_polled_in() {
        let fake = Fake::default();
        let mut ordered = Ordered::new(fake.clone());
        let first = ordered.call(on("first", None));
        let second = ordered.call(on("second", Some("file:///a.md")));
        let third = ordered.call(on("third", None));
        // Polled last first: each still waits for the ones that arrived before it.
        let (t, s, f) = tokio::join!(third, second, first);
        assert!(t.is_ok() && s.is_ok() && f.is_ok());
        assert_eq!(
            *fake.log.lock().unwrap(),
            [
                "start first",
                "end first",
                "start second",
                "end second",
                "start third",
                "end third"
            ]
        );
    }

    #[tokio::test]
    async fn a_busy_document_holds_back_its_own_messages_only() {
        let (fake, release, mut ordered) = holding_a().await;
        let same = tokio::spawn(ordered.call(on("a-again", Some("file:///a.md"))));
        let other = ordered.call(on("b", Some("file:///b.md")));
        let global = ordered.call(on("workspace", None));
        other.await.unwrap();
        global.await.unwrap();
        assert_eq!(
            *fake.log.lock().unwrap(),
            [
                "start hold",
                "end hold",
                "start b",
                "end b",
                "start workspace",
                "end workspace"
            ]
        );
        release.send(()).unwrap();
        same.await.unwrap().unwrap();
        assert_eq!(
            fake.log.lock().unwrap()[6..],
            ["released", "start a-again", "end a-again"]
        );
    }

    #[tokio::test]
    async fn a_message_dropped_while_waiting_gives_its_place_up() {
        let (fake, release, mut ordered) = holding_a().await;
        // Waits for a.md, then is dropped (a cancelled request, say).
        drop(ordered.call(on("dropped", Some("file:///a.md"))));
        let after = tokio::spawn(ordered.call(on("after", Some("file:///a.md"))));
        release.send(()).unwrap();
        after.await.unwrap().unwrap();
        assert_eq!(
            *fake.log.lock().unwrap(),
            [
                "start hold",
                "end hold",
                "released",
                "start after",
                "end after"
            ]
        );
    }
}
