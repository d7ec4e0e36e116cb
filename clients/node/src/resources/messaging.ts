// What is sent and how: channels, flows with their runs, previews and
// cancellations, and what the runs produced: flow runs, notifications with
// their decision traces, deliveries (docs/API.md §7, §8, §9, §16).

import type { CallOptions } from '../http.js';
import type { Body, Query, Result } from '../types.js';
import { Resource, seg } from './base.js';

export class Channels extends Resource {
  list(params: Query<'listChannels'> = {}, opts?: CallOptions) {
    return this.pages('listChannels', {}, params, opts);
  }

  get(channelId: string, opts?: CallOptions): Promise<Result<'getChannel'>> {
    return this.call('getChannel', { path: { channel_id: seg('channelId', channelId) } }, opts);
  }

  /** Creates a channel (201); a missing or partial config leaves it `unconfigured`. Sends an Idempotency-Key. */
  create(body: Body<'createChannel'>, opts?: CallOptions): Promise<Result<'createChannel'>> {
    return this.call('createChannel', { body }, opts);
  }

  /** Merges `config` key by key (`null` removes a key) and changes `name`/`sandbox`. */
  update(channelId: string, body: Body<'updateChannel'>, opts?: CallOptions): Promise<Result<'updateChannel'>> {
    return this.call('updateChannel', { path: { channel_id: seg('channelId', channelId) }, body }, opts);
  }

  async delete(channelId: string, opts?: CallOptions): Promise<void> {
    await this.call('deleteChannel', { path: { channel_id: seg('channelId', channelId) } }, opts);
  }

  /** Revokes the channel: its deliveries then fail with `provider_revoked`. */
  revoke(channelId: string, opts?: CallOptions): Promise<Result<'revokeChannel'>> {
    return this.call('revokeChannel', { path: { channel_id: seg('channelId', channelId) } }, opts);
  }

  /**
   * Sends one test message through the channel to an existing user (202:
   * the run and its notification, which carries `test_channel_id`);
   * `data.subject` and `data.body` replace the test's own. Each call sends
   * another.
   */
  testChannel(
    channelId: string,
    userId: string,
    data?: Record<string, unknown>,
    opts?: CallOptions,
  ): Promise<Result<'testChannel'>> {
    const body: Body<'testChannel'> = data === undefined ? { user_id: userId } : { user_id: userId, data };
    return this.call('testChannel', { path: { channel_id: seg('channelId', channelId) }, body }, opts);
  }
}

export class Flows extends Resource {
  list(params: Query<'listFlows'> = {}, opts?: CallOptions) {
    return this.pages('listFlows', {}, params, opts);
  }

  /** A flow by its id or handle. */
  get(handleOrId: string, opts?: CallOptions): Promise<Result<'getFlow'>> {
    return this.call('getFlow', { path: { id: seg('handleOrId', handleOrId) } }, opts);
  }

  /** Creates a flow, `draft` (201). Sends an Idempotency-Key. */
  create(body: Body<'createFlow'>, opts?: CallOptions): Promise<Result<'createFlow'>> {
    return this.call('createFlow', { body }, opts);
  }

  update(handleOrId: string, body: Body<'updateFlow'>, opts?: CallOptions): Promise<Result<'updateFlow'>> {
    return this.call('updateFlow', { path: { id: seg('handleOrId', handleOrId) }, body }, opts);
  }

  activate(handleOrId: string, opts?: CallOptions): Promise<Result<'activateFlow'>> {
    return this.call('activateFlow', { path: { id: seg('handleOrId', handleOrId) } }, opts);
  }

  deactivate(handleOrId: string, opts?: CallOptions): Promise<Result<'deactivateFlow'>> {
    return this.call('deactivateFlow', { path: { id: seg('handleOrId', handleOrId) } }, opts);
  }

  archive(handleOrId: string, opts?: CallOptions): Promise<Result<'archiveFlow'>> {
    return this.call('archiveFlow', { path: { id: seg('handleOrId', handleOrId) } }, opts);
  }

  /**
   * Starts a run (202 once it is on disk): `{recipients, topic?, data?,
   * actor?, send_at?, cancellation_key?}`. An Idempotency-Key is sent (made up
   * when `opts.idempotencyKey` is not given), so a retried call replays the
   * first answer instead of running twice.
   */
  run(handleOrId: string, body: Body<'runFlow'>, opts?: CallOptions): Promise<Result<'runFlow'>> {
    return this.call('runFlow', { path: { id: seg('handleOrId', handleOrId) }, body }, opts);
  }

  /** Stops the flow's waiting runs with that `cancellation_key`: `{canceled}`. */
  cancel(handleOrId: string, body: Body<'cancelFlowRuns'>, opts?: CallOptions): Promise<Result<'cancelFlowRuns'>> {
    return this.call('cancelFlowRuns', { path: { id: seg('handleOrId', handleOrId) }, body }, opts);
  }

  /** Renders the flow's channel steps for one recipient; nothing is stored or sent. */
  preview(handleOrId: string, body: Body<'previewFlow'>, opts?: CallOptions): Promise<Result<'previewFlow'>> {
    return this.call('previewFlow', { path: { id: seg('handleOrId', handleOrId) }, body }, opts);
  }

  /** Previews a flow that is not saved: its body as `create` takes it, with the preview's fields. */
  previewUnsaved(body: Body<'previewUnsavedFlow'>, opts?: CallOptions): Promise<Result<'previewUnsavedFlow'>> {
    return this.call('previewUnsavedFlow', { body }, opts);
  }
}

export class FlowRuns extends Resource {
  /** A run: `scheduled`, `pending`, then `processed`. */
  get(id: string, opts?: CallOptions): Promise<Result<'getFlowRun'>> {
    return this.call('getFlowRun', { path: { id: seg('id', id) } }, opts);
  }
}

export class Notifications extends Resource {
  /** Notifications, newest first, filtered by `status`, `topic`, `flow_id`, `flow_run_id`, `recipient`, dates. */
  list(params: Query<'listNotifications'> = {}, opts?: CallOptions) {
    return this.pages('listNotifications', {}, params, opts);
  }

  get(id: string, opts?: CallOptions): Promise<Result<'getNotification'>> {
    return this.call('getNotification', { path: { id: seg('id', id) } }, opts);
  }

  /** The notification's decision trace: every decision the engine took, in order. */
  trace(id: string, opts?: CallOptions): Promise<Result<'getNotificationTrace'>> {
    return this.call('getNotificationTrace', { path: { id: seg('id', id) } }, opts);
  }
}

export class Deliveries extends Resource {
  /** Deliveries, newest first, filtered by `status`, `channel_type`, `channel_id`, `notification_id`, `recipient`, dates. */
  list(params: Query<'listDeliveries'> = {}, opts?: CallOptions) {
    return this.pages('listDeliveries', {}, params, opts);
  }

  get(id: string, opts?: CallOptions): Promise<Result<'getDelivery'>> {
    return this.call('getDelivery', { path: { id: seg('id', id) } }, opts);
  }
}
