"""The SDK's map of Admin API operations: (method, path) → the method serving it.

scripts/gen_models.py --check compares it with the server's /openapi.json and
fails when an operation has no SDK method (or a mapped one no longer exists),
so a new endpoint cannot ship without the SDK learning it. ``AUTO_KEYED`` names
the operations whose methods send an automatic ``Idempotency-Key``: the check
also compares it with the operations the document says take one.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Tuple

OPERATIONS: Dict[Tuple[str, str], str] = {
    # users, preferences, erasures
    ("GET", "/admin/v1/users"): "users.list",
    ("GET", "/admin/v1/users/{external_id}"): "users.get",
    ("PUT", "/admin/v1/users/{external_id}"): "users.upsert",
    ("DELETE", "/admin/v1/users/{external_id}"): "users.delete",
    ("POST", "/admin/v1/users/bulk"): "users.bulk_upsert",
    ("POST", "/admin/v1/users/bulk_delete"): "users.bulk_delete",
    ("GET", "/admin/v1/users/{external_id}/preferences"): "users.get_preferences",
    ("PUT", "/admin/v1/users/{external_id}/preferences"): "users.update_preferences",
    ("GET", "/admin/v1/users/{external_id}/feed"): "users.feed",
    ("POST", "/admin/v1/users/{external_id}/preference_link"): "users.preference_link",
    ("GET", "/admin/v1/erasures/{id}"): "erasures.get",
    ("GET", "/admin/v1/preferences/defaults"): "preferences.defaults.get",
    ("PUT", "/admin/v1/preferences/defaults"): "preferences.defaults.update",
    # categories
    ("GET", "/admin/v1/categories"): "categories.list",
    ("GET", "/admin/v1/categories/{handle}"): "categories.get",
    ("PUT", "/admin/v1/categories/{handle}"): "categories.upsert",
    ("DELETE", "/admin/v1/categories/{handle}"): "categories.delete",
    # channels
    ("POST", "/admin/v1/channels"): "channels.create",
    ("GET", "/admin/v1/channels"): "channels.list",
    ("GET", "/admin/v1/channels/{channel_id}"): "channels.get",
    ("PUT", "/admin/v1/channels/{channel_id}"): "channels.update",
    ("DELETE", "/admin/v1/channels/{channel_id}"): "channels.delete",
    ("POST", "/admin/v1/channels/{channel_id}/revoke"): "channels.revoke",
    ("POST", "/admin/v1/channels/{channel_id}/test"): "channels.test_channel",
    # flows and runs
    ("POST", "/admin/v1/flows"): "flows.create",
    ("GET", "/admin/v1/flows"): "flows.list",
    ("GET", "/admin/v1/flows/{id}"): "flows.get",
    ("PUT", "/admin/v1/flows/{id}"): "flows.update",
    ("POST", "/admin/v1/flows/{id}/activate"): "flows.activate",
    ("POST", "/admin/v1/flows/{id}/deactivate"): "flows.deactivate",
    ("POST", "/admin/v1/flows/{id}/archive"): "flows.archive",
    ("POST", "/admin/v1/flows/{id}/run"): "flows.run",
    ("POST", "/admin/v1/flows/{id}/cancel"): "flows.cancel",
    ("POST", "/admin/v1/flows/{id}/preview"): "flows.preview",
    ("POST", "/admin/v1/flows/preview"): "flows.preview_unsaved",
    ("GET", "/admin/v1/flow_runs/{id}"): "flow_runs.get",
    # notifications, deliveries
    ("GET", "/admin/v1/notifications"): "notifications.list",
    ("GET", "/admin/v1/notifications/{id}"): "notifications.get",
    ("GET", "/admin/v1/notifications/{id}/trace"): "notifications.trace",
    ("GET", "/admin/v1/deliveries"): "deliveries.list",
    ("GET", "/admin/v1/deliveries/{id}"): "deliveries.get",
    # topics
    ("GET", "/admin/v1/topics"): "topics.list",
    ("GET", "/admin/v1/topics/{key}"): "topics.get",
    ("PUT", "/admin/v1/topics/{key}"): "topics.upsert",
    ("DELETE", "/admin/v1/topics/{key}"): "topics.delete",
    ("GET", "/admin/v1/topics/{key}/subscriptions"): "topics.subscriptions",
    ("POST", "/admin/v1/topics/{key}/subscriptions"): "topics.subscribe",  # and topics.subscribe_many
    ("DELETE", "/admin/v1/topics/{key}/subscriptions/{external_id}"): "topics.unsubscribe",
    # the suppression list (adding takes no Idempotency-Key: Herald keys it by the address)
    ("GET", "/admin/v1/suppressions"): "suppressions.list",
    ("POST", "/admin/v1/suppressions"): "suppressions.add",
    ("DELETE", "/admin/v1/suppressions/{channel_type}/{address}"): "suppressions.remove",
    # the audit log
    ("GET", "/admin/v1/audit_log"): "audit_log.list",
    # event endpoints
    ("POST", "/admin/v1/webhook_endpoints"): "event_endpoints.create",
    ("GET", "/admin/v1/webhook_endpoints"): "event_endpoints.list",
    ("GET", "/admin/v1/webhook_endpoints/{id}"): "event_endpoints.get",
    ("PUT", "/admin/v1/webhook_endpoints/{id}"): "event_endpoints.update",
    ("DELETE", "/admin/v1/webhook_endpoints/{id}"): "event_endpoints.delete",
    ("POST", "/admin/v1/webhook_endpoints/{id}/rotate_secret"): "event_endpoints.rotate_secret",
    ("GET", "/admin/v1/webhook_endpoints/{id}/attempts"): "event_endpoints.attempts",
    ("POST", "/admin/v1/webhook_endpoints/{id}/replay"): "event_endpoints.replay",
    # project
    ("GET", "/admin/v1/project"): "project.get",
    ("PUT", "/admin/v1/project"): "project.update",
    ("POST", "/admin/v1/project/clock/advance"): "project.advance_clock",
    ("POST", "/admin/v1/project/signing_key"): "project.generate_signing_key",
    ("PUT", "/admin/v1/project/signing_key"): "project.set_signing_key",
    ("DELETE", "/admin/v1/project/signing_key"): "project.delete_signing_key",
    ("POST", "/admin/v1/project/rotate_link_secret"): "project.rotate_link_secret",
    ("POST", "/admin/v1/project/rotate_secret"): "project.rotate_secret_key",
    # content
    ("GET", "/admin/v1/partials"): "partials.list",
    ("GET", "/admin/v1/partials/{handle}"): "partials.get",
    ("PUT", "/admin/v1/partials/{handle}"): "partials.upsert",
    ("DELETE", "/admin/v1/partials/{handle}"): "partials.delete",
    ("GET", "/admin/v1/layouts"): "layouts.list",
    ("GET", "/admin/v1/layouts/{handle}"): "layouts.get",
    ("PUT", "/admin/v1/layouts/{handle}"): "layouts.upsert",
    ("DELETE", "/admin/v1/layouts/{handle}"): "layouts.delete",
    ("GET", "/admin/v1/translations"): "translations.list",
    ("GET", "/admin/v1/translations/{locale}"): "translations.get",
    ("PUT", "/admin/v1/translations/{locale}"): "translations.upsert",
    ("DELETE", "/admin/v1/translations/{locale}"): "translations.delete",
}

AUTO_KEYED: FrozenSet[Tuple[str, str]] = frozenset(
    {
        ("POST", "/admin/v1/users/bulk"),
        ("POST", "/admin/v1/users/bulk_delete"),
        ("POST", "/admin/v1/channels"),
        ("POST", "/admin/v1/flows"),
        ("POST", "/admin/v1/flows/{id}/run"),
        ("POST", "/admin/v1/topics/{key}/subscriptions"),
    }
)
