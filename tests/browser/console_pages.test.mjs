// Browser test of the console's pages (/console) in headless Chromium
// (playwright-core).
//
//   node tests/browser/console_pages.test.mjs
//
// Starts `herald serve` (binary from HERALD_BIN, default target/debug/herald;
// it builds nothing), adds an owner with `herald console add-member`, opens
// their one-time link, sets a password and lands on the console. Walks each
// page by its navigation link; creates a flow in the editor, sees a template
// error in the live preview, then the rendered text; saves, activates, sends
// a test, opens the notification and reads its decision-trace timeline; finds
// the test user, turns a preference off and sees their feed; sees the
// test counted on the Overview; creates a Discord channel from its
// provider's schema (the secret write-only); makes a topic and
// subscribes and removes the user; adds an event endpoint (its secret
// shown once), replays and rotates; changes settings (a bad timezone refused
// beside its field) and advances a test clock; reads the audit log; builds
// a route of two channels, the second with a backup channel, previews each
// and saves it as built. The same walk runs again on the second node of a
// three-node cluster (PostgreSQL and a nats-server of its own), signed in
// through a link of the first node: the session made there. axe-core (from
// node_modules, evaluated in the page: never a CDN) finds no serious or
// critical violation on any page; no request leaves the server's origin and
// no page logs an error (a CSP refusal would). Screenshots (one of each page
// of the navigation, and of the editor and a notification) land in
// tests/browser/artifacts/. Prints `N passed, N failed` last; exit code 0 when
// everything passed.

import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnHerald, hex } from '../../clients/js/scripts/herald-server.mjs';
import {
  ARTIFACTS, STEP_TIMEOUT, addMember, assertSameOrigin, axe, finish, launch, log, runTests, startCluster, step,
} from './console_harness.mjs';

const TEST_TIMEOUT = 180_000;
const PASSWORD = 'correct horse battery staple';


// The walk's screenshots: one per page of the navigation, as the walk
// last opened it (with what the walk made by then), named after the walk
// (`cluster-` on a cluster).
let shotPrefix = '';

/** Opens a page of the navigation by its link name; checks its heading and runs axe. */
async function viaNav(page, name, heading) {
  await Promise.all([
    page.waitForLoadState('load'),
    page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click(),
  ]);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  const current = await page.getByRole('navigation', { name: 'Console' }).locator('[aria-current="page"]').textContent();
  if (current !== name) throw new Error(`the current link is ${current}, not ${name}`);
  await axe(page, name);
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = `${shotPrefix}console-page-${name.toLowerCase().replace(/\W+/g, '-')}.png`;
  await page.screenshot({ path: path.join(ARTIFACTS, file), fullPage: true });
}

/**
 * The walk, on one server on the embedded store, or (`cluster`) on the
 * second node of a three-node cluster with the session made on the first.
 */
