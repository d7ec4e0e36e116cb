"""Typed models of Herald's API, generated from the server's /openapi.json by
datamodel-code-generator (scripts/gen_models.py): do not edit by hand, regenerate.
Every model keeps fields it does not know (extra='allow'), so a newer server's
answers still load."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel


class Branding(BaseModel):
    """
    A project's branding: `brand.name`, `brand.logo_url`… in every
    template and layout. Each part optional; a PUT replaces the whole.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    footer_html: Optional[str] = Field(
        None,
        description="HTML for an email's footer, inserted as written; at most 10,000 characters.",
    )
    logo_url: Optional[str] = Field(None, description="An absolute http(s) URL.")
    name: Optional[str] = Field(None, description="At most 200 characters.")
    primary_color: Optional[str] = Field(None, description="`#rrggbb`.")
    support_url: Optional[str] = Field(None, description="An absolute http(s) URL.")


class CancelInput(BaseModel):
    """
    Which runs of the flow to stop.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    cancellation_key: str = Field(
        ..., description="The `cancellation_key` the runs were given."
    )
    recipients: Optional[list[str]] = Field(
        None,
        description="Only these recipients' notifications (external ids); all when absent.",
    )


class CancelResult(BaseModel):
    """
    What a cancellation stopped.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    canceled: int = Field(
        ..., description="Deliveries this call canceled (a repeat finds none left: 0)."
    )


class Category(BaseModel):
    """
    A preference category: a group of flows a user can turn off together
    (a flow names its categories; a user's preferences set them).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    created_at: AwareDatetime
    description: Optional[str]
    handle: str
    name: str
    updated_at: AwareDatetime


class CategoryInput(BaseModel):
    """
    Declares a category or changes its name and description.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    description: Optional[str] = None
    name: str


class CategoryList(BaseModel):
    """
    Every category of the project, by handle order (there are at most 100,
    so the list is not paged).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    data: list[Category]


class CategoryMeta(BaseModel):
    """
    One category's counts in `FeedMeta::by_category`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    unread_count: int
    unseen_count: int


class ChannelInput(BaseModel):
    """
    A new channel: `type` and the `provider` of that type, with the provider's `config` (plus `retry`). A missing or partial `config` creates the channel `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    config: Optional[Any] = Field(None, description="")
    name: Optional[str] = None
    provider: str = Field(
        ...,
        description="One of `apns`, `fcm`, `in_app`, `slack_webhook`, `smtp`, `twilio`, `web_push`, `webhook` (others may come).",
    )
    sandbox: Optional[bool] = Field(
        None,
        description="Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it).",
    )
    type: str = Field(
        ...,
        description="One of `chat`, `email`, `in_app`, `mobile_push`, `sms`, `web_push` (others may come).",
    )


class ChannelRetry(BaseModel):
    """
    Retries of a delivery that failed transiently (connection errors, timeouts, 408, 429, 5xx): jittered exponential backoff from `base_seconds` up to `max_seconds`, `Retry-After` honoured up to `max_seconds`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    base_seconds: Optional[float] = 1
    max_attempts: Optional[int] = 8
    max_seconds: Optional[float] = 300


class ChannelTypeFlags(BaseModel):
    """
    One flag per channel type (all six present in a response).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    chat: bool
    email: bool
    in_app: bool
    mobile_push: bool
    sms: bool
    web_push: bool


class ChannelTypeFlagsInput(BaseModel):
    """
    Some channel types (a preferences update).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    chat: Optional[bool] = None
    email: Optional[bool] = None
    in_app: Optional[bool] = None
    mobile_push: Optional[bool] = None
    sms: Optional[bool] = None
    web_push: Optional[bool] = None


