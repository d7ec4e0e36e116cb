// herald-node: the Admin API client. `new Herald({publicKey, secretKey,
// baseUrl})` holds one transport and a namespace per resource; this module
// also exports the errors, pagination classes, event verification, the
// operation table and the generated schema's types.

import { Transport, type HeraldOptions } from './http.js';
import { AuditLog } from './resources/audit_log.js';
import { Categories, Erasures, PreferenceDefaults, Topics, Users } from './resources/audience.js';
import { Channels, Deliveries, FlowRuns, Flows, Notifications } from './resources/messaging.js';
import { Layouts, Partials, ProjectSettings, Translations, WebhookEndpoints } from './resources/project.js';
import { Suppressions } from './resources/suppressions.js';

export class Herald {
  readonly users: Users;
  /** Erasures started by `users.delete(id, {erase: true})` or `users.bulkDelete`. */
  readonly erasures: Erasures;
  readonly categories: Categories;
  /** The project's preference defaults. */
  readonly preferences: PreferenceDefaults;
  readonly topics: Topics;
  /** The addresses the project no longer sends to. */
  readonly suppressions: Suppressions;
  /** Every change of the project's configuration, newest first. */
  readonly auditLog: AuditLog;
  readonly channels: Channels;
  readonly flows: Flows;
  readonly flowRuns: FlowRuns;
  readonly notifications: Notifications;
  readonly deliveries: Deliveries;
  readonly project: ProjectSettings;
  readonly partials: Partials;
  readonly layouts: Layouts;
  readonly translations: Translations;
  /** Event endpoints (`/admin/v1/webhook_endpoints`). */
  readonly webhookEndpoints: WebhookEndpoints;
  /** The same namespace as `webhookEndpoints`, by the name the docs give the feature. */
  readonly eventEndpoints: WebhookEndpoints;
  /** The transport every namespace sends through. */
  readonly transport: Transport;

  constructor(options: HeraldOptions) {
    const t = new Transport(options);
    this.transport = t;
    this.users = new Users(t);
    this.erasures = new Erasures(t);
    this.categories = new Categories(t);
    this.preferences = new PreferenceDefaults(t);
    this.topics = new Topics(t);
    this.suppressions = new Suppressions(t);
    this.auditLog = new AuditLog(t);
    this.channels = new Channels(t);
    this.flows = new Flows(t);
    this.flowRuns = new FlowRuns(t);
    this.notifications = new Notifications(t);
    this.deliveries = new Deliveries(t);
    this.project = new ProjectSettings(t);
    this.partials = new Partials(t);
    this.layouts = new Layouts(t);
    this.translations = new Translations(t);
    this.webhookEndpoints = new WebhookEndpoints(t);
    this.eventEndpoints = this.webhookEndpoints;
  }
}

export default Herald;

export { responseOf, parseRetryAfter, SDK_VERSION } from './http.js';
export type { HeraldOptions, CallOptions, RetryEvent, ResponseInfo } from './http.js';
export {
  HeraldError,
  HeraldApiError,
  HeraldNetworkError,
  HeraldTimeoutError,
  HeraldProtocolError,
} from './errors.js';
export type { ApiErrorCode, HeraldErrorCode, HeraldErrorKind, FieldError } from './errors.js';
export { Page, PageList, ITERATION_PAGE_SIZE } from './pagination.js';
export type { PageInfo, CursorParams, ListBody } from './pagination.js';
export { verifyEvent, checkEvent, EventVerificationError } from './webhooks.js';
export type { HeraldEvent, EventType, EventVerificationReason, HeadersLike, VerifyOptions, VerifyResult } from './webhooks.js';
export { OPERATIONS } from './operations.js';
export type { Operation, OperationId, HttpMethod } from './operations.js';
export type * from './types.js';
export type { paths, components, operations } from './schema.js';
export { Users, Erasures, Categories, PreferenceDefaults, Topics } from './resources/audience.js';
export { Channels, Flows, FlowRuns, Notifications, Deliveries } from './resources/messaging.js';
export { ProjectSettings, Partials, Layouts, Translations, WebhookEndpoints } from './resources/project.js';
export { Suppressions } from './resources/suppressions.js';
export { AuditLog } from './resources/audit_log.js';
