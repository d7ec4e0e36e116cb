"""schemathesis hooks for .ci/schemathesis.sh.

1. Formats. The document names the formats of values a schema cannot spell out
   (a PEM key must parse as a key, a language tag must be in the IANA registry):
   `bcp47`, `pem-rsa-public-key`, `pem-rsa-private-key`, `pem-p256-private-key`,
   `vapid-public-key`, `vapid-private-key`. Generated values of those formats are
   drawn from the valid ones below (throwaway keys made for this file, used
   nowhere else).

2. positive_data_acceptance, with the rejections of a schema-valid request the API
   contract expects. A schema says what a request looks like; it cannot say what
   exists, what is unique, what state a resource is in, which cursors this server
   issued, or which destinations this deployment lets out. So these are answers to
   valid data, not a document that allows too much:
   - 409: the resource's state forbids the operation;
   - 422 whose every field problem is `unique`, a reference to something that does
     not exist, a field that may not change from its stored value, a rule over the
     stored resource, or a destination the egress guard refuses (`exclusion`);
   - 400 for a cursor this server did not issue (signed, expiring, bound to its list
     and filters), and for `after` and `before` together (OpenAPI cannot make two
     query parameters exclude each other);
   - 400 for the WebSocket endpoint without a WebSocket handshake (OpenAPI describes
     HTTP exchanges, not the upgrade);
   - 422 `format` for an idempotency key given in the header and the body with two
     values (one value in two places: no schema relates a header to a body);
   - 422 `number` (or `format`, at that field) when the body writes a whole
     number with a fraction (`30.0`): JSON Schema counts it as an integer, the
     service (like serde) reads integers only as written without one;
   - 422 on a channel update that does not name its provider, for `config` fields:
     the stored channel's provider decides what its config takes.
   - 422 `inclusion` for a channel step's condition rule naming
     `steps.<index>.…` of a step that is not an earlier channel step: the
     document gives the path's shape, but no schema relates a number inside a
     string to the position and `type` of the other items of the array; and
     for a route step after a batch step (two items of the array again);
   - 422 for a condition rule over `recipient.online` or
     `recipient.last_seen_at` whose op or value is not one its path takes,
     or on a step type that cannot name them: the rule's schema is one for
     every path;
   - 422 `exclusion` for a send window (or a user's quiet hours) whose `to`
     equals its `from`: JSON Schema cannot say that two properties differ;
   - 422 `number` for a preference link's `expires_in` over 365 days: the
     pattern gives a duration's shape, not the sum of its parts;
   - 422 on a project's content (partials, layouts, translation catalogs, and
     flow templates that include partials) for what no schema spells: a
     template's MiniJinja grammar and render limits, the partials it includes
     (they must exist and nest at most 5 deep), the project's bounds, and
     a catalog's nesting (`CONTENT_RULES`);
   - 422 `exclusion` for a flow both critical and commercial (the body's or
     the stored flow's `critical`), and 422 `format` for a suppression's
     address that is not of its `channel_type`'s form (an email address, an
     E.164 number): the document cannot relate one property to another's value;
   - 400 `invalid_csrf` for a preference page's form post: its `csrf` value is a
     signature only the page shown for that link carries (a schema gives its
     type, not which value the server signed).

3. negative_data_rejection, with one acceptance the contract expects: a create
   body whose channel `config` lacks fields its provider's config schema lists as
   `required` creates the channel `unconfigured` (the list names what makes a
   channel `active`), so it passes when the body is valid but for those fields.
"""

import copy
import json

import jsonschema
import schemathesis
from hypothesis import strategies as st
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

