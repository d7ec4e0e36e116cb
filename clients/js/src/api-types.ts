// GENERATED from herald's /openapi.json by scripts/gen-types.mjs: do not edit.
// The User and Admin API resources as TypeScript types (test/types.test.mjs fails
// when this file and the binary's document drift apart: rerun `npm run gen:types`).
// OpenAPI 3.1.0, Herald 0.1.0

/** Apple Push Notification service, token-based (ES256 .p8 key) over HTTP/2. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type ApnsConfig = {
  /** APNs base URL; a plain `http://` one is spoken as HTTP/2 with prior knowledge (a local test server). */
  base_url?: string | null;
  /** Picks Apple's host when `base_url` is not set. */
  environment?: "production" | "sandbox" | null;
  /** Id of the .p8 key (the provider token's `kid`). */
  key_id: string | null;
  /** The .p8 file's PEM (a P-256 key). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  private_key: string | null;
  retry?: ChannelRetry | null;
  /** Apple developer team id (the provider token's `iss`). */
  team_id: string | null;
  /** The app's bundle id (`apns-topic`). */
  topic: string | null;
} | null;

/** One change of the project's configuration. */
export interface AuditEntry {
  /** `<resource type>.<verb>`: `flow.created`, `flow.updated`,
   * `flow.activated`, `flow.deactivated`, `flow.archived`,
   * `channel.created|updated|revoked|deleted`,
   * `topic.created|updated|deleted`,
   * `webhook_endpoint.created|updated|deleted|secret_rotated`,
   * `partial.*`, `layout.*`, `translation.*` (`created|updated|deleted`),
   * `project.updated`, `clock.advanced`, `key.rotated`,
   * `signing_key.put|generated|deleted`, `link_secret.rotated`,
   * `member.*`. */
  action: string;
  /** The resource after the change; null when it was deleted. Secrets
   * read `********` or are left out. */
  after: Record<string, unknown> | null;
  /** When the change was made. */
  at: string;
  /** The resource before the change; null when it was created. */
  before: Record<string, unknown> | null;
  id: string;
  /** The resource's id (the project's for settings, the clock and keys). */
  resource_id: string;
  /** Its handle, key, name or URL, when it has one. */
  resource_key: string | null;
  /** The part of `action` before its dot. */
  resource_type: string;
  /** Who made the change: a console member's email, `api` (the Admin
   * API's secret key) or `operator`. */
  who: string;
}

export interface AuditEntryList {
  items: Array<AuditEntry>;
  page: Page;
}

/** Gathers runs into one digest, per flow, recipient and `key`: the first
 * run to reach the step opens a batch and waits until it closes (its
 * `window` ends, or `max` activities are in); runs reaching it meanwhile
 * join it and end there (their notifications are `batched`, with
 * `batched_into`). The opener's later steps then render with
 * `batch.activities` (each run's `data` and `actor`), `batch.count` and
 * `batch.actors`. Also the batch step of a request. A flow has at most one. */
export interface BatchStep {
  /** A condition, as on any step (see `DelayStep.if`); false: the run
   * does not batch and goes on. */
  if?: Condition | null;
  /** A template over the run (e.g. `{{ data.thread_id }}`): separate
   * batches per rendered key. Absent: one batch per recipient. */
  key?: string | null;
  /** Closes the batch as soon as it holds this many activities (the
   * opener's included). Absent: no limit. */
  max?: number | null;
  /** Sliding windows only: the longest a batch stays open from its first
   * activity (a duration). Defaults to ten times the window. */
  max_window?: string | null;
  type: BatchStepType;
  /** A duration: `"90s"`, `"15m"`, `"1h"`, `"2d"`, `"1h 30m"`. */
  window: string;
  /** `fixed` (the default): the batch closes `window` after its first
   * activity. `sliding`: each activity moves the close to its own time
   * plus `window`, never beyond the first activity plus `max_window`. */
  window_type?: BatchWindowType;
}

export type BatchStepType = "batch";

export type BatchWindowType = "fixed" | "sliding";

/** A bounce's kind: a hard bounce (the address does not exist) suppresses
 * the address at once; soft bounces (full mailbox, greylisting) only when
 * they repeat. */
export type BounceKind = "hard" | "soft";

/** A project's branding: `brand.name`, `brand.logo_url`… in every
 * template and layout. Each part optional; a PUT replaces the whole. */
export interface Branding {
  /** HTML for an email's footer, inserted as written; at most 10,000 characters. */
  footer_html?: string | null;
  /** An absolute http(s) URL. */
  logo_url?: string | null;
  /** At most 200 characters. */
  name?: string | null;
  /** `#rrggbb`. */
  primary_color?: string | null;
  /** An absolute http(s) URL. */
  support_url?: string | null;
}

/** Deletes many users, by external id. */
export interface BulkDeleteInput {
  /** `true`: each user is erased as `DELETE /admin/v1/users/{external_id}?erase=true`
   * does (their notifications, deliveries, feed entries and events go too);
   * the answer lists the erasures. Default `false`. */
  erase?: boolean | null;
  /** At most 1,000. */
  external_ids: Array<ExternalId>;
  /** Alternative to the `Idempotency-Key` header. */
  idempotency_key?: string | null;
}

/** The answer of `POST /admin/v1/users/bulk_delete`: how many users were
 * deleted, and the external ids that named no user (in the request's order). */
export interface BulkDeleteResult {
  deleted: number;
  /** With `erase`: one per user deleted, in the request's order (absent
   * without `erase`). */
  erasures?: Array<BulkErasure> | null;
  not_found: Array<string>;
}

/** One user's erasure in a bulk delete with `erase`: poll
 * `GET /admin/v1/erasures/{id}` while it is `running`. */
export interface BulkErasure {
  erasure: Erasure;
  external_id: string;
}

/** What happened to one item of a bulk upsert. */
export type BulkStatus = "created" | "updated";

/** Subscribes many users to a topic, by external id. */
export interface BulkSubscriptionInput {
  /** Alternative to the `Idempotency-Key` header. */
  idempotency_key?: string | null;
  /** At most 1,000 external ids of existing users. */
  users: Array<ExternalId>;
}

/** The answer of a bulk subscription: the topic (its `subscribers_count` after
 * the change) and how many subscriptions were new; users already subscribed
 * are left as they are. */
export interface BulkSubscriptionResult {
  created: number;
  topic: Topic;
}

/** One item's result, in the request's order: `status` and `user` when it was
 * stored, `error` (the contract's error object, a 422) when it was refused. */
export interface BulkUserResult {
  error?: ErrorBody | null;
  /** The item's external id; null when it gave none usable. */
  external_id: string | null;
  status?: BulkStatus | null;
  user?: User | null;
}

/** Creates or updates many users: each item is `external_id` plus any user fields. */
export interface BulkUsersInput {
  /** Alternative to the `Idempotency-Key` header. */
  idempotency_key?: string | null;
  /** At most 1,000, applied in order (a later item of the same external id
   * patches what the earlier one left). */
  users: Array<RecipientInput>;
}

/** The answer of `POST /admin/v1/users/bulk`. */
export interface BulkUsersResult {
  results: Array<BulkUserResult>;
}

/** What a verified provider callback did, report by report. */
export interface CallbackResult {
  /** Reports that changed their delivery. */
  applied: number;
  /** Reports of what their delivery already says. */
  duplicate: number;
  /** Reports the delivery's status does not take (a delivery never
   * sent, a report that would move it backwards). */
  ignored: number;
  /** Reports naming no message of the channel's project. */
  unknown: number;
}

/** Which runs of the flow to stop. */
export interface CancelInput {
  /** The `cancellation_key` the runs were given. */
  cancellation_key: string;
  /** Only these recipients' notifications (external ids); all when absent. */
  recipients?: Array<string> | null;
}

/** What a cancellation stopped. */
export interface CancelResult {
  /** Deliveries this call canceled (a repeat finds none left: 0). */
  canceled: number;
}

/** A preference category: a group of flows a user can turn off together
 * (a flow names its categories; a user's preferences set them). */
export interface Category {
  created_at: string;
  description: string | null;
  handle: string;
  name: string;
  updated_at: string;
}

/** Declares a category or changes its name and description. */
export interface CategoryInput {
  description?: string | null;
  name: string;
}

/** Every category of the project, by handle order (there are at most 100,
 * so the list is not paged). */
export interface CategoryList {
  data: Array<Category>;
}

/** One category's counts in `FeedMeta::by_category`. */
export interface CategoryMeta {
  unread_count: number;
  unseen_count: number;
}

/** A category as a user's preferences show it: effective values. */
export interface CategoryPreferences {
  channel_types: ChannelTypeFlags;
  enabled: boolean;
  name: string;
}