async function walkTest(cluster) {
  const keys = { publicKey: `pk_test_${hex(16)}`, secretKey: `sk_test_${hex(16)}` };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'herald-browser-data-'));
  const profile = mkdtempSync(path.join(tmpdir(), 'herald-browser-profile-'));
  const nodes = cluster ? await step('three nodes on one PostgreSQL database and a nats bus', () => startCluster(keys)) : null;
  const server = cluster ? null : spawnHerald(dataDir, keys, '127.0.0.1:0');
  shotPrefix = cluster ? 'cluster-' : '';
  const shot = (name) => path.join(ARTIFACTS, `${shotPrefix}${name}`);
  let context = null;
  const pageErrors = [];
  try {
    const base = await step('herald serve prints its address', () => (cluster ? nodes.nodes[1].base : server.address));
    // on a cluster the link is the first node's: the session is made there
    const signInBase = cluster ? nodes.nodes[0].base : base;
    const link = await step('herald console add-member prints a one-time link', () => addMember(dataDir, 'owner@example.com', 'owner',
      cluster ? { store: nodes.store, publicUrl: signInBase } : {}));
    if (!link.startsWith(`${signInBase}/console/invite/`)) throw new Error(`link ${link} (server ${signInBase})`);

    context = await step('launch headless Chromium', () => launch(profile, { viewport: { width: 1200, height: 1000 } }));
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT);
    page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      const from = m.location().url || '';
      // The browser logs every non-2xx fetch; the Admin API's 4xx answers are
      // the page's to show (a 5xx is caught below, from the responses).
      const answered = /^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()) && from.includes('/admin/v1/');
      if (m.type() === 'error' && !from.endsWith('/favicon.ico') && !answered) pageErrors.push(`console.error: ${m.text()} (${from})`);
    });
    page.on('response', (r) => {
      if (r.status() >= 500) pageErrors.push(`${r.status()} from ${r.url()}`);
    });
    const urls = [];
    page.on('request', (r) => urls.push(r.url()));

    await step('set a password through the link: the Overview', async () => {
      await page.goto(link);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByLabel('Password again').fill(PASSWORD);
      await Promise.all([page.waitForURL(`${signInBase}/console`), page.getByRole('button', { name: /Set password/ }).click()]);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      if (cluster) {
        // the cookie made on the first node opens the second (a cookie is
        // per host, not per port; the session is in the shared store)
        await page.goto(`${base}/console`);
        if (page.url() !== `${base}/console`) throw new Error(`the second node sent the session to ${page.url()}`);
        await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      }
      const csp = (await page.request.get(`${base}/console`)).headers()['content-security-policy'] || '';
      if (!csp.includes("script-src 'self'")) throw new Error('CSP: ' + csp);
      await page.getByText('No delivery is waiting').waitFor();
      await axe(page, 'Overview');
    });

    await step('Messages, Flows and Users by their links', async () => {
      await viaNav(page, 'Messages', 'Messages');
      await page.getByText('No notification matches.').waitFor();
      await viaNav(page, 'Users', 'Users');
      await viaNav(page, 'Flows', 'Flows');
    });

    const handle = `welcome-${hex(3)}`;
    await step('a new flow in the editor: a channel step, a template error in the preview, then the text', async () => {
      await page.getByLabel("New flow's handle").fill(handle);
      await Promise.all([page.waitForURL(`${base}/console/flows/${handle}`), page.getByRole('button', { name: 'New flow' }).click()]);
      await page.getByRole('heading', { level: 1, name: /New flow/ }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Welcome <b>aboard</b>');
      await page.getByLabel('Sample data (JSON)').fill('{"name": "Ada"}');
      await page.getByLabel('Add a step').selectOption('channel');
      await page.getByRole('button', { name: 'Add step' }).click();
      const body = page.getByLabel('Body', { exact: true });
      await body.fill('Hello {{ data.name ');
      const preview = page.getByLabel('Preview of step 1');
      await preview.getByText(/Not rendered|Template error/).waitFor();
      // the error also sits beside the field it names
      const beside = await page.locator('[data-error-for="steps.0.template.body"]').textContent();
      if (!beside.trim()) throw new Error('no error beside the body field');
      await axe(page, 'flow editor with an error');
      await body.fill('Hello {{ data.name }}!');
      await preview.getByText('Hello Ada!', { exact: true }).waitFor();
      const beside2 = await page.locator('[data-error-for="steps.0.template.body"]').textContent();
      if (beside2.trim()) throw new Error('the error stayed: ' + beside2);
    });

    await step('save (created), activate, send a test, open its notification', async () => {
      await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Save', exact: true }).click()]);
      await page.getByRole('heading', { level: 1, name: /Flow “Welcome <b>aboard<\/b>”/ }).waitFor();
      if ((await page.locator('h1 b').count()) !== 0) throw new Error('the name was rendered as markup');
      await page.getByRole('button', { name: 'Activate' }).click();
      await page.locator('#flow-status', { hasText: 'active' }).waitFor();
      // the flow as read back saves as it is (the editor's steps round-trip)
      await page.getByLabel('Add a step').selectOption('delay');
      await page.getByRole('button', { name: 'Add step' }).click();
      await page.getByLabel('Delay (seconds)').fill('0');
      await page.getByRole('button', { name: 'Move step 2 up' }).click();
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.locator('#flow-message', { hasText: 'Saved.' }).waitFor();
      await page.getByRole('button', { name: 'Remove step 1' }).click();
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.locator('#flow-message', { hasText: 'Saved.' }).waitFor();
      // the saved flow's preview, with the sample data given again
      await page.getByLabel('Sample data (JSON)').fill('{"name": "Ada"}');
      await page.getByLabel('Preview of step 1').getByText('Hello Ada!').waitFor();
      await axe(page, 'flow editor');
      await page.getByRole('button', { name: 'Send test' }).click();
      const open = page.getByRole('link', { name: 'open its notification' });
      await open.waitFor();
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: shot('console-flow-editor.png'), fullPage: true });
      await Promise.all([page.waitForURL(/\/console\/notifications\/[0-9a-f-]{36}$/), open.click()]);
    });

    await step("the notification's decision trace reads as a timeline", async () => {
      await page.getByRole('heading', { level: 2, name: 'Decision trace' }).waitFor();
      // an in-app delivery is sent at once; reload until its end shows
      for (let i = 0; i < 40; i++) {
        if (await page.getByText(/the delivery ended sent/).count()) break;
        await page.waitForTimeout(250);
        await page.reload();
      }
      const timeline = page.getByRole('list', { name: 'Decision trace' });
      const text = await timeline.innerText();
      for (const want of [
        `The run reached flow “${handle}”`,
        'Recipient console-test-user was resolved',
        "Step 1: sent because the recipient's preferences allow in_app",
        'Step 1: the delivery ended sent after 1 attempt(s)',
      ]) {
        if (!text.includes(want)) throw new Error(`the timeline has no "${want}":\n${text}`);
      }
      await axe(page, 'a notification');
      await page.screenshot({ path: shot('console-notification.png'), fullPage: true });
    });

    await step('Messages lists it, filtered by recipient', async () => {
      await viaNav(page, 'Messages', 'Messages');
      await page.getByLabel('Recipient').fill('console-test-user');
      await Promise.all([page.waitForURL(/recipient=console-test-user/), page.getByRole('button', { name: 'Filter' }).click()]);
      if ((await page.locator('table.list tbody tr').count()) !== 1) throw new Error('one notification expected');
      // its flow, by handle, links to the flow's editor
      const flow = page.locator('table.list tbody tr').getByRole('link', { name: handle, exact: true });
      if ((await flow.getAttribute('href')) !== `/console/flows/${handle}`) throw new Error('no link to the flow');
      await page.getByLabel('Recipient').fill('nobody');
      await Promise.all([page.waitForURL(/recipient=nobody/), page.getByRole('button', { name: 'Filter' }).click()]);
      await page.getByText('No notification matches.').waitFor();
    });

    await step("Users: find the test user, turn email off, see their feed", async () => {
      await viaNav(page, 'Users', 'Users');
      await page.getByLabel('External id or email').fill('test-user');
      await Promise.all([page.waitForURL(/q=test-user/), page.getByRole('button', { name: 'Search' }).click()]);
      await Promise.all([page.waitForURL(/\/console\/users\/console-test-user$/), page.getByRole('link', { name: 'console-test-user' }).click()]);
      await page.getByRole('list').filter({ hasText: 'Hello Ada!' }).first().waitFor();
      await page.getByLabel('email', { exact: true }).uncheck();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const prefs = await page.request.get(`${base}/admin/v1/users/console-test-user/preferences`, {
        headers: { 'x-service-api-key': keys.publicKey, 'x-service-secret-key': keys.secretKey },
      });
      const p = await prefs.json();
      if (p.channel_types.email !== false) throw new Error('preferences: ' + JSON.stringify(p));
      await axe(page, 'a user');
    });

    await step('Overview counts the test: its in_app delivery sent', async () => {
      await viaNav(page, 'Overview', 'Overview');
      const row = page.getByRole('row', { name: /in_app/ });
      await row.getByText('sent: 1').waitFor();
    });

    await step('Channels: a Discord channel from its schema, the secret write-only', async () => {
      await viaNav(page, 'Channels', 'Channels');
      await Promise.all([page.waitForURL(`${base}/console/channels/new`), page.getByRole('link', { name: 'New channel' }).click()]);
      await page.getByLabel('Provider', { exact: true }).selectOption('discord');
      const url = page.getByLabel('url (required) (secret)');
      if ((await url.getAttribute('type')) !== 'password') throw new Error('the secret is not a password field');
      await page.getByLabel('Name', { exact: true }).fill('Team chat');
      await url.fill('not a url');
      await page.getByRole('button', { name: 'Save channel' }).click();
      await page.locator('[data-error-for="config.url"]').filter({ hasText: /./ }).waitFor();
      await axe(page, 'a new channel');
      await url.fill('https://discord.com/api/webhooks/123456789012345678/s3cr3t-token');
      await Promise.all([page.waitForURL(/\/console\/channels\/[0-9a-f-]{36}$/), page.getByRole('button', { name: 'Save channel' }).click()]);
      await page.getByRole('heading', { level: 1, name: 'Channel “Team chat”' }).waitFor();
      const again = page.getByLabel('url (required) (secret)');
      if ((await again.inputValue()) !== '' || !(await again.getAttribute('placeholder')).startsWith('********')) {
        throw new Error('the secret is shown: ' + (await again.inputValue()));
      }
      if ((await page.content()).includes('s3cr3t-token')) throw new Error('the page holds the secret');
      await page.getByLabel('username').fill('Herald');
      await page.getByRole('button', { name: 'Save channel' }).click();
      await page.locator('#channel-message', { hasText: 'Saved.' }).waitFor();
      await axe(page, 'a channel');
      await viaNav(page, 'Channels', 'Channels');
      await page.getByRole('link', { name: 'Team chat' }).waitFor();
    });

    await step('Channels: Send test of the in-app channel to the test user, then its notification', async () => {
      await Promise.all([page.waitForURL(/\/console\/channels\/[0-9a-f-]{36}$/), page.getByRole('link', { name: 'In-app feed' }).click()]);
      await page.getByRole('heading', { level: 2, name: 'Send test' }).waitFor();
      const user = page.getByLabel('User (external id)');
      // a user nobody has: the API's refusal beside the field
      await user.fill('nobody-at-all');
      await page.getByRole('button', { name: 'Send test' }).click();
      await page.locator('[data-error-for="user_id"]').filter({ hasText: /./ }).waitFor();
      await axe(page, 'a channel with a refused test');
      // by keyboard: Enter in the field sends it
      await user.fill('console-test-user');
      await user.press('Enter');
      const open = page.getByRole('link', { name: 'View the notification' });
      await open.waitFor();
      const beside = await page.locator('[data-error-for="user_id"]').textContent();
      if (beside.trim()) throw new Error('the error stayed: ' + beside);
      await Promise.all([page.waitForURL(/\/console\/notifications\/[0-9a-f-]{36}$/), open.click()]);
      await page.getByText('A test of the channel').waitFor();
      await axe(page, "a channel test's notification");
    });

    await step('Topics: create one, subscribe the test user, remove them', async () => {
      await viaNav(page, 'Topics', 'Topics');
      await page.getByLabel("New topic's key").fill('team');
      await page.getByLabel('Name', { exact: true }).fill('The <i>team</i>');
      await Promise.all([page.waitForURL(`${base}/console/topics/team`), page.getByRole('button', { name: 'Create topic' }).click()]);
      await page.getByLabel('Subscribe a user (external id)').fill('console-test-user');
      await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Subscribe' }).click()]);
      await page.getByRole('link', { name: 'console-test-user' }).waitFor();
      await axe(page, 'a topic');
      await page.getByRole('button', { name: 'Remove console-test-user' }).click();
      await page.getByRole('status').filter({ hasText: 'Removed console-test-user.' }).waitFor();
      if ((await page.locator('h1 i').count()) !== 0) throw new Error('the name was rendered as markup');
    });

    await step('Event endpoints: add one (its secret shown once), replay, rotate the secret', async () => {
      await viaNav(page, 'Event endpoints', 'Event endpoints');
      await page.getByLabel("New endpoint's URL").fill('not a url');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.locator('#err-ep-url').filter({ hasText: /./ }).waitFor();
      await page.getByLabel("New endpoint's URL").fill('https://example.com/herald-hooks');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = await page.locator('#endpoint-secret code.secret').textContent();
      if (!secret || secret.length < 16) throw new Error('no secret shown: ' + secret);
      await axe(page, 'Event endpoints');
      await Promise.all([page.waitForURL(/\/console\/endpoints\/[0-9a-f-]{36}$/), page.getByRole('link', { name: 'Open the endpoint' }).click()]);
      if ((await page.content()).includes(secret)) throw new Error('the endpoint page shows the secret');
      await page.getByLabel(/^Send again the events since/).fill('yesterday');
      await page.getByRole('button', { name: 'Replay' }).click();
      await page.locator('#err-replay-since').filter({ hasText: /./ }).waitFor();
      await page.getByLabel(/^Send again the events since/).fill('2020-01-01T00:00:00Z');
      await page.getByRole('button', { name: 'Replay' }).click();
      await page.locator('#replay-message', { hasText: /event\(s\) queued again/ }).waitFor();
      await page.getByRole('button', { name: 'Rotate the secret' }).click();
      const rotated = await page.locator('#secret-out code.secret').textContent();
      if (!rotated || rotated === secret) throw new Error('the rotated secret: ' + rotated);
      await axe(page, 'an event endpoint');
    });

    await step('Settings: a bad timezone beside its field, a good one saved, a test clock advanced', async () => {
      await viaNav(page, 'Settings', 'Settings');
      await page.getByLabel(/^Timezone/).fill('Mars/Olympus');
      await page.getByRole('button', { name: 'Save settings' }).click();
      const err = page.locator('#err-timezone');
      await err.filter({ hasText: /./ }).waitFor();
      if ((await page.getByLabel(/^Timezone/).getAttribute('aria-invalid')) !== 'true') throw new Error('the field is not marked invalid');
      await page.getByLabel(/^Timezone/).fill('Europe/Paris');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.locator('#settings-message', { hasText: 'Saved.' }).waitFor();
      if ((await err.textContent()).trim()) throw new Error('the error stayed');
      await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Use a test clock' }).click()]);
      await page.getByLabel(/^Advance by/).fill('2h');
      await page.getByRole('button', { name: 'Advance the clock' }).click();
      await page.locator('#clock-message', { hasText: 'The clock is now at' }).waitFor();
      await page.getByRole('button', { name: 'Rotate the secret key' }).click();
      await page.locator('#secret-message', { hasText: 'Rotated' }).waitFor();
      const key = (await page.locator('#new-secret-key').textContent()).trim();
      if (!key.startsWith('sk_')) throw new Error(`new secret key: ${key}`);
      await page.reload();
      if ((await page.content()).includes(key)) throw new Error('the secret key is shown again');
      await axe(page, 'Settings');
    });

    await step('Audit log: the flow made in the editor, by the owner; the member added by the operator', async () => {
      await viaNav(page, 'Audit log', 'Audit log');
      const created = page.locator('tr', { hasText: 'flow.created' }).filter({ hasText: handle });
      await created.first().waitFor();
      if (!(await created.first().textContent()).includes('owner@example.com')) throw new Error('flow.created is not by the owner');
      await page.getByLabel('Who').fill('operator');
      await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Filter' }).click()]);
      await page.locator('tr', { hasText: 'member.created' }).first().waitFor();
      if (await page.locator('tr', { hasText: 'flow.created' }).count()) throw new Error('the filter let other actors through');
      await page.getByText('Before and after').first().click();
      if ((await page.content()).includes('$argon2')) throw new Error('a password hash is on the page');
      await axe(page, 'Audit log');
    });

    await step('Flows: a route of two channels, the second with a backup, each previewed, saved as built', async () => {
      const admin = { 'x-service-api-key': keys.publicKey, 'x-service-secret-key': keys.secretKey };
      // a second chat channel to fall back to, made through the Admin API
      const made = await page.request.post(`${base}/admin/v1/channels`, {
        headers: admin,
        data: { type: 'chat', provider: 'discord', name: 'Backup chat', config: { url: 'https://discord.com/api/webhooks/123456789012345679/other' } },
      });
      if (made.status() !== 201) throw new Error(`the backup channel: ${made.status()} ${await made.text()}`);
      const backup = (await made.json()).id;
      const all = (await (await page.request.get(`${base}/admin/v1/channels?limit=100`, { headers: admin })).json()).items;
      const chat = all.find((c) => c.name === 'Team chat');
      // a new route starts with the in-app channel
      const inapp = all.find((c) => c.type === 'in_app');
      await viaNav(page, 'Flows', 'Flows');
      const rh = `route-${hex(3)}`;
      await page.getByLabel("New flow's handle").fill(rh);
      await Promise.all([page.waitForURL(`${base}/console/flows/${rh}`), page.getByRole('button', { name: 'New flow' }).click()]);
      await page.getByLabel('Sample data (JSON)').fill('{"name": "Ada"}');
      await page.getByLabel('Add a step').selectOption('route');
      await page.getByRole('button', { name: 'Add step' }).click();
      await page.getByLabel(/^Success/).selectOption('read');
      await page.getByLabel('Body (step 1, channel 1)').fill('In the app, {{ data.name }}');
      await page.getByRole('button', { name: 'Add a channel to step 1' }).click();
      await page.getByLabel('Channel (step 1, channel 2)').selectOption(chat.id);
      await page.getByLabel(/^After, if not met/).fill('10m');
      await page.getByLabel('Body (step 1, channel 2)').fill('On chat, {{ data.name }}');
      await page.getByRole('button', { name: 'Add a backup channel to step 1, channel 2' }).click();
      await page.getByLabel('Backup 1 (step 1, channel 2)').selectOption(backup);
      await page.getByLabel('Preview of step 1, channel 1').getByText('In the app, Ada').waitFor();
      await page.getByLabel('Preview of step 1, channel 2').getByText('On chat, Ada').waitFor();
      await axe(page, 'a route in the flow editor');
      await page.screenshot({ path: shot('console-flow-route.png'), fullPage: true });
      await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Save', exact: true }).click()]);
      const saved = await (await page.request.get(`${base}/admin/v1/flows/${rh}`, { headers: admin })).json();
      const r = saved.steps && saved.steps[0];
      if (!r || r.type !== 'route' || r.success !== 'read' || r.channels.length !== 2 || r.channels[1].after !== '10m'
        || r.channels[0].channel_id !== inapp.id
        || r.channels[1].channel_id !== chat.id || JSON.stringify(r.channels[1].fallback_channel_ids) !== JSON.stringify([backup])) {
        throw new Error('the route saved as ' + JSON.stringify(saved.steps));
      }
      // read back into the editor as saved
      if ((await page.getByLabel('Backup 1 (step 1, channel 2)').inputValue()) !== backup) throw new Error('the backup did not come back');
    });

    await step("no request left the server's origin", async () => {
      assertSameOrigin(urls, base, signInBase);
    });
    if (pageErrors.length) throw new Error('errors in the pages:\n' + pageErrors.join('\n'));
  } catch (e) {
    const tail = cluster ? nodes.output() : server.output.slice(-20);
    log('  server output (tail):\n' + tail.map((l) => '    ' + l).join('\n'));
    if (pageErrors.length) log('  page errors:\n    ' + pageErrors.join('\n    '));
    throw e;
  } finally {
    if (cluster) {
      await finish(context, null, [dataDir, profile]);
      await nodes.stop();
    } else {
      await finish(context, server, [dataDir, profile]);
    }
  }
}

// ------------------------------------------------------------------ runner

await runTests([
  ['console pages: sign in, walk the pages, build, preview, activate and test a flow, read its trace', () => walkTest(false)],
  ['console pages on a three-node cluster: the same walk on the second node, signed in on the first', () => walkTest(true)],
], TEST_TIMEOUT);