class ChannelUpdate(BaseModel):
    """
    A channel update. `type` and `provider` cannot change (they may be sent, equal to the channel's); the alternative of the channel's provider says what `config` takes. (`anyOf`, not `oneOf`: an update need not name its provider.)
    """

    model_config = ConfigDict(
        extra="allow",
    )
    config: Optional[Any] = Field(
        None,
        description="Merged key by key into the stored config of a `in_app` channel: `null` removes a key, `********` keeps a stored secret. Changing where or as whom a secret is used requires sending the secret again.",
    )
    name: Optional[str] = None
    provider: Optional[str] = Field(
        None,
        description="One of `apns`, `fcm`, `in_app`, `slack_webhook`, `smtp`, `twilio`, `web_push`, `webhook` (others may come).",
    )
    sandbox: Optional[bool] = Field(
        None,
        description="Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it).",
    )
    type: Optional[str] = Field(
        None,
        description="One of `chat`, `email`, `in_app`, `mobile_push`, `sms`, `web_push` (others may come).",
    )


class ClockAdvance1(BaseModel):
    """
    Moves a test clock forward: exactly one of `by` and `to`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    by: str = Field(
        ..., description='A duration: `"90s"`, `"15m"`, `"1h"`, `"2d"`, `"1h 30m"`.'
    )
    to: None = Field(
        None, description="An RFC 3339 instant, not before the clock's current time."
    )


class ClockAdvance2(BaseModel):
    """
    Moves a test clock forward: exactly one of `by` and `to`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    by: None = Field(
        None, description='A duration: `"90s"`, `"15m"`, `"1h"`, `"2d"`, `"1h 30m"`.'
    )
    to: AwareDatetime = Field(
        ..., description="An RFC 3339 instant, not before the clock's current time."
    )


class ClockAdvance(RootModel[Union[ClockAdvance1, ClockAdvance2]]):
    root: Union[ClockAdvance1, ClockAdvance2] = Field(
        ...,
        description="Moves a test clock forward: exactly one of `by` and `to`.",
        examples=[{"by": "1h"}],
    )


