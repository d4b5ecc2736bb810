"""The referee of record: a match's games as records, positions, the app's archive, and the
verification of any record (issue 34, docs/RECORD-FORMAT.md).

:class:`Records` is a service layer beside the :class:`~service.referee.Referee`, on which it
reads matches (settled, tokens checked) and their event logs. Each game's record is built
when asked for, from the log and the deal the match keeps: nothing more is stored.

Exception tree (beside the referee's and :mod:`service.record.errors`)::

    RecordNotFound (LookupError)     game-not-found   no such game in the match (or not kept)
    └── TurnNotFound                 turn-not-found   the game has no such turn (yet)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service import game, record
from service.game import Match
from service.referee.errors import MatchNotFound
from service.referee.usecases import Referee
from service.store import Page

__all__ = ["Archived", "RecordNotFound", "Records", "TurnNotFound"]


class RecordNotFound(LookupError):
    """The match has no record of that game: never dealt, or dealt before records were kept."""

    kind = "game-not-found"


class TurnNotFound(RecordNotFound):
    """The game has no turn of that number (yet)."""

    kind = "turn-not-found"


@dataclass(frozen=True)
class Archived:
    """A page of an app's archive: each finished game's record (JSON), the next cursor."""

    records: list[dict[str, Any]]
    next_cursor: str | None


@dataclass
class Records:
    """The use cases of game records over a :class:`Referee`."""

    referee: Referee
    visible: Callable[[str | None, str | None], bool] = lambda app, owner: True
    """Whether the calling app (``None``: no key) may see a match of an owner (the API's
    rule: sandbox and live apps never see each other's matches)."""

    def game_record(
        self, match_id: str, game_number: int, *, token: str | None, app: str | None
    ) -> record.Record:
        """Game ``game_number`` as the caller may see it: whole once the game is over, else the
        public part and the seat's own rack and draws; refs for the owner's ``app`` only.
        Raises MatchNotFound, BadToken, TokenForAnotherMatch, RecordNotFound."""
        match, seat, _ = self._view(match_id, token, app)
        whole = self._whole(match, game_number)
        reader = seat if seat is not None and not match.players[seat].left else None
        return record.redacted(whole, seat=reader, refs=app is not None and app == match.owner)

    def position(
        self, match_id: str, game_number: int, turn: int, *, app: str | None
    ) -> dict[str, Any]:
        """The game after turn ``turn`` (0: as dealt), every rack shown once it is over.
        Raises MatchNotFound, RecordNotFound, TurnNotFound."""
        match, _, _ = self._view(match_id, None, app)
        whole = self._whole(match, game_number)
        totals = _totals_before(match, game_number)
        try:
            return record.position_view(whole, turn, totals_before=totals)
        except IndexError:
            raise TurnNotFound(
                f"game {game_number} has turns 0 to {len(whole.turns)} so far, not {turn}"
            ) from None

    def verify(self, given: record.Record) -> record.Verdict:
        """``given`` replayed under its rules (the solver's searches off the request's
        loop, as the referee runs them). Raises RecordIncomplete, RecordFormatError."""
        verdict: record.Verdict = self.referee.run_search(lambda: record.verify(given))
        return verdict

    def archive(self, app: str, *, since: float | None, limit: int, cursor: str | None) -> Archived:
        """A page of ``app``'s finished games' records (with refs), its matches newest first,
        each match's games in order; ``since``: only games that ended then or later. Raises
        ``BadCursor``."""
        page: Page = self.referee.list_matches(
            app, ref=None, status=None, limit=limit, cursor=cursor
        )
        found = []
        for item in page.items:
            if since is not None and float(item.get("updated_at", 0)) < since:
                continue
            found += self._finished(str(item["id"]), since)
        return Archived(found, page.next_cursor)

    def _finished(self, match_id: str, since: float | None) -> list[dict[str, Any]]:
        try:
            match, _, _ = self.referee.view(match_id, None)
        except LookupError:  # expired meanwhile
            return []
        events = self._events(match)
        ended = {
            int(event["data"]["game_number"]): float(event["at"])
            for event in events
            if event["type"] == game.EventType.GAME_OVER
        }
        records = []
        for number, at in sorted(ended.items()):
            if since is not None and at < since:
                continue
            try:
                records.append(record.to_json(record.record_of(match, events, number)))
            except record.NotRecorded:
                continue
        return records

    def _view(
        self, match_id: str, token: str | None, app: str | None
    ) -> tuple[Match, int | None, float]:
        match, seat, now = self.referee.view(match_id, token)
        if not self.visible(app, match.owner):
            raise MatchNotFound(match_id)
        return match, seat, now

    def _whole(self, match: Match, game_number: int) -> record.Record:
        if not 1 <= game_number <= match.game_number:
            raise RecordNotFound(
                f"match {match.id} has games 1 to {match.game_number} so far, not {game_number}"
            )
        try:
            return record.record_of(match, self._events(match), game_number)
        except record.NotRecorded as missing:
            raise RecordNotFound(str(missing)) from None

    def _events(self, match: Match) -> list[dict[str, Any]]:
        return self.referee.events(match.id, after=0, limit=max(match.version, 1))


def _totals_before(match: Match, game_number: int) -> list[int]:
    """Each seat's match total before game ``game_number``."""
    totals = [0] * len(match.players)
    for result in match.outcomes:
        if result.game_number < game_number:
            for seat, score in enumerate(result.outcome.scores):
                totals[seat] += score
    return totals