/** A channel. Its `config` is what was stored, secrets reading back as `********`; `status` is `active` once every required field is set. */
export type Channel = {
  config: {
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "in_app";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "in_app";
  updated_at: string;
} | {
  config: {
    retry?: ChannelRetry;
    /** Signing secret: `whsec_` + base64 of random bytes (e.g. `echo whsec_$(openssl rand -base64 32)`); each request then carries `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. Secret: set, shown masked. */
    secret?: "********";
    /** How long to wait for the receiver's answer; a timeout is retried. */
    timeout_ms?: number;
    /** Where each delivery is POSTed (http or https). */
    url?: string;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "webhook";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "chat";
  updated_at: string;
} | {
  config: {
    retry?: ChannelRetry;
    /** The incoming-webhook URL (it is the credential, so it is a secret). Secret: set, shown masked. */
    url?: "********";
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "slack_webhook";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "chat";
  updated_at: string;
} | {
  config: {
    /** API base URL (a mock or a proxy). */
    base_url?: string;
    /** The recipient's custom field holding the Slack user or channel id to post to (default `slack_user_id`). */
    recipient_field?: string;
    retry?: ChannelRetry;
    /** The bot token (`xoxb-…`) of a Slack app with the `chat:write` scope. Secret: set, shown masked. */
    token?: "********";
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "slack";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "chat";
  updated_at: string;
} | {
  config: {
    retry?: ChannelRetry;
    /** The webhook URL (`https://discord.com/api/webhooks/{id}/{token}`): it holds the token, so it is a secret. Secret: set, shown masked. */
    url?: "********";
    /** Shown as the message's author instead of the webhook's name. */
    username?: string;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "discord";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "chat";
  updated_at: string;
} | {
  config: {
    retry?: ChannelRetry;
    /** The incoming-webhook or Workflows URL (it is the credential, so it is a secret). Secret: set, shown masked. */
    url?: "********";
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "teams";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "chat";
  updated_at: string;
} | {
  config: {
    /** Sender: `addr@example.com` or `Name <addr@example.com>`. */
    from?: string;
    /** SMTP server host name or address (no scheme, no port). */
    host?: string;
    /** SMTP AUTH password. Secret: set, shown masked. */
    password?: "********";
    /** 587 (STARTTLS), 465 (implicit TLS), 25 or a local relay's port. */
    port?: number;
    retry?: ChannelRetry;
    /** `starttls` (required, usually port 587), `tls` (implicit, port 465), `none` (plain, a local relay only). */
    tls?: "none" | "starttls" | "tls";
    /** SMTP AUTH user (no AUTH without it). */
    username?: string;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "smtp";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "email";
  updated_at: string;
} | {
  config: {
    /** API key with the Mail Send permission; sent as a Bearer token. Secret: set, shown masked. */
    api_key?: "********";
    /** API base URL (a mock or a proxy). */
    base_url?: string;
    /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
    from?: string;
    retry?: ChannelRetry;
    /** The verification key of SendGrid's Signed Event Webhook (base64 DER, as SendGrid's settings show it): event callbacks at `/hooks/v1/{channel_id}` must be signed with its key. Not needed to send. */
    webhook_verification_key?: string;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "sendgrid";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "email";
  updated_at: string;
} | {
  config: {
    /** API base URL (a mock or a proxy). */
    base_url?: string;
    /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
    from?: string;
    /** Message stream id (default `outbound`, the transactional stream). */
    message_stream?: string;
    retry?: ChannelRetry;
    /** Server API token; sent as `X-Postmark-Server-Token`. Secret: set, shown masked. */
    server_token?: "********";
    /** Basic-auth password of that webhook URL. Secret: set, shown masked. */
    webhook_password?: "********";
    /** Basic-auth user name of the webhook URL set in Postmark for delivery feedback (`POST /hooks/v1/{channel_id}`). */
    webhook_username?: string;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "postmark";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "email";
  updated_at: string;
} | {
  config: {
    /** Private API key (or a domain sending key); basic-auth password of user `api`. Secret: set, shown masked. */
    api_key?: "********";
    /** API base URL: `https://api.eu.mailgun.net` for a domain in the EU region (or a mock, a proxy). */
    base_url?: string;
    /** The sending domain (`mg.example.com`). */
    domain?: string;
    /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
    from?: string;
    retry?: ChannelRetry;
    /** HTTP webhook signing key of the domain, which checks the webhooks of delivery feedback (`POST /hooks/v1/{channel_id}`). Secret: set, shown masked. */
    webhook_signing_key?: "********";
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "mailgun";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "email";
  updated_at: string;
} | {
  config: {
    /** API key (`re_…`) with sending access; sent as a Bearer token. Secret: set, shown masked. */
    api_key?: "********";
    /** API base URL (a mock or a proxy). */
    base_url?: string;
    /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
    from?: string;
    retry?: ChannelRetry;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "resend";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "email";
  updated_at: string;
} | {
  config: {
    /** Access key id of an IAM user or role allowed `ses:SendEmail`. */
    access_key_id?: string;
    /** API base URL (default `https://email.{region}.amazonaws.com`; a mock, a proxy or a VPC endpoint). */
    base_url?: string;
    /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
    from?: string;
    /** AWS region of the SES account (`eu-west-1`): the signature's region and the default endpoint's. */
    region?: string;
    retry?: ChannelRetry;
    /** Its secret access key (signs each request; never sent). Secret: set, shown masked. */
    secret_access_key?: "********";
    /** The ARN of the SNS topic SES publishes this channel's events to: SNS messages at `/hooks/v1/{channel_id}` of any other topic are refused. Not needed to send. */
    sns_topic_arn?: string;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "ses";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "email";
  updated_at: string;
} | {
  config: {
    /** Account SID (`AC…`); basic-auth user. */
    account_sid?: string;
    /** Auth token; basic-auth password. Secret: set, shown masked. */
    auth_token?: "********";
    /** API base URL (a mock or a proxy). */
    base_url?: string;
    /** Sending number in E.164 form (`+15005550006`). */
    from?: string;
    retry?: ChannelRetry;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "twilio";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "sms";
  updated_at: string;
} | {
  config: {
    /** The account's API key. */
    api_key?: string;
    /** The account's API secret. Secret: set, shown masked. */
    api_secret?: "********";
    /** API base URL (a mock or a proxy). */
    base_url?: string;
    /** Sender: a number (`+447700900000` or `447700900000`) or an alphanumeric sender id of at most 11 characters. */
    from?: string;
    retry?: ChannelRetry;
    /** The signature method chosen with the secret in Vonage's dashboard: `md5hash` (Vonage's default), or the HMAC `md5`, `sha1`, `sha256`, `sha512`. */
    signature_method?: "md5hash" | "md5" | "sha1" | "sha256" | "sha512";
    /** The account's signature secret (Vonage's dashboard, API settings): delivery receipts at `/hooks/v1/{channel_id}` must be signed with it. Not needed to send. Secret: set, shown masked. */
    signature_secret?: "********";
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "vonage";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "sms";
  updated_at: string;
} | {
  config: {
    /** The access key (`Authorization: AccessKey …`). Secret: set, shown masked. */
    access_key?: "********";
    /** API base URL (a mock or a proxy). */
    base_url?: string;
    /** Sender: a number (`+31612345678`) or an alphanumeric sender of at most 11 characters. */
    originator?: string;
    retry?: ChannelRetry;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "messagebird";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "sms";
  updated_at: string;
} | {
  config: {
    retry?: ChannelRetry;
    /** VAPID `sub`: a `mailto:` address or an https URL push services can reach you at. */
    subject?: string;
    /** base64url P-256 private scalar (32 bytes), the `web-push generate-vapid-keys` format. Secret: set, shown masked. */
    vapid_private_key?: "********";
    /** base64url uncompressed P-256 point (65 bytes). Give both keys or neither: Herald then generates the pair. */
    vapid_public_key?: string;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "web_push";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "web_push";
  updated_at: string;
} | {
  config: {
    /** FCM API base URL (a mock or a proxy). */
    base_url?: string;
    /** The Firebase project id. */
    project_id?: string;
    retry?: ChannelRetry;
    /** The service account's JSON key file, as an object. Secret: set, shown masked. */
    service_account?: "********";
    /** OAuth 2 token endpoint (else the account's `token_uri`, else Google's). */
    token_url?: string;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "fcm";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "mobile_push";
  updated_at: string;
} | {
  config: {
    /** APNs base URL; a plain `http://` one is spoken as HTTP/2 with prior knowledge (a local test server). */
    base_url?: string;
    /** Picks Apple's host when `base_url` is not set. */
    environment?: "production" | "sandbox";
    /** Id of the .p8 key (the provider token's `kid`). */
    key_id?: string;
    /** The .p8 file's PEM (a P-256 key). Secret: set, shown masked. */
    private_key?: "********";
    retry?: ChannelRetry;
    /** Apple developer team id (the provider token's `iss`). */
    team_id?: string;
    /** The app's bundle id (`apns-topic`). */
    topic?: string;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "apns";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "mobile_push";
  updated_at: string;
} | {
  config: {
    /** An Expo access token, sent as `Authorization: Bearer …` (needed when the project enforces push security). Secret: set, shown masked. */
    access_token?: "********";
    /** Push API base URL (a mock or a proxy). */
    base_url?: string;
    retry?: ChannelRetry;
  };
  created_at: string;
  health: ChannelHealth;
  id: string;
  name: string;
  provider: "expo";
  /** Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`). */
  sandbox: boolean;
  status: ChannelStatus;
  type: "mobile_push";
  updated_at: string;
};

/** The channel's circuit breaker: `degraded` after 5 failures in a row (the provider unreachable, 408, 429, 5xx) or at least half of 20 or more attempts in a minute; a probe after the cool-down closes it again (`ok`). */
export interface ChannelHealth {
  /** What the provider last said when it failed; null before any failure. */
  last_error: string | null;
  /** When it entered this state (the channel's creation when it never changed). */
  since: string;
  state: "ok" | "degraded";
}

/** A new channel: `type` and the `provider` of that type, with the provider's `config` (plus `retry`). A missing or partial `config` creates the channel `unconfigured`. */
export type ChannelInput = {
  config?: InAppConfig;
  name?: string | null;
  provider: "in_app";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "in_app";
} | {
  config?: WebhookConfig;
  name?: string | null;
  provider: "webhook";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "chat";
} | {
  config?: SlackWebhookConfig;
  name?: string | null;
  provider: "slack_webhook";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "chat";
} | {
  config?: SlackConfig;
  name?: string | null;
  provider: "slack";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "chat";
} | {
  config?: DiscordConfig;
  name?: string | null;
  provider: "discord";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "chat";
} | {
  config?: TeamsConfig;
  name?: string | null;
  provider: "teams";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "chat";
} | {
  config?: SmtpConfig;
  name?: string | null;
  provider: "smtp";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "email";
} | {
  config?: SendgridConfig;
  name?: string | null;
  provider: "sendgrid";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "email";
} | {
  config?: PostmarkConfig;
  name?: string | null;
  provider: "postmark";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "email";
} | {
  config?: MailgunConfig;
  name?: string | null;
  provider: "mailgun";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "email";
} | {
  config?: ResendConfig;
  name?: string | null;
  provider: "resend";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "email";
} | {
  config?: SesConfig;
  name?: string | null;
  provider: "ses";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "email";
} | {
  config?: TwilioConfig;
  name?: string | null;
  provider: "twilio";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "sms";
} | {
  config?: VonageConfig;
  name?: string | null;
  provider: "vonage";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "sms";
} | {
  config?: MessagebirdConfig;
  name?: string | null;
  provider: "messagebird";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "sms";
} | {
  config?: WebPushConfig;
  name?: string | null;
  provider: "web_push";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "web_push";
} | {
  config?: FcmConfig;
  name?: string | null;
  provider: "fcm";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "mobile_push";
} | {
  config?: ApnsConfig;
  name?: string | null;
  provider: "apns";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "mobile_push";
} | {
  config?: ExpoConfig;
  name?: string | null;
  provider: "expo";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type: "mobile_push";
};

export interface ChannelList {
  items: Array<Channel>;
  page: Page;
}

/** Retries of a delivery that failed transiently (connection errors, timeouts, 408, 429, 5xx): jittered exponential backoff from `base_seconds` up to `max_seconds`, `Retry-After` honoured up to `max_seconds`. */
export interface ChannelRetry {
  base_seconds?: number;
  max_attempts?: number;
  max_seconds?: number;
}

export type ChannelStatus = "unconfigured" | "active" | "revoked";

export interface ChannelStep {
  channel_id?: string | null;
  /** Backup channels of the step's channel type, in order (at most 3; not
   * on an in_app step): a delivery its channel fails for good, whose
   * retries run out, or whose channel is degraded, moves to the next one
   * (the same delivery id). Absent when none. */
  fallback_channel_ids: Array<string>;
  /** The step's condition (see `DelayStep.if`); absent when it has none. */
  if?: StepCondition | null;
  /** An email step's layout: a handle, or null for none; absent, the
   * project's `default_layout` applies. */
  layout?: string | null;
  /** When the step may deliver, in the recipient's timezone (UTC when
   * none): `{"days": ["mon", …], "from": "09:00", "to": "18:00"}`; a `to`
   * not after `from` runs across midnight. Reached outside it, the step
   * and the run after it wait until it opens. Absent when none. */
  send_window?: SendWindow | null;
  template: Template;
  type: ChannelStepType;
}

/** A channel step as a request gives it: the channel is required. */
export interface ChannelStepInput {
  channel_id: string;
  /** Backup channels of the step's channel type, in order (see ChannelStep.fallback_channel_ids); not on an in_app step. */
  fallback_channel_ids?: Array<string> | null;
  /** The step's condition (see DelayStep.if); rules may also name earlier channel steps. */
  if?: StepCondition | null;
  /** An email step's layout (see ChannelStep.layout): a handle, or null for none. */
  layout?: string | null;
  /** When the step may deliver (see ChannelStep.send_window). */
  send_window?: SendWindow | null;
  template: Template;
  type: ChannelStepType;
}

export type ChannelStepType = "channel";

/** The 202 answer to a channel's test send: the run and the notification
 * it made (`GET /admin/v1/notifications/{notification_id}` follows it). */
export interface ChannelTestAccepted {
  channel_id: string;
  created_at: string;
  flow_run_id: string;
  notification_id: string;
  status: PendingStatus;
}

/** A channel's test send: the user it goes to and, optionally, `data` for
 * its template (`subject` and `body` replace the test's own). */
export interface ChannelTestInput {
  /** The run's data, for the templates. */
  data?: Record<string, unknown> | null;
  /** An existing user's external id. */
  user_id: ExternalId;
}

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

/** One source per channel type. */
export interface ChannelTypeSources {
  chat: PreferenceSource;
  email: PreferenceSource;
  in_app: PreferenceSource;
  mobile_push: PreferenceSource;
  sms: PreferenceSource;
  web_push: PreferenceSource;
}

/** A channel update. `type` and `provider` cannot change (they may be sent, equal to the channel's); the alternative of the channel's provider says what `config` takes. (`anyOf`, not `oneOf`: an update need not name its provider.) */
export type ChannelUpdate = {
  /** Merged key by key into the stored config of a `in_app` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
  } | null;
  name?: string | null;
  provider?: "in_app";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "in_app";
} | {
  /** Merged key by key into the stored config of a `webhook` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    retry?: ChannelRetry | null;
    /** Signing secret: `whsec_` + base64 of random bytes (e.g. `echo whsec_$(openssl rand -base64 32)`); each request then carries `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    secret?: string | "********" | null;
    /** How long to wait for the receiver's answer; a timeout is retried. */
    timeout_ms?: number | null;
    /** Where each delivery is POSTed (http or https). */
    url?: string | null;
  } | null;
  name?: string | null;
  provider?: "webhook";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "chat";
} | {
  /** Merged key by key into the stored config of a `slack_webhook` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    retry?: ChannelRetry | null;
    /** The incoming-webhook URL (it is the credential, so it is a secret). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    url?: string | "********" | null;
  } | null;
  name?: string | null;
  provider?: "slack_webhook";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "chat";
} | {
  /** Merged key by key into the stored config of a `slack` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** API base URL (a mock or a proxy). */
    base_url?: string | null;
    /** The recipient's custom field holding the Slack user or channel id to post to (default `slack_user_id`). */
    recipient_field?: string | null;
    retry?: ChannelRetry | null;
    /** The bot token (`xoxb-…`) of a Slack app with the `chat:write` scope. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    token?: string | "********" | null;
  } | null;
  name?: string | null;
  provider?: "slack";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "chat";
} | {
  /** Merged key by key into the stored config of a `discord` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    retry?: ChannelRetry | null;
    /** The webhook URL (`https://discord.com/api/webhooks/{id}/{token}`): it holds the token, so it is a secret. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    url?: string | "********" | null;
    /** Shown as the message's author instead of the webhook's name. */
    username?: string | null;
  } | null;
  name?: string | null;
  provider?: "discord";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "chat";
} | {
  /** Merged key by key into the stored config of a `teams` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    retry?: ChannelRetry | null;
    /** The incoming-webhook or Workflows URL (it is the credential, so it is a secret). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    url?: string | "********" | null;
  } | null;
  name?: string | null;
  provider?: "teams";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "chat";
} | {
  /** Merged key by key into the stored config of a `smtp` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** Sender: `addr@example.com` or `Name <addr@example.com>`. */
    from?: string | null;
    /** SMTP server host name or address (no scheme, no port). */
    host?: string | null;
    /** SMTP AUTH password. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    password?: string | "********" | null;
    /** 587 (STARTTLS), 465 (implicit TLS), 25 or a local relay's port. */
    port?: number | null;
    retry?: ChannelRetry | null;
    /** `starttls` (required, usually port 587), `tls` (implicit, port 465), `none` (plain, a local relay only). */
    tls?: "none" | "starttls" | "tls" | null;
    /** SMTP AUTH user (no AUTH without it). */
    username?: string | null;
  } | null;
  name?: string | null;
  provider?: "smtp";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "email";
} | {
  /** Merged key by key into the stored config of a `sendgrid` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** API key with the Mail Send permission; sent as a Bearer token. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    api_key?: string | "********" | null;
    /** API base URL (a mock or a proxy). */
    base_url?: string | null;
    /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
    from?: string | null;
    retry?: ChannelRetry | null;
    /** The verification key of SendGrid's Signed Event Webhook (base64 DER, as SendGrid's settings show it): event callbacks at `/hooks/v1/{channel_id}` must be signed with its key. Not needed to send. */
    webhook_verification_key?: string | null;
  } | null;
  name?: string | null;
  provider?: "sendgrid";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "email";
} | {
  /** Merged key by key into the stored config of a `postmark` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** API base URL (a mock or a proxy). */
    base_url?: string | null;
    /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
    from?: string | null;
    /** Message stream id (default `outbound`, the transactional stream). */
    message_stream?: string | null;
    retry?: ChannelRetry | null;
    /** Server API token; sent as `X-Postmark-Server-Token`. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    server_token?: string | "********" | null;
    /** Basic-auth password of that webhook URL. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    webhook_password?: string | "********" | null;
    /** Basic-auth user name of the webhook URL set in Postmark for delivery feedback (`POST /hooks/v1/{channel_id}`). */
    webhook_username?: string | null;
  } | null;
  name?: string | null;
  provider?: "postmark";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "email";
} | {
  /** Merged key by key into the stored config of a `mailgun` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** Private API key (or a domain sending key); basic-auth password of user `api`. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    api_key?: string | "********" | null;
    /** API base URL: `https://api.eu.mailgun.net` for a domain in the EU region (or a mock, a proxy). */
    base_url?: string | null;
    /** The sending domain (`mg.example.com`). */
    domain?: string | null;
    /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
    from?: string | null;
    retry?: ChannelRetry | null;
    /** HTTP webhook signing key of the domain, which checks the webhooks of delivery feedback (`POST /hooks/v1/{channel_id}`). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    webhook_signing_key?: string | "********" | null;
  } | null;
  name?: string | null;
  provider?: "mailgun";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "email";
} | {
  /** Merged key by key into the stored config of a `resend` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** API key (`re_…`) with sending access; sent as a Bearer token. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    api_key?: string | "********" | null;
    /** API base URL (a mock or a proxy). */
    base_url?: string | null;
    /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
    from?: string | null;
    retry?: ChannelRetry | null;
  } | null;
  name?: string | null;
  provider?: "resend";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "email";
} | {
  /** Merged key by key into the stored config of a `ses` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** Access key id of an IAM user or role allowed `ses:SendEmail`. */
    access_key_id?: string | null;
    /** API base URL (default `https://email.{region}.amazonaws.com`; a mock, a proxy or a VPC endpoint). */
    base_url?: string | null;
    /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
    from?: string | null;
    /** AWS region of the SES account (`eu-west-1`): the signature's region and the default endpoint's. */
    region?: string | null;
    retry?: ChannelRetry | null;
    /** Its secret access key (signs each request; never sent). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    secret_access_key?: string | "********" | null;
    /** The ARN of the SNS topic SES publishes this channel's events to: SNS messages at `/hooks/v1/{channel_id}` of any other topic are refused. Not needed to send. */
    sns_topic_arn?: string | null;
  } | null;
  name?: string | null;
  provider?: "ses";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "email";
} | {
  /** Merged key by key into the stored config of a `twilio` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** Account SID (`AC…`); basic-auth user. */
    account_sid?: string | null;
    /** Auth token; basic-auth password. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    auth_token?: string | "********" | null;
    /** API base URL (a mock or a proxy). */
    base_url?: string | null;
    /** Sending number in E.164 form (`+15005550006`). */
    from?: string | null;
    retry?: ChannelRetry | null;
  } | null;
  name?: string | null;
  provider?: "twilio";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "sms";
} | {
  /** Merged key by key into the stored config of a `vonage` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** The account's API key. */
    api_key?: string | null;
    /** The account's API secret. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    api_secret?: string | "********" | null;
    /** API base URL (a mock or a proxy). */
    base_url?: string | null;
    /** Sender: a number (`+447700900000` or `447700900000`) or an alphanumeric sender id of at most 11 characters. */
    from?: string | null;
    retry?: ChannelRetry | null;
    /** The signature method chosen with the secret in Vonage's dashboard: `md5hash` (Vonage's default), or the HMAC `md5`, `sha1`, `sha256`, `sha512`. */
    signature_method?: "md5hash" | "md5" | "sha1" | "sha256" | "sha512" | null;
    /** The account's signature secret (Vonage's dashboard, API settings): delivery receipts at `/hooks/v1/{channel_id}` must be signed with it. Not needed to send. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    signature_secret?: string | "********" | null;
  } | null;
  name?: string | null;
  provider?: "vonage";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "sms";
} | {
  /** Merged key by key into the stored config of a `messagebird` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** The access key (`Authorization: AccessKey …`). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    access_key?: string | "********" | null;
    /** API base URL (a mock or a proxy). */
    base_url?: string | null;
    /** Sender: a number (`+31612345678`) or an alphanumeric sender of at most 11 characters. */
    originator?: string | null;
    retry?: ChannelRetry | null;
  } | null;
  name?: string | null;
  provider?: "messagebird";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "sms";
} | {
  /** Merged key by key into the stored config of a `web_push` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    retry?: ChannelRetry | null;
    /** VAPID `sub`: a `mailto:` address or an https URL push services can reach you at. */
    subject?: string | null;
    /** base64url P-256 private scalar (32 bytes), the `web-push generate-vapid-keys` format. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    vapid_private_key?: string | "********" | null;
    /** base64url uncompressed P-256 point (65 bytes). Give both keys or neither: Herald then generates the pair. */
    vapid_public_key?: string | null;
  } | null;
  name?: string | null;
  provider?: "web_push";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "web_push";
} | {
  /** Merged key by key into the stored config of a `fcm` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** FCM API base URL (a mock or a proxy). */
    base_url?: string | null;
    /** The Firebase project id. */
    project_id?: string | null;
    retry?: ChannelRetry | null;
    /** The service account's JSON key file, as an object. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    service_account?: FcmServiceAccount | "********" | null;
    /** OAuth 2 token endpoint (else the account's `token_uri`, else Google's). */
    token_url?: string | null;
  } | null;
  name?: string | null;
  provider?: "fcm";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "mobile_push";
} | {
  /** Merged key by key into the stored config of a `apns` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** APNs base URL; a plain `http://` one is spoken as HTTP/2 with prior knowledge (a local test server). */
    base_url?: string | null;
    /** Picks Apple's host when `base_url` is not set. */
    environment?: "production" | "sandbox" | null;
    /** Id of the .p8 key (the provider token's `kid`). */
    key_id?: string | null;
    /** The .p8 file's PEM (a P-256 key). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    private_key?: string | "********" | null;
    retry?: ChannelRetry | null;
    /** Apple developer team id (the provider token's `iss`). */
    team_id?: string | null;
    /** The app's bundle id (`apns-topic`). */
    topic?: string | null;
  } | null;
  name?: string | null;
  provider?: "apns";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "mobile_push";
} | {
  /** Merged key by key into the stored config of a `expo` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again. */
  config?: {
    /** An Expo access token, sent as `Authorization: Bearer …` (needed when the project enforces push security). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
    access_token?: string | "********" | null;
    /** Push API base URL (a mock or a proxy). */
    base_url?: string | null;
    retry?: ChannelRetry | null;
  } | null;
  name?: string | null;
  provider?: "expo";
  /** Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it). */
  sandbox?: boolean | null;
  type?: "mobile_push";
};

/** Moves a test clock forward: exactly one of `by` and `to`. */
export type ClockAdvance = {
  by: string;
  to?: null;
} | {
  by?: null;
  to: string;
};

/** Which clock a project's time follows. */
export type ClockKind = "real" | "test";

/** A condition of a delay, throttle or batch step: rules over `data.…`, `recipient.…` and `actor.…`. */
export type Condition = Array<ConditionRule> | {
  all: Array<ConditionRule>;
} | {
  any: Array<ConditionRule>;
};

/** A rule: `path` compared by `op` with `value`. */
export type ConditionRule = {
  op: "exists" | "not_exists";
  path: string;
  value?: null;
} | {
  op: "in" | "not_in";
  path: string;
  value: Array<unknown>;
} | {
  op: "gt" | "gte" | "lt" | "lte";
  path: string;
  value: number | string;
} | {
  op: "eq" | "neq" | "contains";
  path: string;
  value: string | number | boolean | Array<unknown> | Record<string, unknown>;
};

export interface DelayStep {
  /** A condition: an array of rules `{path, op, value}` that must all
   * hold, or `{"all": [...]}` / `{"any": [...]}`. `op`: eq, neq, gt, gte,
   * lt, lte, in, not_in, contains, exists, not_exists; `path`:
   * `data.…`, `recipient.…`, `actor.…`, or (channel steps)
   * `steps.<index>.status|read|seen|clicked|interacted` of an earlier channel step,
   * evaluated when the step is reached. False: the step is skipped
   * (`condition_false`). Absent when the step has none. */
  if?: Condition | null;
  seconds: number;
  type: DelayStepType;
}

export type DelayStepType = "delay";

/** A delivery as the Admin API and the webhooks show it. */
export interface Delivery {
  actor_id: string | null;
  archived_at: string | null;
  /** The channel of each attempt, in order (as many as `attempts`): they
   * differ from `channel_id` once a failover moved the delivery to a
   * backup channel. */
  attempt_channels: Array<string>;
  /** Provider calls made so far, through every channel it went through. */
  attempts: number;
  bounce?: BounceKind | null;
  /** The channel the delivery goes through: its step's channel, or the
   * backup a failover moved it to (the one that sent it, once sent). */
  channel_id: string;
  channel_type: ChannelType;
  clicked_at: string | null;
  created_at: string;
  data: Rendered;
  error: DeliveryError | null;
  flow_id: string;
  flow_run_id: string;
  id: string;
  /** The index in `data.actions` of the action the recipient last pressed. */
  interacted_action: number | null;
  interacted_at: string | null;
  next_attempt_at: string | null;
  notification_id: string;
  read_at: string | null;
  recipient_id: string;
  /** Sent in sandbox mode (the project's or the channel's): no provider
   * was called. */
  sandbox: boolean;
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
   * (the egress guard refused the address; nothing was sent), `suppressed`
   * (the address is on the project's suppression list)… */
  code: string;
  message: string;
}

export interface DeliveryList {
  items: Array<Delivery>;
  page: Page;
}

export type DeliveryStatus = "pending" | "sent" | "failed" | "skipped" | "canceled" | "delivered" | "bounced" | "complained";

/** POSTs `{"content"}` (and an embed for the link) to a Discord webhook. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type DiscordConfig = {
  retry?: ChannelRetry | null;
  /** The webhook URL (`https://discord.com/api/webhooks/{id}/{token}`): it holds the token, so it is a secret. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  url: string | null;
  /** Shown as the message's author instead of the webhook's name. */
  username?: string | null;
} | null;

/** The erasure of a deleted user's notifications (`DELETE
 * /admin/v1/users/{external_id}?erase=true`, `GET /admin/v1/erasures/{id}`). */
export interface Erasure {
  completed_at: string | null;
  created_at: string;
  id: string;
  /** The user's notifications removed so far (with their deliveries). */
  notifications_removed: number;
  /** `running` until nothing of the user's notifications, deliveries, feed
   * entries and events remains, then `complete`. */
  status: string;
}

/** The error object every non-2xx response carries. */
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

export type ErrorCode = "bad_request" | "unauthenticated" | "forbidden" | "not_found" | "conflict" | "idempotency_key_reused" | "validation_failed" | "rate_limited" | "internal_error" | "service_unavailable" | "headers_too_large" | "request_timeout";

export interface EventAttemptList {
  items: Array<EventAttemptView>;
  page: Page;
}

/** One attempt to deliver an event to an endpoint. */
export interface EventAttemptView {
  /** 1 for the event's first attempt. */
  attempt: number;
  created_at: string;
  /** What went wrong (transport error, non-2xx answer); null on success. */
  error: string | null;
  /** The event's id (its `webhook-id`). */
  event_id: string;
  event_type: string;
  id: string;
  latency_ms: number;
  /** The first 1 KiB of the answer's body; always empty from an address that
   * is not public (a range the operator opened), where only the status is kept. */
  response: string;
  /** The answer's status; null when there was none. */
  status_code: number | null;
}

/** Expo push notifications: one message per Expo push token the recipient registered on the channel. */
export type ExpoConfig = {
  /** An Expo access token, sent as `Authorization: Bearer …` (needed when the project enforces push security). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  access_token?: string | null;
  /** Push API base URL (a mock or a proxy). */
  base_url?: string | null;
  retry?: ChannelRetry | null;
} | null;

export type ExternalId = string;

/** Firebase Cloud Messaging HTTP v1 to each device token registered as a subscription. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type FcmConfig = {
  /** FCM API base URL (a mock or a proxy). */
  base_url?: string | null;
  /** The Firebase project id. */
  project_id: string | null;
  retry?: ChannelRetry | null;
  /** The service account's JSON key file, as an object. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  service_account: FcmServiceAccount | null;
  /** OAuth 2 token endpoint (else the account's `token_uri`, else Google's). */
  token_url?: string | null;
} | null;

/** A Google service account key file (JSON), as downloaded from the console; other keys of the file are kept. */
export interface FcmServiceAccount {
  /** The JWT's `iss`. */
  client_email: string;
  /** The RSA private key (PEM: PKCS#8 or PKCS#1). */
  private_key: string;
  /** Kept as given. */
  private_key_id?: unknown;
  /** Kept as given (the channel's own `project_id` is used). */
  project_id?: unknown;
  /** Token endpoint, used when the channel has no `token_url`. */
  token_uri?: string;
  /** `service_account` in a downloaded key file; kept as given. */
  type?: unknown;
}

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
  /** The index in `data.actions` of the action the recipient last pressed. */
  interacted_action: number | null;
  interacted_at: string | null;
  notification_id: string;
  read: boolean;
  read_at: string | null;
  seen: boolean;
  seen_at: string | null;
  topic: string | null;
}

/** A press of one of the entry's action buttons. */
export interface FeedEntryInteract {
  /** The action's index in the entry's `data.actions` (from 0). */
  action: number;
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
  /** The same counts per preference category, by handle: every category
   * the project declares, counting the entries of the flows that name it
   * now (an entry of a flow in two categories counts in both). Present
   * when the project declares categories, on the first page of a feed
   * (no cursor), in the live feed's `hello` and `feed.counts` frames and
   * in a mark-all answer. */
  by_category?: Record<string, CategoryMeta> | null;
  unread_count: number;
  unseen_count: number;
}

/** A page of a user's feed with its counts. */
export interface FeedPage {
  items: Array<FeedEntry>;
  meta: FeedMeta;
  page: Page;
}

export interface Flow {
  /** The preference categories it belongs to: a user who turns one off
   * does not get it. */
  categories: Array<string>;
  /** A commercial (marketing) flow: its email carries one-click
   * unsubscribe; false: transactional. */
  commercial: boolean;
  created_at: string;
  /** Its deliveries ignore the recipient's preferences and quiet hours
   * (and will ignore one-click unsubscribe). */
  critical: boolean;
  description: string | null;
  handle: string;
  id: string;
  name: string;
  status: FlowStatus;
  steps: Array<Step>;
  updated_at: string;
}

export interface FlowInput {
  /** The preference categories it belongs to (declared handles, at most
   * 10); none when absent. */
  categories?: Array<string> | null;
  /** A commercial (marketing) flow: its email carries one-click
   * unsubscribe (`List-Unsubscribe`, `List-Unsubscribe-Post`) and
   * `{{ unsubscribe_url }}` is its link; false (transactional) when
   * absent. Active only on a server with a public URL (409
   * `public_url_required`); not with `critical` (422 `exclusion`). */
  commercial?: boolean | null;
  /** Its deliveries ignore the recipient's preferences and quiet hours
   * (and will ignore one-click unsubscribe); false when absent. */
  critical?: boolean | null;
  description?: string | null;
  /** Unique in the project, not shaped like a UUID. */
  handle: string;
  name: string;
  steps?: Array<StepInput> | null;
}

export interface FlowList {
  items: Array<Flow>;
  page: Page;
}

export interface FlowPreferences {
  /** The categories it belongs to (each also listed in `categories`). */
  categories: Array<string>;
  channel_types: ChannelTypeFlags;
  /** Present, and true, for a critical flow only: it ignores preferences,
   * so it shows enabled on every channel type, and turning it off is
   * refused (422 `exclusion`). */
  critical?: boolean;
  enabled: boolean;
  name: string;
}

export interface FlowPreferencesInput {
  channel_types?: ChannelTypeFlagsInput | null;
  enabled?: boolean | null;
}

/** A preview's answer: the recipient as rendered and each channel step. */
export interface FlowPreview {
  /** The flow previewed; null for an unsaved one. */
  flow_id: string | null;
  /** Every channel step, in order. */
  steps: Array<StepPreview>;
  /** The recipient as the templates saw it (the body's fields and
   * `locale` applied; a user a run would create has a fresh id). */
  user: User;
}

export interface FlowRun {
  /** The key `POST /admin/v1/flows/{id}/cancel` stops the run by. */
  cancellation_key: string | null;
  created_at: string;
  flow_id: string;
  id: string;
  notifications_count: number;
  processed_at: string | null;
  recipients_count: number;
  /** A scheduled run: when its steps start (project time). */
  send_at: string | null;
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
  /** See `FlowInput.categories`; absent keeps them, null or `[]` clears. */
  categories?: Array<string> | null;
  /** See `FlowInput.commercial`; absent keeps it. */
  commercial?: boolean | null;
  /** See `FlowInput.critical`; absent keeps it. */
  critical?: boolean | null;
  description?: string | null;
  /** Only the flow's own handle. */
  handle?: string;
  name?: string;
  steps?: Array<StepInput>;
}

export interface Health {
  /** `ok` (healthz) or `ready` (readyz). */
  status: string;
}

/** The in-app feed (built in, one per project): no settings. */
export type InAppConfig = {
} | null;

/** An email layout: `html` (and `text`) around an email step's parts,
 * which it shows as `{{ content }}`. */
export interface Layout {
  created_at: string;
  handle: string;
  html: string;
  name: string;
  /** The text part's layout; null: the step's body alone. */
  text: string | null;
  updated_at: string;
}

/** Declares a layout or replaces it. */
export interface LayoutInput {
  /** A MiniJinja template showing the step's HTML as `{{ content }}`. */
  html: string;
  name: string;
  /** The text part's template, the step's body as `{{ content }}`. */
  text?: string | null;
}

/** Every layout of the project, by handle (at most 20: not paged). */
export interface LayoutList {
  data: Array<Layout>;
}

/** Mailgun Messages API: one message per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type MailgunConfig = {
  /** Private API key (or a domain sending key); basic-auth password of user `api`. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  api_key: string | null;
  /** API base URL: `https://api.eu.mailgun.net` for a domain in the EU region (or a mock, a proxy). */
  base_url?: string | null;
  /** The sending domain (`mg.example.com`). */
  domain: string | null;
  /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
  from: string | null;
  retry?: ChannelRetry | null;
  /** HTTP webhook signing key of the domain, which checks the webhooks of delivery feedback (`POST /hooks/v1/{channel_id}`). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  webhook_signing_key?: string | null;
} | null;

/** The one reason the API gives a suppression (the others come from
 * providers' reports). */
export type ManualReason = "manual";

export interface MarkAllResult {
  meta: FeedMeta;
  updated: number;
}

/** MessageBird (Bird) SMS API: one SMS per delivery to the recipient's `phone` (E.164). The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type MessagebirdConfig = {
  /** The access key (`Authorization: AccessKey …`). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  access_key: string | null;
  /** API base URL (a mock or a proxy). */
  base_url?: string | null;
  /** Sender: a number (`+31612345678`) or an alphanumeric sender of at most 11 characters. */
  originator: string | null;
  retry?: ChannelRetry | null;
} | null;

export interface Notification {
  actor: User | null;
  actor_id: string | null;
  /** A `batched` notification: the notification whose batch it joined,
   * which carries the digest. Absent otherwise. */
  batched_into?: string | null;
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
  /** A channel's test send (`POST /admin/v1/channels/{channel_id}/test`):
   * the channel tested (the notification's `flow_id` is that channel's id
   * too). Absent otherwise. */
  test_channel_id?: string | null;
  topic: string | null;
  updated_at: string;
}

export interface NotificationList {
  items: Array<Notification>;
  page: Page;
}

/** A notification's decision trace, in order. */
export interface NotificationTrace {
  entries: Array<TraceEntryView>;
  notification_id: string;
}

/** The `page` object of every list. */
export interface Page {
  /** Cursor for the next (older) page; null when nothing follows. */
  after: string | null;
  /** Cursor for the previous (newer) page; null when nothing precedes. */
  before: string | null;
  has_more_after: boolean;
  has_more_before: boolean;
  limit: number;
}

/** A partial: a snippet any template includes as
 * `{% include "partials/<handle>" %}`. */
export interface Partial {
  content: string;
  created_at: string;
  handle: string;
  updated_at: string;
}

/** Declares a partial or replaces its content. */
export interface PartialInput {
  /** A MiniJinja template; at most 32768 characters. */
  content: string;
}

/** Every partial of the project, by handle (at most 100: not paged). */
export interface PartialList {
  data: Array<Partial>;
}

/** What a run is when it is accepted: always `pending`. */
export type PendingStatus = "pending";

/** Postmark Email API: one message per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type PostmarkConfig = {
  /** API base URL (a mock or a proxy). */
  base_url?: string | null;
  /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
  from: string | null;
  /** Message stream id (default `outbound`, the transactional stream). */
  message_stream?: string | null;
  retry?: ChannelRetry | null;
  /** Server API token; sent as `X-Postmark-Server-Token`. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  server_token: string | null;
  /** Basic-auth password of that webhook URL. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  webhook_password?: string | null;
  /** Basic-auth user name of the webhook URL set in Postmark for delivery feedback (`POST /hooks/v1/{channel_id}`). */
  webhook_username?: string | null;
} | null;

/** The preference page's form (`application/x-www-form-urlencoded`): the
 * CSRF value, the name of every checkbox shown, and the checked ones, each
 * as `NAME=on` (`ct.email`, `category.comments`, `category.comments.sms`,
 * `flow.welcome`). */
export interface PreferenceForm {
  /** The value the page put in the form. */
  csrf: string;
  /** Each checkbox the page showed (an unchecked box is not posted). */
  shown: Array<string>;
}

/** A signed link to the user's hosted preference page. */
export interface PreferenceLink {
  /** When the link stops working (whole seconds). */
  expires_at: string;
  /** The token alone (the last segment of `url`). */
  token: string;
  /** `PUBLIC_URL/p/TOKEN`: the page to send the user to. */
  url: string;
}

export interface PreferenceLinkInput {
  /** How long the link works: a duration such as `"15m"`, `"1h"`, `"30d"`
   * (at most 365 days; default 30 days). */
  expires_in?: string | null;
}

/** Where a value of a preferences answer comes from (`?explain=true`):
 * `user` (the user set it), `default` (the project's defaults set it, or
 * nothing did: on), `critical` (a critical flow: on whatever is set). */
export type PreferenceSource = "user" | "default" | "critical";

/** A user's (or the project's default) preferences as they apply: every
 * category of the project and every flow that is not archived, by handle. */
export interface Preferences {
  categories: Record<string, CategoryPreferences>;
  channel_types: ChannelTypeFlags;
  explain?: PreferencesExplain | null;
  flows: Record<string, FlowPreferences>;
  /** When deliveries other than in_app wait (null: never): the user's
   * own, else the project's default. */
  quiet_hours: QuietHours | null;
}

/** `explain` of a preferences answer: the same keys, each value's source. */
export interface PreferencesExplain {
  categories: Record<string, SettingSources>;
  channel_types: ChannelTypeSources;
  flows: Record<string, SettingSources>;
  quiet_hours: PreferenceSource;
}

/** Partial update; an unknown channel type or flow handle is a 422 `inclusion`. */
export interface PreferencesInput {
  /** By category handle, the same shape as a flow's; an undeclared
   * handle is a 422 `inclusion`. */
  categories?: Record<string, FlowPreferencesInput> | null;
  channel_types?: ChannelTypeFlagsInput | null;
  flows?: Record<string, FlowPreferencesInput> | null;
  /** When deliveries other than in_app wait; null clears them (a user
   * then follows the project's default, if any). */
  quiet_hours?: QuietHours | null;
}

/** For whom and with what a flow is previewed. */
export interface PreviewBody {
  actor?: RecipientSpec | null;
  /** As a run's `data`. */
  data?: Record<string, unknown> | null;
  /** Renders as if the recipient's locale were this (a BCP 47 tag). */
  locale?: string | null;
  /** The recipient: a user's external_id, or a user object (its
   * external_id and fields: over the stored user's, in memory only). An
   * external_id no user has previews the user a run would create. */
  user: RecipientSpec;
}

export type ProcessingStatus = "scheduled" | "pending" | "processed" | "throttled" | "batched";

export interface Project {
  branding: Branding | null;
  /** `real`, or `test`: the project's time moves only when advanced
   * (`POST /admin/v1/project/clock/advance`). */
  clock: ClockKind;
  /** The test clock's current time; null on the real clock. */
  clock_time: string | null;
  created_at: string;
  /** The layout of email steps that name none; null: no layout. */
  default_layout: string | null;
  /** The locale `t()` falls back to last (`en` unless set). */
  default_locale: string;
  id: string;
  name: string;
  /** The project's own storage quota in bytes (0: none); null: the
   * server's `--project-quota-bytes` applies (`usage.quota_bytes` is the
   * quota in force). */
  quota_bytes: number | null;
  /** The retention windows in force (the project's, else the server's `--retention`). */
  retention: Retention;
  /** Sandbox mode: no provider is called; deliveries are rendered,
   * stored and `sent` with `sandbox: true` (in-app still delivers). */
  sandbox: boolean;
  security_mode: boolean;
  signing_key_configured: boolean;
  /** The timezone of recipients without one (send windows); null: UTC. */
  timezone: string | null;
  updated_at: string;
  /** What the project stores, against its quota. */
  usage: Usage;
}

/** Project settings (partial). */
export interface ProjectUpdate {
  branding?: Branding | null;
  clock?: ClockKind | null;
  /** The handle of the layout of email steps that name none; null: none. */
  default_layout?: string | null;
  /** The locale `t()` falls back to last (a BCP 47 tag); null: `en`. */
  default_locale?: string | null;
  /** Not blank. */
  name?: string;
  /** The project's storage quota in bytes, 0 for none, at most 2^53 − 1;
   * null returns it to the server's `--project-quota-bytes`. */
  quota_bytes?: number | null;
  retention?: RetentionInput | null;
  /** Sandbox mode: no provider is called for the project's deliveries,
   * which are rendered, stored and `sent` with `sandbox: true`. */
  sandbox?: boolean | null;
  security_mode?: boolean | null;
  timezone?: TimeZone | null;
}

/** The keys of a web push subscription (the browser's `PushSubscription.getKey`). */
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

/** When a user's deliveries other than in_app wait, in `timezone` (else the user's, then the project's, then UTC); a `to` not after `from` runs across midnight into the next day. A critical flow's deliveries are not held. */
export interface QuietHours {
  /** The weekdays they start on; all seven when absent or null. */
  days?: Array<"mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun"> | null;
  from: string;
  timezone?: TimeZone | null;
  /** Not equal to `from`. */
  to: string;
}

/** A run recipient identified inline: `external_id` plus any user fields. */
export interface RecipientInput {
  /** An absolute http(s) URL. */
  avatar?: string | null;
  /** Any JSON object, at most 64 KiB serialised. */
  custom_fields?: Record<string, unknown> | null;
  email?: string | null;
  external_id: string;
  first_name?: string | null;
  last_name?: string | null;
  /** A BCP 47 language tag (well-formed and made of registered subtags). */
  locale?: string | null;
  phone?: string | null;
  timezone?: TimeZone | null;
}

/** An explicit recipient: an external_id, or a user object identified inline. */
export type RecipientSpec = ExternalId | RecipientInput;

/** The rendered content of a delivery. */
export interface Rendered {
  /** An in_app delivery's action buttons, rendered; absent when none. */
  actions?: Array<RenderedAction>;
  body: string;
  html?: string | null;
  /** Per-device outcomes and other provider facts (push channels). */
  outcomes?: unknown;
  subject: string;
  url?: string | null;
}

/** One rendered action button of a feed entry. */
export interface RenderedAction {
  label: string;
  url: string;
}

/** Sends again the events written since a time. */
export interface ReplayInput {
  /** RFC 3339 date-time: events written at or after it are sent again. */
  since: string;
}

/** How many events a replay queued. */
export interface ReplayResult {
  queued: number;
}

/** Resend Emails API: one message per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type ResendConfig = {
  /** API key (`re_…`) with sending access; sent as a Bearer token. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  api_key: string | null;
  /** API base URL (a mock or a proxy). */
  base_url?: string | null;
  /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
  from: string | null;
  retry?: ChannelRetry | null;
} | null;

/** How long a project keeps its notifications and feeds: durations such as
 * `15m`, `2h`, `90d` (a whole number of minutes, hours or days, at least 1m). */
export interface Retention {
  /** Feed entries and live-feed events older than this are removed. */
  feed: string;
  /** Settled notifications older than this are removed with their deliveries. */
  notifications: string;
}

/** A change of the retention windows: a field absent keeps its window,
 * `null` returns it to the server default. */
export interface RetentionInput {
  feed?: string | null;
  notifications?: string | null;
}

/** `POST /ops/v1/projects/{name}/rotate_secret` and `POST
 * /admin/v1/project/rotate_secret`. */
export interface RotateSecret {
  /** How long the replaced secret key keeps working, in seconds, so
   * clients can switch over: 0 refuses it at once; default 86,400 (a
   * day); at most 2,592,000 (30 days). */
  grace_seconds?: number | null;
}

/** The project's new secret key, shown this once (only its hash is kept). */
export interface RotatedSecret {
  /** Until when the replaced key still works (absent: refused already). */
  previous_secret_expires_at?: string | null;
  secret_key: string;
}

/** One channel of a route step. Also a route channel of a request. */
export interface RouteChannel {
  /** How long after the previous channel went out this one is tried, if
   * the route's success has not been met by then (a duration:
   * `"90s"`, `"15m"`, `"1h"`); absent: at once. Ignored on the first. */
  after?: string | null;
  channel_id: string;
  /** Backup channels of the channel's type, in order (see
   * `ChannelStep.fallback_channel_ids`). Absent when none. */
  fallback_channel_ids?: Array<string>;
  /** The channel's condition (see `ChannelStep.if`); false: the channel
   * is skipped and the next one tried at once. */
  if?: StepCondition | null;
  /** An email channel's layout (see `ChannelStep.layout`). */
  layout?: string | null;
  template: Template;
}

/** Channels tried one after another until one reaches the recipient: the
 * first it can receive goes at once, each next one `after` the previous
 * one went out unless `success` is met by then; a channel it cannot
 * receive, or that fails for good, lets the next go at once. Each
 * channel tried is a delivery of the notification; the ones not needed
 * end `skipped` (`route_satisfied`). Later steps wait for the route to
 * end. Also the route step of a request. */
export interface RouteStep {
  /** From 1 to 5 channels, tried in order. */
  channels: Array<RouteChannel>;
  /** The route's condition (see `ChannelStep.if`). */
  if?: StepCondition | null;
  success: RouteSuccessType;
  type: RouteStepType;
}

export type RouteStepType = "route";

/** When a route has reached its recipient: `sent` (the provider accepted
 * a hop), `delivered` (the provider reported it delivered), or an in-app
 * hop of the route `seen`, `read`, `clicked`, or any of these three
 * (`interacted`). */
export type RouteSuccessType = "sent" | "delivered" | "seen" | "read" | "clicked" | "interacted";

/** A run: whom it reaches (`recipients`, a `topic`, or both: at least one of
 * them), its `data` and `actor`, and optionally when it starts (`send_at`) and
 * the key that cancels it (`cancellation_key`). */
export type RunInput = {
  actor?: RecipientSpec | null;
  /** A key `POST /admin/v1/flows/{id}/cancel` stops the run's waiting
   * deliveries by (delays, a schedule). */
  cancellation_key?: string | null;
  data?: Record<string, unknown> | null;
  /** Alternative to the `Idempotency-Key` header. */
  idempotency_key?: string | null;
  /** At most 1,000; recipients plus topic must not be empty. */
  recipients?: Array<RecipientSpec> | null;
  /** Schedules the run: accepted now, its steps start at this instant
   * (project time; RFC 3339). Cancelable meanwhile by `cancellation_key`. */
  send_at?: string | null;
  /** A topic key: its subscribers are recipients too. */
  topic?: string | null;
} & ({
  recipients: Array<unknown>;
} | {
  topic: string;
});

/** When a channel step may deliver, in the recipient's timezone (UTC when none); a `to` not after `from` runs across midnight. */
export interface SendWindow {
  days?: Array<"mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun"> | null;
  from: string;
  /** Not equal to `from`. */
  to: string;
}

/** SendGrid Mail Send API (v3): one message per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type SendgridConfig = {
  /** API key with the Mail Send permission; sent as a Bearer token. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  api_key: string | null;
  /** API base URL (a mock or a proxy). */
  base_url?: string | null;
  /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
  from: string | null;
  retry?: ChannelRetry | null;
  /** The verification key of SendGrid's Signed Event Webhook (base64 DER, as SendGrid's settings show it): event callbacks at `/hooks/v1/{channel_id}` must be signed with its key. Not needed to send. */
  webhook_verification_key?: string | null;
} | null;

