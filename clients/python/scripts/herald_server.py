"""Starts and stops a real `herald` binary for the SDK's tests and the model
generator: a temp data dir, a free 127.0.0.1 port (bind port 0, read back from
the `listening on http://ADDR` line), random bootstrap keys for project
`default`. Mirrors clients/js/scripts/herald-server.mjs.

The binary is HERALD_BIN, else `<repo root>/target/debug/herald`.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import List, Optional, Sequence

ROOT = Path(__file__).resolve().parents[3]
LISTEN_RE = re.compile(r"listening on (http://[^\s\"',;<>]+)")


def herald_bin() -> Path:
    env = os.environ.get("HERALD_BIN")
    return Path(env).resolve() if env else ROOT / "target" / "debug" / "herald"


class HeraldServer:
    """One running herald: ``base_url``, ``public_key``, ``secret_key``; ``stop()``."""

    def __init__(self, extra_args: Sequence[str] = (), start_timeout: float = 60.0) -> None:
        self.public_key = f"pk_test_{secrets.token_hex(16)}"
        self.secret_key = f"sk_test_{secrets.token_hex(16)}"
        self.data_dir = tempfile.mkdtemp(prefix="herald-pysdk-")
        self.output: List[str] = []
        binary = herald_bin()
        if not binary.exists():
            raise RuntimeError(f"no herald binary at {binary} (build it, or set HERALD_BIN)")
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
        env.update(
            HERALD_BOOTSTRAP_PUBLIC_KEY=self.public_key,
            HERALD_BOOTSTRAP_SECRET_KEY=self.secret_key,
            NO_COLOR="1",
            RUST_LOG="warn",
        )
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--bind", "127.0.0.1:0", "--data-dir", self.data_dir, *extra_args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        found = threading.Event()
        self.base_url: Optional[str] = None

        def reader() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                line = line.rstrip("\n")
                self.output.append(line)
                del self.output[:-200]
                m = LISTEN_RE.search(line)
                if m and not found.is_set():
                    self.base_url = m.group(1).rstrip(".)")
                    found.set()
            found.set()  # the process ended

        threading.Thread(target=reader, daemon=True).start()
        if not found.wait(start_timeout) or self.base_url is None:
            self.stop()
            tail = "\n".join(self.output[-10:])
            raise RuntimeError(f"herald did not print `listening on` within {start_timeout}s:\n{tail}")
        self._wait_ready()

    def _wait_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base_url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError("herald never answered /readyz 200")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 15 s; removes the data dir."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> "HeraldServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def fetch_openapi() -> bytes:
    """The `/openapi.json` of a fresh herald, as served (bytes)."""
    import httpx

    with HeraldServer() as server:
        r = httpx.get(f"{server.base_url}/openapi.json", timeout=30)
        r.raise_for_status()
        return r.content
