"""Part 3 of herald_sdk.models (see its __init__): generated, do not edit."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union
from uuid import UUID
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel
from ._part1 import Branding, ChannelTypeFlags, ChannelTypeFlagsInput, ConditionRule, DeliveryError, FeedMeta, FlowPreferences, FlowPreferencesInput, Page, Partial, RenderedAction, RetentionInput, SendWindow, StepConditionRule
from ._part2 import BulkErasure, BulkSubscriptionInput, CategoryPreferences, ChannelTypeSources, Condition1, Condition2, DelayStep, ErrorBody, Project, StepPreviewError, SubscriptionInput, TemplateAction, TranslationSummary, User


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