/** Amazon SES API v2 SendEmail, signed with AWS Signature Version 4: one message per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type SesConfig = {
  /** Access key id of an IAM user or role allowed `ses:SendEmail`. */
  access_key_id: string | null;
  /** API base URL (default `https://email.{region}.amazonaws.com`; a mock, a proxy or a VPC endpoint). */
  base_url?: string | null;
  /** Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified). */
  from: string | null;
  /** AWS region of the SES account (`eu-west-1`): the signature's region and the default endpoint's. */
  region: string | null;
  retry?: ChannelRetry | null;
  /** Its secret access key (signs each request; never sent). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  secret_access_key: string | null;
  /** The ARN of the SNS topic SES publishes this channel's events to: SNS messages at `/hooks/v1/{channel_id}` of any other topic are refused. Not needed to send. */
  sns_topic_arn?: string | null;
} | null;

/** The sources of a flow's or a category's values. */
export interface SettingSources {
  channel_types: ChannelTypeSources;
  enabled: PreferenceSource;
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

/** A Slack app's bot posts to the recipient's Slack user or channel id (a custom field) with `chat.postMessage`. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type SlackConfig = {
  /** API base URL (a mock or a proxy). */
  base_url?: string | null;
  /** The recipient's custom field holding the Slack user or channel id to post to (default `slack_user_id`). */
  recipient_field?: string | null;
  retry?: ChannelRetry | null;
  /** The bot token (`xoxb-…`) of a Slack app with the `chat:write` scope. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  token: string | null;
} | null;

/** POSTs `{"text"}` (and Block Kit blocks) to a Slack incoming webhook. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type SlackWebhookConfig = {
  retry?: ChannelRetry | null;
  /** The incoming-webhook URL (it is the credential, so it is a secret). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  url: string | null;
} | null;

/** One SMTP transaction per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type SmtpConfig = {
  /** Sender: `addr@example.com` or `Name <addr@example.com>`. */
  from: string | null;
  /** SMTP server host name or address (no scheme, no port). */
  host: string | null;
  /** SMTP AUTH password. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  password?: string | null;
  /** 587 (STARTTLS), 465 (implicit TLS), 25 or a local relay's port. */
  port: number | null;
  retry?: ChannelRetry | null;
  /** `starttls` (required, usually port 587), `tls` (implicit, port 465), `none` (plain, a local relay only). */
  tls?: "none" | "starttls" | "tls" | null;
  /** SMTP AUTH user (no AUTH without it). */
  username?: string | null;
} | null;

