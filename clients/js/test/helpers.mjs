// Shared helpers of herald-client's node tests: a real herald per test file
// (scripts/herald-server.mjs), a user with an active in_app flow, a client for
// that user, and polling waits with a deadline so no test can hang.

import { Herald, HeraldError } from '../dist/index.js';
import { startHerald, hex, sleep } from '../scripts/herald-server.mjs';

export { Herald, HeraldError, startHerald, hex, sleep };

if (typeof globalThis.WebSocket !== 'function') {
  throw new Error('no global WebSocket: run node >= 22, or node 20 with --experimental-websocket (see run.sh)');
}

/** Polls `fn` until it returns a truthy value; throws with `what` after `ms`. */
export async function waitFor(what, fn, ms = 15_000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(25);
  }
}

/** A user, an active in_app flow, `run(data)` for that user, and a dev-mode client. */
export async function setup(server, opts = {}) {
  const ext = opts.ext ?? `u-${hex(6)}`;
  await server.admin.user(ext, { first_name: 'Ada', email: 'ada@example.com' });
  const flow = await server.admin.inAppFlow();
  const run = (data) => server.admin.run(flow.id, ext, data);
  const herald = new Herald({
    baseUrl: server.base,
    publicKey: server.keys.publicKey,
    userId: ext,
    reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
    ...opts.client,
  });
  return { ext, flow, run, herald };
}

/** Runs the flow `n` times (data.n = 1..n) and waits until the feed holds `total` entries. */
export async function runMany(server, s, n, total = n) {
  for (let i = 1; i <= n; i++) await s.run({ title: `T${i}`, n: i });
  await waitFor(`${total} feed entries`, async () => {
    const p = await s.herald.feed.fetch({ status: 'all', limit: 1000 });
    return p.items.length + (await s.herald.feed.fetch({ status: 'archived', limit: 1000 })).items.length >= total;
  }, 60_000);
}
