// GENERATED from herald's /openapi.json by scripts/gen-types.mjs: do not edit.
// The User and Admin API resources as TypeScript types (test/types.test.mjs fails
// when this file and the binary's document drift apart: rerun `npm run gen:types`).
// OpenAPI 3.1.0, Herald 0.1.0

export interface Channel {
  /** Provider settings; secret values read back as `"********"`. */
  config: Record<string, unknown>;
  created_at: string;
  id: string;
  name: string;
  provider: string;
  status: ChannelStatus;
  type: ChannelType;
  updated_at: string;
}

/** A new channel. `provider` must fit `type`; a missing or partial `config`
 * creates the channel `unconfigured`. */
export interface ChannelInput {
  /** Provider settings (API.md §10), plus `retry`. */
  config?: Record<string, unknown> | null;
  name?: string | null;
  provider: Provider;
  type: ChannelType;
}

export interface ChannelList {
  items: Array<Channel>;
  page: Page;
}

export type ChannelStatus = "unconfigured" | "active" | "revoked";

export interface ChannelStep {
  channel_id?: string | null;
  template: Template;
  type: ChannelStepType;
}

export type ChannelStepType = "channel";

export type ChannelType = "chat" | "email" | "in_app" | "mobile_push" | "sms" | "web_push";

/** One flag per channel type (all six present in a response). */
export interface ChannelTypeFlags {
  chat: boolean;
  email: boolean;
  in_app: boolean;
  mobile_push: boolean;
  sms: boolean;
  web_push: boolean;
}

/** Some channel types (a preferences update). */
export interface ChannelTypeFlagsInput {
  chat?: boolean;
  email?: boolean;
  in_app?: boolean;
  mobile_push?: boolean;
  sms?: boolean;
  web_push?: boolean;
}

/** A channel update: `config` is merged key by key (`null` removes a key,
 * `"********"` keeps a stored secret). `type` and `provider` cannot change. */
export interface ChannelUpdate {
  config?: Record<string, unknown> | null;
  name?: string | null;
  /** Only the channel's own provider. */
  provider?: Provider;
  /** Only the channel's own type. */
  type?: ChannelType;
}

export interface DelayStep {
  seconds: number;
  type: DelayStepType;
}

export type DelayStepType = "delay";

export interface Delivery {
  actor_id: string | null;
  archived_at: string | null;
  attempts: number;
  channel_id: string;
  channel_type: ChannelType;
  clicked_at: string | null;
  created_at: string;
  data: Rendered;
  error: DeliveryError | null;
  flow_id: string;
  flow_run_id: string;
  id: string;
  next_attempt_at: string | null;
  notification_id: string;
  read_at: string | null;
  recipient_id: string;
  seen_at: string | null;
  sent_at: string | null;
  status: DeliveryStatus;
  topic: string | null;
  updated_at: string;
}

export interface DeliveryError {
  /** `preference`, `missing_address`, `invalid_address`, `provider_unauthorized`,
   * `provider_rejected`, `provider_unavailable`, `provider_revoked`,
   * `provider_not_configured`, `subscription_expired`, `destination_not_allowed`
   * (the egress guard refused the address; nothing was sent)… */
  code: string;
  message: string;
}

export interface DeliveryList {
  items: Array<Delivery>;
  page: Page;
}

export type DeliveryStatus = "pending" | "sent" | "failed" | "skipped";

/** The error object every non-2xx response carries (API.md §3). */
export interface Error {
  error: ErrorBody;
}

export interface ErrorBody {
  code: ErrorCode;
  /** Depends on the code: `auth`/`reason` (401), `param`/`reason` (400),
   * `fields` (422), `resource`/`id` (404), `retry_after`/`limit`/`window` (429)… */
  details: Record<string, unknown>;
  message: string;
  /** The request's `x-request-id`. */
  request_id: string | null;
  status: number;
  /** `https://herald.dev/errors#<code>-<status>`. */
  type: string;
}

export type ErrorCode = "bad_request" | "unauthenticated" | "forbidden" | "not_found" | "conflict" | "idempotency_key_reused" | "validation_failed" | "rate_limited" | "internal_error" | "service_unavailable";

