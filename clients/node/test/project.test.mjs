// The project's settings (test clock, signing key, link secret) and its
// content (partials, layouts, translations) against a real herald: every
// method of those namespaces is called at least once (the last test checks it).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { startHerald, client, uncalled } from './helpers.mjs';
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

test('project: get, update, test clock advance', async () => {
  const p = await herald.project.get();
  assert.equal(p.clock, 'real');
  const updated = await herald.project.update({ timezone: 'Europe/Paris', retention: { notifications: '30d' }, clock: 'test' });
  assert.equal(updated.timezone, 'Europe/Paris');
  assert.equal(updated.retention.notifications, '30d');
  assert.equal(updated.clock, 'test');
  const before = Date.parse(updated.clock_time);
  const advanced = await herald.project.advanceClock({ by: '1h' });
  assert.equal(Date.parse(advanced.clock_time) - before, 3600_000);
  await assert.rejects(herald.project.advanceClock({ to: '2000-01-01T00:00:00Z' }), (e) => e.code === 'validation_failed' && e.fields[0].field === 'to');
  await herald.project.update({ clock: 'real' });
});

test('project: signing key generated, set from a PEM, deleted; link secret rotated', async () => {
  const pair = await herald.project.generateSigningKey();
  assert.match(pair.private_key, /BEGIN PRIVATE KEY/);
  assert.equal(responseOf(pair).status, 201);
  assert.equal((await herald.project.get()).signing_key_configured, true);
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = await herald.project.setSigningKey(publicKey.export({ type: 'spki', format: 'pem' }));
  assert.equal(p.signing_key_configured, true);
  await herald.project.deleteSigningKey();
  assert.equal((await herald.project.get()).signing_key_configured, false);

  await herald.users.upsert('linked');
  const link = await herald.users.createPreferenceLink('linked');
  assert.equal((await fetch(link.url)).status, 200);
  await herald.project.rotateLinkSecret();
  assert.equal((await fetch(link.url)).status, 404);

  // a new secret key, shown once; the one this client holds works for the grace period
  const rotated = await herald.project.rotateSecretKey(86400);
  assert.ok(rotated.secret_key.startsWith('sk_'));
  assert.ok(rotated.previous_secret_expires_at);
  assert.ok((await herald.project.get()).name);
});

test('partials: upsert, get, list, delete', async () => {
  const p = await herald.partials.upsert('footer', { content: 'Bye {{ recipient.first_name }}' });
  assert.equal(p.handle, 'footer');
  assert.equal(responseOf(p).status, 201);
  assert.equal(responseOf(await herald.partials.upsert('footer', { content: 'Bye!' })).status, 200);
  assert.equal((await herald.partials.get('footer')).content, 'Bye!');
  assert.deepEqual((await herald.partials.list()).map((x) => x.handle), ['footer']);
  await herald.partials.delete('footer');
  assert.deepEqual(await herald.partials.list(), []);
});

test('layouts: upsert, get, list, delete', async () => {
  const l = await herald.layouts.upsert('main', { name: 'Main', html: '<html><body>{{ content }}</body></html>' });
  assert.equal(l.handle, 'main');
  assert.equal((await herald.layouts.get('main')).name, 'Main');
  assert.deepEqual((await herald.layouts.list()).map((x) => x.handle), ['main']);
  await herald.layouts.delete('main');
  await assert.rejects(herald.layouts.get('main'), (e) => e.code === 'not_found');
});

test('translations: upsert, get, list, delete', async () => {
  const t = await herald.translations.upsert('fr-ca', { messages: { welcome: { subject: 'Bienvenue, {{ name }} !' } } });
  assert.equal(t.locale, 'fr-CA');
  assert.equal((await herald.translations.get('fr-CA')).messages.welcome.subject, 'Bienvenue, {{ name }} !');
  const list = await herald.translations.list();
  assert.deepEqual(list.map((x) => [x.locale, x.message_count]), [['fr-CA', 1]]);
  await herald.translations.delete('fr-CA');
  assert.deepEqual(await herald.translations.list(), []);
});

test('every method of project, partials, layouts and translations was called', () => {
  assert.deepEqual(uncalled(herald, ['project', 'partials', 'layouts', 'translations']), []);
});
