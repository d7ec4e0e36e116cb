"""Part 4 of herald_sdk.models (see its __init__): generated, do not edit."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union
from uuid import UUID
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel
from ._part1 import ChannelTypeFlags, ChannelTypeFlagsInput, ConditionRule, DeliveryError, FeedMeta, FlowPreferences, FlowPreferencesInput, Page, Partial
from ._part2 import SendWindow, StepConditionRule, User
from ._part3 import BulkErasure, CategoryPreferences, ChannelTypeSources, Condition1, Condition2, DelayStep, ErrorBody, QuietHours, RecipientInput, Rendered, SettingSources, StepCondition1, StepCondition2, StepPreview, Template, ThrottleStep


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
    fallback_channel_ids: list[UUID] = Field(
        ...,
        description="Backup channels of the step's channel type, in order (at most 3; not\non an in_app step): a delivery its channel fails for good, whose\nretries run out, or whose channel is degraded, moves to the next one\n(the same delivery id). Absent when none.",
    )
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
    fallback_channel_ids: Optional[list[UUID]] = Field(
        None,
        description="Backup channels of the step's channel type, in order (see ChannelStep.fallback_channel_ids); not on an in_app step.",
    )
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
    attempt_channels: list[UUID] = Field(
        ...,
        description="The channel of each attempt, in order (as many as `attempts`): they\ndiffer from `channel_id` once a failover moved the delivery to a\nbackup channel.",
    )
    attempts: int = Field(
        ...,
        description="Provider calls made so far, through every channel it went through.",
    )
    bounce: Optional[str] = None
    channel_id: UUID = Field(
        ...,
        description="The channel the delivery goes through: its step's channel, or the\nbackup a failover moved it to (the one that sent it, once sent).",
    )
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
        description="One of `pending`, `sent`, `failed`, `skipped`, `canceled`, `delivered`, `bounced`, `complained` (others may come).",
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
    test_channel_id: Optional[UUID] = Field(
        None,
        description="A channel's test send (`POST /admin/v1/channels/{channel_id}/test`):\nthe channel tested (the notification's `flow_id` is that channel's id\ntoo). Absent otherwise.",
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


class RouteChannel(BaseModel):
    """
    One channel of a route step. Also a route channel of a request.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    after: Optional[str] = Field(
        None,
        description='How long after the previous channel went out this one is tried, if\nthe route\'s success has not been met by then (a duration:\n`"90s"`, `"15m"`, `"1h"`); absent: at once. Ignored on the first.',
    )
    channel_id: UUID
    fallback_channel_ids: Optional[list[UUID]] = Field(
        None,
        description="Backup channels of the channel's type, in order (see\n`ChannelStep.fallback_channel_ids`). Absent when none.",
    )
    if_: Optional[Union[list[StepConditionRule], StepCondition1, StepCondition2]] = (
        Field(
            None,
            alias="if",
            description="The channel's condition (see `ChannelStep.if`); false: the channel\nis skipped and the next one tried at once.",
        )
    )
    layout: Optional[str] = Field(
        None, description="An email channel's layout (see `ChannelStep.layout`)."
    )
    template: Template


class RouteStep(BaseModel):
    """
    Channels tried one after another until one reaches the recipient: the
    first it can receive goes at once, each next one `after` the previous
    one went out unless `success` is met by then; a channel it cannot
    receive, or that fails for good, lets the next go at once. Each
    channel tried is a delivery of the notification; the ones not needed
    end `skipped` (`route_satisfied`). Later steps wait for the route to
    end. Also the route step of a request.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    channels: list[RouteChannel] = Field(
        ..., description="From 1 to 5 channels, tried in order."
    )
    if_: Optional[Union[list[StepConditionRule], StepCondition1, StepCondition2]] = (
        Field(
            None,
            alias="if",
            description="The route's condition (see `ChannelStep.if`).",
        )
    )
    success: str = Field(
        ...,
        description="When a route has reached its recipient: `sent` (the provider accepted\na hop), `delivered` (the provider reported it delivered), or an in-app\nhop of the route `seen`, `read`, `clicked`, or any of these three\n(`interacted`).\n\nOne of `sent`, `delivered`, `seen`, `read`, `clicked`, `interacted` (others may come).",
    )
    type: Literal["route"]


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
    commercial: Optional[bool] = None
    critical: Optional[bool] = None
    data: Optional[dict[str, Any]] = None
    description: Optional[str] = None
    handle: Optional[str] = None
    locale: Optional[str] = Field(None, examples=["fr"])
    name: Optional[str] = None
    steps: Optional[
        list[Union[ChannelStepInput, DelayStep, ThrottleStep, BatchStep, RouteStep]]
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
    commercial: bool = Field(
        ...,
        description="A commercial (marketing) flow: its email carries one-click\nunsubscribe; false: transactional.",
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
    steps: list[Union[ChannelStep, DelayStep, ThrottleStep, BatchStep, RouteStep]]
    updated_at: AwareDatetime


class FlowInput(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    categories: Optional[list[str]] = Field(
        None,
        description="The preference categories it belongs to (declared handles, at most\n10); none when absent.",
    )
    commercial: Optional[bool] = Field(
        None,
        description="A commercial (marketing) flow: its email carries one-click\nunsubscribe (`List-Unsubscribe`, `List-Unsubscribe-Post`) and\n`{{ unsubscribe_url }}` is its link; false (transactional) when\nabsent. Active only on a server with a public URL (409\n`public_url_required`); not with `critical` (422 `exclusion`).",
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
        list[Union[ChannelStepInput, DelayStep, ThrottleStep, BatchStep, RouteStep]]
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
    commercial: Optional[bool] = Field(
        None, description="See `FlowInput.commercial`; absent keeps it."
    )
    critical: Optional[bool] = Field(
        None, description="See `FlowInput.critical`; absent keeps it."
    )
    description: Optional[str] = None
    handle: Optional[str] = Field(None, description="Only the flow's own handle.")
    name: Optional[str] = None
    steps: Optional[
        list[Union[ChannelStepInput, DelayStep, ThrottleStep, BatchStep, RouteStep]]
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