/** An in_app delivery as its recipient sees it (id = delivery id). */
export interface FeedEntry {
  actor: User | null;
  archived: boolean;
  archived_at: string | null;
  clicked: boolean;
  clicked_at: string | null;
  created_at: string;
  data: Rendered;
  flow_id: string;
  id: string;
  notification_id: string;
  read: boolean;
  read_at: string | null;
  seen: boolean;
  seen_at: string | null;
  topic: string | null;
}

/** `read` implies `seen`; un-reading or un-seeing is a 409. */
export interface FeedEntryPatch {
  archived?: boolean | null;
  /** Only `true`. */
  clicked?: boolean | null;
  read?: boolean | null;
  seen?: boolean | null;
}

/** Counts of the feed, archived entries left out. */
export interface FeedMeta {
  unread_count: number;
  unseen_count: number;
}

export interface FeedPage {
  items: Array<FeedEntry>;
  meta: FeedMeta;
  page: Page;
}

export interface Flow {
  created_at: string;
  description: string | null;
  handle: string;
  id: string;
  name: string;
  status: FlowStatus;
  steps: Array<Step>;
  updated_at: string;
}

export interface FlowInput {
  description?: string | null;
  /** Unique in the project, not shaped like a UUID. */
  handle: string;
  name: string;
  steps?: Array<Step> | null;
}

export interface FlowList {
  items: Array<Flow>;
  page: Page;
}

export interface FlowPreferences {
  channel_types: ChannelTypeFlags;
  enabled: boolean;
  name: string;
}

export interface FlowPreferencesInput {
  channel_types?: ChannelTypeFlagsInput | null;
  enabled?: boolean | null;
}

export interface FlowRun {
  created_at: string;
  flow_id: string;
  id: string;
  notifications_count: number;
  processed_at: string | null;
  recipients_count: number;
  status: ProcessingStatus;
  topic: string | null;
}

/** The 202 answer to a run: stored durably, delivered asynchronously. */
export interface FlowRunAccepted {
  created_at: string;
  flow_id: string;
  id: string;
  recipients_count: number;
  status: PendingStatus;
}

export type FlowStatus = "draft" | "active" | "archived";

/** Partial update; `handle` cannot change. */
export interface FlowUpdate {
  description?: string | null;
  /** Only the flow's own handle. */
  handle?: string;
  name?: string;
  steps?: Array<Step>;
}

export interface Health {
  /** `ok` (healthz) or `ready` (readyz). */
  status: string;
}

export interface MarkAllResult {
  meta: FeedMeta;
  updated: number;
}

export interface Notification {
  actor: User | null;
  actor_id: string | null;
  created_at: string;
  /** The run's `data`. */
  data: unknown;
  deliveries: Array<Delivery>;
  flow_id: string;
  flow_run_id: string;
  id: string;
  processed_at: string | null;
  recipient: User | null;
  recipient_id: string;
  status: ProcessingStatus;
  topic: string | null;
  updated_at: string;
}

export interface NotificationList {
  items: Array<Notification>;
  page: Page;
}

/** The `page` object of every list (API.md §4). */
export interface Page {
  /** Cursor for the next (older) page; null when nothing follows. */
  after: string | null;
  /** Cursor for the previous (newer) page; null when nothing precedes. */
  before: string | null;
  has_more_after: boolean;
  has_more_before: boolean;
  limit: number;
}

export type PendingStatus = "pending";

/** A user's preferences: every flow of the project that is not archived, by handle. */
export interface Preferences {
  channel_types: ChannelTypeFlags;
  flows: Record<string, FlowPreferences>;
}

/** Partial update; an unknown channel type or flow handle is a 422 `inclusion`. */
export interface PreferencesInput {
  channel_types?: ChannelTypeFlagsInput | null;
  flows?: Record<string, FlowPreferencesInput> | null;
}

export type ProcessingStatus = "pending" | "processed";

export interface Project {
  created_at: string;
  id: string;
  name: string;
  security_mode: boolean;
  signing_key_configured: boolean;
  updated_at: string;
}

export interface ProjectUpdate {
  name?: string;
  security_mode?: boolean | null;
}

export type Provider = "in_app" | "smtp" | "twilio" | "slack_webhook" | "webhook" | "web_push" | "fcm" | "apns";

