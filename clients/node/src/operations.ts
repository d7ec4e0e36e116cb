// The table of every Admin API operation the SDK covers: its operationId in
// /openapi.json, method and path, the client method that calls it, whether
// it takes an Idempotency-Key (creating POSTs: the SDK then sends one on
// every call) and whether a call whose answer was lost may be sent again
// (`repeatable`: doing it twice does no more than once). The drift check
// (scripts/gen-types.mjs --check) compares this table with the document, so
// an operation added to the server without an SDK method fails CI.

export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH';

export interface Operation {
  readonly method: HttpMethod;
  readonly path: string;
  /** The client method, as `namespace.method` under `new Herald(…)`. */
  readonly sdk: string;
  readonly idempotent: boolean;
  readonly repeatable: boolean;
}

// GET, PUT and DELETE are repeatable by nature; a POST only when listed so
const get = (path: string, sdk: string): Operation => ({ method: 'GET', path, sdk, idempotent: false, repeatable: true });
const put = (path: string, sdk: string): Operation => ({ method: 'PUT', path, sdk, idempotent: false, repeatable: true });
const del = (path: string, sdk: string): Operation => ({ method: 'DELETE', path, sdk, idempotent: false, repeatable: true });
const post = (path: string, sdk: string, o: { idempotent?: boolean; repeatable?: boolean } = {}): Operation => ({
  method: 'POST',
  path,
  sdk,
  idempotent: o.idempotent ?? false,
  repeatable: o.repeatable ?? false,
});
const creates = { idempotent: true };
const safe = { repeatable: true };

const A = '/admin/v1';