/** A channel step (deliver through a channel), a delay step (wait durably),
 * a throttle step, a batch step or a route step (channels tried one after
 * another). */
export type Step = ChannelStep | DelayStep | ThrottleStep | BatchStep | RouteStep;

/** A condition of a channel step: rules may also name `steps.<index>.status|read|seen|clicked|interacted` of an earlier channel step, and the recipient's presence, decided when the step is reached: `recipient.online` (`eq`/`neq` with a boolean) and `recipient.last_seen_at` (`lt`/`lte`/`gt`/`gte` with a relative duration such as `-7d`, or `exists`/`not_exists`). */
export type StepCondition = Array<StepConditionRule> | {
  all: Array<StepConditionRule>;
} | {
  any: Array<StepConditionRule>;
};

/** A rule: `path` compared by `op` with `value`. */
export type StepConditionRule = {
  op: "exists" | "not_exists";
  path: string;
  value?: null;
} | {
  op: "in" | "not_in";
  path: string;
  value: Array<unknown>;
} | {
  op: "gt" | "gte" | "lt" | "lte";
  path: string;
  value: number | string;
} | {
  op: "eq" | "neq" | "contains";
  path: string;
  value: string | number | boolean | Array<unknown> | Record<string, unknown>;
};

/** A step of a create or update: a channel, delay, throttle, batch or route step. */
export type StepInput = ChannelStepInput | DelayStep | ThrottleStep | BatchStep | RouteStep;

