// The project's own settings and content: the project (security mode,
// retention, quota, branding, test clock, signing key, link secret),
// partials, layouts, translations, and event endpoints (docs/API.md §2, §5,
// §9, §15, §17).

import type { CallOptions } from '../http.js';
import type { Body, Query, Result } from '../types.js';
import { Resource, seg } from './base.js';

export class ProjectSettings extends Resource {
  get(opts?: CallOptions): Promise<Result<'getProject'>> {
    return this.call('getProject', {}, opts);
  }

  /** Changes the settings given (security_mode, retention, quota_bytes, branding, clock, timezone…). */
  update(body: Body<'updateProject'>, opts?: CallOptions): Promise<Result<'updateProject'>> {
    return this.call('updateProject', { body }, opts);
  }

  /** Moves a test clock forward, `{by: "1h"}` or `{to: "…"}`; answers the project. Not retried after a lost answer. */
  advanceClock(body: Body<'advanceProjectClock'>, opts?: CallOptions): Promise<Result<'advanceProjectClock'>> {
    return this.call('advanceProjectClock', { body }, opts);
  }

  /** Every preference link issued before stops working. */
  async rotateLinkSecret(opts?: CallOptions): Promise<void> {
    await this.call('rotateLinkSecret', {}, opts);
  }

  /**
   * A new secret key, in this answer only; the replaced one keeps working
   * for `graceSeconds` (default a day, 0: refused at once).
   */
  rotateSecretKey(graceSeconds?: number, opts?: CallOptions): Promise<Result<'rotateSecretKey'>> {
    const body = graceSeconds === undefined ? {} : { grace_seconds: graceSeconds };
    return this.call('rotateSecretKey', { body }, opts);
  }

  /** Stores the RSA public key (PEM) that verifies user tokens; answers the project. */
  setSigningKey(publicKey: string, opts?: CallOptions): Promise<Result<'putSigningKey'>> {
    return this.call('putSigningKey', { body: { public_key: publicKey } }, opts);
  }

  /** Generates a key pair; the private key is in this answer only (Herald keeps the public key). */
  generateSigningKey(opts?: CallOptions): Promise<Result<'generateSigningKey'>> {
    return this.call('generateSigningKey', {}, opts);
  }

  async deleteSigningKey(opts?: CallOptions): Promise<void> {
    await this.call('deleteSigningKey', {}, opts);
  }
}

/** Partials and layouts share one shape of methods: list (unpaged), get, upsert, delete. */
export class Partials extends Resource {
  async list(opts?: CallOptions): Promise<Result<'listPartials'>['data']> {
    return (await this.call('listPartials', {}, opts)).data;
  }
  get(handle: string, opts?: CallOptions): Promise<Result<'getPartial'>> {
    return this.call('getPartial', { path: { handle: seg('handle', handle) } }, opts);
  }
  /** Creates (201) or replaces (200) the partial: `{content}`. */
  upsert(handle: string, body: Body<'putPartial'>, opts?: CallOptions): Promise<Result<'putPartial'>> {
    return this.call('putPartial', { path: { handle: seg('handle', handle) }, body }, opts);
  }
  /** 409 `partial_in_use` while something includes it. */
  async delete(handle: string, opts?: CallOptions): Promise<void> {
    await this.call('deletePartial', { path: { handle: seg('handle', handle) } }, opts);
  }
}

export class Layouts extends Resource {
  async list(opts?: CallOptions): Promise<Result<'listLayouts'>['data']> {
    return (await this.call('listLayouts', {}, opts)).data;
  }
  get(handle: string, opts?: CallOptions): Promise<Result<'getLayout'>> {
    return this.call('getLayout', { path: { handle: seg('handle', handle) } }, opts);
  }
  /** Creates (201) or replaces (200) the email layout: `{name, html, text?}`. */
  upsert(handle: string, body: Body<'putLayout'>, opts?: CallOptions): Promise<Result<'putLayout'>> {
    return this.call('putLayout', { path: { handle: seg('handle', handle) }, body }, opts);
  }
  /** 409 `layout_in_use` while a live flow or the project's default names it. */
  async delete(handle: string, opts?: CallOptions): Promise<void> {
    await this.call('deleteLayout', { path: { handle: seg('handle', handle) } }, opts);
  }
}

export class Translations extends Resource {
  /** Every catalog: `[{locale, message_count, updated_at}]`. */
  async list(opts?: CallOptions): Promise<Result<'listTranslations'>['data']> {
    return (await this.call('listTranslations', {}, opts)).data;
  }
  get(locale: string, opts?: CallOptions): Promise<Result<'getTranslation'>> {
    return this.call('getTranslation', { path: { locale: seg('locale', locale) } }, opts);
  }
  /** Sets the locale's catalog, replaced whole: `{messages}`. */
  upsert(locale: string, body: Body<'putTranslation'>, opts?: CallOptions): Promise<Result<'putTranslation'>> {
    return this.call('putTranslation', { path: { locale: seg('locale', locale) }, body }, opts);
  }
  async delete(locale: string, opts?: CallOptions): Promise<void> {
    await this.call('deleteTranslation', { path: { locale: seg('locale', locale) } }, opts);
  }
}

export class WebhookEndpoints extends Resource {
  list(params: Query<'listWebhookEndpoints'> = {}, opts?: CallOptions) {
    return this.pages('listWebhookEndpoints', {}, params, opts);
  }

  get(id: string, opts?: CallOptions): Promise<Result<'getWebhookEndpoint'>> {
    return this.call('getWebhookEndpoint', { path: { id: seg('id', id) } }, opts);
  }

  /**
   * Creates an event endpoint; its `secret` (`whsec_…`, for `verifyEvent`) is
   * in this answer only. No Idempotency-Key (the API takes none here), and a
   * call whose answer was lost is not sent again.
   */
  create(body: Body<'createWebhookEndpoint'>, opts?: CallOptions): Promise<Result<'createWebhookEndpoint'>> {
    return this.call('createWebhookEndpoint', { body }, opts);
  }

  /** Present fields replace the stored ones; `enabled: true` clears `disabled_reason`. */
  update(id: string, body: Body<'updateWebhookEndpoint'>, opts?: CallOptions): Promise<Result<'updateWebhookEndpoint'>> {
    return this.call('updateWebhookEndpoint', { path: { id: seg('id', id) }, body }, opts);
  }

  async delete(id: string, opts?: CallOptions): Promise<void> {
    await this.call('deleteWebhookEndpoint', { path: { id: seg('id', id) } }, opts);
  }

  /** A new secret, in this answer only; the previous one keeps signing for 24 hours. */
  rotateSecret(id: string, opts?: CallOptions): Promise<Result<'rotateWebhookEndpointSecret'>> {
    return this.call('rotateWebhookEndpointSecret', { path: { id: seg('id', id) } }, opts);
  }

  /** The endpoint's delivery attempts, newest first. */
  attempts(id: string, params: Query<'listWebhookEndpointAttempts'> = {}, opts?: CallOptions) {
    return this.pages('listWebhookEndpointAttempts', { id: seg('id', id) }, params, opts);
  }

  /** Sends again every event written since `since` that the endpoint wants: `{queued}`. */
  replay(id: string, body: Body<'replayWebhookEndpoint'>, opts?: CallOptions): Promise<Result<'replayWebhookEndpoint'>> {
    return this.call('replayWebhookEndpoint', { path: { id: seg('id', id) }, body }, opts);
  }
}
