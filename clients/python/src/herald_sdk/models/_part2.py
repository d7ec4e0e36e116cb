"""Part 2 of herald_sdk.models (see its __init__): generated, do not edit."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union
from uuid import UUID
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel
from ._part1 import ChannelRetry, Page, PushKeys


class PushSubscription(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    channel_id: UUID
    created_at: AwareDatetime
    id: UUID
    identifier: str
    platform: Optional[str]


class PushSubscriptionDelete(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    identifier: str


class PushSubscriptionInput(BaseModel):
    """
    A device or browser subscription; web push needs the endpoint URL as
    `identifier` and `keys`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    identifier: str
    keys: Optional[PushKeys] = None
    platform: Optional[str] = None


class PushSubscriptionList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[PushSubscription]
    page: Page


class RenderedAction(BaseModel):
    """
    One rendered action button of a feed entry.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    label: str
    url: str


class ReplayInput(BaseModel):
    """
    Sends again the events written since a time.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    since: AwareDatetime = Field(
        ...,
        description="RFC 3339 date-time: events written at or after it are sent again.",
    )


class ReplayResult(BaseModel):
    """
    How many events a replay queued.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    queued: int


class ResendConfig(BaseModel):
    """
    Resend Emails API: one message per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    api_key: Optional[str] = Field(
        ...,
        description="API key (`re_…`) with sending access; sent as a Bearer token. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    base_url: Optional[str] = Field(
        "https://api.resend.com", description="API base URL (a mock or a proxy)."
    )
    from_: Optional[str] = Field(
        ...,
        alias="from",
        description="Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified).",
    )
    retry: Optional[ChannelRetry] = None


class Retention(BaseModel):
    """
    How long a project keeps its notifications and feeds: durations such as
    `15m`, `2h`, `90d` (a whole number of minutes, hours or days, at least 1m).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    feed: str = Field(
        ...,
        description="Feed entries and live-feed events older than this are removed.",
        examples=["90d"],
    )
    notifications: str = Field(
        ...,
        description="Settled notifications older than this are removed with their deliveries.",
        examples=["90d"],
    )


class RetentionInput(BaseModel):
    """
    A change of the retention windows: a field absent keeps its window,
    `null` returns it to the server default.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    feed: Optional[str] = Field(None, examples=["7d"])
    notifications: Optional[str] = Field(None, examples=["30d"])


class RotateSecret(BaseModel):
    """
    `POST /ops/v1/projects/{name}/rotate_secret` and `POST
    /admin/v1/project/rotate_secret`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    grace_seconds: Optional[int] = Field(
        None,
        description="How long the replaced secret key keeps working, in seconds, so\nclients can switch over: 0 refuses it at once; default 86,400 (a\nday); at most 2,592,000 (30 days).",
    )


class RotatedSecret(BaseModel):
    """
    The project's new secret key, shown this once (only its hash is kept).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    previous_secret_expires_at: Optional[AwareDatetime] = Field(
        None,
        description="Until when the replaced key still works (absent: refused already).",
    )
    secret_key: str


class SendWindow(BaseModel):
    """
    When a channel step may deliver, in the recipient's timezone (UTC when none); a `to` not after `from` runs across midnight.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    days: Optional[list[str]] = None
    from_: str = Field(..., alias="from")
    to: str = Field(..., description="Not equal to `from`.")


class SendgridConfig(BaseModel):
    """
    SendGrid Mail Send API (v3): one message per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    api_key: Optional[str] = Field(
        ...,
        description="API key with the Mail Send permission; sent as a Bearer token. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    base_url: Optional[str] = Field(
        "https://api.sendgrid.com", description="API base URL (a mock or a proxy)."
    )
    from_: Optional[str] = Field(
        ...,
        alias="from",
        description="Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified).",
    )
    retry: Optional[ChannelRetry] = None
    webhook_verification_key: Optional[str] = Field(
        None,
        description="The verification key of SendGrid's Signed Event Webhook (base64 DER, as SendGrid's settings show it): event callbacks at `/hooks/v1/{channel_id}` must be signed with its key. Not needed to send.",
    )