RSA_PUBLIC = '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA0IUn1tBoTlTRT1ZkJlA9\n/J5CMeMfKgNfbWTPxb1e9BCG4Al3ZFxs9P0PDWZgC54GQFBwJsK4pqIW24x1vYIW\neOx9Cnd5K+N2z/LC46HMsu3VT4TjecTse12dqdg/n58MHuNWJATK2xvCvwGDVWU4\ncxn4uT4wM3U0gEPwn3jr67JfxPAHt57xow3r+MEvPGkp0+zT7lvmEsCnnBmRsHpG\nyNhspaSGLUR3wOWCQxLY2czWQ3cx8qCuW3caSzRhMFEmOvSO0r5JKadTHy+nDxPx\ntg4eTnkC+zPjIx/VtWGs31hDl/FhEWtTSdYsQFZoqxyPEcea7RnCMRaxSlWNb9Ic\n1QIDAQAB\n-----END PUBLIC KEY-----\n'
RSA_PRIVATE = '-----BEGIN PRIVATE KEY-----\nMIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQDQhSfW0GhOVNFP\nVmQmUD38nkIx4x8qA19tZM/FvV70EIbgCXdkXGz0/Q8NZmALngZAUHAmwrimohbb\njHW9ghZ47H0Kd3kr43bP8sLjocyy7dVPhON5xOx7XZ2p2D+fnwwe41YkBMrbG8K/\nAYNVZThzGfi5PjAzdTSAQ/CfeOvrsl/E8Ae3nvGjDev4wS88aSnT7NPuW+YSwKec\nGZGwekbI2GylpIYtRHfA5YJDEtjZzNZDdzHyoK5bdxpLNGEwUSY69I7Svkkpp1Mf\nL6cPE/G2Dh5OeQL7M+MjH9W1YazfWEOX8WERa1NJ1ixAVmirHI8Rx5rtGcIxFrFK\nVY1v0hzVAgMBAAECggEAVom0d3fFmiCkP09kv+vUVedeJHMUZ2y/6VgJzJBjfFnx\nh8AV/x5Gj8QIP7DpkliyUnWvnb55QJqLbvFTmeMHrYbD/BiKPrcng3TGAg+PswB2\nYwqNF2etFyPKf4cCHJ42uwjxIoCkqZtTTs7zcPjRnR89tK9E9M4jDEpl7eES1B1S\nqAYxxL7pYacDAk2DcG2oZxB4yH7aSaqUi0gXropi4vLm7kYspK+IVNDRB4OFKvZP\nOYhPq3LOQXlrruKY8I3WUyPt0nu+hX+NZzB8nlfI/qRZuhWDiZATlgsm5ETjCmw8\n0sgFL83YSupTZg8U6v2R6JEz1RQOD7EW8XG8MNztTwKBgQDwn3OEP4oBfDMes5Ya\nsrsx/vu68QwK8hdRvIifY7Ikcu29O6a35yXLNILI89nUQ97J2UR90wfGQbhphpkp\nn0Licecf70Dg9QXU8k4FPrRTzn14+wUFtGXIiCRfWm/55YwgdQrUfAIu4YXyAOM2\nJeJsonCfzq4kfAAWElSJIAnyswKBgQDd2IJpjFcMfKJxu5a2TXV3vh5BJbZ/u+/p\nVjwoAVKmkzYmOnQlrX0TCRQD3aKDh4BFcgKJ/w33HX+sfLtCFCbwstnpIal+gEIB\nlSgJq7MO6LvNZ3OxFVtJapAw7lVK03CSfi18MZyqBZUGDs2DXKHMMsLiYXXekd7u\nb+lIUbXWVwKBgDakz1PyJgIOVYGcYPMxMae58yrSAN0fe0I5oYEo39S9MNYvjL3o\nxUFvbF/8WLSGsTp/l7lHSlWwqRN12KSGIWdRXJ548+/iVO+2ExfH1KXPl9j4kHxq\nKk8u86uf2xwSEA9y5QG6I7jHyGZb4z1xvwjSnub7xbpNWquogAAgAYJXAoGAQ8dd\neM/23IrLusHcdxBNXmtIpRDXpEkQMJM3R+W3kcsSVTWwvL43o3Q3mELD3zmr+Auw\nOOcjJifuFQ36zGKJzyplp3OwbETVZdRjaij6SQjUMBp2X1kuDc0wBrMafgUBtNA2\nJ2ak/dE8yaAGLCdGC7RKlI3ATGL24JRyirTkQHsCgYBcFh2dqAMa8JsQb1+FxRZ5\nSFOD/586ZypmAYAr/gVD2EzNpG/d2jxGvnya4xJEVNEWFy5hwFWlNVEPRQm4NC7A\nhx54827ltIttyniMpd78nVqnyZs2o+IMxYwSUojfycy245gOrhi/lnTfnJ2ViwjS\nU0IHR8G6x+XTs9Z29cJPzA==\n-----END PRIVATE KEY-----\n'
P256_PRIVATE = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgBYy48XqKF3QZpyUH\n4BX4ATkACqEsAUiSv8ZPrIOP5u+hRANCAAQPKrJz5wFaKMz2q5nFEbzSwCSv7hY9\nL0B/XkXoJFiGKvr5rbQ7jmJ//2kC79vM8peDpu3vGRUXkkmD26OGVPOT\n-----END PRIVATE KEY-----\n'
VAPID_PUBLIC = 'BA8qsnPnAVoozParmcURvNLAJK_uFj0vQH9eRegkWIYq-vmttDuOYn__aQLv28zyl4Om7e8ZFReSSYPbo4ZU85M'
VAPID_PRIVATE = 'BYy48XqKF3QZpyUH4BX4ATkACqEsAUiSv8ZPrIOP5u8'