/** One channel step: its content as the delivery would hold it, or why it
 * does not render. */
export interface StepPreview {
  channel_id: string;
  channel_type?: ChannelType | null;
  content?: Rendered | null;
  error?: StepPreviewError | null;
  /** The step's index in the flow. */
  step: number;
  /** The `t()` keys no catalog of the fallback chain had: they render as
   * the key, and a run traces each as `translation_missing`. */
  translation_missing: Array<string>;
}

/** A step that does not render, as its delivery would fail. */
export interface StepPreviewError {
  /** Always `template_error`. */
  code: string;
  /** The template part at fault, as a flow body's path
   * (`steps.0.template.body`), when the message names one. */
  field: string | null;
  message: string;
}

export interface Subscription {
  created_at: string;
  id: string;
  /** The topic key. */
  topic: string;
  user_external_id: string;
}

/** Subscribes a user, by external id. */
export interface SubscriptionInput {
  external_id: string;
}

export interface SubscriptionList {
  items: Array<Subscription>;
  page: Page;
}

export type SubscriptionRequest = SubscriptionInput | BulkSubscriptionInput;

/** An address the project no longer sends to. */
export interface Suppression {
  /** The address, normalised: an email lower-cased, a phone in E.164. */
  address: string;
  /** `email` or `sms`. */
  channel_type: string;
  created_at: string;
  /** `manual` (added through the API), `hard_bounce`, `soft_bounce`
   * (three in 7 days) or `complaint` (reported by a provider). */
  reason: SuppressionReason;
}

