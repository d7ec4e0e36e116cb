"""Part 3 of herald_sdk.models (see its __init__): generated, do not edit."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union
from uuid import UUID
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel
from ._part1 import AuditEntry, Branding, ChannelHealth, ChannelRetry, ChannelTypeFlags, ConditionRule, Erasure, EventAttemptView, FcmServiceAccount, Page
from ._part2 import RenderedAction, Retention, RetentionInput, StepConditionRule, StepPreviewError, SubscriptionInput, TemplateAction, Topic, TraceEntryView, TranslationSummary, Usage


class WebhookEndpointUpdate(BaseModel):
    """
    A change of an endpoint: present fields replace the stored ones.
    Enabling it again clears `disabled_reason`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    enabled: Optional[bool] = Field(None, description="Absent keeps it; not null.")
    event_types: Optional[Union[list[str], list[Literal["*"]]]] = Field(
        None,
        description='The event types to receive, or `["*"]` for every type; null: every type.',
    )
    url: Optional[str] = Field(
        None, description="Where events are POSTed (http or https); absent keeps it."
    )


class WebhookEndpointWithSecret(BaseModel):
    """
    An endpoint with its new signing secret: the answer to creation and to
    `rotate_secret`, the only times the secret is shown.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    created_at: AwareDatetime
    disabled_reason: Optional[str] = Field(
        None,
        description="Why Herald disabled it (events undelivered for the retry horizon); null\nwhile enabled.",
    )
    enabled: bool
    event_types: list[str] = Field(
        ..., description='The event types it receives; `["*"]`: every type.'
    )
    id: UUID
    updated_at: AwareDatetime
    url: str
    secret: str = Field(
        ...,
        description="`whsec_` + base64 of 32 random bytes: the HMAC-SHA256 key is the\nbase64-decoded part (Standard Webhooks).",
    )


class ApnsConfig(BaseModel):
    """
    Apple Push Notification service, token-based (ES256 .p8 key) over HTTP/2. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    base_url: Optional[str] = Field(
        "https://api.push.apple.com",
        description="APNs base URL; a plain `http://` one is spoken as HTTP/2 with prior knowledge (a local test server).",
    )
    environment: Optional[Literal["production", "sandbox"]] = Field(
        "production", description="Picks Apple's host when `base_url` is not set."
    )
    key_id: Optional[str] = Field(
        ..., description="Id of the .p8 key (the provider token's `kid`)."
    )
    private_key: Optional[str] = Field(
        ...,
        description="The .p8 file's PEM (a P-256 key). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    retry: Optional[ChannelRetry] = None
    team_id: Optional[str] = Field(
        ..., description="Apple developer team id (the provider token's `iss`)."
    )
    topic: Optional[str] = Field(..., description="The app's bundle id (`apns-topic`).")


class AuditEntryList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[AuditEntry]
    page: Page


class BulkDeleteInput(BaseModel):
    """
    Deletes many users, by external id.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    erase: Optional[bool] = Field(
        None,
        description="`true`: each user is erased as `DELETE /admin/v1/users/{external_id}?erase=true`\ndoes (their notifications, deliveries, feed entries and events go too);\nthe answer lists the erasures. Default `false`.",
    )
    external_ids: list[str] = Field(..., description="At most 1,000.")
    idempotency_key: Optional[str] = Field(
        None, description="Alternative to the `Idempotency-Key` header."
    )


class BulkErasure(BaseModel):
    """
    One user's erasure in a bulk delete with `erase`: poll
    `GET /admin/v1/erasures/{id}` while it is `running`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    erasure: Erasure
    external_id: str


class BulkSubscriptionInput(BaseModel):
    """
    Subscribes many users to a topic, by external id.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    idempotency_key: Optional[str] = Field(
        None, description="Alternative to the `Idempotency-Key` header."
    )
    users: list[str] = Field(
        ..., description="At most 1,000 external ids of existing users."
    )


class BulkSubscriptionResult(BaseModel):
    """
    The answer of a bulk subscription: the topic (its `subscribers_count` after
    the change) and how many subscriptions were new; users already subscribed
    are left as they are.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    created: int
    topic: Topic


class CategoryPreferences(BaseModel):
    """
    A category as a user's preferences show it: effective values.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    channel_types: ChannelTypeFlags
    enabled: bool
    name: str


class Channel(BaseModel):
    """
    A channel. Its `config` is what was stored, secrets reading back as `********`; `status` is `active` once every required field is set.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    config: Any = Field(..., description="")
    created_at: AwareDatetime
    health: ChannelHealth
    id: UUID
    name: str
    provider: str = Field(
        ...,
        description="One of `apns`, `discord`, `expo`, `fcm`, `in_app`, `mailgun`, `messagebird`, `postmark`, `resend`, `sendgrid`, `ses`, `slack`, `slack_webhook`, `smtp`, `teams`, `twilio`, `vonage`, `web_push`, `webhook` (others may come).",
    )
    sandbox: bool = Field(
        ...,
        description="Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`).",
    )
    status: str = Field(
        ..., description="One of `unconfigured`, `active`, `revoked` (others may come)."
    )
    type: str = Field(
        ...,
        description="One of `chat`, `email`, `in_app`, `mobile_push`, `sms`, `web_push` (others may come).",
    )
    updated_at: AwareDatetime


class ChannelList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[Channel]
    page: Page


class ChannelTestAccepted(BaseModel):
    """
    The 202 answer to a channel's test send: the run and the notification
    it made (`GET /admin/v1/notifications/{notification_id}` follows it).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    channel_id: UUID
    created_at: AwareDatetime
    flow_run_id: UUID
    notification_id: UUID
    status: Literal["pending"] = Field(
        ..., description="What a run is when it is accepted: always `pending`."
    )


class ChannelTestInput(BaseModel):
    """
    A channel's test send: the user it goes to and, optionally, `data` for
    its template (`subject` and `body` replace the test's own).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    data: Optional[dict[str, Any]] = Field(
        None, description="The run's data, for the templates."
    )
    user_id: str = Field(..., description="An existing user's external id.")


class ChannelTypeSources(BaseModel):
    """
    One source per channel type.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    chat: str = Field(
        ...,
        description="Where a value of a preferences answer comes from (`?explain=true`):\n`user` (the user set it), `default` (the project's defaults set it, or\nnothing did: on), `critical` (a critical flow: on whatever is set).\n\nOne of `user`, `default`, `critical` (others may come).",
    )
    email: str = Field(
        ...,
        description="Where a value of a preferences answer comes from (`?explain=true`):\n`user` (the user set it), `default` (the project's defaults set it, or\nnothing did: on), `critical` (a critical flow: on whatever is set).\n\nOne of `user`, `default`, `critical` (others may come).",
    )
    in_app: str = Field(
        ...,
        description="Where a value of a preferences answer comes from (`?explain=true`):\n`user` (the user set it), `default` (the project's defaults set it, or\nnothing did: on), `critical` (a critical flow: on whatever is set).\n\nOne of `user`, `default`, `critical` (others may come).",
    )
    mobile_push: str = Field(
        ...,
        description="Where a value of a preferences answer comes from (`?explain=true`):\n`user` (the user set it), `default` (the project's defaults set it, or\nnothing did: on), `critical` (a critical flow: on whatever is set).\n\nOne of `user`, `default`, `critical` (others may come).",
    )
    sms: str = Field(
        ...,
        description="Where a value of a preferences answer comes from (`?explain=true`):\n`user` (the user set it), `default` (the project's defaults set it, or\nnothing did: on), `critical` (a critical flow: on whatever is set).\n\nOne of `user`, `default`, `critical` (others may come).",
    )
    web_push: str = Field(
        ...,
        description="Where a value of a preferences answer comes from (`?explain=true`):\n`user` (the user set it), `default` (the project's defaults set it, or\nnothing did: on), `critical` (a critical flow: on whatever is set).\n\nOne of `user`, `default`, `critical` (others may come).",
    )


class Condition1(BaseModel):
    """
    A condition of a delay, throttle or batch step: rules over `data.…`, `recipient.…` and `actor.…`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    all: list[ConditionRule]


class Condition2(BaseModel):
    """
    A condition of a delay, throttle or batch step: rules over `data.…`, `recipient.…` and `actor.…`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    any: list[ConditionRule]


class DelayStep(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    if_: Optional[Union[list[ConditionRule], Condition1, Condition2]] = Field(
        None,
        alias="if",
        description='A condition: an array of rules `{path, op, value}` that must all\nhold, or `{"all": [...]}` / `{"any": [...]}`. `op`: eq, neq, gt, gte,\nlt, lte, in, not_in, contains, exists, not_exists; `path`:\n`data.…`, `recipient.…`, `actor.…`, or (channel steps)\n`steps.<index>.status|read|seen|clicked|interacted` of an earlier channel step,\nevaluated when the step is reached. False: the step is skipped\n(`condition_false`). Absent when the step has none.',
    )
    seconds: int
    type: Literal["delay"]


class ErrorBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: str = Field(
        ...,
        description="One of `bad_request`, `unauthenticated`, `forbidden`, `not_found`, `conflict`, `idempotency_key_reused`, `validation_failed`, `rate_limited`, `internal_error`, `service_unavailable`, `headers_too_large`, `request_timeout` (others may come).",
    )
    details: dict[str, Any] = Field(
        ...,
        description="Depends on the code: `auth`/`reason` (401), `param`/`reason` (400),\n`fields` (422), `resource`/`id` (404), `retry_after`/`limit`/`window` (429)…",
    )
    message: str
    request_id: Optional[str] = Field(..., description="The request's `x-request-id`.")
    status: int
    type: str = Field(..., description="`https://herald.dev/errors#<code>-<status>`.")


class EventAttemptList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[EventAttemptView]
    page: Page


class FcmConfig(BaseModel):
    """
    Firebase Cloud Messaging HTTP v1 to each device token registered as a subscription. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    base_url: Optional[str] = Field(
        "https://fcm.googleapis.com",
        description="FCM API base URL (a mock or a proxy).",
    )
    project_id: Optional[str] = Field(..., description="The Firebase project id.")
    retry: Optional[ChannelRetry] = None
    service_account: Optional[FcmServiceAccount] = Field(
        ...,
        description="The service account's JSON key file, as an object. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    token_url: Optional[str] = Field(
        "https://oauth2.googleapis.com/token",
        description="OAuth 2 token endpoint (else the account's `token_uri`, else Google's).",
    )


class FlowRun(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    cancellation_key: Optional[str] = Field(
        ..., description="The key `POST /admin/v1/flows/{id}/cancel` stops the run by."
    )
    created_at: AwareDatetime
    flow_id: UUID
    id: UUID
    notifications_count: int
    processed_at: Optional[AwareDatetime]
    recipients_count: int
    send_at: Optional[AwareDatetime] = Field(
        ..., description="A scheduled run: when its steps start (project time)."
    )
    status: str = Field(
        ...,
        description="One of `scheduled`, `pending`, `processed`, `throttled`, `batched` (others may come).",
    )
    topic: Optional[str]


class FlowRunAccepted(BaseModel):
    """
    The 202 answer to a run: stored durably, delivered asynchronously.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    created_at: AwareDatetime
    flow_id: UUID
    id: UUID
    recipients_count: int
    status: Literal["pending"] = Field(
        ..., description="What a run is when it is accepted: always `pending`."
    )


class NotificationTrace(BaseModel):
    """
    A notification's decision trace, in order.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    entries: list[TraceEntryView]
    notification_id: UUID


class Project(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    branding: Optional[Branding]
    clock: str = Field(
        ...,
        description="`real`, or `test`: the project's time moves only when advanced\n(`POST /admin/v1/project/clock/advance`).",
    )
    clock_time: Optional[AwareDatetime] = Field(
        ..., description="The test clock's current time; null on the real clock."
    )
    created_at: AwareDatetime
    default_layout: Optional[str] = Field(
        ..., description="The layout of email steps that name none; null: no layout."
    )
    default_locale: str = Field(
        ..., description="The locale `t()` falls back to last (`en` unless set)."
    )
    id: UUID
    name: str
    quota_bytes: Optional[int] = Field(
        ...,
        description="The project's own storage quota in bytes (0: none); null: the\nserver's `--project-quota-bytes` applies (`usage.quota_bytes` is the\nquota in force).",
    )
    retention: Retention = Field(
        ...,
        description="The retention windows in force (the project's, else the server's `--retention`).",
    )
    sandbox: bool = Field(
        ...,
        description="Sandbox mode: no provider is called; deliveries are rendered,\nstored and `sent` with `sandbox: true` (in-app still delivers).",
    )
    security_mode: bool
    signing_key_configured: bool
    timezone: Optional[str] = Field(
        ...,
        description="The timezone of recipients without one (send windows); null: UTC.",
    )
    updated_at: AwareDatetime
    usage: Usage = Field(..., description="What the project stores, against its quota.")


class ProjectUpdate(BaseModel):
    """
    Project settings (partial).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    branding: Optional[Branding] = None
    clock: Optional[str] = None
    default_layout: Optional[str] = Field(
        None,
        description="The handle of the layout of email steps that name none; null: none.",
    )
    default_locale: Optional[str] = Field(
        None,
        description="The locale `t()` falls back to last (a BCP 47 tag); null: `en`.",
    )
    name: Optional[str] = Field(None, description="Not blank.")
    quota_bytes: Optional[int] = Field(
        None,
        description="The project's storage quota in bytes, 0 for none, at most 2^53 − 1;\nnull returns it to the server's `--project-quota-bytes`.",
    )
    retention: Optional[RetentionInput] = None
    sandbox: Optional[bool] = Field(
        None,
        description="Sandbox mode: no provider is called for the project's deliveries,\nwhich are rendered, stored and `sent` with `sandbox: true`.",
    )
    security_mode: Optional[bool] = None
    timezone: Optional[str] = None


class QuietHours(BaseModel):
    """
    When a user's deliveries other than in_app wait, in `timezone` (else the user's, then the project's, then UTC); a `to` not after `from` runs across midnight into the next day. A critical flow's deliveries are not held.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    days: Optional[list[str]] = Field(
        None, description="The weekdays they start on; all seven when absent or null."
    )
    from_: str = Field(..., alias="from")
    timezone: Optional[str] = None
    to: str = Field(..., description="Not equal to `from`.")


class RecipientInput(BaseModel):
    """
    A run recipient identified inline: `external_id` plus any user fields.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    avatar: Optional[str] = Field(None, description="An absolute http(s) URL.")
    custom_fields: Optional[dict[str, Any]] = Field(
        None, description="Any JSON object, at most 64 KiB serialised."
    )
    email: Optional[str] = None
    external_id: str
    first_name: Optional[str] = None
    last_name: Optional[str] = None
    locale: Optional[str] = Field(
        None,
        description="A BCP 47 language tag (well-formed and made of registered subtags).",
        examples=["en-GB"],
    )
    phone: Optional[str] = None
    timezone: Optional[str] = None


class Rendered(BaseModel):
    """
    The rendered content of a delivery.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    actions: Optional[list[RenderedAction]] = Field(
        None,
        description="An in_app delivery's action buttons, rendered; absent when none.",
    )
    body: str
    html: Optional[str] = None
    outcomes: Optional[Any] = Field(
        None,
        description="Per-device outcomes and other provider facts (push channels).",
    )
    subject: str
    url: Optional[str] = None


class RunInput1(BaseModel):
    """
    A run: whom it reaches (`recipients`, a `topic`, or both: at least one of
    them), its `data` and `actor`, and optionally when it starts (`send_at`) and
    the key that cancels it (`cancellation_key`).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    actor: Optional[Union[RecipientInput, str]] = None
    cancellation_key: Optional[str] = Field(
        None,
        description="A key `POST /admin/v1/flows/{id}/cancel` stops the run's waiting\ndeliveries by (delays, a schedule).",
    )
    data: Optional[dict[str, Any]] = None
    idempotency_key: Optional[str] = Field(
        None, description="Alternative to the `Idempotency-Key` header."
    )
    recipients: list[Union[RecipientInput, str]] = Field(
        ..., description="At most 1,000; recipients plus topic must not be empty."
    )
    send_at: Optional[AwareDatetime] = Field(
        None,
        description="Schedules the run: accepted now, its steps start at this instant\n(project time; RFC 3339). Cancelable meanwhile by `cancellation_key`.",
    )
    topic: Optional[str] = Field(
        None, description="A topic key: its subscribers are recipients too."
    )


class RunInput2(BaseModel):
    """
    A run: whom it reaches (`recipients`, a `topic`, or both: at least one of
    them), its `data` and `actor`, and optionally when it starts (`send_at`) and
    the key that cancels it (`cancellation_key`).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    actor: Optional[Union[RecipientInput, str]] = None
    cancellation_key: Optional[str] = Field(
        None,
        description="A key `POST /admin/v1/flows/{id}/cancel` stops the run's waiting\ndeliveries by (delays, a schedule).",
    )
    data: Optional[dict[str, Any]] = None
    idempotency_key: Optional[str] = Field(
        None, description="Alternative to the `Idempotency-Key` header."
    )
    recipients: Optional[list[Union[RecipientInput, str]]] = Field(
        None, description="At most 1,000; recipients plus topic must not be empty."
    )
    send_at: Optional[AwareDatetime] = Field(
        None,
        description="Schedules the run: accepted now, its steps start at this instant\n(project time; RFC 3339). Cancelable meanwhile by `cancellation_key`.",
    )
    topic: str = Field(
        ..., description="A topic key: its subscribers are recipients too."
    )


class RunInput(RootModel[Union[RunInput1, RunInput2]]):
    root: Union[RunInput1, RunInput2] = Field(
        ...,
        description="A run: whom it reaches (`recipients`, a `topic`, or both: at least one of\nthem), its `data` and `actor`, and optionally when it starts (`send_at`) and\nthe key that cancels it (`cancellation_key`).",
        examples=[
            {
                "actor": "st-user",
                "data": {"n": 1},
                "recipients": [
                    "st-user",
                    {"email": "ada@example.com", "external_id": "ada"},
                ],
            }
        ],
    )


class SettingSources(BaseModel):
    """
    The sources of a flow's or a category's values.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    channel_types: ChannelTypeSources
    enabled: str = Field(
        ...,
        description="Where a value of a preferences answer comes from (`?explain=true`):\n`user` (the user set it), `default` (the project's defaults set it, or\nnothing did: on), `critical` (a critical flow: on whatever is set).\n\nOne of `user`, `default`, `critical` (others may come).",
    )


class StepCondition1(BaseModel):
    """
    A condition of a channel step: rules may also name `steps.<index>.status|read|seen|clicked|interacted` of an earlier channel step, and the recipient's presence, decided when the step is reached: `recipient.online` (`eq`/`neq` with a boolean) and `recipient.last_seen_at` (`lt`/`lte`/`gt`/`gte` with a relative duration such as `-7d`, or `exists`/`not_exists`).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    all: list[StepConditionRule]


class StepCondition2(BaseModel):
    """
    A condition of a channel step: rules may also name `steps.<index>.status|read|seen|clicked|interacted` of an earlier channel step, and the recipient's presence, decided when the step is reached: `recipient.online` (`eq`/`neq` with a boolean) and `recipient.last_seen_at` (`lt`/`lte`/`gt`/`gte` with a relative duration such as `-7d`, or `exists`/`not_exists`).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    any: list[StepConditionRule]


class StepPreview(BaseModel):
    """
    One channel step: its content as the delivery would hold it, or why it
    does not render.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    channel_id: UUID
    channel_type: Optional[str] = None
    content: Optional[Rendered] = None
    error: Optional[StepPreviewError] = None
    step: int = Field(..., description="The step's index in the flow.")
    translation_missing: list[str] = Field(
        ...,
        description="The `t()` keys no catalog of the fallback chain had: they render as\nthe key, and a run traces each as `translation_missing`.",
    )


class SubscriptionRequest(RootModel[Union[SubscriptionInput, BulkSubscriptionInput]]):
    root: Union[SubscriptionInput, BulkSubscriptionInput]


class Suppression(BaseModel):
    """
    An address the project no longer sends to.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    address: str = Field(
        ...,
        description="The address, normalised: an email lower-cased, a phone in E.164.",
    )
    channel_type: str = Field(..., description="`email` or `sms`.", examples=["email"])
    created_at: AwareDatetime
    reason: str = Field(
        ...,
        description="`manual` (added through the API), `hard_bounce`, `soft_bounce`\n(three in 7 days) or `complaint` (reported by a provider).",
    )


class SuppressionList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[Suppression]
    page: Page


class Template(BaseModel):
    """
    MiniJinja templates over `recipient`, `actor`, `data` and `flow`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    actions: Optional[list[TemplateAction]] = Field(
        None,
        description="An in_app step's action buttons (at most 2), rendered into each feed\nentry's `data.actions`; absent when none.",
    )
    body: str = Field(..., description="Required in every channel step.")
    html: Optional[str] = None
    subject: Optional[str] = None
    url: Optional[str] = None


class ThrottleStep(BaseModel):
    """
    At most `limit` runs per `window` pass, per flow, recipient and `key`;
    a run beyond stops here for that recipient (its notification is
    `throttled`). Also the throttle step of a request.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    if_: Optional[Union[list[ConditionRule], Condition1, Condition2]] = Field(
        None,
        alias="if",
        description="A condition, as on any step (see `DelayStep.if`).",
    )
    key: Optional[str] = Field(
        None,
        description="A template over the run (e.g. `{{ data.thread_id }}`): separate\ncounters per rendered key. Absent: one counter per recipient.",
    )
    limit: int
    type: Literal["throttle"]
    window: str = Field(
        ..., description='A duration: `"90s"`, `"15m"`, `"1h"`, `"2d"`, `"1h 30m"`.'
    )


class TranslationList(BaseModel):
    """
    Every catalog of the project, by locale (at most 50: not paged).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    data: list[TranslationSummary]
