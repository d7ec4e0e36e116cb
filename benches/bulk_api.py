#!/usr/bin/env python3
"""The bulk APIs' throughput: starts `herald serve` (release build) on an empty
data directory and, over one keep-alive connection, times N users through
`POST /admin/v1/users/bulk`, then their N subscriptions to one topic through
`POST /admin/v1/topics/{key}/subscriptions`, 1,000 items per request (each
request one durable commit). Prints items/s and the server's CPU time per
item (user + system, from /proc). With HERALD_BULK_CONNECTIONS=C the requests
of each phase are spread over C keep-alive connections, C in flight (an
import job's concurrency); the default is one, one request at a time.

    python3 benches/bulk_api.py [N] [path to herald]   (N default 100000)
"""

import http.client
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
BIN = sys.argv[2] if len(sys.argv) > 2 else "target/release/herald"
PER_REQUEST = 1000
CONNECTIONS = int(os.environ.get("HERALD_BULK_CONNECTIONS", "1"))


def cpu_s(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def main():
    pk, sk = "pk_bulk_" + secrets.token_hex(16), "sk_bulk_" + secrets.token_hex(16)
    data = tempfile.mkdtemp(prefix="herald-bulk-")
    env = dict(os.environ, HERALD_BOOTSTRAP_PUBLIC_KEY=pk,
               HERALD_BOOTSTRAP_SECRET_KEY=sk, RUST_LOG="warn")
    for k in ("HERALD_STORE", "HERALD_BUS"):
        env.pop(k, None)
    srv = subprocess.Popen(
        [BIN, "serve", "--bind", "127.0.0.1:0", "--data-dir", data,
         "--admin-rate", "1000000000"],
        env=env, stdout=subprocess.PIPE, text=True)
    try:
        for line in srv.stdout:
            if "listening on " in line:
                addr = line.split("listening on ")[1].strip()
                break
        host, port = addr.replace("http://", "").rstrip("/").rsplit(":", 1)
        conns = [http.client.HTTPConnection(host, int(port)) for _ in range(CONNECTIONS)]
        hdr = {"x-service-api-key": pk, "x-service-secret-key": sk,
               "content-type": "application/json"}

        def call(method, path, body, c=conns[0]):
            for _ in range(100):
                try:
                    c.request(method, path, json.dumps(body), hdr)
                    r = c.getresponse()
                    out = r.read()
                    assert r.status in (200, 201), (r.status, out[:300])
                    return
                except (ConnectionRefusedError, http.client.RemoteDisconnected):
                    time.sleep(0.1)
            raise SystemExit("server not answering")

        call("PUT", "/admin/v1/topics/bulk", {"name": "bulk"})
        ids = [f"bulk-{i}" for i in range(N)]
        for name, path, item in (
            ("bulk upsert", "/admin/v1/users/bulk",
             lambda chunk: {"users": [{"external_id": e, "email": f"{e}@example.com",
                                       "first_name": e} for e in chunk]}),
            ("bulk subscribe", "/admin/v1/topics/bulk/subscriptions",
             lambda chunk: {"users": chunk}),
        ):
            bodies = [item(ids[i:i + PER_REQUEST]) for i in range(0, N, PER_REQUEST)]
            c0, t0 = cpu_s(srv.pid), time.monotonic()
            # connection j sends bodies j, j + C, j + 2C, ... one at a time
            workers = [threading.Thread(target=lambda j=j: [
                call("POST", path, b, conns[j]) for b in bodies[j::CONNECTIONS]])
                for j in range(CONNECTIONS)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            t, cpu = time.monotonic() - t0, cpu_s(srv.pid) - c0
            print(f"{name:15} {N:>8} items  {CONNECTIONS} conn  {t:6.2f} s  {N / t:>9,.0f} items/s  "
                  f"server CPU {cpu * 1e6 / N:6.1f} µs/item")
    finally:
        srv.terminate()
        srv.wait()


if __name__ == "__main__":
    main()
