"""The worked example of docs/RECORD-FORMAT.md, made by the code (``python -m
tests.record.example`` prints it; tests/record/test_format_doc.py checks the document holds
exactly this)."""

from __future__ import annotations

import json
import random
from collections import Counter
from functools import partial

from service import game, record
from service.game import Autoplay, PlayerSpec, event_to_dict
from service.rules import Rules
from service.rules.solver import solve

STARTED = 1764763200.0  # 2025-12-03 12:00 UTC
SEED = 1
UNBOUNDED = Autoplay(bot_budget=None, proof_budget=None)


def example() -> record.Record:
    """Ann and Bo (people) and a bot: Ann's first turn runs out with a changed draft (a penalty
    of 3 tiles), her second with none (1 tile), then she leaves and a bot plays her seat; Bo
    plays the solver's best play when there is one, else draws; to the end of the game."""
    players = [PlayerSpec("Ann"), PlayerSpec("Bo"), PlayerSpec("Bot Cy", bot=True)]
    rules = Rules(turn_seconds=60)
    created = game.new_match(
        "Xq7fK2mP9aZt", players, rules=rules, rng=random.Random(SEED), now=STARTED
    )
    step = created.then(lambda match: _settled(match, STARTED))
    timeouts = [True, False]
    while step.match.status is game.Status.PLAYING:
        match = step.match
        seat, now = match.current_seat, match.turn_started + 9.25
        if seat == 1:
            step = step.then(partial(_bo, now=now))
        elif timeouts:
            step = step.then(partial(_timeout, penalty=timeouts.pop(0)))
        else:
            step = step.then(partial(_leave, now=now))
    events = [event_to_dict(event) for event in step.events]
    return record.record_of(step.match, events, 1)


def _settled(match: game.Match, now: float) -> game.Transition:
    return game.advance(match, now=now, moved=True, autoplay=UNBOUNDED)


def _leave(match: game.Match, now: float) -> game.Transition:
    return game.leave(match, 0, now=now).then(lambda m: _settled(m, now))


def _bo(match: game.Match, now: float) -> game.Transition:
    rack = Counter(match.players[1].rack)
    found = solve(match.table, rack, melded=match.players[1].melded, rules=match.rules)
    if found.found:
        moved = game.play(match, 1, found.table, now=now)
    else:
        moved = game.draw(match, 1, now=now)
    return moved.then(lambda m: _settled(m, now))


def _timeout(match: game.Match, penalty: bool) -> game.Transition:
    deadline = match.turn_deadline
    assert deadline is not None
    step = game.Transition(match, ())
    if penalty:
        draft = (*match.table, match.players[0].rack[:2])
        step = game.save_draft(match, 0, draft, now=deadline - 20)
    return step.then(lambda m: game.settle(m, now=deadline)).then(lambda m: _settled(m, deadline))


def blocks() -> dict[str, str]:
    """The document's generated blocks by name: the text form, and the JSON form (a line for
    each member, and for each turn: the first nine and the last)."""
    made = example()
    whole = record.to_json(made)
    lines = []
    for name, value in whole.items():
        if name == "turns":
            shown = [f"  {_compact(turn)}" for turn in value]
            turns = ",\n".join([*shown[:9], "  ...", shown[-1]])
            lines.append(f' "turns": [\n{turns}\n ]')
        else:
            lines.append(f" {json.dumps(name)}: {_compact(value)}")
    return {"text": record.to_text(made), "json": "{\n" + ",\n".join(lines) + "\n}\n"}


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


if __name__ == "__main__":
    for name, block in blocks().items():
        print(f"<!-- example:{name} -->\n```\n{block}```\n<!-- /example -->\n")
