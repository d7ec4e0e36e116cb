// Verifies the events Herald POSTs to event endpoints (docs/API.md §15): the
// Standard Webhooks headers webhook-id, webhook-timestamp and
// webhook-signature (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, several
// space-separated while a rotated-out secret still signs). A receiver may
// also hold several secrets of its own while it switches; any one valid
// signature under any one of them passes. The timestamp must be within a
// tolerance of now, so a captured request cannot be replayed later.

import { createHmac, timingSafeEqual } from 'node:crypto';

/** The event types Herald sends (docs/API.md §15). */
export type EventType =
  | 'flow_run.accepted'
  | 'notification.processed'
  | 'notification.batched'
  | 'delivery.sent'
  | 'delivery.failed'
  | 'delivery.skipped'
  | 'delivery.retrying'
  | 'delivery.canceled'
  | 'delivery.delivered'
  | 'delivery.bounced'
  | 'delivery.complained'
  | 'feed_entry.seen'
  | 'feed_entry.read'
  | 'feed_entry.clicked'
  | 'feed_entry.archived'
  | 'feed_entry.interacted'
  | 'push_subscription.removed';

/** A verified event: the body's `{type, timestamp, data}` and the `webhook-id` (deduplicate on it). */
export interface HeraldEvent<D = Record<string, unknown>> {
  /** The `webhook-id`: the same on every attempt and replay of the event. */
  id: string;
  type: EventType | (string & {});
  /** When the event happened (RFC 3339). */
  timestamp: string;
  /** The resource as the Admin API shows it (a delivery, a notification, a run…). */
  data: D;
  /** The attempt's `webhook-timestamp`, in seconds since the epoch. */
  attemptedAt: number;
}

export type EventVerificationReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_secret'
  | 'no_matching_signature'
  | 'invalid_body';

/** Why an event was refused: `reason` says which check failed. */
export class EventVerificationError extends Error {
  override name = 'EventVerificationError';
  readonly reason: EventVerificationReason;
  constructor(reason: EventVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Request headers as any server framework hands them over. */
export type HeadersLike =
  | Headers
  | Record<string, string | string[] | undefined>
  | Iterable<[string, string]>;

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, either way (default 300 s). */
  toleranceSeconds?: number;
  /** "Now", in seconds since the epoch (tests). */
  now?: number;
}

export type VerifyResult<D = Record<string, unknown>> =
  | { ok: true; event: HeraldEvent<D> }
  | { ok: false; error: EventVerificationError };

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const entries: Iterable<[string, unknown]> =
    Symbol.iterator in (headers as object) ? (headers as Iterable<[string, string]>) : Object.entries(headers);
  for (const [k, v] of entries) {
    if (k.toLowerCase() !== name) continue;
    if (Array.isArray(v)) return v.join(' ');
    return typeof v === 'string' ? v : undefined;
  }
  return undefined;
}

function secretBytes(secret: string): Buffer {
  const b64 = secret.startsWith('whsec_') ? secret.slice(6) : secret;
  const key = Buffer.from(b64, 'base64');
  if (key.length === 0 || key.toString('base64').replace(/=+$/, '') !== b64.replace(/=+$/, '')) {
    throw new EventVerificationError('invalid_secret', 'the signing secret is not `whsec_` + base64');
  }
  return key;
}

/**
 * Checks an event endpoint's request and returns its event; throws an
 * EventVerificationError when a header is missing, the timestamp is out of
 * tolerance, no signature matches, or the body is not an event.
 *
 * `body` must be the raw body as received (a string or bytes): re-serialised
 * JSON does not verify. `secret` is the endpoint's `whsec_…` secret, or a
 * list of them while you rotate.
 */
export function verifyEvent<D = Record<string, unknown>>(
  body: string | Uint8Array,
  headers: HeadersLike,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): HeraldEvent<D> {
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sigs = header(headers, 'webhook-signature');
  if (!id || !ts || !sigs) {
    const which = !id ? 'webhook-id' : !ts ? 'webhook-timestamp' : 'webhook-signature';
    throw new EventVerificationError('missing_header', `no ${which} header`);
  }
  if (!/^\d{1,15}$/.test(ts.trim())) throw new EventVerificationError('invalid_timestamp', 'webhook-timestamp is not a number of seconds');
  const attemptedAt = Number(ts.trim());
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (attemptedAt < now - tolerance) throw new EventVerificationError('timestamp_too_old', `webhook-timestamp is more than ${tolerance} s old`);
  if (attemptedAt > now + tolerance) throw new EventVerificationError('timestamp_too_new', `webhook-timestamp is more than ${tolerance} s ahead`);

  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const signed = Buffer.concat([Buffer.from(`${id}.${ts.trim()}.`, 'utf8'), raw]);
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0) throw new EventVerificationError('invalid_secret', 'no signing secret given');
  // compared as base64 text, as Standard Webhooks libraries do: a decoder
  // would accept variants of one signature (unused low bits, missing padding)
  const expected = secrets.map((s) => Buffer.from(createHmac('sha256', secretBytes(s)).update(signed).digest('base64')));
  const given = sigs
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3)));
  // every pair is compared, in constant time, so the time taken says nothing of which matched
  let match = false;
  for (const g of given) {
    for (const e of expected) if (g.length === e.length && timingSafeEqual(g, e)) match = true;
  }
  if (!match) throw new EventVerificationError('no_matching_signature', 'no webhook-signature matches the body under the secret(s)');

  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new EventVerificationError('invalid_body', 'the body is not JSON');
  }
  const o = parsed as Record<string, unknown> | null;
  if (!o || typeof o !== 'object' || typeof o.type !== 'string' || typeof o.data !== 'object') {
    throw new EventVerificationError('invalid_body', 'the body is not an event `{type, timestamp, data}`');
  }
  return { id, type: o.type, timestamp: String(o.timestamp ?? ''), data: o.data as D, attemptedAt };
}

/** `verifyEvent` without throwing: `{ok: true, event}` or `{ok: false, error}`. */
export function checkEvent<D = Record<string, unknown>>(
  body: string | Uint8Array,
  headers: HeadersLike,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): VerifyResult<D> {
  try {
    return { ok: true, event: verifyEvent<D>(body, headers, secret, options) };
  } catch (e) {
    if (e instanceof EventVerificationError) return { ok: false, error: e };
    throw e;
  }
}