export const OPERATIONS = {
  // users (docs/API.md §6)
  listUsers: get(`${A}/users`, 'users.list'),
  getUser: get(`${A}/users/{external_id}`, 'users.get'),
  putUser: put(`${A}/users/{external_id}`, 'users.upsert'),
  deleteUser: del(`${A}/users/{external_id}`, 'users.delete'),
  bulkUpsertUsers: post(`${A}/users/bulk`, 'users.bulkUpsert', creates),
  bulkDeleteUsers: post(`${A}/users/bulk_delete`, 'users.bulkDelete', creates),
  getUserPreferences: get(`${A}/users/{external_id}/preferences`, 'users.getPreferences'),
  putUserPreferences: put(`${A}/users/{external_id}/preferences`, 'users.updatePreferences'),
  getUserFeed: get(`${A}/users/{external_id}/feed`, 'users.feed'),
  createPreferenceLink: post(`${A}/users/{external_id}/preference_link`, 'users.createPreferenceLink', safe),
  getErasure: get(`${A}/erasures/{id}`, 'erasures.get'),

  // categories and the project's preference defaults (§6)
  listCategories: get(`${A}/categories`, 'categories.list'),
  getCategory: get(`${A}/categories/{handle}`, 'categories.get'),
  putCategory: put(`${A}/categories/{handle}`, 'categories.upsert'),
  deleteCategory: del(`${A}/categories/{handle}`, 'categories.delete'),
  getPreferenceDefaults: get(`${A}/preferences/defaults`, 'preferences.getDefaults'),
  putPreferenceDefaults: put(`${A}/preferences/defaults`, 'preferences.updateDefaults'),

  // channels (§7)
  listChannels: get(`${A}/channels`, 'channels.list'),
  getChannel: get(`${A}/channels/{channel_id}`, 'channels.get'),
  createChannel: post(`${A}/channels`, 'channels.create', creates),
  updateChannel: put(`${A}/channels/{channel_id}`, 'channels.update'),
  deleteChannel: del(`${A}/channels/{channel_id}`, 'channels.delete'),
  revokeChannel: post(`${A}/channels/{channel_id}/revoke`, 'channels.revoke', safe),
  // not repeatable: each call sends one more test message
  testChannel: post(`${A}/channels/{channel_id}/test`, 'channels.testChannel'),

  // flows and runs (§8, §9)
  listFlows: get(`${A}/flows`, 'flows.list'),
  getFlow: get(`${A}/flows/{id}`, 'flows.get'),
  createFlow: post(`${A}/flows`, 'flows.create', creates),
  updateFlow: put(`${A}/flows/{id}`, 'flows.update'),
  activateFlow: post(`${A}/flows/{id}/activate`, 'flows.activate', safe),
  deactivateFlow: post(`${A}/flows/{id}/deactivate`, 'flows.deactivate', safe),
  archiveFlow: post(`${A}/flows/{id}/archive`, 'flows.archive', safe),
  runFlow: post(`${A}/flows/{id}/run`, 'flows.run', creates),
  cancelFlowRuns: post(`${A}/flows/{id}/cancel`, 'flows.cancel', safe),
  previewFlow: post(`${A}/flows/{id}/preview`, 'flows.preview', safe),
  previewUnsavedFlow: post(`${A}/flows/preview`, 'flows.previewUnsaved', safe),
  getFlowRun: get(`${A}/flow_runs/{id}`, 'flowRuns.get'),

  // notifications, deliveries, traces (§9, §16)
  listNotifications: get(`${A}/notifications`, 'notifications.list'),
  getNotification: get(`${A}/notifications/{id}`, 'notifications.get'),
  getNotificationTrace: get(`${A}/notifications/{id}/trace`, 'notifications.trace'),
  listDeliveries: get(`${A}/deliveries`, 'deliveries.list'),
  getDelivery: get(`${A}/deliveries/{id}`, 'deliveries.get'),

  // topics (§10)
  listTopics: get(`${A}/topics`, 'topics.list'),
  getTopic: get(`${A}/topics/{key}`, 'topics.get'),
  putTopic: put(`${A}/topics/{key}`, 'topics.upsert'),
  deleteTopic: del(`${A}/topics/{key}`, 'topics.delete'),
  listTopicSubscriptions: get(`${A}/topics/{key}/subscriptions`, 'topics.listSubscriptions'),
  subscribeUser: post(`${A}/topics/{key}/subscriptions`, 'topics.subscribe', creates),
  unsubscribeUser: del(`${A}/topics/{key}/subscriptions/{external_id}`, 'topics.unsubscribe'),

  // content (§17)
  listPartials: get(`${A}/partials`, 'partials.list'),
  getPartial: get(`${A}/partials/{handle}`, 'partials.get'),
  putPartial: put(`${A}/partials/{handle}`, 'partials.upsert'),
  deletePartial: del(`${A}/partials/{handle}`, 'partials.delete'),
  listLayouts: get(`${A}/layouts`, 'layouts.list'),
  getLayout: get(`${A}/layouts/{handle}`, 'layouts.get'),
  putLayout: put(`${A}/layouts/{handle}`, 'layouts.upsert'),
  deleteLayout: del(`${A}/layouts/{handle}`, 'layouts.delete'),
  listTranslations: get(`${A}/translations`, 'translations.list'),
  getTranslation: get(`${A}/translations/{locale}`, 'translations.get'),
  putTranslation: put(`${A}/translations/{locale}`, 'translations.upsert'),
  deleteTranslation: del(`${A}/translations/{locale}`, 'translations.delete'),

  // the project (§2, §5, §8, §9)
  getProject: get(`${A}/project`, 'project.get'),
  updateProject: put(`${A}/project`, 'project.update'),
  advanceProjectClock: post(`${A}/project/clock/advance`, 'project.advanceClock'),
  rotateLinkSecret: post(`${A}/project/rotate_link_secret`, 'project.rotateLinkSecret', safe),
  // not repeatable: each call makes another key (and ends the grace of the one before)
  rotateSecretKey: post(`${A}/project/rotate_secret`, 'project.rotateSecretKey'),
  putSigningKey: put(`${A}/project/signing_key`, 'project.setSigningKey'),
  generateSigningKey: post(`${A}/project/signing_key`, 'project.generateSigningKey'),
  deleteSigningKey: del(`${A}/project/signing_key`, 'project.deleteSigningKey'),

  // the suppression list (§18). Adding is a creating POST without an
  // Idempotency-Key: the server keys it by the address itself (a second add
  // answers the existing entry, 200), so it takes none and, for the same
  // reason, is safe to send again when an answer was lost.
  listSuppressions: get(`${A}/suppressions`, 'suppressions.list'),
  createSuppression: post(`${A}/suppressions`, 'suppressions.add', safe),
  deleteSuppression: del(`${A}/suppressions/{channel_type}/{address}`, 'suppressions.remove'),

  // the audit log (§19)
  listAuditLog: get(`${A}/audit_log`, 'auditLog.list'),

  // event endpoints (§15): creation takes no Idempotency-Key (its answer holds the secret)
  listWebhookEndpoints: get(`${A}/webhook_endpoints`, 'webhookEndpoints.list'),
  getWebhookEndpoint: get(`${A}/webhook_endpoints/{id}`, 'webhookEndpoints.get'),
  createWebhookEndpoint: post(`${A}/webhook_endpoints`, 'webhookEndpoints.create'),
  updateWebhookEndpoint: put(`${A}/webhook_endpoints/{id}`, 'webhookEndpoints.update'),
  deleteWebhookEndpoint: del(`${A}/webhook_endpoints/{id}`, 'webhookEndpoints.delete'),
  rotateWebhookEndpointSecret: post(`${A}/webhook_endpoints/{id}/rotate_secret`, 'webhookEndpoints.rotateSecret'),
  listWebhookEndpointAttempts: get(`${A}/webhook_endpoints/{id}/attempts`, 'webhookEndpoints.attempts'),
  replayWebhookEndpoint: post(`${A}/webhook_endpoints/{id}/replay`, 'webhookEndpoints.replay'),
} as const satisfies Record<string, Operation>;

export type OperationId = keyof typeof OPERATIONS;
