"""A tiny HTTP proxy of the tests' own, in front of the real herald, for what
the server cannot be made to do on demand: answer one 503 with Retry-After,
or lose an answer on the way back (the request reached herald, the client
never hears of it). Every request is forwarded as it came otherwise.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, List, Optional

import httpx

HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class Proxy:
    """``plan(method, path)`` says what to do with each request:
    ``"forward"``, ``"503"`` (answer 503 + ``Retry-After: retry_after``) or
    ``"lose"`` (forward, then close the connection without answering)."""

    def __init__(self, upstream: str, plan: Callable[[str, str], str], retry_after: str = "1") -> None:
        self.upstream = upstream
        self.plan = plan
        self.retry_after = retry_after
        self.seen: List[Dict[str, object]] = []
        self.upstream_answers: List[httpx.Response] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                action = outer.plan(self.command, self.path)
                with outer.lock:
                    outer.seen.append({"method": self.command, "path": self.path, "headers": headers,
                                       "action": action})
                if action == "503":
                    payload = (b'{"error": {"type": "https://herald.dev/errors#service_unavailable-503", '
                               b'"code": "service_unavailable", "message": "try again", "status": 503, '
                               b'"request_id": "proxy", "details": {}}}')
                    self.send_response(503)
                    self.send_header("content-type", "application/json")
                    self.send_header("retry-after", outer.retry_after)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                fwd = {k: v for k, v in headers.items() if k not in HOP}
                r = httpx.request(self.command, outer.upstream + self.path, headers=fwd, content=body, timeout=30)
                with outer.lock:
                    outer.upstream_answers.append(r)
                if action == "lose":
                    self.close_connection = True
                    return
                self.send_response(r.status_code)
                for k, v in r.headers.items():
                    if k.lower() not in HOP and k.lower() != "content-encoding":
                        self.send_header(k, v)
                self.send_header("content-length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _any

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread: Optional[threading.Thread] = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
