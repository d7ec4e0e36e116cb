// Web push for herald-client: subscribes a service worker registration with the
// web_push channel's VAPID public key (GET /user/v1/channels/{id}) and registers
// the subscription's endpoint and keys with Herald; unregisters both.

import type { PushSubscription as HeraldPushSubscription, UserChannel } from './api-types.js';
import { HeraldError } from './errors.js';
import type { Transport } from './http.js';

/** The parts of a ServiceWorkerRegistration this needs (so it can be typed without the DOM's worker lib). */
export interface PushRegistrationLike {
  pushManager: {
    getSubscription(): Promise<BrowserPushSubscriptionLike | null>;
    subscribe(o: { userVisibleOnly: boolean; applicationServerKey: Uint8Array | string }): Promise<BrowserPushSubscriptionLike>;
  };
}
export interface BrowserPushSubscriptionLike {
  endpoint: string;
  toJSON(): { endpoint?: string; keys?: Record<string, string> };
  unsubscribe(): Promise<boolean>;
}

/** A base64url VAPID key as the bytes `pushManager.subscribe` wants. */
export function base64UrlToBytes(s: string): Uint8Array {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export async function registerWebPush(
  t: Transport,
  registration: PushRegistrationLike,
  channelId: string,
  platform = 'web',
): Promise<HeraldPushSubscription> {
  const channel = await t.request<UserChannel>('GET', `/channels/${encodeURIComponent(channelId)}`);
  if (channel.type !== 'web_push' || !channel.vapid_public_key) {
    throw new HeraldError({
      code: 'validation_failed',
      message: `channel ${channelId} is not a web_push channel with a VAPID public key`,
      status: 0,
      details: { field: 'channel_id', channel_type: channel.type },
    });
  }
  const key = base64UrlToBytes(channel.vapid_public_key);
  let sub = await registration.pushManager.getSubscription();
  if (!sub) sub = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  const json = sub.toJSON();
  const keys = json.keys && json.keys.p256dh && json.keys.auth ? { p256dh: json.keys.p256dh, auth: json.keys.auth } : undefined;
  return t.request<HeraldPushSubscription>('POST', `/channels/${encodeURIComponent(channelId)}/subscriptions`, {
    body: { identifier: json.endpoint ?? sub.endpoint, keys, platform },
  });
}

/** Removes the browser's subscription from Herald and unsubscribes it; false when there was none. */
export async function unregisterWebPush(t: Transport, registration: PushRegistrationLike, channelId: string): Promise<boolean> {
  const sub = await registration.pushManager.getSubscription();
  if (!sub) return false;
  try {
    await t.request<void>('DELETE', `/channels/${encodeURIComponent(channelId)}/subscriptions`, { body: { identifier: sub.endpoint } });
  } catch (e) {
    if (!(e instanceof HeraldError && e.status === 404)) throw e;
  }
  await sub.unsubscribe();
  return true;
}