class ConditionRule(BaseModel):
    """
    A rule: `path` compared by `op` with `value`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    op: Any = Field(..., description="")
    path: str
    value: Optional[Any] = Field(None, description="")


class DeliveryError(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: str = Field(
        ...,
        description="`preference`, `missing_address`, `invalid_address`, `provider_unauthorized`,\n`provider_rejected`, `provider_unavailable`, `provider_revoked`,\n`provider_not_configured`, `subscription_expired`, `destination_not_allowed`\n(the egress guard refused the address; nothing was sent)…",
    )
    message: str


class Erasure(BaseModel):
    """
    The erasure of a deleted user's notifications (`DELETE
    /admin/v1/users/{external_id}?erase=true`, `GET /admin/v1/erasures/{id}`).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    completed_at: Optional[AwareDatetime]
    created_at: AwareDatetime
    id: UUID
    notifications_removed: int = Field(
        ...,
        description="The user's notifications removed so far (with their deliveries).",
    )
    status: str = Field(
        ...,
        description="`running` until nothing of the user's notifications, deliveries, feed\nentries and events remains, then `complete`.",
        examples=["running"],
    )


class EventAttemptView(BaseModel):
    """
    One attempt to deliver an event to an endpoint.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    attempt: int = Field(..., description="1 for the event's first attempt.")
    created_at: AwareDatetime
    error: Optional[str] = Field(
        ...,
        description="What went wrong (transport error, non-2xx answer); null on success.",
    )
    event_id: UUID = Field(..., description="The event's id (its `webhook-id`).")
    event_type: str
    id: UUID
    latency_ms: int
    response: str = Field(
        ...,
        description="The first 1 KiB of the answer's body; always empty from an address that\nis not public (a range the operator opened), where only the status is kept.",
    )
    status_code: Optional[int] = Field(
        ..., description="The answer's status; null when there was none."
    )


class FcmServiceAccount(BaseModel):
    """
    A Google service account key file (JSON), as downloaded from the console; other keys of the file are kept.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    client_email: str = Field(..., description="The JWT's `iss`.")
    private_key: str = Field(
        ..., description="The RSA private key (PEM: PKCS#8 or PKCS#1)."
    )
    private_key_id: Optional[Any] = Field(None, description="Kept as given.")
    project_id: Optional[Any] = Field(
        None, description="Kept as given (the channel's own `project_id` is used)."
    )
    token_uri: Optional[str] = Field(
        None, description="Token endpoint, used when the channel has no `token_url`."
    )
    type: Optional[Any] = Field(
        None, description="`service_account` in a downloaded key file; kept as given."
    )


class FeedEntryInteract(BaseModel):
    """
    A press of one of the entry's action buttons.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    action: int = Field(
        ..., description="The action's index in the entry's `data.actions` (from 0)."
    )


class FeedEntryPatch(BaseModel):
    """
    `read` implies `seen`; un-reading or un-seeing is a 409.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    archived: Optional[bool] = None
    clicked: Optional[bool] = Field(None, description="Only `true`.")
    read: Optional[bool] = None
    seen: Optional[bool] = None


class FeedMeta(BaseModel):
    """
    Counts of the feed, archived entries left out.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    by_category: Optional[dict[str, CategoryMeta]] = Field(
        None,
        description="The same counts per preference category, by handle: every category\nthe project declares, counting the entries of the flows that name it\nnow (an entry of a flow in two categories counts in both). Present\nwhen the project declares categories, on the first page of a feed\n(no cursor), in the live feed's `hello` and `feed.counts` frames and\nin a mark-all answer.",
    )
    unread_count: int
    unseen_count: int


class FlowPreferences(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    categories: list[str] = Field(
        ...,
        description="The categories it belongs to (each also listed in `categories`).",
    )
    channel_types: ChannelTypeFlags
    critical: Optional[bool] = Field(
        None,
        description="Present, and true, for a critical flow only: it ignores preferences,\nso it shows enabled on every channel type, and turning it off is\nrefused (422 `exclusion`).",
    )
    enabled: bool
    name: str


class FlowPreferencesInput(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    channel_types: Optional[ChannelTypeFlagsInput] = None
    enabled: Optional[bool] = None


class Health(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    status: str = Field(..., description="`ok` (healthz) or `ready` (readyz).")


class InAppConfig(RootModel[Optional[dict[str, Any]]]):
    root: Optional[dict[str, Any]] = Field(
        ...,
        description="The in-app feed (built in, one per project): no settings.",
        examples=[{}],
        title="InAppConfig",
    )


class Layout(BaseModel):
    """
    An email layout: `html` (and `text`) around an email step's parts,
    which it shows as `{{ content }}`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    created_at: AwareDatetime
    handle: str
    html: str
    name: str
    text: Optional[str] = Field(
        ..., description="The text part's layout; null: the step's body alone."
    )
    updated_at: AwareDatetime


class LayoutInput(BaseModel):
    """
    Declares a layout or replaces it.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    html: str = Field(
        ...,
        description="A MiniJinja template showing the step's HTML as `{{ content }}`.",
    )
    name: str
    text: Optional[str] = Field(
        None,
        description="The text part's template, the step's body as `{{ content }}`.",
    )


class LayoutList(BaseModel):
    """
    Every layout of the project, by handle (at most 20: not paged).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    data: list[Layout]


class MarkAllResult(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    meta: FeedMeta
    updated: int


class Page(BaseModel):
    """
    The `page` object of every list.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    after: Optional[str] = Field(
        ..., description="Cursor for the next (older) page; null when nothing follows."
    )
    before: Optional[str] = Field(
        ...,
        description="Cursor for the previous (newer) page; null when nothing precedes.",
    )
    has_more_after: bool
    has_more_before: bool
    limit: int


class Partial(BaseModel):
    """
    A partial: a snippet any template includes as
    `{% include "partials/<handle>" %}`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    content: str
    created_at: AwareDatetime
    handle: str
    updated_at: AwareDatetime


class PartialInput(BaseModel):
    """
    Declares a partial or replaces its content.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    content: str = Field(
        ..., description="A MiniJinja template; at most 32768 characters."
    )


class PartialList(BaseModel):
    """
    Every partial of the project, by handle (at most 100: not paged).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    data: list[Partial]


class PreferenceForm(BaseModel):
    """
    The preference page's form (`application/x-www-form-urlencoded`): the
    CSRF value, the name of every checkbox shown, and the checked ones, each
    as `NAME=on` (`ct.email`, `category.comments`, `category.comments.sms`,
    `flow.welcome`).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    csrf: str = Field(..., description="The value the page put in the form.")
    shown: list[str] = Field(
        ...,
        description="Each checkbox the page showed (an unchecked box is not posted).",
    )


class PreferenceLink(BaseModel):
    """
    A signed link to the user's hosted preference page.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    expires_at: AwareDatetime = Field(
        ..., description="When the link stops working (whole seconds)."
    )
    token: str = Field(..., description="The token alone (the last segment of `url`).")
    url: str = Field(
        ..., description="`PUBLIC_URL/p/TOKEN`: the page to send the user to."
    )


class PreferenceLinkInput(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    expires_in: Optional[str] = Field(
        None,
        description='How long the link works: a duration such as `"15m"`, `"1h"`, `"30d"`\n(at most 365 days; default 30 days).',
    )


class PushKeys(BaseModel):
    """
    The keys of a web push subscription (the browser's `PushSubscription.getKey`).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    auth: str
    p256dh: str


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
    id: UUID
    name: str
    provider: str = Field(
        ...,
        description="One of `apns`, `fcm`, `in_app`, `slack_webhook`, `smtp`, `twilio`, `web_push`, `webhook` (others may come).",
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
    A condition of a channel step: rules may also name `steps.<index>.status|read|seen|clicked|interacted` of an earlier channel step.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    all: list[StepConditionRule]


class StepCondition2(BaseModel):
    """
    A condition of a channel step: rules may also name `steps.<index>.status|read|seen|clicked|interacted` of an earlier channel step.
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


class BatchStep(BaseModel):
    """
    Gathers runs into one digest, per flow, recipient and `key`: the first
    run to reach the step opens a batch and waits until it closes (its
    `window` ends, or `max` activities are in); runs reaching it meanwhile
    join it and end there (their notifications are `batched`, with
    `batched_into`). The opener's later steps then render with
    `batch.activities` (each run's `data` and `actor`), `batch.count` and
    `batch.actors`. Also the batch step of a request. A flow has at most one.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    if_: Optional[Union[list[ConditionRule], Condition1, Condition2]] = Field(
        None,
        alias="if",
        description="A condition, as on any step (see `DelayStep.if`); false: the run\ndoes not batch and goes on.",
    )
    key: Optional[str] = Field(
        None,
        description="A template over the run (e.g. `{{ data.thread_id }}`): separate\nbatches per rendered key. Absent: one batch per recipient.",
    )
    max: Optional[int] = Field(
        None,
        description="Closes the batch as soon as it holds this many activities (the\nopener's included). Absent: no limit.",
    )
    max_window: Optional[str] = Field(
        None,
        description="Sliding windows only: the longest a batch stays open from its first\nactivity (a duration). Defaults to ten times the window.",
    )
    type: Literal["batch"]
    window: str = Field(
        ..., description='A duration: `"90s"`, `"15m"`, `"1h"`, `"2d"`, `"1h 30m"`.'
    )
    window_type: Optional[str] = Field(
        None,
        description="`fixed` (the default): the batch closes `window` after its first\nactivity. `sliding`: each activity moves the close to its own time\nplus `window`, never beyond the first activity plus `max_window`.",
    )


class BulkDeleteResult(BaseModel):
    """
    The answer of `POST /admin/v1/users/bulk_delete`: how many users were
    deleted, and the external ids that named no user (in the request's order).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    deleted: int
    erasures: Optional[list[BulkErasure]] = Field(
        None,
        description="With `erase`: one per user deleted, in the request's order (absent\nwithout `erase`).",
    )
    not_found: list[str]


class BulkUserResult(BaseModel):
    """
    One item's result, in the request's order: `status` and `user` when it was
    stored, `error` (the contract's error object, a 422) when it was refused.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    error: Optional[ErrorBody] = None
    external_id: Optional[str] = Field(
        ..., description="The item's external id; null when it gave none usable."
    )
    status: Optional[str] = None
    user: Optional[User] = None


class BulkUsersInput(BaseModel):
    """
    Creates or updates many users: each item is `external_id` plus any user fields.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    idempotency_key: Optional[str] = Field(
        None, description="Alternative to the `Idempotency-Key` header."
    )
    users: list[RecipientInput] = Field(
        ...,
        description="At most 1,000, applied in order (a later item of the same external id\npatches what the earlier one left).",
    )


class BulkUsersResult(BaseModel):
    """
    The answer of `POST /admin/v1/users/bulk`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    results: list[BulkUserResult]


class ChannelStep(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    channel_id: Optional[UUID] = None
    if_: Optional[Union[list[StepConditionRule], StepCondition1, StepCondition2]] = (
        Field(
            None,
            alias="if",
            description="The step's condition (see `DelayStep.if`); absent when it has none.",
        )
    )
    layout: Optional[str] = Field(
        None,
        description="An email step's layout: a handle, or null for none; absent, the\nproject's `default_layout` applies.",
    )
    send_window: Optional[SendWindow] = Field(
        None,
        description='When the step may deliver, in the recipient\'s timezone (UTC when\nnone): `{"days": ["mon", …], "from": "09:00", "to": "18:00"}`; a `to`\nnot after `from` runs across midnight. Reached outside it, the step\nand the run after it wait until it opens. Absent when none.',
    )
    template: Template
    type: Literal["channel"]


class ChannelStepInput(BaseModel):
    """
    A channel step as a request gives it: the channel is required.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    channel_id: UUID
    if_: Optional[Union[list[StepConditionRule], StepCondition1, StepCondition2]] = (
        Field(
            None,
            alias="if",
            description="The step's condition (see DelayStep.if); rules may also name earlier channel steps.",
        )
    )
    layout: Optional[str] = Field(
        None,
        description="An email step's layout (see ChannelStep.layout): a handle, or null for none.",
    )
    send_window: Optional[SendWindow] = Field(
        None, description="When the step may deliver (see ChannelStep.send_window)."
    )
    template: Template
    type: Literal["channel"]


class Delivery(BaseModel):
    """
    A delivery as the Admin API and the webhooks show it.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    actor_id: Optional[UUID]
    archived_at: Optional[AwareDatetime]
    attempts: int
    channel_id: UUID
    channel_type: str = Field(
        ...,
        description="One of `chat`, `email`, `in_app`, `mobile_push`, `sms`, `web_push` (others may come).",
    )
    clicked_at: Optional[AwareDatetime]
    created_at: AwareDatetime
    data: Rendered
    error: Optional[DeliveryError]
    flow_id: UUID
    flow_run_id: UUID
    id: UUID
    interacted_action: Optional[int] = Field(
        ...,
        description="The index in `data.actions` of the action the recipient last pressed.",
    )
    interacted_at: Optional[AwareDatetime]
    next_attempt_at: Optional[AwareDatetime]
    notification_id: UUID
    read_at: Optional[AwareDatetime]
    recipient_id: UUID
    sandbox: bool = Field(
        ...,
        description="Sent in sandbox mode (the project's or the channel's): no provider\nwas called.",
    )
    seen_at: Optional[AwareDatetime]
    sent_at: Optional[AwareDatetime]
    status: str = Field(
        ...,
        description="One of `pending`, `sent`, `failed`, `skipped`, `canceled` (others may come).",
    )
    topic: Optional[str]
    updated_at: AwareDatetime


class DeliveryList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[Delivery]
    page: Page


class Error(BaseModel):
    """
    The error object every non-2xx response carries.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    error: ErrorBody


class FeedEntry(BaseModel):
    """
    An in_app delivery as its recipient sees it (id = delivery id).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    actor: Optional[User]
    archived: bool
    archived_at: Optional[AwareDatetime]
    clicked: bool
    clicked_at: Optional[AwareDatetime]
    created_at: AwareDatetime
    data: Rendered
    flow_id: UUID
    id: UUID
    interacted_action: Optional[int] = Field(
        ...,
        description="The index in `data.actions` of the action the recipient last pressed.",
    )
    interacted_at: Optional[AwareDatetime]
    notification_id: UUID
    read: bool
    read_at: Optional[AwareDatetime]
    seen: bool
    seen_at: Optional[AwareDatetime]
    topic: Optional[str]


class FeedPage(BaseModel):
    """
    A page of a user's feed with its counts.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    items: list[FeedEntry]
    meta: FeedMeta
    page: Page


class FlowPreview(BaseModel):
    """
    A preview's answer: the recipient as rendered and each channel step.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    flow_id: Optional[UUID] = Field(
        ..., description="The flow previewed; null for an unsaved one."
    )
    steps: list[StepPreview] = Field(..., description="Every channel step, in order.")
    user: User = Field(
        ...,
        description="The recipient as the templates saw it (the body's fields and\n`locale` applied; a user a run would create has a fresh id).",
    )


class Notification(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    actor: Optional[User]
    actor_id: Optional[UUID]
    batched_into: Optional[UUID] = Field(
        None,
        description="A `batched` notification: the notification whose batch it joined,\nwhich carries the digest. Absent otherwise.",
    )
    created_at: AwareDatetime
    data: Any = Field(..., description="The run's `data`.")
    deliveries: list[Delivery]
    flow_id: UUID
    flow_run_id: UUID
    id: UUID
    processed_at: Optional[AwareDatetime]
    recipient: Optional[User]
    recipient_id: UUID
    status: str = Field(
        ...,
        description="One of `scheduled`, `pending`, `processed`, `throttled`, `batched` (others may come).",
    )
    topic: Optional[str]
    updated_at: AwareDatetime


class NotificationList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[Notification]
    page: Page


class PreferencesExplain(BaseModel):
    """
    `explain` of a preferences answer: the same keys, each value's source.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    categories: dict[str, SettingSources]
    channel_types: ChannelTypeSources
    flows: dict[str, SettingSources]
    quiet_hours: str = Field(
        ...,
        description="Where a value of a preferences answer comes from (`?explain=true`):\n`user` (the user set it), `default` (the project's defaults set it, or\nnothing did: on), `critical` (a critical flow: on whatever is set).\n\nOne of `user`, `default`, `critical` (others may come).",
    )


class PreferencesInput(BaseModel):
    """
    Partial update; an unknown channel type or flow handle is a 422 `inclusion`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    categories: Optional[dict[str, FlowPreferencesInput]] = Field(
        None,
        description="By category handle, the same shape as a flow's; an undeclared\nhandle is a 422 `inclusion`.",
    )
    channel_types: Optional[ChannelTypeFlagsInput] = None
    flows: Optional[dict[str, FlowPreferencesInput]] = None
    quiet_hours: Optional[QuietHours] = Field(
        None,
        description="When deliveries other than in_app wait; null clears them (a user\nthen follows the project's default, if any).",
    )


class PreviewBody(BaseModel):
    """
    For whom and with what a flow is previewed.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    actor: Optional[Union[RecipientInput, str]] = None
    data: Optional[dict[str, Any]] = Field(None, description="As a run's `data`.")
    locale: Optional[str] = Field(
        None,
        description="Renders as if the recipient's locale were this (a BCP 47 tag).",
        examples=["fr"],
    )
    user: Union[RecipientInput, str] = Field(
        ...,
        description="The recipient: a user's external_id, or a user object (its\nexternal_id and fields: over the stored user's, in memory only). An\nexternal_id no user has previews the user a run would create.",
    )


class UnsavedFlowPreview(BaseModel):
    """
    `POST /admin/v1/flows/preview`: an unsaved flow's body, as
    `POST /admin/v1/flows` takes it but with `handle` and `name` optional,
    and the preview's fields (`PreviewBody`) beside it. Only its schema is
    used: the handler splits the body by `PREVIEW_KEYS`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    actor: Optional[Union[RecipientInput, str]] = None
    categories: Optional[list[str]] = None
    critical: Optional[bool] = None
    data: Optional[dict[str, Any]] = None
    description: Optional[str] = None
    handle: Optional[str] = None
    locale: Optional[str] = Field(None, examples=["fr"])
    name: Optional[str] = None
    steps: Optional[
        list[Union[ChannelStepInput, DelayStep, ThrottleStep, BatchStep]]
    ] = None
    user: Union[RecipientInput, str] = Field(..., description="See `PreviewBody.user`.")


class Flow(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    categories: list[str] = Field(
        ...,
        description="The preference categories it belongs to: a user who turns one off\ndoes not get it.",
    )
    created_at: AwareDatetime
    critical: bool = Field(
        ...,
        description="Its deliveries ignore the recipient's preferences and quiet hours\n(and will ignore one-click unsubscribe).",
    )
    description: Optional[str]
    handle: str
    id: UUID
    name: str
    status: str = Field(
        ..., description="One of `draft`, `active`, `archived` (others may come)."
    )
    steps: list[Union[ChannelStep, DelayStep, ThrottleStep, BatchStep]]
    updated_at: AwareDatetime


class FlowInput(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    categories: Optional[list[str]] = Field(
        None,
        description="The preference categories it belongs to (declared handles, at most\n10); none when absent.",
    )
    critical: Optional[bool] = Field(
        None,
        description="Its deliveries ignore the recipient's preferences and quiet hours\n(and will ignore one-click unsubscribe); false when absent.",
    )
    description: Optional[str] = None
    handle: str = Field(
        ..., description="Unique in the project, not shaped like a UUID."
    )
    name: str
    steps: Optional[
        list[Union[ChannelStepInput, DelayStep, ThrottleStep, BatchStep]]
    ] = None


class FlowList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    items: list[Flow]
    page: Page


class FlowUpdate(BaseModel):
    """
    Partial update; `handle` cannot change.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    categories: Optional[list[str]] = Field(
        None,
        description="See `FlowInput.categories`; absent keeps them, null or `[]` clears.",
    )
    critical: Optional[bool] = Field(
        None, description="See `FlowInput.critical`; absent keeps it."
    )
    description: Optional[str] = None
    handle: Optional[str] = Field(None, description="Only the flow's own handle.")
    name: Optional[str] = None
    steps: Optional[
        list[Union[ChannelStepInput, DelayStep, ThrottleStep, BatchStep]]
    ] = None


class Preferences(BaseModel):
    """
    A user's (or the project's default) preferences as they apply: every
    category of the project and every flow that is not archived, by handle.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    categories: dict[str, CategoryPreferences]
    channel_types: ChannelTypeFlags
    explain: Optional[PreferencesExplain] = None
    flows: dict[str, FlowPreferences]
    quiet_hours: Optional[QuietHours] = Field(
        ...,
        description="When deliveries other than in_app wait (null: never): the user's\nown, else the project's default.",
    )
