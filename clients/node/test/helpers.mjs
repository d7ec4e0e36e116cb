// Shared helpers of herald-node's tests: a real herald per test file
// (scripts/herald-server.mjs), a client for it, a recorder of which table
// operations a client called (so a file can check it used every method of
// its namespaces), an active in_app flow, and polling with a deadline so no
// test can hang.

import { Herald, OPERATIONS } from '../dist/index.js';
import { startHerald, hex, sleep } from '../scripts/herald-server.mjs';

export { startHerald, hex, sleep };

/** A client of `server`, with `calls`: the `sdk` names of the operations it sent. */
export function client(server, options = {}) {
  const herald = new Herald({
    baseUrl: server.base,
    publicKey: server.keys.publicKey,
    secretKey: server.keys.secretKey,
    retryBaseDelayMs: 50,
    ...options,
  });
  const calls = new Set();
  const request = herald.transport.request.bind(herald.transport);
  herald.transport.request = (op, parts, opts) => {
    calls.add(op.sdk);
    return request(op, parts, opts);
  };
  herald.calls = calls;
  return herald;
}

/** The table's methods under these namespaces that `herald` never called. */
export function uncalled(herald, namespaces) {
  return Object.values(OPERATIONS)
    .map((op) => op.sdk)
    .filter((sdk) => namespaces.includes(sdk.split('.')[0]) && !herald.calls.has(sdk));
}

/** Polls `fn` until it returns a truthy value; throws with `what` after `ms`. */
export async function waitFor(what, fn, ms = 20_000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    }
    await sleep(50);
  }
}

/** The project's in_app channel (every project has one). */
export async function inAppChannel(herald) {
  for await (const c of herald.channels.list()) if (c.type === 'in_app') return c;
  throw new Error('no in_app channel');
}

/** An active flow with one in_app step; `extra` is merged into the create body. */
export async function activeFlow(herald, extra = {}) {
  const ch = await inAppChannel(herald);
  const flow = await herald.flows.create({
    handle: `f-${hex(4)}`,
    name: 'Test flow',
    steps: [{ type: 'channel', channel_id: ch.id, template: { subject: 'Hi', body: 'n={{ data.n }}' } }],
    ...extra,
  });
  await herald.flows.activate(flow.id);
  return flow;
}