/** The channel types whose addresses a project suppresses (the document's
 * enum of `SuppressionInput.channel_type`, which is read as a string so
 * that another value is a 422 at its field). */
export type SuppressionChannelType = "email" | "sms";

/** Suppresses an address by hand. */
export interface SuppressionInput {
  /** An email address, or a phone number in E.164 (`+15551234567`). */
  address: string;
  /** `email` or `sms`. */
  channel_type: SuppressionChannelType;
  reason?: ManualReason | null;
}

export interface SuppressionList {
  items: Array<Suppression>;
  page: Page;
}

/** Why an address is suppressed. */
export type SuppressionReason = "manual" | "hard_bounce" | "soft_bounce" | "complaint";

/** POSTs an Adaptive Card message to a Microsoft Teams incoming webhook or Workflows URL. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type TeamsConfig = {
  retry?: ChannelRetry | null;
  /** The incoming-webhook or Workflows URL (it is the credential, so it is a secret). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  url: string | null;
} | null;

/** MiniJinja templates over `recipient`, `actor`, `data` and `flow`. */
export interface Template {
  /** An in_app step's action buttons (at most 2), rendered into each feed
   * entry's `data.actions`; absent when none. */
  actions?: Array<TemplateAction>;
  /** Required in every channel step. */
  body: string;
  html?: string | null;
  subject?: string | null;
  url?: string | null;
}

/** An action button of an in_app template: both fields are templates. */
export interface TemplateAction {
  label: string;
  url: string;
}

/** At most `limit` runs per `window` pass, per flow, recipient and `key`;
 * a run beyond stops here for that recipient (its notification is
 * `throttled`). Also the throttle step of a request. */
export interface ThrottleStep {
  /** A condition, as on any step (see `DelayStep.if`). */
  if?: Condition | null;
  /** A template over the run (e.g. `{{ data.thread_id }}`): separate
   * counters per rendered key. Absent: one counter per recipient. */
  key?: string | null;
  limit: number;
  type: ThrottleStepType;
  /** A duration: `"90s"`, `"15m"`, `"1h"`, `"2d"`, `"1h 30m"`. */
  window: string;
}

export type ThrottleStepType = "throttle";

