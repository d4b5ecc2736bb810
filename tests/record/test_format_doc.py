"""docs/RECORD-FORMAT.md's worked example is what the code makes, and it verifies."""

from __future__ import annotations

import re
from pathlib import Path

from service import record
from tests.record.example import blocks, example

DOC = Path(__file__).resolve().parents[2] / "docs" / "RECORD-FORMAT.md"
BLOCK = re.compile(r"<!-- example:(\w+) -->\n```\n(.*?)```\n<!-- /example -->", re.DOTALL)


def test_the_documents_worked_example_is_what_the_code_makes() -> None:
    written = dict(BLOCK.findall(DOC.read_text(encoding="utf-8")))
    made = blocks()
    assert written.keys() == made.keys(), "run: python -m tests.record.example"
    for name, block in made.items():
        assert written[name] == block, f"the {name} example drifted: python -m tests.record.example"


def test_the_worked_example_is_a_valid_game_with_every_kind_of_turn() -> None:
    made = example()
    assert record.verify(made).valid
    actions = {turn.action for turn in made.turns}
    assert actions >= {record.Action.PLAY, record.Action.DRAW, record.Action.TIMEOUT,
                       record.Action.LEAVE}  # fmt: skip
    assert {turn.reverted for turn in made.turns if turn.action is record.Action.TIMEOUT} == {
        True, False
    }  # fmt: skip
