// Channels, flows (runs, cancellations, previews), flow runs, notifications
// with their traces, and deliveries against a real herald: every method of
// those namespaces is called at least once (the last test checks it).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHerald, client, uncalled, inAppChannel, waitFor, hex } from './helpers.mjs';
import { responseOf } from '../dist/index.js';

let server;
let herald;
before(async () => {
  server = await startHerald();
  herald = client(server);
});
after(async () => {
  await server?.stop();
});

test('channels: create (with an automatic Idempotency-Key), get, list, update, revoke, delete', async () => {
  const ch = await herald.channels.create({ type: 'email', provider: 'smtp', name: 'Mail' });
  assert.equal(ch.status, 'unconfigured');
  const info = responseOf(ch);
  assert.equal(info.status, 201);
  assert.match(info.idempotencyKey, /^[0-9a-f-]{36}$/);
  assert.equal(info.replayed, false);
  assert.equal((await herald.channels.get(ch.id)).name, 'Mail');
  const types = (await herald.channels.list().toArray()).map((c) => c.type).sort();
  assert.deepEqual(types, ['email', 'in_app']);
  assert.equal((await herald.channels.update(ch.id, { name: 'Mail 2' })).name, 'Mail 2');
  assert.equal((await herald.channels.revoke(ch.id)).status, 'revoked');
  await herald.channels.delete(ch.id);
  await assert.rejects(herald.channels.get(ch.id), (e) => e.code === 'not_found' && e.details.resource === 'channel');
});

test('channels.testChannel: one message to a user, its notification marked as a test', async () => {
  const inApp = await inAppChannel(herald);
  const ext = `tested-${hex(3)}`;
  await herald.users.upsert(ext, {});
  const sent = await herald.channels.testChannel(inApp.id, ext, { body: 'Is it on?' });
  assert.equal(responseOf(sent).status, 202);
  assert.equal(sent.channel_id, inApp.id);
  assert.equal(sent.status, 'pending');
  const n = await waitFor('the test notification', async () => {
    const got = await herald.notifications.get(sent.notification_id);
    return got.status === 'processed' ? got : null;
  });
  assert.equal(n.test_channel_id, inApp.id);
  assert.equal(n.flow_run_id, sent.flow_run_id);
  assert.equal(n.deliveries[0].data.body, 'Is it on?');
  await assert.rejects(
    herald.channels.testChannel(inApp.id, `nobody-${hex(3)}`),
    (e) => e.status === 422 && e.fields.some((f) => f.field === 'user_id' && f.reason === 'inclusion'),
  );
});

test('flows: create, get by handle, list, update, activate, deactivate, archive', async () => {
  const inApp = await inAppChannel(herald);
  const handle = `welcome-${hex(3)}`;
  const flow = await herald.flows.create({
    handle,
    name: 'Welcome',
    steps: [{ type: 'channel', channel_id: inApp.id, template: { body: 'Hi {{ recipient.first_name }}' } }],
  });
  assert.equal(flow.status, 'draft');
  assert.equal((await herald.flows.get(handle)).id, flow.id);
  assert.ok((await herald.flows.list().toArray()).some((f) => f.id === flow.id));
  assert.equal((await herald.flows.update(handle, { name: 'Welcome!' })).name, 'Welcome!');
  assert.equal((await herald.flows.activate(handle)).status, 'active');
  assert.equal((await herald.flows.deactivate(flow.id)).status, 'draft');
  assert.equal((await herald.flows.archive(flow.id)).status, 'archived');
});

test('flows.run, flowRuns.get, notifications list/get/trace, deliveries list/get', async () => {
  const inApp = await inAppChannel(herald);
  const flow = await herald.flows.create({
    handle: `run-${hex(3)}`,
    name: 'Run',
    steps: [{ type: 'channel', channel_id: inApp.id, template: { body: 'n={{ data.n }}' } }],
  });
  await herald.flows.activate(flow.id);
  const run = await herald.flows.run(flow.handle, { recipients: [{ external_id: 'ann', first_name: 'Ann' }], data: { n: 7 } });
  assert.equal(responseOf(run).status, 202);
  assert.equal(run.recipients_count, 1);

  const processed = await waitFor('the run to be processed', async () => {
    const r = await herald.flowRuns.get(run.id);
    return r.status === 'processed' && r;
  });
  assert.equal(processed.notifications_count, 1);

  const notes = await herald.notifications.list({ flow_run_id: run.id }).toArray();
  assert.equal(notes.length, 1);
  const n = await herald.notifications.get(notes[0].id);
  assert.equal(n.recipient.external_id, 'ann');
  const trace = await herald.notifications.trace(n.id);
  assert.equal(trace.notification_id, n.id);
  assert.ok(trace.entries.some((e) => e.code === 'flow.reached'));

  const deliveries = await herald.deliveries.list({ notification_id: n.id }).toArray();
  assert.equal(deliveries.length, 1);
  const d = await herald.deliveries.get(deliveries[0].id);
  assert.equal(d.status, 'sent');
  assert.equal(d.data.body, 'n=7');
});

test('flows.cancel stops a waiting run by its cancellation key', async () => {
  const inApp = await inAppChannel(herald);
  const flow = await herald.flows.create({
    handle: `delayed-${hex(3)}`,
    name: 'Delayed',
    steps: [
      { type: 'delay', seconds: 3600 },
      { type: 'channel', channel_id: inApp.id, template: { body: 'later' } },
    ],
  });
  await herald.flows.activate(flow.id);
  await herald.flows.run(flow.id, { recipients: [{ external_id: 'cat' }], cancellation_key: 'invoice-42' });
  const first = await herald.flows.cancel(flow.id, { cancellation_key: 'invoice-42' });
  assert.equal(first.canceled, 1);
  assert.equal((await herald.flows.cancel(flow.id, { cancellation_key: 'invoice-42' })).canceled, 0);
});

test('flows.preview and flows.previewUnsaved render without storing', async () => {
  const inApp = await inAppChannel(herald);
  const flow = await herald.flows.create({
    handle: `pv-${hex(3)}`,
    name: 'Preview',
    steps: [{ type: 'channel', channel_id: inApp.id, template: { body: 'Hi {{ recipient.first_name }}, {{ data.tip }}' } }],
  });
  const p = await herald.flows.preview(flow.id, { user: { external_id: 'pv-user', first_name: 'Pia' }, data: { tip: 'tabs' } });
  assert.equal(p.flow_id, flow.id);
  assert.equal(p.steps[0].content.body, 'Hi Pia, tabs');
  const u = await herald.flows.previewUnsaved({
    steps: [{ type: 'channel', channel_id: inApp.id, template: { body: 'x={{ data.x }}' } }],
    user: 'pv-user',
    data: { x: 2 },
  });
  assert.equal(u.flow_id, null);
  assert.equal(u.steps[0].content.body, 'x=2');
  // nothing stored: the previewed user does not exist
  await assert.rejects(herald.users.get('pv-user'), (e) => e.code === 'not_found');
});

test('every method of channels, flows, flowRuns, notifications and deliveries was called', () => {
  assert.deepEqual(uncalled(herald, ['channels', 'flows', 'flowRuns', 'notifications', 'deliveries']), []);
});