/** An IANA time zone. */
export type TimeZone = "Africa/Abidjan" | "Africa/Accra" | "Africa/Addis_Ababa" | "Africa/Algiers" | "Africa/Asmara" | "Africa/Asmera" | "Africa/Bamako" | "Africa/Bangui" | "Africa/Banjul" | "Africa/Bissau" | "Africa/Blantyre" | "Africa/Brazzaville" | "Africa/Bujumbura" | "Africa/Cairo" | "Africa/Casablanca" | "Africa/Ceuta" | "Africa/Conakry" | "Africa/Dakar" | "Africa/Dar_es_Salaam" | "Africa/Djibouti" | "Africa/Douala" | "Africa/El_Aaiun" | "Africa/Freetown" | "Africa/Gaborone" | "Africa/Harare" | "Africa/Johannesburg" | "Africa/Juba" | "Africa/Kampala" | "Africa/Khartoum" | "Africa/Kigali" | "Africa/Kinshasa" | "Africa/Lagos" | "Africa/Libreville" | "Africa/Lome" | "Africa/Luanda" | "Africa/Lubumbashi" | "Africa/Lusaka" | "Africa/Malabo" | "Africa/Maputo" | "Africa/Maseru" | "Africa/Mbabane" | "Africa/Mogadishu" | "Africa/Monrovia" | "Africa/Nairobi" | "Africa/Ndjamena" | "Africa/Niamey" | "Africa/Nouakchott" | "Africa/Ouagadougou" | "Africa/Porto-Novo" | "Africa/Sao_Tome" | "Africa/Timbuktu" | "Africa/Tripoli" | "Africa/Tunis" | "Africa/Windhoek" | "America/Adak" | "America/Anchorage" | "America/Anguilla" | "America/Antigua" | "America/Araguaina" | "America/Argentina/Buenos_Aires" | "America/Argentina/Catamarca" | "America/Argentina/ComodRivadavia" | "America/Argentina/Cordoba" | "America/Argentina/Jujuy" | "America/Argentina/La_Rioja" | "America/Argentina/Mendoza" | "America/Argentina/Rio_Gallegos" | "America/Argentina/Salta" | "America/Argentina/San_Juan" | "America/Argentina/San_Luis" | "America/Argentina/Tucuman" | "America/Argentina/Ushuaia" | "America/Aruba" | "America/Asuncion" | "America/Atikokan" | "America/Atka" | "America/Bahia" | "America/Bahia_Banderas" | "America/Barbados" | "America/Belem" | "America/Belize" | "America/Blanc-Sablon" | "America/Boa_Vista" | "America/Bogota" | "America/Boise" | "America/Buenos_Aires" | "America/Cambridge_Bay" | "America/Campo_Grande" | "America/Cancun" | "America/Caracas" | "America/Catamarca" | "America/Cayenne" | "America/Cayman" | "America/Chicago" | "America/Chihuahua" | "America/Ciudad_Juarez" | "America/Coral_Harbour" | "America/Cordoba" | "America/Costa_Rica" | "America/Coyhaique" | "America/Creston" | "America/Cuiaba" | "America/Curacao" | "America/Danmarkshavn" | "America/Dawson" | "America/Dawson_Creek" | "America/Denver" | "America/Detroit" | "America/Dominica" | "America/Edmonton" | "America/Eirunepe" | "America/El_Salvador" | "America/Ensenada" | "America/Fort_Nelson" | "America/Fort_Wayne" | "America/Fortaleza" | "America/Glace_Bay" | "America/Godthab" | "America/Goose_Bay" | "America/Grand_Turk" | "America/Grenada" | "America/Guadeloupe" | "America/Guatemala" | "America/Guayaquil" | "America/Guyana" | "America/Halifax" | "America/Havana" | "America/Hermosillo" | "America/Indiana/Indianapolis" | "America/Indiana/Knox" | "America/Indiana/Marengo" | "America/Indiana/Petersburg" | "America/Indiana/Tell_City" | "America/Indiana/Vevay" | "America/Indiana/Vincennes" | "America/Indiana/Winamac" | "America/Indianapolis" | "America/Inuvik" | "America/Iqaluit" | "America/Jamaica" | "America/Jujuy" | "America/Juneau" | "America/Kentucky/Louisville" | "America/Kentucky/Monticello" | "America/Knox_IN" | "America/Kralendijk" | "America/La_Paz" | "America/Lima" | "America/Los_Angeles" | "America/Louisville" | "America/Lower_Princes" | "America/Maceio" | "America/Managua" | "America/Manaus" | "America/Marigot" | "America/Martinique" | "America/Matamoros" | "America/Mazatlan" | "America/Mendoza" | "America/Menominee" | "America/Merida" | "America/Metlakatla" | "America/Mexico_City" | "America/Miquelon" | "America/Moncton" | "America/Monterrey" | "America/Montevideo" | "America/Montreal" | "America/Montserrat" | "America/Nassau" | "America/New_York" | "America/Nipigon" | "America/Nome" | "America/Noronha" | "America/North_Dakota/Beulah" | "America/North_Dakota/Center" | "America/North_Dakota/New_Salem" | "America/Nuuk" | "America/Ojinaga" | "America/Panama" | "America/Pangnirtung" | "America/Paramaribo" | "America/Phoenix" | "America/Port-au-Prince" | "America/Port_of_Spain" | "America/Porto_Acre" | "America/Porto_Velho" | "America/Puerto_Rico" | "America/Punta_Arenas" | "America/Rainy_River" | "America/Rankin_Inlet" | "America/Recife" | "America/Regina" | "America/Resolute" | "America/Rio_Branco" | "America/Rosario" | "America/Santa_Isabel" | "America/Santarem" | "America/Santiago" | "America/Santo_Domingo" | "America/Sao_Paulo" | "America/Scoresbysund" | "America/Shiprock" | "America/Sitka" | "America/St_Barthelemy" | "America/St_Johns" | "America/St_Kitts" | "America/St_Lucia" | "America/St_Thomas" | "America/St_Vincent" | "America/Swift_Current" | "America/Tegucigalpa" | "America/Thule" | "America/Thunder_Bay" | "America/Tijuana" | "America/Toronto" | "America/Tortola" | "America/Vancouver" | "America/Virgin" | "America/Whitehorse" | "America/Winnipeg" | "America/Yakutat" | "America/Yellowknife" | "Antarctica/Casey" | "Antarctica/Davis" | "Antarctica/DumontDUrville" | "Antarctica/Macquarie" | "Antarctica/Mawson" | "Antarctica/McMurdo" | "Antarctica/Palmer" | "Antarctica/Rothera" | "Antarctica/South_Pole" | "Antarctica/Syowa" | "Antarctica/Troll" | "Antarctica/Vostok" | "Arctic/Longyearbyen" | "Asia/Aden" | "Asia/Almaty" | "Asia/Amman" | "Asia/Anadyr" | "Asia/Aqtau" | "Asia/Aqtobe" | "Asia/Ashgabat" | "Asia/Ashkhabad" | "Asia/Atyrau" | "Asia/Baghdad" | "Asia/Bahrain" | "Asia/Baku" | "Asia/Bangkok" | "Asia/Barnaul" | "Asia/Beirut" | "Asia/Bishkek" | "Asia/Brunei" | "Asia/Calcutta" | "Asia/Chita" | "Asia/Choibalsan" | "Asia/Chongqing" | "Asia/Chungking" | "Asia/Colombo" | "Asia/Dacca" | "Asia/Damascus" | "Asia/Dhaka" | "Asia/Dili" | "Asia/Dubai" | "Asia/Dushanbe" | "Asia/Famagusta" | "Asia/Gaza" | "Asia/Harbin" | "Asia/Hebron" | "Asia/Ho_Chi_Minh" | "Asia/Hong_Kong" | "Asia/Hovd" | "Asia/Irkutsk" | "Asia/Istanbul" | "Asia/Jakarta" | "Asia/Jayapura" | "Asia/Jerusalem" | "Asia/Kabul" | "Asia/Kamchatka" | "Asia/Karachi" | "Asia/Kashgar" | "Asia/Kathmandu" | "Asia/Katmandu" | "Asia/Khandyga" | "Asia/Kolkata" | "Asia/Krasnoyarsk" | "Asia/Kuala_Lumpur" | "Asia/Kuching" | "Asia/Kuwait" | "Asia/Macao" | "Asia/Macau" | "Asia/Magadan" | "Asia/Makassar" | "Asia/Manila" | "Asia/Muscat" | "Asia/Nicosia" | "Asia/Novokuznetsk" | "Asia/Novosibirsk" | "Asia/Omsk" | "Asia/Oral" | "Asia/Phnom_Penh" | "Asia/Pontianak" | "Asia/Pyongyang" | "Asia/Qatar" | "Asia/Qostanay" | "Asia/Qyzylorda" | "Asia/Rangoon" | "Asia/Riyadh" | "Asia/Saigon" | "Asia/Sakhalin" | "Asia/Samarkand" | "Asia/Seoul" | "Asia/Shanghai" | "Asia/Singapore" | "Asia/Srednekolymsk" | "Asia/Taipei" | "Asia/Tashkent" | "Asia/Tbilisi" | "Asia/Tehran" | "Asia/Tel_Aviv" | "Asia/Thimbu" | "Asia/Thimphu" | "Asia/Tokyo" | "Asia/Tomsk" | "Asia/Ujung_Pandang" | "Asia/Ulaanbaatar" | "Asia/Ulan_Bator" | "Asia/Urumqi" | "Asia/Ust-Nera" | "Asia/Vientiane" | "Asia/Vladivostok" | "Asia/Yakutsk" | "Asia/Yangon" | "Asia/Yekaterinburg" | "Asia/Yerevan" | "Atlantic/Azores" | "Atlantic/Bermuda" | "Atlantic/Canary" | "Atlantic/Cape_Verde" | "Atlantic/Faeroe" | "Atlantic/Faroe" | "Atlantic/Jan_Mayen" | "Atlantic/Madeira" | "Atlantic/Reykjavik" | "Atlantic/South_Georgia" | "Atlantic/St_Helena" | "Atlantic/Stanley" | "Australia/ACT" | "Australia/Adelaide" | "Australia/Brisbane" | "Australia/Broken_Hill" | "Australia/Canberra" | "Australia/Currie" | "Australia/Darwin" | "Australia/Eucla" | "Australia/Hobart" | "Australia/LHI" | "Australia/Lindeman" | "Australia/Lord_Howe" | "Australia/Melbourne" | "Australia/NSW" | "Australia/North" | "Australia/Perth" | "Australia/Queensland" | "Australia/South" | "Australia/Sydney" | "Australia/Tasmania" | "Australia/Victoria" | "Australia/West" | "Australia/Yancowinna" | "Brazil/Acre" | "Brazil/DeNoronha" | "Brazil/East" | "Brazil/West" | "CET" | "CST6CDT" | "Canada/Atlantic" | "Canada/Central" | "Canada/Eastern" | "Canada/Mountain" | "Canada/Newfoundland" | "Canada/Pacific" | "Canada/Saskatchewan" | "Canada/Yukon" | "Chile/Continental" | "Chile/EasterIsland" | "Cuba" | "EET" | "EST" | "EST5EDT" | "Egypt" | "Eire" | "Etc/GMT" | "Etc/GMT+0" | "Etc/GMT+1" | "Etc/GMT+10" | "Etc/GMT+11" | "Etc/GMT+12" | "Etc/GMT+2" | "Etc/GMT+3" | "Etc/GMT+4" | "Etc/GMT+5" | "Etc/GMT+6" | "Etc/GMT+7" | "Etc/GMT+8" | "Etc/GMT+9" | "Etc/GMT-0" | "Etc/GMT-1" | "Etc/GMT-10" | "Etc/GMT-11" | "Etc/GMT-12" | "Etc/GMT-13" | "Etc/GMT-14" | "Etc/GMT-2" | "Etc/GMT-3" | "Etc/GMT-4" | "Etc/GMT-5" | "Etc/GMT-6" | "Etc/GMT-7" | "Etc/GMT-8" | "Etc/GMT-9" | "Etc/GMT0" | "Etc/Greenwich" | "Etc/UCT" | "Etc/UTC" | "Etc/Universal" | "Etc/Zulu" | "Europe/Amsterdam" | "Europe/Andorra" | "Europe/Astrakhan" | "Europe/Athens" | "Europe/Belfast" | "Europe/Belgrade" | "Europe/Berlin" | "Europe/Bratislava" | "Europe/Brussels" | "Europe/Bucharest" | "Europe/Budapest" | "Europe/Busingen" | "Europe/Chisinau" | "Europe/Copenhagen" | "Europe/Dublin" | "Europe/Gibraltar" | "Europe/Guernsey" | "Europe/Helsinki" | "Europe/Isle_of_Man" | "Europe/Istanbul" | "Europe/Jersey" | "Europe/Kaliningrad" | "Europe/Kiev" | "Europe/Kirov" | "Europe/Kyiv" | "Europe/Lisbon" | "Europe/Ljubljana" | "Europe/London" | "Europe/Luxembourg" | "Europe/Madrid" | "Europe/Malta" | "Europe/Mariehamn" | "Europe/Minsk" | "Europe/Monaco" | "Europe/Moscow" | "Europe/Nicosia" | "Europe/Oslo" | "Europe/Paris" | "Europe/Podgorica" | "Europe/Prague" | "Europe/Riga" | "Europe/Rome" | "Europe/Samara" | "Europe/San_Marino" | "Europe/Sarajevo" | "Europe/Saratov" | "Europe/Simferopol" | "Europe/Skopje" | "Europe/Sofia" | "Europe/Stockholm" | "Europe/Tallinn" | "Europe/Tirane" | "Europe/Tiraspol" | "Europe/Ulyanovsk" | "Europe/Uzhgorod" | "Europe/Vaduz" | "Europe/Vatican" | "Europe/Vienna" | "Europe/Vilnius" | "Europe/Volgograd" | "Europe/Warsaw" | "Europe/Zagreb" | "Europe/Zaporozhye" | "Europe/Zurich" | "GB" | "GB-Eire" | "GMT" | "GMT+0" | "GMT-0" | "GMT0" | "Greenwich" | "HST" | "Hongkong" | "Iceland" | "Indian/Antananarivo" | "Indian/Chagos" | "Indian/Christmas" | "Indian/Cocos" | "Indian/Comoro" | "Indian/Kerguelen" | "Indian/Mahe" | "Indian/Maldives" | "Indian/Mauritius" | "Indian/Mayotte" | "Indian/Reunion" | "Iran" | "Israel" | "Jamaica" | "Japan" | "Kwajalein" | "Libya" | "MET" | "MST" | "MST7MDT" | "Mexico/BajaNorte" | "Mexico/BajaSur" | "Mexico/General" | "NZ" | "NZ-CHAT" | "Navajo" | "PRC" | "PST8PDT" | "Pacific/Apia" | "Pacific/Auckland" | "Pacific/Bougainville" | "Pacific/Chatham" | "Pacific/Chuuk" | "Pacific/Easter" | "Pacific/Efate" | "Pacific/Enderbury" | "Pacific/Fakaofo" | "Pacific/Fiji" | "Pacific/Funafuti" | "Pacific/Galapagos" | "Pacific/Gambier" | "Pacific/Guadalcanal" | "Pacific/Guam" | "Pacific/Honolulu" | "Pacific/Johnston" | "Pacific/Kanton" | "Pacific/Kiritimati" | "Pacific/Kosrae" | "Pacific/Kwajalein" | "Pacific/Majuro" | "Pacific/Marquesas" | "Pacific/Midway" | "Pacific/Nauru" | "Pacific/Niue" | "Pacific/Norfolk" | "Pacific/Noumea" | "Pacific/Pago_Pago" | "Pacific/Palau" | "Pacific/Pitcairn" | "Pacific/Pohnpei" | "Pacific/Ponape" | "Pacific/Port_Moresby" | "Pacific/Rarotonga" | "Pacific/Saipan" | "Pacific/Samoa" | "Pacific/Tahiti" | "Pacific/Tarawa" | "Pacific/Tongatapu" | "Pacific/Truk" | "Pacific/Wake" | "Pacific/Wallis" | "Pacific/Yap" | "Poland" | "Portugal" | "ROC" | "ROK" | "Singapore" | "Turkey" | "UCT" | "US/Alaska" | "US/Aleutian" | "US/Arizona" | "US/Central" | "US/East-Indiana" | "US/Eastern" | "US/Hawaii" | "US/Indiana-Starke" | "US/Michigan" | "US/Mountain" | "US/Pacific" | "US/Samoa" | "UTC" | "Universal" | "W-SU" | "WET" | "Zulu";

