//! The WebSocket upgrade path. actix-http's HTTP/1 dispatcher hands every
//! request with `Upgrade: websocket` (and no chunked body) to this service,
//! with the connection: the request still goes through the application (its
//! middleware, routing, authentication and error bodies, as any other), and
//! when the answer is a 101 carrying an accepted live-feed socket
//! (`live::feed::Accepted`) the connection is taken from the HTTP layer and
//! runs as that socket, in a task of its own. The dispatcher, its codec,
//! its read and write buffers and its task are gone by then: an idle socket
//! costs only its own small state.
//! Any other answer is written as usual and the connection closes.

use crate::edge::ErrorBodies;
use crate::live::feed::{self, Accepted, ViaUpgrade};
use actix_codec::Framed;
use actix_http::body::{BodySize, BoxBody, MessageBody};
use actix_http::{h1, ConnectionType, HttpMessage, Request, Response, StatusCode};
use actix_service::{Service, ServiceFactory};
use actix_web::dev::ServiceResponse;
use actix_web::rt::net::TcpStream;
use futures_util::SinkExt;
use std::rc::Rc;
use std::time::Duration;

type Io = ErrorBodies<TcpStream>;

/// How long a refused upgrade's answer may take to write.
const ANSWER_WRITE: Duration = Duration::from_secs(30);

/// The upgrade service over an instance of the application (`app`, with the
/// same configuration as the one serving plain requests).
pub fn service<A, B>(
    app: A,
) -> impl ServiceFactory<
    (Request, Framed<Io, h1::Codec>),
    Config = (),
    Response = (),
    Error = actix_web::Error,
    InitError = (),
>
where
    A: ServiceFactory<
            Request,
            Config = (),
            Response = ServiceResponse<B>,
            Error = actix_web::Error,
            InitError = (),
        > + 'static,
    A::Service: 'static,
    B: MessageBody + 'static,
{
    let app = Rc::new(app);
    actix_service::fn_factory(move || {
        let app = app.clone();
        async move {
            let svc = Rc::new(app.new_service(()).await?);
            Ok(actix_service::fn_service(
                move |(req, framed): (Request, Framed<Io, h1::Codec>)| {
                    let svc = svc.clone();
                    async move {
                        take_over(&*svc, req, framed).await;
                        Ok::<_, actix_web::Error>(())
                    }
                },
            ))
        }
    })
}

async fn take_over<S, B>(svc: &S, req: Request, mut framed: Framed<Io, h1::Codec>)
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody + 'static,
{
    req.extensions_mut().insert(ViaUpgrade);
    let mut res: Response<BoxBody> = match svc.call(req).await {
        Ok(r) => r.map_into_boxed_body().into(),
        Err(e) => e.into(),
    };
    let accepted = res.extensions_mut().remove::<Accepted>();
    let (head, body) = res.into_parts();
    match accepted {
        Some(a) if head.status() == StatusCode::SWITCHING_PROTOCOLS => {
            drop(body);
            if framed
                .send(h1::Message::Item((head, BodySize::None)))
                .await
                .is_err()
            {
                return;
            }
            let parts = framed.into_parts();
            // Bytes the client sent right behind the request (its auth frame,
            // say) are kept; the buffers and the codec are let go now, not
            // when the socket ends.
            let early = parts.read_buf.to_vec();
            drop(parts.read_buf);
            drop(parts.write_buf);
            drop(parts.codec);
            // A task of its own: the connection's task holds the whole
            // HTTP/1 dispatcher's future (over 5 KiB, allocated for the
            // task's life whatever state it is in), which ends here.
            if let Some(io) = parts.io.into_inner() {
                actix_web::rt::spawn(feed::serve(a, io, early));
            }
        }
        _ => {
            let _ = tokio::time::timeout(ANSWER_WRITE, answer(framed, head, body)).await;
        }
    }
}

/// Writes a response that is not an upgrade, then closes the connection.
async fn answer(
    mut framed: Framed<Io, h1::Codec>, mut head: Response<()>, body: BoxBody,
) -> Result<(), Box<dyn std::error::Error>> {
    head.head_mut().set_connection_type(ConnectionType::Close);
    let size = body.size();
    // Buffered, then written together: a client that reads the head may not
    // wait for a body that comes in a later packet.
    framed.feed(h1::Message::Item((head, size))).await?;
    let mut body = std::pin::pin!(body);
    while let Some(chunk) = std::future::poll_fn(|cx| body.as_mut().poll_next(cx)).await {
        framed.feed(h1::Message::Chunk(Some(chunk?))).await?;
    }
    framed.feed(h1::Message::Chunk(None)).await?;
    // (`Framed`'s close shuts the stream down without writing its buffer)
    framed.flush().await?;
    framed.close().await?;
    Ok(())
}
