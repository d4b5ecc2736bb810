"""SPEC section 7, "Breaking changes are caught": openapi.yaml is compared with the released
contract (docs/api/openapi-released.yaml) by a maintained diff tool, api-smart-diff (npm; it
reads OpenAPI 3.1 and classifies each difference), and the build fails on a breaking change
unless ``info.version``'s major says so. docs/API-CHANGELOG.md lists every version.

The gate reads the tool's classification of what clients see (``paths`` and ``webhooks``,
where every component is resolved in place), with one policy of ours beside it, written in the
changelog: an enum value added to an answer (an event type, an outcome's reason), or an
alternative added to an answer's ``oneOf`` (a new typed event), is not breaking, since clients
must skip values and event types they do not know.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.tools import TOOLS, npm_bin

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "openapi.yaml"
RELEASED = ROOT / "docs" / "api" / "openapi-released.yaml"
CHANGELOG = ROOT / "docs" / "API-CHANGELOG.md"


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def differences(
    before: dict[str, Any], after: dict[str, Any], folder: Path
) -> list[dict[str, Any]]:
    """api-smart-diff's differences between two contracts (tests/tools/api-diff.mjs)."""
    npm_bin()  # installs the tools when missing
    files = []
    for name, document in (("before", before), ("after", after)):
        path = folder / f"{name}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        files.append(str(path))
    compared = subprocess.run(
        ["node", str(TOOLS / "api-diff.mjs"), *files],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=TOOLS,
    )
    assert compared.returncode == 0, compared.stderr[-3000:]
    found: list[dict[str, Any]] = json.loads(compared.stdout)
    return found


def breaking(before: dict[str, Any], after: dict[str, Any], folder: Path) -> list[str]:
    """The breaking changes a client of ``before`` meets in ``after``, by the gate's rule."""
    found = []
    for change in differences(before, after, folder):
        path = [str(part) for part in change["path"]]
        if change["type"] != "breaking" or path[0] not in ("paths", "webhooks"):
            continue
        if change["action"] == "add" and "responses" in path and "enum" in path:
            continue  # a new value in an answer: clients skip values they do not know
        if change["action"] == "add" and "responses" in path and "oneOf" in path:
            continue  # a new typed event in an answer: clients skip types they do not know
        found.append(f"{change['action']} {'/'.join(path)}")
    return found


def major(document: dict[str, Any]) -> int:
    return int(str(document["info"]["version"]).split(".", 1)[0])


def test_the_contract_breaks_nothing_released_unless_its_major_version_says_so(
    tmp_path: Path,
) -> None:
    released, current = load(RELEASED), load(CONTRACT)
    assert major(current) >= major(released)
    if major(current) > major(released):
        return  # a new major version may break; release it by copying openapi.yaml over
    found = breaking(released, current, tmp_path)
    assert not found, (
        f"openapi.yaml breaks {len(found)} promise(s) of the released "
        f"{released['info']['version']} (raise info.version's major, or keep them):\n"
        + "\n".join(found[:40])
    )


def test_the_gate_catches_a_removed_operation_and_a_newly_required_field(
    tmp_path: Path,
) -> None:
    released = load(RELEASED)
    changed = copy.deepcopy(released)
    del changed["paths"]["/v1/meld-check"]
    changed["components"]["schemas"]["TableBody"]["required"].append("reason")
    changed["components"]["schemas"]["TableBody"]["properties"]["reason"] = {"type": "string"}
    found = breaking(released, changed, tmp_path)
    assert any("/v1/meld-check" in change for change in found), found
    assert any("/v1/matches/{id}/play" in c and "required" in c for c in found), found


def test_an_added_operation_optional_field_or_event_type_is_not_breaking(tmp_path: Path) -> None:
    released = load(RELEASED)
    changed = copy.deepcopy(released)
    changed["paths"]["/v1/new-thing"] = {
        "get": {"operationId": "newThing", "responses": {"200": {"description": "ok"}}}
    }
    changed["components"]["schemas"]["MatchView"]["properties"]["mood"] = {"type": "string"}
    changed["components"]["schemas"]["RuleOptions"]["properties"]["mood"] = {"type": "string"}
    changed["components"]["schemas"]["EventType"]["enum"].append("mood_changed")
    mood = {"type": "object", "properties": {"type": {"type": "string", "enum": ["mood_changed"]}}}
    changed["components"]["schemas"]["MoodChangedEvent"] = mood
    event = changed["components"]["schemas"]["Event"]
    event["oneOf"].append({"$ref": "#/components/schemas/MoodChangedEvent"})
    event["discriminator"]["mapping"]["mood_changed"] = "#/components/schemas/MoodChangedEvent"
    assert breaking(released, changed, tmp_path) == []


def test_the_changelog_has_the_current_and_the_released_version() -> None:
    text = CHANGELOG.read_text(encoding="utf-8")
    for document in (load(CONTRACT), load(RELEASED)):
        assert f"## {document['info']['version']}" in text