export interface Topic {
  created_at: string;
  description: string | null;
  key: string;
  name: string | null;
  subscribers_count: number;
  updated_at: string;
}

/** A topic's name and description (partial: `null` clears). */
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

/** One decision of a notification's trace. */
export interface TraceEntryView {
  /** The decision's arguments, which depend on its code (times among
   * them, such as `until` or `send_at`, are project time). */
  args: Record<string, unknown>;
  /** When it was decided, wall time. */
  at: string;
  /** What was decided, e.g. `preference.skipped`. */
  code: string;
  /** A readable sentence made from `code` and `args`. */
  message: string;
  /** When it was decided in project time, while the project was on a
   * test clock; null on the real clock, where project time is `at`. */
  project_at: string | null;
}

/** A locale's translation catalog. */
export interface Translation {
  created_at: string;
  /** A BCP 47 tag. */
  locale: string;
  /** Nested objects whose leaves are message templates. */
  messages: Record<string, unknown>;
  updated_at: string;
}

/** A locale's catalog, replaced whole. */
export interface TranslationInput {
  /** Nested objects (keys `^[A-Za-z0-9_-]{1,64}$`, at most 6 levels)
   * whose leaves are MiniJinja templates; `t("welcome.subject")`. */
  messages: Record<string, unknown>;
}

/** Every catalog of the project, by locale (at most 50: not paged). */
export interface TranslationList {
  data: Array<TranslationSummary>;
}

/** A catalog as the list of locales shows it. */
export interface TranslationSummary {
  locale: string;
  message_count: number;
  updated_at: string;
}

/** Twilio Programmable Messaging: one SMS per delivery to the recipient's `phone` (E.164). The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type TwilioConfig = {
  /** Account SID (`AC…`); basic-auth user. */
  account_sid: string | null;
  /** Auth token; basic-auth password. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  auth_token: string | null;
  /** API base URL (a mock or a proxy). */
  base_url?: string | null;
  /** Sending number in E.164 form (`+15005550006`). */
  from: string | null;
  retry?: ChannelRetry | null;
} | null;

/** `POST /admin/v1/flows/preview`: an unsaved flow's body, as
 * `POST /admin/v1/flows` takes it but with `handle` and `name` optional,
 * and the preview's fields (`PreviewBody`) beside it. Only its schema is
 * used: the handler splits the body by `PREVIEW_KEYS`. */
export interface UnsavedFlowPreview {
  actor?: RecipientSpec | null;
  categories?: Array<string> | null;
  commercial?: boolean | null;
  critical?: boolean | null;
  data?: Record<string, unknown> | null;
  description?: string | null;
  handle?: string | null;
  locale?: string | null;
  name?: string | null;
  steps?: Array<StepInput> | null;
  /** See `PreviewBody.user`. */
  user: RecipientSpec;
}

/** The body of a one-click unsubscribe POST (RFC 8058): a mail client sends
 * `List-Unsubscribe=One-Click`, the confirmation page's form the same.
 * Optional, and not checked: any body, or none, unsubscribes. */
export interface UnsubscribeForm {
  /** `One-Click`. */
  "List-Unsubscribe"?: string | null;
}

/** A project's storage use: an estimate kept as records are stored and
 * removed, not a measure of the disk. */
export interface Usage {
  /** The estimated bytes of the project's live records: each
   * delivery's rendered content (subject, body, html, url) plus 512
   * bytes per delivery and 512 per notification. */
  bytes: number;
  /** The storage quota in force, in bytes (the project's, else the
   * server's); 0: none. A run that would take `bytes` past it is
   * refused with 409 `conflict`, reason `quota_exceeded`. */
  quota_bytes: number;
}

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
  /** A BCP 47 language tag (well-formed and made of registered subtags). */
  locale?: string | null;
  phone?: string | null;
  timezone?: TimeZone | null;
}

export interface UserList {
  items: Array<User>;
  page: Page;
}

/** Vonage (Nexmo) SMS API: one SMS per delivery to the recipient's `phone` (E.164). The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type VonageConfig = {
  /** The account's API key. */
  api_key: string | null;
  /** The account's API secret. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  api_secret: string | null;
  /** API base URL (a mock or a proxy). */
  base_url?: string | null;
  /** Sender: a number (`+447700900000` or `447700900000`) or an alphanumeric sender id of at most 11 characters. */
  from: string | null;
  retry?: ChannelRetry | null;
  /** The signature method chosen with the secret in Vonage's dashboard: `md5hash` (Vonage's default), or the HMAC `md5`, `sha1`, `sha256`, `sha512`. */
  signature_method?: "md5hash" | "md5" | "sha1" | "sha256" | "sha512" | null;
  /** The account's signature secret (Vonage's dashboard, API settings): delivery receipts at `/hooks/v1/{channel_id}` must be signed with it. Not needed to send. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  signature_secret?: string | null;
} | null;

/** RFC 8030 web push (RFC 8291 encryption, RFC 8292 VAPID) to each browser subscription. The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type WebPushConfig = {
  retry?: ChannelRetry | null;
  /** VAPID `sub`: a `mailto:` address or an https URL push services can reach you at. */
  subject: string | null;
  /** base64url P-256 private scalar (32 bytes), the `web-push generate-vapid-keys` format. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  vapid_private_key?: string | null;
  /** base64url uncompressed P-256 point (65 bytes). Give both keys or neither: Herald then generates the pair. */
  vapid_public_key?: string | null;
} | null;

/** POSTs `{"delivery", "recipient"}` as JSON with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, and `webhook-signature` with a secret). The required fields make the channel `active`; a config without them creates it `unconfigured`. */
export type WebhookConfig = {
  retry?: ChannelRetry | null;
  /** Signing secret: `whsec_` + base64 of random bytes (e.g. `echo whsec_$(openssl rand -base64 32)`); each request then carries `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it. */
  secret?: string | null;
  /** How long to wait for the receiver's answer; a timeout is retried. */
  timeout_ms?: number | null;
  /** Where each delivery is POSTed (http or https). */
  url: string | null;
} | null;

/** An event endpoint. Its signing secret is only ever shown when it is made
 * (creation, `rotate_secret`). */
export interface WebhookEndpoint {
  created_at: string;
  /** Why Herald disabled it (events undelivered for the retry horizon); null
   * while enabled. */
  disabled_reason: string | null;
  enabled: boolean;
  /** The event types it receives; `["*"]`: every type. */
  event_types: Array<string>;
  id: string;
  updated_at: string;
  url: string;
}

/** A new event endpoint. */
export interface WebhookEndpointInput {
  /** Default true. */
  enabled?: boolean | null;
  /** The event types to receive, or `["*"]` for every type; null: every type. */
  event_types?: Array<"flow_run.accepted" | "notification.processed" | "delivery.sent" | "delivery.failed" | "delivery.skipped" | "delivery.retrying" | "feed_entry.seen" | "feed_entry.read" | "feed_entry.clicked" | "feed_entry.archived" | "push_subscription.removed" | "delivery.canceled" | "notification.batched" | "feed_entry.interacted" | "delivery.delivered" | "delivery.bounced" | "delivery.complained" | "channel.degraded" | "channel.recovered"> | Array<"*"> | null;
  /** Where events are POSTed (http or https). */
  url: string;
}

export interface WebhookEndpointList {
  items: Array<WebhookEndpoint>;
  page: Page;
}

/** A change of an endpoint: present fields replace the stored ones.
 * Enabling it again clears `disabled_reason`. */
export interface WebhookEndpointUpdate {
  /** Absent keeps it; not null. */
  enabled?: boolean;
  /** The event types to receive, or `["*"]` for every type; null: every type. */
  event_types?: Array<"flow_run.accepted" | "notification.processed" | "delivery.sent" | "delivery.failed" | "delivery.skipped" | "delivery.retrying" | "feed_entry.seen" | "feed_entry.read" | "feed_entry.clicked" | "feed_entry.archived" | "push_subscription.removed" | "delivery.canceled" | "notification.batched" | "feed_entry.interacted" | "delivery.delivered" | "delivery.bounced" | "delivery.complained" | "channel.degraded" | "channel.recovered"> | Array<"*"> | null;
  /** Where events are POSTed (http or https); absent keeps it. */
  url?: string;
}

/** An endpoint with its new signing secret: the answer to creation and to
 * `rotate_secret`, the only times the secret is shown. */
export type WebhookEndpointWithSecret = ({
  created_at: string;
  /** Why Herald disabled it (events undelivered for the retry horizon); null
   * while enabled. */
  disabled_reason?: string | null;
  enabled: boolean;
  /** The event types it receives; `["*"]`: every type. */
  event_types: Array<string>;
  id: string;
  updated_at: string;
  url: string;
}) & ({
  /** `whsec_` + base64 of 32 random bytes: the HMAC-SHA256 key is the
   * base64-decoded part (Standard Webhooks). */
  secret: string;
});
