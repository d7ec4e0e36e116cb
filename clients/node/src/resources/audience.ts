// Who notifications go to: users (with their preferences, feed, preference
// links and erasures), preference categories and the project's preference
// defaults, and topics with their subscriptions (docs/API.md §6, §10).

import type { CallOptions } from '../http.js';
import type { CursorParams } from '../pagination.js';
import type { Body, Query, Result, Schemas } from '../types.js';
import { Resource, seg } from './base.js';

export class Users extends Resource {
  /** Every user, newest first: `for await (const u of herald.users.list())`, or `.page()`. */
  list(params: Query<'listUsers'> = {}, opts?: CallOptions) {
    return this.pages('listUsers', {}, params, opts);
  }

  get(externalId: string, opts?: CallOptions): Promise<Result<'getUser'>> {
    return this.call('getUser', { path: { external_id: seg('externalId', externalId) } }, opts);
  }

  /** Creates the user (201) or changes the fields given (200); `null` clears a field. */
  upsert(externalId: string, fields: Body<'putUser'> = {}, opts?: CallOptions): Promise<Result<'putUser'>> {
    return this.call('putUser', { path: { external_id: seg('externalId', externalId) }, body: fields }, opts);
  }

  /**
   * Deletes the user. With `{erase: true}` their notifications, deliveries
   * and feed are erased too: the Erasure is returned when it goes on in the
   * background (202; poll `herald.erasures.get(id)`), undefined when it
   * finished within the request (204), as for a plain delete.
   */
  delete(externalId: string, params: Query<'deleteUser'> = {}, opts?: CallOptions): Promise<Result<'deleteUser'> | undefined> {
    return this.call('deleteUser', { path: { external_id: seg('externalId', externalId) }, query: params }, opts);
  }

  /** Creates or updates up to 1,000 users in one commit; one result per item. */
  bulkUpsert(users: Body<'bulkUpsertUsers'>['users'], opts?: CallOptions): Promise<Result<'bulkUpsertUsers'>> {
    return this.call('bulkUpsertUsers', { body: { users } }, opts);
  }

  /** Deletes up to 1,000 users (`{erase: true}` erases them); `{deleted, not_found, erasures?}`. */
  bulkDelete(externalIds: string[], params: { erase?: boolean } = {}, opts?: CallOptions): Promise<Result<'bulkDeleteUsers'>> {
    const body: Body<'bulkDeleteUsers'> = { external_ids: externalIds };
    if (params.erase !== undefined) body.erase = params.erase;
    return this.call('bulkDeleteUsers', { body }, opts);
  }

  getPreferences(externalId: string, params: Query<'getUserPreferences'> = {}, opts?: CallOptions): Promise<Result<'getUserPreferences'>> {
    return this.call('getUserPreferences', { path: { external_id: seg('externalId', externalId) }, query: params }, opts);
  }

  /** Changes the parts given and answers the whole, effective preferences. */
  updatePreferences(
    externalId: string,
    prefs: Body<'putUserPreferences'>,
    params: Query<'putUserPreferences'> = {},
    opts?: CallOptions,
  ): Promise<Result<'putUserPreferences'>> {
    return this.call('putUserPreferences', { path: { external_id: seg('externalId', externalId) }, query: params, body: prefs }, opts);
  }

  /** The user's in-app feed as the User API shows it; iterate it, or `.page()` for one page with `meta`. */
  feed(externalId: string, params: Query<'getUserFeed'> = {}, opts?: CallOptions) {
    return this.pages('getUserFeed', { external_id: seg('externalId', externalId) }, params, opts);
  }

  /** A signed link to the user's hosted preference page: `{url, token, expires_at}`. */
  createPreferenceLink(externalId: string, body: Body<'createPreferenceLink'> = {}, opts?: CallOptions): Promise<Result<'createPreferenceLink'>> {
    return this.call('createPreferenceLink', { path: { external_id: seg('externalId', externalId) }, body }, opts);
  }
}

