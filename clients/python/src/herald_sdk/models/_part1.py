"""Part 1 of herald_sdk.models (see its __init__): generated, do not edit."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union
from uuid import UUID
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel


class AuditEntry(BaseModel):
    """
    One change of the project's configuration.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    action: str = Field(
        ...,
        description="`<resource type>.<verb>`: `flow.created`, `flow.updated`,\n`flow.activated`, `flow.deactivated`, `flow.archived`,\n`channel.created|updated|revoked|deleted`,\n`topic.created|updated|deleted`,\n`webhook_endpoint.created|updated|deleted|secret_rotated`,\n`partial.*`, `layout.*`, `translation.*` (`created|updated|deleted`),\n`project.updated`, `clock.advanced`, `key.rotated`,\n`signing_key.put|generated|deleted`, `link_secret.rotated`,\n`member.*`.",
    )
    after: Optional[dict[str, Any]] = Field(
        ...,
        description="The resource after the change; null when it was deleted. Secrets\nread `********` or are left out.",
    )
    at: AwareDatetime = Field(..., description="When the change was made.")
    before: Optional[dict[str, Any]] = Field(
        ..., description="The resource before the change; null when it was created."
    )
    id: UUID
    resource_id: str = Field(
        ...,
        description="The resource's id (the project's for settings, the clock and keys).",
    )
    resource_key: Optional[str] = Field(
        ..., description="Its handle, key, name or URL, when it has one."
    )
    resource_type: str = Field(..., description="The part of `action` before its dot.")
    who: str = Field(
        ...,
        description="Who made the change: a console member's email, `api` (the Admin\nAPI's secret key) or `operator`.",
    )


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


class CallbackResult(BaseModel):
    """
    What a verified provider callback did, report by report.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    applied: int = Field(..., description="Reports that changed their delivery.")
    duplicate: int = Field(
        ..., description="Reports of what their delivery already says."
    )
    ignored: int = Field(
        ...,
        description="Reports the delivery's status does not take (a delivery never\nsent, a report that would move it backwards).",
    )
    unknown: int = Field(
        ..., description="Reports naming no message of the channel's project."
    )


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


class ChannelHealth(BaseModel):
    """
    The channel's circuit breaker: `degraded` after 5 failures in a row (the provider unreachable, 408, 429, 5xx) or at least half of 20 or more attempts in a minute; a probe after the cool-down closes it again (`ok`).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    last_error: Optional[str] = Field(
        ...,
        description="What the provider last said when it failed; null before any failure.",
    )
    since: AwareDatetime = Field(
        ...,
        description="When it entered this state (the channel's creation when it never changed).",
    )
    state: str = Field(..., description="One of `ok`, `degraded` (others may come).")


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
        description="One of `apns`, `discord`, `expo`, `fcm`, `in_app`, `mailgun`, `messagebird`, `postmark`, `resend`, `sendgrid`, `ses`, `slack`, `slack_webhook`, `smtp`, `teams`, `twilio`, `vonage`, `web_push`, `webhook` (others may come).",
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
        description="One of `apns`, `discord`, `expo`, `fcm`, `in_app`, `mailgun`, `messagebird`, `postmark`, `resend`, `sendgrid`, `ses`, `slack`, `slack_webhook`, `smtp`, `teams`, `twilio`, `vonage`, `web_push`, `webhook` (others may come).",
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
        description="`preference`, `missing_address`, `invalid_address`, `provider_unauthorized`,\n`provider_rejected`, `provider_unavailable`, `provider_revoked`,\n`provider_not_configured`, `subscription_expired`, `destination_not_allowed`\n(the egress guard refused the address; nothing was sent), `suppressed`\n(the address is on the project's suppression list)…",
    )
    message: str


class DiscordConfig(BaseModel):
    """
    POSTs `{"content"}` (and an embed for the link) to a Discord webhook. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    retry: Optional[ChannelRetry] = None
    url: Optional[str] = Field(
        ...,
        description="The webhook URL (`https://discord.com/api/webhooks/{id}/{token}`): it holds the token, so it is a secret. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    username: Optional[str] = Field(
        None, description="Shown as the message's author instead of the webhook's name."
    )


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


class ExpoConfig(BaseModel):
    """
    Expo push notifications: one message per Expo push token the recipient registered on the channel.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    access_token: Optional[str] = Field(
        None,
        description="An Expo access token, sent as `Authorization: Bearer …` (needed when the project enforces push security). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    base_url: Optional[str] = Field(
        "https://exp.host", description="Push API base URL (a mock or a proxy)."
    )
    retry: Optional[ChannelRetry] = None


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


class MailgunConfig(BaseModel):
    """
    Mailgun Messages API: one message per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    api_key: Optional[str] = Field(
        ...,
        description="Private API key (or a domain sending key); basic-auth password of user `api`. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    base_url: Optional[str] = Field(
        "https://api.mailgun.net",
        description="API base URL: `https://api.eu.mailgun.net` for a domain in the EU region (or a mock, a proxy).",
    )
    domain: Optional[str] = Field(
        ..., description="The sending domain (`mg.example.com`)."
    )
    from_: Optional[str] = Field(
        ...,
        alias="from",
        description="Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified).",
    )
    retry: Optional[ChannelRetry] = None
    webhook_signing_key: Optional[str] = Field(
        None,
        description="HTTP webhook signing key of the domain, which checks the webhooks of delivery feedback (`POST /hooks/v1/{channel_id}`). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )


class MarkAllResult(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    meta: FeedMeta
    updated: int


class MessagebirdConfig(BaseModel):
    """
    MessageBird (Bird) SMS API: one SMS per delivery to the recipient's `phone` (E.164). The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    access_key: Optional[str] = Field(
        ...,
        description="The access key (`Authorization: AccessKey …`). Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    base_url: Optional[str] = Field(
        "https://rest.messagebird.com", description="API base URL (a mock or a proxy)."
    )
    originator: Optional[str] = Field(
        ...,
        description="Sender: a number (`+31612345678`) or an alphanumeric sender of at most 11 characters.",
    )
    retry: Optional[ChannelRetry] = None


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


class PostmarkConfig(BaseModel):
    """
    Postmark Email API: one message per delivery to the recipient's `email`. The required fields make the channel `active`; a config without them creates it `unconfigured`.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    base_url: Optional[str] = Field(
        "https://api.postmarkapp.com", description="API base URL (a mock or a proxy)."
    )
    from_: Optional[str] = Field(
        ...,
        alias="from",
        description="Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified).",
    )
    message_stream: Optional[str] = Field(
        None,
        description="Message stream id (default `outbound`, the transactional stream).",
    )
    retry: Optional[ChannelRetry] = None
    server_token: Optional[str] = Field(
        ...,
        description="Server API token; sent as `X-Postmark-Server-Token`. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    webhook_password: Optional[str] = Field(
        None,
        description="Basic-auth password of that webhook URL. Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it.",
    )
    webhook_username: Optional[str] = Field(
        None,
        description="Basic-auth user name of the webhook URL set in Postmark for delivery feedback (`POST /hooks/v1/{channel_id}`).",
    )


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
