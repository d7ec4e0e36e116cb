"""The generated models' tolerance, without a server: unknown fields are kept,
open enums take values a newer server may add, and an answer that does not fit
its model comes back unchecked with a warning rather than an exception."""

from __future__ import annotations

import pytest

from herald_sdk import ResponseShapeWarning, models
from herald_sdk._base import cast

TOPIC = {"key": "news", "name": "News", "description": None, "subscribers_count": 3,
         "created_at": "2026-11-21T10:00:00.123Z", "updated_at": "2026-11-21T10:00:00.123Z"}


def test_unknown_fields_are_kept() -> None:
    t = cast(models.Topic)({**TOPIC, "added_later": {"x": 1}})
    assert isinstance(t, models.Topic) and t.subscribers_count == 3
    assert t.added_later == {"x": 1} and t.model_dump()["added_later"] == {"x": 1}


def test_a_new_enum_value_still_loads() -> None:
    ch = cast(models.Channel)({"id": "0192f0c4-5d7e-7000-8000-000000000001", "type": "carrier_pigeon",
                               "provider": "loft", "name": "Birds", "config": {}, "status": "molting",
                               "sandbox": False, "created_at": TOPIC["created_at"], "updated_at": TOPIC["created_at"]})
    assert ch.type == "carrier_pigeon" and ch.status == "molting"


def test_an_answer_that_does_not_fit_is_returned_unchecked() -> None:
    with pytest.warns(ResponseShapeWarning):
        t = cast(models.Topic)({"key": "news", "subscribers_count": "many"})
    assert t.key == "news" and t.subscribers_count == "many"
