// The README's first example, run as written against a real herald (with an
// active `welcome` flow): the documented first steps must work. It imports
// 'herald-node' by name, which resolves to this package (self-reference).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHerald, client, inAppChannel, hex, waitFor } from './helpers.mjs';

const pkg = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
let server;
before(async () => {
  server = await startHerald();
});
after(async () => {
  await server?.stop();
});

test('the first example of the README triggers a flow', async () => {
  const herald = client(server);
  const ch = await inAppChannel(herald);
  await herald.flows.create({ handle: 'welcome', name: 'Welcome', steps: [{ type: 'channel', channel_id: ch.id, template: { body: '{{ data.tip }}' } }] });
  await herald.flows.activate('welcome');

  const readme = readFileSync(path.join(pkg, 'README.md'), 'utf8');
  const code = /```js\n([\s\S]*?)```/.exec(readme)[1];
  assert.match(code, /herald\.flows\.run\('welcome'/);
  const file = path.join(pkg, `.readme-example-${hex(4)}.mjs`);
  writeFileSync(file, code);
  try {
    const out = await new Promise((resolve, reject) =>
      execFile(process.execPath, [file], {
        timeout: 30_000,
        env: { ...process.env, HERALD_URL: server.base, HERALD_PUBLIC_KEY: server.keys.publicKey, HERALD_SECRET_KEY: server.keys.secretKey },
      }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
    );
    const [id, status] = out.trim().split(' ');
    assert.equal(status, 'pending');
    const run = await herald.flowRuns.get(id);
    assert.equal(run.recipients_count, 1);
    const feed = await waitFor('the feed entry', async () => {
      const f = await herald.users.feed('alice').toArray();
      return f.length === 1 && f;
    });
    assert.equal(feed[0].data.body, 'Try the feed');
  } finally {
    rmSync(file, { force: true });
  }
});
