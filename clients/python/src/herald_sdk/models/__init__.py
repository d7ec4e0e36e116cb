"""Typed models of Herald's API, generated from the server's /openapi.json by
datamodel-code-generator (scripts/gen_models.py): do not edit by hand, regenerate.
Every model keeps fields it does not know (extra='allow'), so a newer server's
answers still load."""

from ._part1 import AuditEntry  # noqa: F401
from ._part1 import Branding  # noqa: F401
from ._part1 import CallbackResult  # noqa: F401
from ._part1 import CancelInput  # noqa: F401
from ._part1 import CancelResult  # noqa: F401
from ._part1 import Category  # noqa: F401
from ._part1 import CategoryInput  # noqa: F401
from ._part1 import CategoryList  # noqa: F401
from ._part1 import CategoryMeta  # noqa: F401
from ._part1 import ChannelHealth  # noqa: F401
from ._part1 import ChannelInput  # noqa: F401
from ._part1 import ChannelRetry  # noqa: F401
from ._part1 import ChannelTypeFlags  # noqa: F401
from ._part1 import ChannelTypeFlagsInput  # noqa: F401
from ._part1 import ChannelUpdate  # noqa: F401
from ._part1 import ClockAdvance1  # noqa: F401
from ._part1 import ClockAdvance2  # noqa: F401
from ._part1 import ClockAdvance  # noqa: F401
from ._part1 import ConditionRule  # noqa: F401
from ._part1 import DeliveryError  # noqa: F401
from ._part1 import DiscordConfig  # noqa: F401
from ._part1 import Erasure  # noqa: F401
from ._part1 import EventAttemptView  # noqa: F401
from ._part1 import ExpoConfig  # noqa: F401
from ._part1 import FcmServiceAccount  # noqa: F401
from ._part1 import FeedEntryInteract  # noqa: F401
from ._part1 import FeedEntryPatch  # noqa: F401
from ._part1 import FeedMeta  # noqa: F401
from ._part1 import FlowPreferences  # noqa: F401
from ._part1 import FlowPreferencesInput  # noqa: F401
from ._part1 import Health  # noqa: F401
from ._part1 import InAppConfig  # noqa: F401
from ._part1 import Layout  # noqa: F401
from ._part1 import LayoutInput  # noqa: F401
from ._part1 import LayoutList  # noqa: F401
from ._part1 import MailgunConfig  # noqa: F401
from ._part1 import MarkAllResult  # noqa: F401
from ._part1 import MessagebirdConfig  # noqa: F401
from ._part1 import Page  # noqa: F401
from ._part1 import Partial  # noqa: F401
from ._part1 import PartialInput  # noqa: F401
from ._part1 import PartialList  # noqa: F401
from ._part1 import PostmarkConfig  # noqa: F401
from ._part1 import PreferenceForm  # noqa: F401
from ._part1 import PreferenceLink  # noqa: F401
from ._part1 import PreferenceLinkInput  # noqa: F401
from ._part1 import PushKeys  # noqa: F401
from ._part2 import PushSubscription  # noqa: F401
from ._part2 import PushSubscriptionDelete  # noqa: F401
from ._part2 import PushSubscriptionInput  # noqa: F401
from ._part2 import PushSubscriptionList  # noqa: F401
from ._part2 import RenderedAction  # noqa: F401
from ._part2 import ReplayInput  # noqa: F401
from ._part2 import ReplayResult  # noqa: F401
from ._part2 import ResendConfig  # noqa: F401
from ._part2 import Retention  # noqa: F401
from ._part2 import RetentionInput  # noqa: F401
from ._part2 import RotateSecret  # noqa: F401
from ._part2 import RotatedSecret  # noqa: F401
from ._part2 import SendWindow  # noqa: F401
from ._part2 import SendgridConfig  # noqa: F401
from ._part2 import SesConfig  # noqa: F401
from ._part2 import SigningKeyInput  # noqa: F401
from ._part2 import SigningKeyPair  # noqa: F401
from ._part2 import SlackConfig  # noqa: F401
from ._part2 import SlackWebhookConfig  # noqa: F401
from ._part2 import SmtpConfig  # noqa: F401
from ._part2 import StepConditionRule  # noqa: F401
from ._part2 import StepPreviewError  # noqa: F401
from ._part2 import Subscription  # noqa: F401
from ._part2 import SubscriptionInput  # noqa: F401
from ._part2 import SubscriptionList  # noqa: F401
from ._part2 import SuppressionInput  # noqa: F401
from ._part2 import TeamsConfig  # noqa: F401
from ._part2 import TemplateAction  # noqa: F401
from ._part2 import Topic  # noqa: F401
from ._part2 import TopicInput  # noqa: F401
from ._part2 import TopicList  # noqa: F401
from ._part2 import TopicSubscribeInput  # noqa: F401
from ._part2 import TraceEntryView  # noqa: F401
from ._part2 import Translation  # noqa: F401
from ._part2 import TranslationInput  # noqa: F401
from ._part2 import TranslationSummary  # noqa: F401
from ._part2 import TwilioConfig  # noqa: F401
from ._part2 import UnsubscribeForm  # noqa: F401
from ._part2 import Usage  # noqa: F401
from ._part2 import User  # noqa: F401
from ._part2 import UserChannel  # noqa: F401
from ._part2 import UserInput  # noqa: F401
from ._part2 import UserList  # noqa: F401
from ._part2 import VonageConfig  # noqa: F401
from ._part2 import WebPushConfig  # noqa: F401
from ._part2 import WebhookConfig  # noqa: F401
from ._part2 import WebhookEndpoint  # noqa: F401
from ._part2 import WebhookEndpointInput  # noqa: F401
from ._part2 import WebhookEndpointList  # noqa: F401
from ._part3 import WebhookEndpointUpdate  # noqa: F401
from ._part3 import WebhookEndpointWithSecret  # noqa: F401
from ._part3 import ApnsConfig  # noqa: F401
from ._part3 import AuditEntryList  # noqa: F401
from ._part3 import BulkDeleteInput  # noqa: F401
from ._part3 import BulkErasure  # noqa: F401
from ._part3 import BulkSubscriptionInput  # noqa: F401
from ._part3 import BulkSubscriptionResult  # noqa: F401
from ._part3 import CategoryPreferences  # noqa: F401
from ._part3 import Channel  # noqa: F401
from ._part3 import ChannelList  # noqa: F401
from ._part3 import ChannelTestAccepted  # noqa: F401
from ._part3 import ChannelTestInput  # noqa: F401
from ._part3 import ChannelTypeSources  # noqa: F401
from ._part3 import Condition1  # noqa: F401
from ._part3 import Condition2  # noqa: F401
from ._part3 import DelayStep  # noqa: F401
from ._part3 import ErrorBody  # noqa: F401
from ._part3 import EventAttemptList  # noqa: F401
from ._part3 import FcmConfig  # noqa: F401
from ._part3 import FlowRun  # noqa: F401
from ._part3 import FlowRunAccepted  # noqa: F401
from ._part3 import NotificationTrace  # noqa: F401
from ._part3 import Project  # noqa: F401
from ._part3 import ProjectUpdate  # noqa: F401
from ._part3 import QuietHours  # noqa: F401
from ._part3 import RecipientInput  # noqa: F401
from ._part3 import Rendered  # noqa: F401
from ._part3 import RunInput1  # noqa: F401
from ._part3 import RunInput2  # noqa: F401
from ._part3 import RunInput  # noqa: F401
from ._part3 import SettingSources  # noqa: F401
from ._part3 import StepCondition1  # noqa: F401
from ._part3 import StepCondition2  # noqa: F401
from ._part3 import StepPreview  # noqa: F401
from ._part3 import SubscriptionRequest  # noqa: F401
from ._part3 import Suppression  # noqa: F401
from ._part3 import SuppressionList  # noqa: F401
from ._part3 import Template  # noqa: F401
from ._part3 import ThrottleStep  # noqa: F401
from ._part3 import TranslationList  # noqa: F401
from ._part4 import BatchStep  # noqa: F401
from ._part4 import BulkDeleteResult  # noqa: F401
from ._part4 import BulkUserResult  # noqa: F401
from ._part4 import BulkUsersInput  # noqa: F401
from ._part4 import BulkUsersResult  # noqa: F401
from ._part4 import ChannelStep  # noqa: F401
from ._part4 import ChannelStepInput  # noqa: F401
from ._part4 import Delivery  # noqa: F401
from ._part4 import DeliveryList  # noqa: F401
from ._part4 import Error  # noqa: F401
from ._part4 import FeedEntry  # noqa: F401
from ._part4 import FeedPage  # noqa: F401
from ._part4 import FlowPreview  # noqa: F401
from ._part4 import Notification  # noqa: F401
from ._part4 import NotificationList  # noqa: F401
from ._part4 import PreferencesExplain  # noqa: F401
from ._part4 import PreferencesInput  # noqa: F401
from ._part4 import PreviewBody  # noqa: F401
from ._part4 import RouteChannel  # noqa: F401
from ._part4 import RouteStep  # noqa: F401
from ._part4 import UnsavedFlowPreview  # noqa: F401
from ._part4 import Flow  # noqa: F401
from ._part4 import FlowInput  # noqa: F401
from ._part4 import FlowList  # noqa: F401
from ._part4 import FlowUpdate  # noqa: F401
from ._part4 import Preferences  # noqa: F401