schemathesis.openapi.format("bcp47", st.sampled_from(["en", "en-GB", "en-US", "fr", "de-DE", "pt-BR", "es-419", "zh-Hant-TW"]))
schemathesis.openapi.format("pem-rsa-public-key", st.just(RSA_PUBLIC))
schemathesis.openapi.format("pem-rsa-private-key", st.just(RSA_PRIVATE))
schemathesis.openapi.format("pem-p256-private-key", st.just(P256_PRIVATE))
schemathesis.openapi.format("vapid-public-key", st.just(VAPID_PUBLIC))
schemathesis.openapi.format("vapid-private-key", st.just(VAPID_PRIVATE))

# (reason, message) of the 422 field problems that depend on stored state
STATE_RULES = {
    ("inclusion", "no flow with this handle"),
    ("inclusion", "no channel with this id in the project"),
    ("inclusion", "no user with this external_id"),
    ("exclusion", "a channel's type cannot change"),
    ("exclusion", "a channel's provider cannot change"),
    ("exclusion", "a flow's handle cannot change"),
    ("required", "an active flow needs at least one channel step"),
    ("exclusion", "external_id cannot change"),
    ("required", "an email step needs a subject"),
    ("format", "header and body keys differ"),
    # the step's channel type is the stored channel's
    ("exclusion", "only an in_app step has actions"),
    # a step's channel type is the stored channel's: only email takes a layout
    ("exclusion", "only an email step takes a layout"),
    # whether a flow is critical is the stored flow's
    ("exclusion", "a critical flow cannot be turned off"),
    ("exclusion", "a critical flow's channel types cannot be turned off"),
    # a press names one of the stored entry's actions
    ("inclusion", "the entry has no actions"),
    # categories are declared before flows and preferences name them
    ("inclusion", "no category with this handle (declare it with PUT /admin/v1/categories/{handle})"),
    ("inclusion", "no category with this handle"),
    ("length", "a project declares at most 100 categories"),
    # content (partials, layouts, catalogs) is named before it is used
    ("inclusion", "no layout with this handle in the project"),
}

# Prefixes of the 422 field messages of a project's content that
# no schema can spell: a template's grammar (MiniJinja), what it includes
# (stored partials, how deep they nest), its render limits, the bounds of a
# project's content, and a catalog's nesting (the document gives
# `messages` as an object).
CONTENT_RULES = (
    ("format", "template does not compile"),
    ("format", "template is over its limits"),
    ("format", "include names a partial literally"),
    ("format", "import names a partial literally"),
    ("format", "from names a partial literally"),
    ("format", "extends names a partial literally"),
    ("format", "includes partials/"),
    ("inclusion", "includes partials/"),
    ("format", "partials/"),
    ("inclusion", "no layout "),
    ("length", "a project has at most"),
    ("length", "at most 32768 bytes"),
    ("length", "at most 131072 bytes"),
    ("length", "at most 65536 bytes"),
    ("length", "at most 1000 messages"),
    ("format", "a message key segment is"),
    ("format", "must be an object of messages"),
    ("length", "message keys nest at most"),
)

# (reason, message) of the 422 field problems that relate two values of the body
CROSS_FIELD_RULES = {
    ("inclusion", "steps.<index>.status|read|seen|clicked|interacted of an earlier channel step"),
    ("exclusion", "must differ from from"),
    # a batch step's max_window belongs to a sliding window, and bounds it
    ("inclusion", "only a sliding window (window_type sliding) has a max_window"),
    ("number", "must be at least the window"),
    # relates two steps of the list
    ("inclusion", "a flow has at most one batch step"),
    ("inclusion", "a route step cannot follow a batch step"),
    # a condition rule over the recipient's presence: its path decides the
    # ops and values it takes, and the step's type whether it may name it
    ("inclusion", "a delay step's condition cannot name recipient.online or recipient.last_seen_at"),
    ("inclusion", "recipient.online is compared with eq or neq"),
    ("format", "recipient.online compares with true or false"),
    ("exclusion", "exists and not_exists take no value"),
    ("format", "a relative duration in the past: -<n>m, -<n>h, -<n>d or -<n>w (e.g. -7d), at most ten years"),
    ("inclusion", "recipient.last_seen_at is compared with lt, lte, gt, gte, exists or not_exists"),
    # the sum of a duration's parts ("300d 2000h"): no pattern bounds it
    ("number", "must be at most 365 days"),
    # `critical` and `commercial` together (the body's or the stored flow's)
    ("exclusion", "a critical flow cannot be commercial: its deliveries ignore opt-outs"),
    # a suppression's address is read by its channel_type: an email address
    # for `email`, an E.164 number for `sms`
    ("format", "must be an email address"),
    ("format", "must be a phone number in E.164 form (+ and 8–15 digits)"),
}


