// Compile-time checks of the SDK's public types (run.sh compiles this with
// tsconfig.typecheck.json, nothing runs): answers, bodies and query
// parameters follow the generated schema, and wrong ones do not compile.

import { Herald, HeraldError, responseOf, verifyEvent, type Notification, type Suppression, type User } from 'herald-node';

export async function usage(herald: Herald): Promise<void> {
  const user: User = await herald.users.upsert('ada', { first_name: 'Ada', email: null });
  const id: string = user.external_id;

  // @ts-expect-error: `first_name` is a string or null, not a number
  await herald.users.upsert('ada', { first_name: 1 });

  const run = await herald.flows.run('welcome', { recipients: [{ external_id: id }], data: { n: 1 } }, { idempotencyKey: 'k' });
  const runId: string = run.id;
  await herald.flows.run('welcome', { recipients: ['alice'] }, { idempotencyKey: 'signup-42' });
  const replayed: boolean | undefined = responseOf(run)?.replayed;

  for await (const n of herald.notifications.list({ status: 'processed', flow_id: 'welcome' })) {
    const note: Notification = n;
    void note.flow_run_id;
  }
  // @ts-expect-error: no such notification status
  herald.notifications.list({ status: 'bogus' });

  const page = await herald.users.feed('ada', { status: 'unread' }).page();
  const unread: number = page.body.meta.unread_count;

  const erasure = await herald.users.delete('ada', { erase: true });
  if (erasure) void (erasure.status satisfies string);

  const sup: Suppression = await herald.suppressions.add({ channel_type: 'sms', address: '+15551234567' });
  void (sup.reason satisfies 'manual' | 'hard_bounce' | 'soft_bounce' | 'complaint');
  for await (const s of herald.suppressions.list({ channel_type: 'email' })) void s.address;
  // @ts-expect-error: only email and sms addresses are suppressed
  herald.suppressions.list({ channel_type: 'push' });
  // @ts-expect-error: only email and sms addresses are suppressed
  await herald.suppressions.remove('push', 'x');

  const cats = await herald.categories.list();
  void cats.map((c) => c.handle);

  try {
    await herald.project.get();
  } catch (e) {
    if (e instanceof HeraldError) void [e.code, e.status, e.details, e.requestId, e.kind];
  }
  const ev = verifyEvent<{ id: string }>('{}', {}, 'whsec_x');
  const evId: string = ev.data.id;
  void [runId, replayed, unread, evId];
}
