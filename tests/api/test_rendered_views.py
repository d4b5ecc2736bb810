"""A kept view is byte for byte the view rendered whole, at every clock."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from service import jsoncodec
from service.api.rendered import RenderedViews
from service.game import Match, private_view, public_view, save_draft
from tests.game.support import NOW, set_up, table

RACKS = ["R1 R2 R3 B7 K7", "O9 O10 O11 J"]


def match() -> Match:
    return set_up(RACKS, pool="K1 K2 K3")


class Renders:
    """A render function that counts its calls."""

    def __init__(self, view: Any) -> None:
        self.view, self.calls = view, 0

    def __call__(self, now: float) -> dict[str, Any]:
        self.calls += 1
        rendered: dict[str, Any] = self.view(now)
        return rendered


def test_a_kept_view_is_the_whole_rendering_at_each_clock() -> None:
    views, m = RenderedViews(), match()
    render = Renders(lambda now: private_view(m, 0, now=now))
    for now in (NOW, NOW + 0.5, NOW + 1234.000001, 0.0, 1e-7):
        assert views.json((m.id, m.version, ("seat", 0)), now, render) == jsoncodec.dumps(
            private_view(m, 0, now=now)
        )
    assert render.calls == 1  # rendered once, the clock written anew for each answer


def test_each_version_and_reader_is_rendered_on_its_own() -> None:
    views, m = RenderedViews(), match()
    drafted = save_draft(m, 0, table("R1 R2 R3"), now=NOW).match
    answers = {
        views.json((x.id, x.version, reader), NOW, lambda now, x=x, seat=seat: view(x, seat, now))
        for x in (m, drafted)
        for reader, seat in ((("seat", 0), 0), (("seat", 1), 1), (("public", None), None))
    }
    assert len(answers) == 6
    assert jsoncodec.dumps(public_view(drafted, now=NOW)) in answers


def view(m: Match, seat: int | None, now: float) -> dict[str, Any]:
    return public_view(m, now=now) if seat is None else private_view(m, seat, now=now)


def test_a_view_that_shows_the_clock_marker_elsewhere_is_never_kept() -> None:
    m = match()
    marked = replace(m, players=(replace(m.players[0], name="\u0000server-time\u0000"),
                                 m.players[1]))  # fmt: skip
    views = RenderedViews()
    render = Renders(lambda now: public_view(marked, now=now))
    for now in (NOW, NOW + 1):
        answer = views.json((marked.id, marked.version, ("public", None)), now, render)
        assert answer == jsoncodec.dumps(public_view(marked, now=now))
    assert render.calls == 3  # the split was refused once, then rendered whole each time


def test_the_oldest_views_go_first_once_full() -> None:
    views, m = RenderedViews(size=2), match()
    renders = [Renders(lambda now, seat=seat: private_view(m, seat, now=now)) for seat in (0, 1)]
    public = Renders(lambda now: public_view(m, now=now))
    views.json((m.id, 1, ("seat", 0)), NOW, renders[0])
    views.json((m.id, 1, ("seat", 1)), NOW, renders[1])
    views.json((m.id, 1, ("public", None)), NOW, public)  # the first goes
    views.json((m.id, 1, ("seat", 1)), NOW, renders[1])
    views.json((m.id, 1, ("seat", 0)), NOW, renders[0])
    assert (renders[0].calls, renders[1].calls, public.calls) == (2, 1, 1)


def test_a_new_version_replaces_the_readers_view_and_takes_no_more_room() -> None:
    views, m = RenderedViews(size=2), match()
    drafted = save_draft(m, 0, table("R1 R2 R3"), now=NOW).match
    public = Renders(lambda now: public_view(m, now=now))
    views.json((m.id, m.version, ("public", None)), NOW, public)
    for x in (m, drafted, drafted):  # seat 0's view at two versions: one place
        answer = views.json((x.id, x.version, ("seat", 0)), NOW, lambda now, x=x: view(x, 0, now))
        assert answer == jsoncodec.dumps(private_view(x, 0, now=NOW))
    views.json((m.id, m.version, ("public", None)), NOW, public)
    assert public.calls == 1  # still kept: the old version of seat 0's view took no place


def test_an_older_version_than_the_one_kept_is_rendered_whole_and_not_kept() -> None:
    views, m = RenderedViews(), match()
    drafted = save_draft(m, 0, table("R1 R2 R3"), now=NOW).match
    newer = Renders(lambda now: private_view(drafted, 0, now=now))
    older = Renders(lambda now: private_view(m, 0, now=now))
    views.json((m.id, drafted.version, ("seat", 0)), NOW, newer)
    for now in (NOW, NOW + 1):
        answer = views.json((m.id, m.version, ("seat", 0)), now, older)
        assert answer == jsoncodec.dumps(private_view(m, 0, now=now))
    views.json((m.id, drafted.version, ("seat", 0)), NOW, newer)
    assert (older.calls, newer.calls) == (2, 1)
