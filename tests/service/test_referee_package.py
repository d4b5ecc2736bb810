"""The referee's public names stay put, and its exception tree is the one its docstring draws."""

from __future__ import annotations

import re

import service.referee
from service.referee import errors


def test_the_referees_refusals_are_pinned() -> None:
    assert errors.__all__ == [
        "BadToken",
        "Busy",
        "HintsOff",
        "IdempotencyMismatch",
        "MatchNotFound",
        "NotOwner",
        "RefereeError",
        "SeatRequired",
        "StaleVersion",
        "TokenForAnotherMatch",
    ]


def test_the_tree_in_the_docstring_names_each_refusal_with_its_code() -> None:
    drawn = {
        name: kind for name, kind in re.findall(r"[├└]── (\w+)\s+([\w-]+)", errors.__doc__ or "")
    }
    classes = {name: getattr(errors, name) for name in errors.__all__ if name != "RefereeError"}
    assert drawn == {name: cls.kind for name, cls in classes.items()}
    assert all(issubclass(cls, errors.RefereeError) for cls in classes.values())


def test_the_package_exports_what_its_callers_import() -> None:
    assert set(errors.__all__) <= set(service.referee.__all__)
    assert {
        "Referee",
        "Guards",
        "Idempotency",
        "Moved",
        "Rematched",
        "Created",
        "LAST_EVENTS",
        "SteppingAside",
    } <= set(service.referee.__all__)
    assert all(hasattr(service.referee, name) for name in service.referee.__all__)
