"""Problems in English, Spanish or Swedish, from catalogues a translator can edit.

Each catalogue (``es.yaml``, ``sv.yaml`` beside this file) maps every English message the
service writes, as a template with ``{placeholders}``, to its translation. The service
writes its messages in English (the rules core and the game name tiles and numbers in
them); :func:`localize` finds the template a message was made from, takes the placeholders'
values back out of it and fills in the translation, nested messages (a set's ``{reason}``)
included. A message no template matches stays English: :func:`untranslated` names them,
and the test suite checks every problem it sees with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

__all__ = ["DEFAULT", "LANGUAGES", "catalogue", "localize", "negotiate", "untranslated"]

DEFAULT = "en"
LANGUAGES = ("en", "es", "sv")
FOLDER = Path(__file__).resolve().parent
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# What each placeholder may match in an English message; any other matches any text.
SHAPES = {
    "number": r"-?\d+",
    "count": r"\d+",
    "points": r"-?\d+",
    "threshold": r"-?\d+",
    "seat": r"-?\d+",
    "current": r"-?\d+",
    "min": r"\d+",
    "max": r"\d+",
    "set": r"\d+",
    "tile": r"J|[RBKO]\d{1,2}",
    "previous": r"J|[RBKO]\d{1,2}",
    "tiles": r"[A-Z0-9|= ]+?",
}
# Placeholders whose value is itself a message to translate (a set's reason).
NESTED = frozenset({"reason"})


@dataclass(frozen=True, slots=True)
class Template:
    english: str
    pattern: re.Pattern[str]


def negotiate(accept_language: str | None) -> str:
    """The language to answer in for an ``Accept-Language`` header (RFC 9110 weights).

    ``es-MX`` counts as ``es``; ``*`` or nothing we have is English.
    """
    best, best_weight = DEFAULT, 0.0
    for position, item in enumerate((accept_language or "").split(",")):
        tag, _, parameters = item.strip().partition(";")
        language = tag.strip().lower().split("-")[0]
        weight = _weight(parameters)
        if language in LANGUAGES and weight > best_weight:
            best, best_weight = language, weight - position * 1e-6
    return best


def _weight(parameters: str) -> float:
    for parameter in parameters.split(";"):
        name, _, value = parameter.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                return max(0.0, min(1.0, float(value)))
            except ValueError:
                return 0.0
    return 1.0


@cache
def catalogue(language: str) -> dict[str, str]:
    """The translations of ``language``: English template -> translated template."""
    if language == DEFAULT:
        return {}
    loaded: dict[str, str] = yaml.safe_load((FOLDER / f"{language}.yaml").read_text("utf-8"))
    return loaded


@cache
def _templates() -> tuple[Template, ...]:
    """Every English template, the longest first (the most specific wins)."""
    english = sorted({key for language in LANGUAGES for key in catalogue(language)}, key=len)
    return tuple(Template(text, _pattern(text)) for text in reversed(english))


def _pattern(template: str) -> re.Pattern[str]:
    parts, position = [], 0
    for match in PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        name = match.group(1)
        parts.append(f"(?P<{name}>{SHAPES.get(name, '.+?')})")
        position = match.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts), re.DOTALL)


def translate(message: str, language: str) -> str | None:
    """``message`` in ``language``; ``None`` when no template matches it."""
    if language == DEFAULT:
        return message
    translations = catalogue(language)
    for template in _templates():
        found = template.pattern.fullmatch(message)
        if found is None or template.english not in translations:
            continue
        values = found.groupdict()
        for name in NESTED & values.keys():
            nested = translate(values[name], language)
            if nested is None:
                return None
            values[name] = nested
        return translations[template.english].format(**values)
    return None


def localize(body: dict[str, Any], language: str) -> dict[str, Any]:
    """The problem ``body`` with its title, detail and violation messages in ``language``.

    What no template matches stays in English.
    """
    if language == DEFAULT:
        return body
    localized = dict(body)
    for key in ("title", "detail"):
        if isinstance(body.get(key), str):
            localized[key] = translate(body[key], language) or body[key]
    violations = body.get("violations")
    if isinstance(violations, list):
        localized["violations"] = [
            {**v, "message": translate(v["message"], language) or v["message"]} for v in violations
        ]
        localized["detail"] = _refused_play(localized["violations"], language) or localized.get(
            "detail"
        )
    return localized


def _refused_play(violations: list[dict[str, Any]], language: str) -> str | None:
    """The detail of a refused play: its rules counted, then each message."""
    count = len(violations)
    template = (
        "the play breaks {count} rule: {reasons}"
        if count == 1
        else ("the play breaks {count} rules: {reasons}")
    )
    translated = catalogue(language).get(template)
    if translated is None:
        return None
    return translated.format(count=count, reasons="; ".join(v["message"] for v in violations))


def untranslated(body: dict[str, Any], language: str) -> list[str]:
    """The English messages of the problem ``body`` that have no translation in ``language``."""
    return [text for text in _messages(body) if translate(text, language) is None]


def _messages(body: dict[str, Any]) -> Iterator[str]:
    for key in ("title", "detail"):
        if isinstance(body.get(key), str) and not (key == "detail" and body.get("violations")):
            yield body[key]
    for violation in body.get("violations") or []:
        yield violation["message"]