class SesConfig(BaseModel):
    """
    Amazon SES API v2 SendEmail, signed with AWS Signature Version 4: one message per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    access_key_id: Optional[str] = Field(
        ..., description="Access key id of an IAM user or role allowed `ses:SendEmail`."
    )
    base_url: Optional[str] = Field(
        None,
        description="API base URL (default `https://email.{region}.amazonaws.com`; a mock, a proxy or a VPC endpoint).",
    )
    from_: Optional[str] = Field(
        ...,
        alias="from",
        description="Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified).",
    )
    region: Optional[str] = Field(
        ...,
        description="AWS region of the SES account (`eu-west-1`): the signature's region and the default endpoint's.",
    )
    retry: Optional[ChannelRetry] = None
    secret_access_key: Optional[str] = Field(
        ...,
        description="Its secret access key (signs each request; never sent). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    sns_topic_arn: Optional[str] = Field(
        None,
        description="The ARN of the SNS topic SES publishes this channel's events to: SNS messages at `/hooks/v1/{channel_id}` of any other topic are refused. Not needed to send.",
    )


class SigningKeyInput(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    public_key: str = Field(
        ...,
        description="PEM `PUBLIC KEY` (SPKI) or `RSA PUBLIC KEY` (PKCS#1), RSA of at least 2048 bits.",
    )


class SigningKeyPair(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    private_key: str = Field(
        ..., description="PKCS#8 PEM; returned once, never stored."
    )
    public_key: str = Field(
        ..., description="SPKI PEM, now stored as the project's signing key."
    )


class SlackConfig(BaseModel):
    """
    A Slack app's bot posts to the recipient's Slack user or channel id (a custom field) with `chat.postMessage`. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    base_url: Optional[str] = Field(
        "https://slack.com", description="API base URL (a mock or a proxy)."
    )
    recipient_field: Optional[str] = Field(
        None,
        description="The recipient's custom field holding the Slack user or channel id to post to (default `slack_user_id`).",
    )
    retry: Optional[ChannelRetry] = None
    token: Optional[str] = Field(
        ...,
        description="The bot token (`xoxb-…`) of a Slack app with the `chat:write` scope. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )


class SlackWebhookConfig(BaseModel):
    """
    POSTs `{"text"}` (and Block Kit blocks) to a Slack incoming webhook. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    retry: Optional[ChannelRetry] = None
    url: Optional[str] = Field(
        ...,
        description="The incoming-webhook URL (it is the credential, so it is a secret). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )


class SmtpConfig(BaseModel):
    """
    One SMTP transaction per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    from_: Optional[str] = Field(
        ...,
        alias="from",
        description="Sender: `addr@example.com` or `Name <addr@example.com>`.",
    )
    host: Optional[str] = Field(
        ..., description="SMTP server host name or address (no scheme, no port)."
    )
    password: Optional[str] = Field(
        None,
        description="SMTP AUTH password. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    port: Optional[int] = Field(
        ...,
        description="587 (STARTTLS), 465 (implicit TLS), 25 or a local relay's port.",
    )
    retry: Optional[ChannelRetry] = None
    tls: Optional[Literal["none", "starttls", "tls"]] = Field(
        "starttls",
        description="`starttls` (required, usually port 587), `tls` (implicit, port 465), `none` (plain, a local relay only).",
    )
    username: Optional[str] = Field(
        None, description="SMTP AUTH user (no AUTH without it)."
    )


class StepConditionRule(BaseModel):
    """
    A rule: `path` compared by `op` with `value`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    op: Any = Field(..., description="")
    path: str
    value: Optional[Any] = Field(None, description="")


class StepPreviewError(BaseModel):
    """
    A step that does not render, as its delivery would fail.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    code: str = Field(..., description="Always `template_error`.")
    field: Optional[str] = Field(
        ...,
        description="The template part at fault, as a flow body's path\n(`steps.0.template.body`), when the message names one.",
    )
    message: str


class Subscription(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    created_at: AwareDatetime
    id: UUID
    topic: str = Field(..., description="The topic key.")
    user_external_id: str


class SubscriptionInput(BaseModel):
    """
    Subscribes a user, by external id.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    external_id: str


class SubscriptionList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[Subscription]
    page: Page


class SuppressionInput(BaseModel):
    """
    Suppresses an address by hand.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    address: str = Field(
        ...,
        description="An email address, or a phone number in E.164 (`+15551234567`).",
    )
    channel_type: str = Field(..., description="`email` or `sms`.")
    reason: Optional[Literal["manual"]] = None


class TeamsConfig(BaseModel):
    """
    POSTs an Adaptive Card message to a Microsoft Teams incoming webhook or Workflows URL. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    retry: Optional[ChannelRetry] = None
    url: Optional[str] = Field(
        ...,
        description="The incoming-webhook or Workflows URL (it is the credential, so it is a secret). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )


class TemplateAction(BaseModel):
    """
    An action button of an in_app template: both fields are templates.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    label: str
    url: str


class Topic(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    created_at: AwareDatetime
    description: Optional[str]
    key: str
    name: Optional[str]
    subscribers_count: int
    updated_at: AwareDatetime


class TopicInput(BaseModel):
    """
    A topic's name and description (partial: `null` clears).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    description: Optional[str] = None
    name: Optional[str] = None


class TopicList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[Topic]
    page: Page


class TopicSubscribeInput(BaseModel):
    """
    No fields needed (an optional idempotency_key is accepted).
    """

    model_config = ConfigDict(
        extra="allow",
    )


class TraceEntryView(BaseModel):
    """
    One decision of a notification's trace.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    args: dict[str, Any] = Field(
        ...,
        description="The decision's arguments, which depend on its code (times among\nthem, such as `until` or `send_at`, are project time).",
    )
    at: AwareDatetime = Field(..., description="When it was decided, wall time.")
    code: str = Field(..., description="What was decided, e.g. `preference.skipped`.")
    message: str = Field(
        ..., description="A readable sentence made from `code` and `args`."
    )
    project_at: Optional[AwareDatetime] = Field(
        ...,
        description="When it was decided in project time, while the project was on a\ntest clock; null on the real clock, where project time is `at`.",
    )


class Translation(BaseModel):
    """
    A locale's translation catalog.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    created_at: AwareDatetime
    locale: str = Field(..., description="A BCP 47 tag.")
    messages: dict[str, Any] = Field(
        ..., description="Nested objects whose leaves are message templates."
    )
    updated_at: AwareDatetime


class TranslationInput(BaseModel):
    """
    A locale's catalog, replaced whole.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    messages: dict[str, Any] = Field(
        ...,
        description='Nested objects (keys `^[A-Za-z0-9_-]{1,64}$`, at most 6 levels)\nwhose leaves are MiniJinja templates; `t("welcome.subject")`.',
    )


class TranslationSummary(BaseModel):
    """
    A catalog as the list of locales shows it.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    locale: str
    message_count: int
    updated_at: AwareDatetime


class TwilioConfig(BaseModel):
    """
    Twilio Programmable Messaging: one SMS per delivery to the recipient's `phone` (E.164). The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    account_sid: Optional[str] = Field(
        ..., description="Account SID (`AC…`); basic-auth user."
    )
    auth_token: Optional[str] = Field(
        ...,
        description="Auth token; basic-auth password. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    base_url: Optional[str] = Field(
        "https://api.twilio.com", description="API base URL (a mock or a proxy)."
    )
    from_: Optional[str] = Field(
        ..., alias="from", description="Sending number in E.164 form (`+15005550006`)."
    )
    retry: Optional[ChannelRetry] = None


