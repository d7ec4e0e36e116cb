// Serves the built example app (example/dist/) and proxies /user/v1 — HTTP
// and the live feed's WebSocket upgrade — to a Herald server, so the browser
// talks to Herald on the page's own origin (Herald sends no CORS headers).
//
//   node example/server.mjs --herald http://127.0.0.1:8080 [--port 5173]
//
// The browser tests import startExampleServer() and run it on a free port.

import { createServer, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** Starts the server on 127.0.0.1:`port` (0: a free one); resolves with `{ url, close() }`. */
export function startExampleServer({ herald, port = 0, dir = path.join(here, 'dist') }) {
  const target = new URL(herald);
  const proxied = (url) => url === '/user/v1' || url.startsWith('/user/v1/') || url.startsWith('/user/v1?');
  const sockets = new Set();
  const pairs = new Set(); // proxied WebSockets, [browser side, herald side]

  const server = createServer(async (req, res) => {
    if (proxied(req.url)) {
      const up = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
        (r) => {
          res.writeHead(r.statusCode, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', (e) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`herald unreachable: ${e.message}`);
      });
      req.pipe(up);
      return;
    }
    // static files: only names in dir, index.html for /
    const name = new URL(req.url, 'http://x').pathname.replace(/^\/+/, '') || 'index.html';
    if (name.includes('/') || name.startsWith('.')) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(path.join(dir, name));
      res.writeHead(200, { 'content-type': TYPES[path.extname(name)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });

  // WebSocket: replay the upgrade request to Herald and splice the two sockets
  server.on('upgrade', (req, socket, head) => {
    if (!proxied(req.url)) {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    const up = connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const k = req.rawHeaders[i];
        lines.push(`${k}: ${k.toLowerCase() === 'host' ? target.host : req.rawHeaders[i + 1]}`);
      }
      up.write(lines.join('\r\n') + '\r\n\r\n');
      if (head && head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    const pair = [socket, up];
    pairs.add(pair);
    sockets.add(up);
    sockets.add(socket);
    const drop = () => {
      up.destroy();
      socket.destroy();
      sockets.delete(up);
      sockets.delete(socket);
      pairs.delete(pair);
    };
    up.on('error', drop);
    up.on('close', drop);
    socket.on('error', drop);
    socket.on('close', drop);
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: p } = server.address();
      resolve({
        url: `http://127.0.0.1:${p}`,
        /** Cuts every proxied WebSocket without a close frame (a dropped network); returns how many. */
        dropWebSockets() {
          const n = pairs.size;
          for (const pair of [...pairs]) for (const s of pair) s.destroy();
          return n;
        },
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : dflt;
  };
  const herald = arg('--herald', process.env.HERALD_URL);
  if (!herald) {
    console.error('usage: node example/server.mjs --herald http://127.0.0.1:PORT [--port 5173]');
    process.exit(2);
  }
  const s = await startExampleServer({ herald, port: Number(arg('--port', '5173')) });
  console.log(`example on ${s.url} (proxying /user/v1 to ${herald})`);
}