export interface PushKeys {
  auth: string;
  p256dh: string;
}

export interface PushSubscription {
  channel_id: string;
  created_at: string;
  id: string;
  identifier: string;
  platform: string | null;
}

export interface PushSubscriptionDelete {
  identifier: string;
}

/** A device or browser subscription; web push needs the endpoint URL as
 * `identifier` and `keys`. */
export interface PushSubscriptionInput {
  identifier: string;
  keys?: PushKeys | null;
  platform?: string | null;
}

export interface PushSubscriptionList {
  items: Array<PushSubscription>;
  page: Page;
}

/** A run recipient identified inline: `external_id` plus any user fields. */
export interface RecipientInput {
  avatar?: string | null;
  custom_fields?: Record<string, unknown> | null;
  email?: string | null;
  external_id: string;
  first_name?: string | null;
  last_name?: string | null;
  locale?: string | null;
  phone?: string | null;
  timezone?: string | null;
}

/** An explicit recipient: an external_id, or a user object identified inline. */
export type RecipientSpec = string | RecipientInput;

/** The rendered content of a delivery. */
export interface Rendered {
  body: string;
  html?: string | null;
  /** Per-device outcomes and other provider facts (push channels). */
  outcomes?: unknown;
  subject: string;
  url?: string | null;
}

export interface RunInput {
  actor?: RecipientSpec | null;
  data?: Record<string, unknown> | null;
  /** Alternative to the `Idempotency-Key` header. */
  idempotency_key?: string | null;
  /** At most 1,000; recipients plus topic must not be empty. */
  recipients?: Array<RecipientSpec> | null;
  /** A topic key: its subscribers are recipients too. */
  topic?: string | null;
}

export interface SigningKeyInput {
  /** PEM `PUBLIC KEY` (SPKI) or `RSA PUBLIC KEY` (PKCS#1), RSA of at least 2048 bits. */
  public_key: string;
}

export interface SigningKeyPair {
  /** PKCS#8 PEM; returned once, never stored. */
  private_key: string;
  /** SPKI PEM, now stored as the project's signing key. */
  public_key: string;
}

/** A channel step (deliver through a channel) or a delay step (wait durably). */
export type Step = ChannelStep | DelayStep;

export interface Subscription {
  created_at: string;
  id: string;
  /** The topic key. */
  topic: string;
  user_external_id: string;
}

export interface SubscriptionInput {
  external_id: string;
}

export interface SubscriptionList {
  items: Array<Subscription>;
  page: Page;
}

/** MiniJinja templates over `recipient`, `actor`, `data` and `flow`. */
export interface Template {
  body?: string | null;
  html?: string | null;
  subject?: string | null;
  url?: string | null;
}

export interface Topic {
  created_at: string;
  description: string | null;
  key: string;
  name: string | null;
  subscribers_count: number;
  updated_at: string;
}

export interface TopicInput {
  description?: string | null;
  name?: string | null;
}

export interface TopicList {
  items: Array<Topic>;
  page: Page;
}

/** No fields needed (an optional idempotency_key is accepted). */
export type TopicSubscribeInput = Record<string, unknown>;

export interface User {
  avatar: string | null;
  created_at: string;
  custom_fields: Record<string, unknown>;
  email: string | null;
  external_id: string;
  first_name: string | null;
  id: string;
  last_name: string | null;
  locale: string | null;
  phone: string | null;
  timezone: string | null;
  updated_at: string;
}

/** A channel as a user sees it (no config except a web push public key). */
export interface UserChannel {
  id: string;
  name: string;
  provider: string;
  status: ChannelStatus;
  type: ChannelType;
  /** Web push channels only. */
  vapid_public_key?: string | null;
}

/** Profile fields of a user (partial update: only given fields change, `null` clears). */
export interface UserInput {
  /** An absolute http(s) URL. */
  avatar?: string | null;
  /** Any JSON object, at most 64 KiB serialised. */
  custom_fields?: Record<string, unknown> | null;
  email?: string | null;
  first_name?: string | null;
  last_name?: string | null;
  /** A BCP 47 language tag. */
  locale?: string | null;
  phone?: string | null;
  /** An IANA time zone. */
  timezone?: string | null;
}

export interface UserList {
  items: Array<User>;
  page: Page;
}