def _error(response):
    try:
        return json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        return None


def _state_rule(f):
    return (
        f.get("reason") == "unique"
        or (f.get("reason"), f.get("message")) in STATE_RULES
        or (f.get("reason"), f.get("message")) in CROSS_FIELD_RULES
        or (f.get("reason") == "exclusion" and "not allowed" in f.get("message", ""))
        or any(f.get("reason") == r and f.get("message", "").startswith(m) for r, m in CONTENT_RULES)
        or (f.get("reason") == "inclusion" and f.get("message", "").startswith("must be an index of the entry's actions"))
        # a new destination for a stored secret: the secret must come again
        or (f.get("reason") == "required" and "the channel's secret is used" in f.get("message", ""))
    )


def _has_integral_float(v):
    if isinstance(v, float):
        return v.is_integer()
    if isinstance(v, dict):
        return any(_has_integral_float(x) for x in v.values())
    if isinstance(v, list):
        return any(_has_integral_float(x) for x in v)
    return False


def _value_at(body, path):
    """The value at a dot-path of the body (`steps.0.seconds`), or None."""
    v = body
    for part in (path or "").split("."):
        if isinstance(v, dict) and part in v:
            v = v[part]
        elif isinstance(v, list) and part.isdigit() and int(part) < len(v):
            v = v[int(part)]
        else:
            return None
    return v


def _integral_float_at(body, path):
    v = _value_at(body, path)
    return isinstance(v, float) and v.is_integer()


def _expected_rejection(response, case):
    if response.status_code == 409:
        return True
    e = _error(response)
    if e is None:
        return False
    details = e.get("details") or {}
    if response.status_code == 422:
        fields = details.get("fields") or []
        floats = _has_integral_float(getattr(case, "body", None))
        stored_provider = (
            case.method.upper() == "PUT"
            and case.path == "/admin/v1/channels/{channel_id}"
            and isinstance(case.body, dict)
            and "provider" not in case.body
        )
        return bool(fields) and all(
            _state_rule(f)
            or (floats and f.get("reason") == "number")
            # a whole number written with a fraction, where an integer is
            # read: refused as `number` or, where the field reads only
            # whole numbers (quota_bytes), as `format`
            or _integral_float_at(getattr(case, "body", None), f.get("field"))
            or (stored_provider and f.get("field", "").startswith("config."))
            for f in fields
        )
    if response.status_code == 400 and details.get("reason") == "invalid_csrf":
        return case.path == "/p/{token}"
    if response.status_code == 400 and details.get("reason") == "invalid_param":
        if details.get("param") in ("after", "before"):
            return True
        if details.get("param") == "upgrade" and case.path.endswith("/feed/live"):
            return True
    return False


def _body_valid(case, required_configs=True):
    """Whether the case's JSON body meets the document's schema of the body."""
    if not isinstance(case.body, (dict, list)):
        return True
    doc = case.operation.schema.raw_schema
    try:
        body = doc["paths"][case.path][case.method.lower()]["requestBody"]
        schema = body["content"]["application/json"]["schema"]
    except KeyError:
        return True
    schemas = doc["components"]["schemas"]
    if not required_configs:
        schemas = copy.deepcopy(schemas)
        for name, s in schemas.items():
            if name.endswith("Config"):
                s.pop("required", None)
    root = dict(schema, components={"schemas": schemas})
    return jsonschema.Draft202012Validator(root).is_valid(case.body)


@schemathesis.check
def positive_data_acceptance_but_state(ctx, response, case):
    if _expected_rejection(response, case):
        return None
    # the generators do not honour every keyword (`dependentSchemas`): a case they
    # meant as valid that the document rejects is not a schema-valid request
    if not _body_valid(case):
        return None
    return positive_data_acceptance(ctx, response, case)


def _partial_channel_config(response, case):
    return (
        case.method.upper() == "POST"
        and case.path == "/admin/v1/channels"
        and response.status_code == 201
        and isinstance(case.body, dict)
        and _body_valid(case, required_configs=False)
    )


@schemathesis.check
def negative_data_rejection_but_partial_config(ctx, response, case):
    if _partial_channel_config(response, case):
        return None
    return negative_data_rejection(ctx, response, case)