export class Erasures extends Resource {
  /** An erasure started by `users.delete(id, {erase: true})`: `running` → `complete`. */
  get(id: string, opts?: CallOptions): Promise<Result<'getErasure'>> {
    return this.call('getErasure', { path: { id: seg('id', id) } }, opts);
  }
}

export class Categories extends Resource {
  /** Every category, by handle (not paged: at most 100). */
  async list(opts?: CallOptions): Promise<Result<'listCategories'>['data']> {
    return (await this.call('listCategories', {}, opts)).data;
  }

  get(handle: string, opts?: CallOptions): Promise<Result<'getCategory'>> {
    return this.call('getCategory', { path: { handle: seg('handle', handle) } }, opts);
  }

  /** Declares the category (201) or changes its name and description (200). */
  upsert(handle: string, body: Body<'putCategory'>, opts?: CallOptions): Promise<Result<'putCategory'>> {
    return this.call('putCategory', { path: { handle: seg('handle', handle) }, body }, opts);
  }

  /** 409 `category_in_use` (with `details.flows`) while a live flow belongs to it. */
  async delete(handle: string, opts?: CallOptions): Promise<void> {
    await this.call('deleteCategory', { path: { handle: seg('handle', handle) } }, opts);
  }
}

export class PreferenceDefaults extends Resource {
  /** The project's defaults, which every user's preferences fall back to. */
  getDefaults(params: Query<'getPreferenceDefaults'> = {}, opts?: CallOptions): Promise<Result<'getPreferenceDefaults'>> {
    return this.call('getPreferenceDefaults', { query: params }, opts);
  }

  updateDefaults(
    prefs: Body<'putPreferenceDefaults'>,
    params: Query<'putPreferenceDefaults'> = {},
    opts?: CallOptions,
  ): Promise<Result<'putPreferenceDefaults'>> {
    return this.call('putPreferenceDefaults', { query: params, body: prefs }, opts);
  }
}

export class Topics extends Resource {
  list(params: Query<'listTopics'> = {}, opts?: CallOptions) {
    return this.pages('listTopics', {}, params, opts);
  }

  get(key: string, opts?: CallOptions): Promise<Result<'getTopic'>> {
    return this.call('getTopic', { path: { key: seg('key', key) } }, opts);
  }

  /** Creates (201) or updates (200) the topic. */
  upsert(key: string, body: Body<'putTopic'> = {}, opts?: CallOptions): Promise<Result<'putTopic'>> {
    return this.call('putTopic', { path: { key: seg('key', key) }, body }, opts);
  }

  async delete(key: string, opts?: CallOptions): Promise<void> {
    await this.call('deleteTopic', { path: { key: seg('key', key) } }, opts);
  }

  listSubscriptions(key: string, params: CursorParams = {}, opts?: CallOptions) {
    return this.pages('listTopicSubscriptions', { key: seg('key', key) }, params, opts);
  }

  /** Subscribes one user (201; 409 `subscription_already_exists` when they are). */
  async subscribe(key: string, externalId: string, opts?: CallOptions): Promise<Schemas['Subscription']> {
    return (await this.call('subscribeUser', { path: { key: seg('key', key) }, body: { external_id: seg('externalId', externalId) } }, opts)) as Schemas['Subscription'];
  }

  /** Subscribes up to 1,000 users in one commit (those already subscribed are left as they are): `{created, topic}`. */
  async subscribeMany(key: string, users: string[], opts?: CallOptions): Promise<Schemas['BulkSubscriptionResult']> {
    return (await this.call('subscribeUser', { path: { key: seg('key', key) }, body: { users } }, opts)) as Schemas['BulkSubscriptionResult'];
  }

  async unsubscribe(key: string, externalId: string, opts?: CallOptions): Promise<void> {
    await this.call('unsubscribeUser', { path: { key: seg('key', key), external_id: seg('externalId', externalId) } }, opts);
  }
}
