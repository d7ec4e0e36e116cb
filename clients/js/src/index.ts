// herald-client: the entry point. `new Herald({ baseUrl, publicKey, userToken |
// userId })` gives `feed` (pages, actions, live subscription), `me`,
// preferences, topic subscriptions and web push, all typed from /openapi.json.

import type {
  Preferences,
  PreferencesInput,
  PushSubscription,
  PushSubscriptionList,
  Subscription,
  SubscriptionList,
  User,
  UserChannel,
  UserInput,
} from './api-types.js';
import { Feed } from './feed.js';
import { Transport } from './http.js';
import { registerWebPush, unregisterWebPush, type PushRegistrationLike } from './push.js';
import type { FeedStatus, HeraldOptions } from './types.js';

export class Herald {
  private readonly t: Transport;
  /** The user's feed (status `all`), with its store and live subscription. */
  readonly feed: Feed;

  constructor(private readonly options: HeraldOptions) {
    this.t = new Transport(options);
    this.feed = this.createFeed();
  }

  /**
   * Another feed store, e.g. of archived entries, or of one preference
   * category (a tab); each subscribed store has its own socket.
   */
  createFeed(opts: { status?: FeedStatus; pageSize?: number; category?: string } = {}): Feed {
    return new Feed(this.t, this.options.WebSocket, this.options.reconnect, opts);
  }

  /** The current user token (undefined in user-id mode). */
  get userToken(): string | undefined {
    return this.t.userToken;
  }

  /**
   * Replaces the user token (e.g. before it expires). Requests use it at once;
   * an open live socket keeps going (tokens are checked when it connects) and
   * uses the new one when it next connects.
   */
  setUserToken(token: string): void {
    this.t.setUserToken(token);
  }

  me(): Promise<User> {
    return this.t.request<User>('GET', '/me');
  }
  updateMe(fields: UserInput): Promise<User> {
    return this.t.request<User>('PUT', '/me', { body: fields });
  }

  getPreferences(): Promise<Preferences> {
    return this.t.request<Preferences>('GET', '/preferences');
  }
  /** A partial update: only the channel types and flows given change. */
  setPreferences(update: PreferencesInput): Promise<Preferences> {
    return this.t.request<Preferences>('PUT', '/preferences', { body: update });
  }

  /** The user's topic subscriptions. */
  topicSubscriptions(o: { limit?: number; after?: string; before?: string } = {}): Promise<SubscriptionList> {
    return this.t.request<SubscriptionList>('GET', '/subscriptions', { query: o });
  }
  subscribeToTopic(key: string): Promise<Subscription> {
    return this.t.request<Subscription>('POST', `/topics/${encodeURIComponent(key)}/subscriptions`);
  }
  unsubscribeFromTopic(key: string): Promise<void> {
    return this.t.request<void>('DELETE', `/topics/${encodeURIComponent(key)}/subscriptions`);
  }

  /** A channel as the user sees it (a web_push channel carries its VAPID public key). */
  channel(id: string): Promise<UserChannel> {
    return this.t.request<UserChannel>('GET', `/channels/${encodeURIComponent(id)}`);
  }
  /** The user's push subscriptions on a web_push or mobile_push channel. */
  pushSubscriptions(channelId: string): Promise<PushSubscriptionList> {
    return this.t.request<PushSubscriptionList>('GET', `/channels/${encodeURIComponent(channelId)}/subscriptions`);
  }
  /** Subscribes the service worker registration with the channel's VAPID key and registers it with Herald. */
  registerWebPush(registration: PushRegistrationLike, channelId: string): Promise<PushSubscription> {
    return registerWebPush(this.t, registration, channelId);
  }
  /** Removes the registration's push subscription from Herald and the browser. */
  unregisterWebPush(registration: PushRegistrationLike, channelId: string): Promise<boolean> {
    return unregisterWebPush(this.t, registration, channelId);
  }
}

export { Feed, matchesStatus } from './feed.js';
export { HeraldError } from './errors.js';
export type { HeraldErrorCode } from './errors.js';
export { base64UrlToBytes } from './push.js';
export type { PushRegistrationLike, BrowserPushSubscriptionLike } from './push.js';
export type * from './types.js';
export type * from './api-types.js';