__all__ = [
    "AuditEntry",
    "Branding",
    "CallbackResult",
    "CancelInput",
    "CancelResult",
    "Category",
    "CategoryInput",
    "CategoryList",
    "CategoryMeta",
    "ChannelHealth",
    "ChannelInput",
    "ChannelRetry",
    "ChannelTypeFlags",
    "ChannelTypeFlagsInput",
    "ChannelUpdate",
    "ClockAdvance1",
    "ClockAdvance2",
    "ClockAdvance",
    "ConditionRule",
    "DeliveryError",
    "DiscordConfig",
    "Erasure",
    "EventAttemptView",
    "ExpoConfig",
    "FcmServiceAccount",
    "FeedEntryInteract",
    "FeedEntryPatch",
    "FeedMeta",
    "FlowPreferences",
    "FlowPreferencesInput",
    "Health",
    "InAppConfig",
    "Layout",
    "LayoutInput",
    "LayoutList",
    "MailgunConfig",
    "MarkAllResult",
    "MessagebirdConfig",
    "Page",
    "Partial",
    "PartialInput",
    "PartialList",
    "PostmarkConfig",
    "PreferenceForm",
    "PreferenceLink",
    "PreferenceLinkInput",
    "PushKeys",
    "PushSubscription",
    "PushSubscriptionDelete",
    "PushSubscriptionInput",
    "PushSubscriptionList",
    "RenderedAction",
    "ReplayInput",
    "ReplayResult",
    "ResendConfig",
    "Retention",
    "RetentionInput",
    "RotateSecret",
    "RotatedSecret",
    "SendWindow",
    "SendgridConfig",
    "SesConfig",
    "SigningKeyInput",
    "SigningKeyPair",
    "SlackConfig",
    "SlackWebhookConfig",
    "SmtpConfig",
    "StepConditionRule",
    "StepPreviewError",
    "Subscription",
    "SubscriptionInput",
    "SubscriptionList",
    "SuppressionInput",
    "TeamsConfig",
    "TemplateAction",
    "Topic",
    "TopicInput",
    "TopicList",
    "TopicSubscribeInput",
    "TraceEntryView",
    "Translation",
    "TranslationInput",
    "TranslationSummary",
    "TwilioConfig",
    "UnsubscribeForm",
    "Usage",
    "User",
    "UserChannel",
    "UserInput",
    "UserList",
    "VonageConfig",
    "WebPushConfig",
    "WebhookConfig",
    "WebhookEndpoint",
    "WebhookEndpointInput",
    "WebhookEndpointList",
    "WebhookEndpointUpdate",
    "WebhookEndpointWithSecret",
    "ApnsConfig",
    "AuditEntryList",
    "BulkDeleteInput",
    "BulkErasure",
    "BulkSubscriptionInput",
    "BulkSubscriptionResult",
    "CategoryPreferences",
    "Channel",
    "ChannelList",
    "ChannelTestAccepted",
    "ChannelTestInput",
    "ChannelTypeSources",
    "Condition1",
    "Condition2",
    "DelayStep",
    "ErrorBody",
    "EventAttemptList",
    "FcmConfig",
    "FlowRun",
    "FlowRunAccepted",
    "NotificationTrace",
    "Project",
    "ProjectUpdate",
    "QuietHours",
    "RecipientInput",
    "Rendered",
    "RunInput1",
    "RunInput2",
    "RunInput",
    "SettingSources",
    "StepCondition1",
    "StepCondition2",
    "StepPreview",
    "SubscriptionRequest",
    "Suppression",
    "SuppressionList",
    "Template",
    "ThrottleStep",
    "TranslationList",
    "BatchStep",
    "BulkDeleteResult",
    "BulkUserResult",
    "BulkUsersInput",
    "BulkUsersResult",
    "ChannelStep",
    "ChannelStepInput",
    "Delivery",
    "DeliveryList",
    "Error",
    "FeedEntry",
    "FeedPage",
    "FlowPreview",
    "Notification",
    "NotificationList",
    "PreferencesExplain",
    "PreferencesInput",
    "PreviewBody",
    "RouteChannel",
    "RouteStep",
    "UnsavedFlowPreview",
    "Flow",
    "FlowInput",
    "FlowList",
    "FlowUpdate",
    "Preferences",
]
