"""Event endpoints: every method of the namespace, and verify_event against
real events Herald delivers to a local HTTP listener of the test (secret
rotation included), plus the refusals (tampered body, stale timestamp)."""

from __future__ import annotations

import queue
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, Iterator, Tuple

import pytest
from conftest import active_flow, hexid, wait_for

from herald_sdk import Herald, WebhookVerificationError, models, sign_event, verify_event

Received = Tuple[Dict[str, str], bytes]


class Listener:
    """A local endpoint that answers 200 and queues what it received."""

    def __init__(self) -> None:
        self.received: "queue.Queue[Received]" = queue.Queue()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                outer.received.put(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/events"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def next(self, timeout: float = 30.0) -> Received:
        try:
            return self.received.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no event reached the listener within {timeout}s") from None

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def listener() -> Iterator[Listener]:
    lst = Listener()
    yield lst
    lst.close()


def test_endpoint_methods(herald: Herald, listener: Listener) -> None:
    ep = herald.event_endpoints.create(url=listener.url, event_types=["delivery.sent"], enabled=False)
    assert isinstance(ep, models.WebhookEndpointWithSecret) and ep.secret.startswith("whsec_")
    eid = str(ep.id)
    got = herald.event_endpoints.get(eid)
    assert isinstance(got, models.WebhookEndpoint) and got.event_types == ["delivery.sent"]
    assert herald.webhook_endpoints.update(eid, event_types=["*"]).event_types == ["*"]
    assert any(str(x.id) == eid for x in herald.event_endpoints.list(limit=100))
    rotated = herald.event_endpoints.rotate_secret(eid)
    assert rotated.secret.startswith("whsec_") and rotated.secret != ep.secret
    since = datetime.now(timezone.utc) - timedelta(minutes=5)
    assert herald.event_endpoints.replay(eid, since).queued >= 0
    assert list(herald.event_endpoints.attempts(eid)) == []
    assert herald.event_endpoints.delete(eid) is None


def test_verify_real_event_and_rotation(herald: Herald, listener: Listener) -> None:
    ep = herald.event_endpoints.create(url=listener.url, event_types=["flow_run.accepted"])
    eid = str(ep.id)
    flow = active_flow(herald)
    try:
        run = herald.flows.run(flow.handle, recipients=[f"u-{hexid()}"], data={"n": 1})
        headers, body = listener.next()
        event = verify_event(body, headers, ep.secret)
        assert event["type"] == "flow_run.accepted" and event["data"]["id"] == str(run.id)
        assert headers["webhook-id"] and headers["webhook-signature"].startswith("v1,")

        # A body changed on the way, or another secret, is refused.
        tampered = body.replace(str(run.id).encode(), b"00000000-0000-7000-8000-000000000000")
        assert tampered != body
        with pytest.raises(WebhookVerificationError):
            verify_event(tampered, headers, ep.secret)
        with pytest.raises(WebhookVerificationError):
            verify_event(body, headers, "whsec_" + "QUJD" * 8)
        # A captured request replayed later than the tolerance is refused.
        with pytest.raises(WebhookVerificationError):
            verify_event(body, headers, ep.secret, now=int(headers["webhook-timestamp"]) + 301)
        with pytest.raises(WebhookVerificationError):
            verify_event(body, {k: v for k, v in headers.items() if k != "webhook-signature"}, ep.secret)

        # During a rotation Herald signs with both secrets: either one verifies.
        new = herald.event_endpoints.rotate_secret(eid).secret
        run2 = herald.flows.run(flow.handle, recipients=[f"u-{hexid()}"], data={"n": 2})
        headers2, body2 = listener.next()
        assert len(headers2["webhook-signature"].split()) == 2
        assert verify_event(body2, headers2, new)["data"]["id"] == str(run2.id)
        assert verify_event(body2, headers2, ep.secret)["data"]["id"] == str(run2.id)
        assert verify_event(body2, headers2, ["whsec_" + "QUJD" * 8, new])["type"] == "flow_run.accepted"

        # Herald records an attempt once it has the answer: after the listener saw the request.
        attempts = wait_for("two recorded attempts",
                            lambda: (lambda a: a if len(a) >= 2 else None)(list(herald.event_endpoints.attempts(eid))))
        assert len(attempts) >= 2 and all(isinstance(a, models.EventAttemptView) for a in attempts)
        assert {a.status_code for a in attempts} == {200}
    finally:
        herald.event_endpoints.delete(eid)


def test_sign_event_round_trip() -> None:
    secret = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"type":"x","data":{}}'
    sig = sign_event(secret, "msg_1", 1_700_000_000, body)
    headers = {"Webhook-Id": "msg_1", "Webhook-Timestamp": "1700000000", "Webhook-Signature": f"v1a,zzz {sig}"}
    assert verify_event(body, headers, secret, now=1_700_000_010) == {"type": "x", "data": {}}
    with pytest.raises(WebhookVerificationError):
        verify_event(body, headers, secret, now=1_700_000_000 - 400)  # from the future