class UnsubscribeForm(BaseModel):
    """
    The body of a one-click unsubscribe POST (RFC 8058): a mail client sends
    `List-Unsubscribe=One-Click`, the confirmation page's form the same.
    Optional, and not checked: any body, or none, unsubscribes.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    List_Unsubscribe: Optional[str] = Field(
        None,
        alias="List-Unsubscribe",
        description="`One-Click`.",
        examples=["One-Click"],
    )


class Usage(BaseModel):
    """
    A project's storage use: an estimate kept as records are stored and
    removed, not a measure of the disk.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    bytes: int = Field(
        ...,
        description="The estimated bytes of the project's live records: each\ndelivery's rendered content (subject, body, html, url) plus 512\nbytes per delivery and 512 per notification.",
    )
    quota_bytes: int = Field(
        ...,
        description="The storage quota in force, in bytes (the project's, else the\nserver's); 0: none. A run that would take `bytes` past it is\nrefused with 409 `conflict`, reason `quota_exceeded`.",
    )


class User(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    avatar: Optional[str]
    created_at: AwareDatetime
    custom_fields: dict[str, Any]
    email: Optional[str]
    external_id: str
    first_name: Optional[str]
    id: UUID
    last_name: Optional[str]
    locale: Optional[str]
    phone: Optional[str]
    timezone: Optional[str]
    updated_at: AwareDatetime


class UserChannel(BaseModel):
    """
    A channel as a user sees it (no config except a web push public key).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    id: UUID
    name: str
    provider: str
    status: str = Field(
        ..., description="One of `unconfigured`, `active`, `revoked` (others may come)."
    )
    type: str = Field(
        ...,
        description="One of `chat`, `email`, `in_app`, `mobile_push`, `sms`, `web_push` (others may come).",
    )
    vapid_public_key: Optional[str] = Field(None, description="Web push channels only.")


class UserInput(BaseModel):
    """
    Profile fields of a user (partial update: only given fields change, `null` clears).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    avatar: Optional[str] = Field(None, description="An absolute http(s) URL.")
    custom_fields: Optional[dict[str, Any]] = Field(
        None, description="Any JSON object, at most 64 KiB serialised."
    )
    email: Optional[str] = None
    first_name: Optional[str] = None
    last_name: Optional[str] = None
    locale: Optional[str] = Field(
        None,
        description="A BCP 47 language tag (well-formed and made of registered subtags).",
        examples=["en-GB"],
    )
    phone: Optional[str] = None
    timezone: Optional[str] = None


class UserList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[User]
    page: Page


class VonageConfig(BaseModel):
    """
    Vonage (Nexmo) SMS API: one SMS per delivery to the recipient's `phone` (E.164). The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    api_key: Optional[str] = Field(..., description="The account's API key.")
    api_secret: Optional[str] = Field(
        ...,
        description="The account's API secret. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    base_url: Optional[str] = Field(
        "https://rest.nexmo.com", description="API base URL (a mock or a proxy)."
    )
    from_: Optional[str] = Field(
        ...,
        alias="from",
        description="Sender: a number (`+447700900000` or `447700900000`) or an alphanumeric sender id of at most 11 characters.",
    )
    retry: Optional[ChannelRetry] = None
    signature_method: Optional[
        Literal["md5hash", "md5", "sha1", "sha256", "sha512"]
    ] = Field(
        "md5hash",
        description="The signature method chosen with the secret in Vonage's dashboard: `md5hash` (Vonage's default), or the HMAC `md5`, `sha1`, `sha256`, `sha512`.",
    )
    signature_secret: Optional[str] = Field(
        None,
        description="The account's signature secret (Vonage's dashboard, API settings): delivery receipts at `/hooks/v1/{channel_id}` must be signed with it. Not needed to send. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )


class WebPushConfig(BaseModel):
    """
    RFC 8030 web push (RFC 8291 encryption, RFC 8292 VAPID) to each browser subscription. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    retry: Optional[ChannelRetry] = None
    subject: Optional[str] = Field(
        ...,
        description="VAPID `sub`: a `mailto:` address or an https URL push services can reach you at.",
    )
    vapid_private_key: Optional[str] = Field(
        None,
        description="base64url P-256 private scalar (32 bytes), the `web-push generate-vapid-keys` format. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    vapid_public_key: Optional[str] = Field(
        None,
        description="base64url uncompressed P-256 point (65 bytes). Give both keys or neither: Herald then generates the pair.",
    )


class WebhookConfig(BaseModel):
    """
    POSTs `{"delivery", "recipient"}` as JSON with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, and `webhook-signature` with a secret). The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    retry: Optional[ChannelRetry] = None
    secret: Optional[str] = Field(
        None,
        description='Signing secret: `whsec_` + base64 of random bytes (e.g. `echo whsec_$(openssl rand -base64 32)`); each request then carries `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.',
    )
    timeout_ms: Optional[int] = Field(
        10000,
        description="How long to wait for the receiver's answer; a timeout is retried.",
    )
    url: Optional[str] = Field(
        ..., description="Where each delivery is POSTed (http or https)."
    )


class WebhookEndpoint(BaseModel):
    """
    An event endpoint. Its signing secret is only ever shown when it is made
    (creation, `rotate_secret`).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    created_at: AwareDatetime
    disabled_reason: Optional[str] = Field(
        ...,
        description="Why Herald disabled it (events undelivered for the retry horizon); null\nwhile enabled.",
    )
    enabled: bool
    event_types: list[str] = Field(
        ..., description='The event types it receives; `["*"]`: every type.'
    )
    id: UUID
    updated_at: AwareDatetime
    url: str


class WebhookEndpointInput(BaseModel):
    """
    A new event endpoint.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    enabled: Optional[bool] = Field(None, description="Default true.")
    event_types: Optional[Union[list[str], list[Literal["*"]]]] = Field(
        None,
        description='The event types to receive, or `["*"]` for every type; null: every type.',
    )
    url: str = Field(..., description="Where events are POSTed (http or https).")


class WebhookEndpointList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[WebhookEndpoint]
    page: Page
