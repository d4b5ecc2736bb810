"""Routing remembered per path (service/api/routing.py): the same answers as werkzeug's router,
without the reference cycle its every call leaves for the garbage collector."""

from __future__ import annotations

import gc
import io
import json
from collections.abc import Iterator
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import Map, MapAdapter, RequestRedirect, Rule
from werkzeug.test import EnvironBuilder

from service.api import routing
from service.api.routing import RememberedRoutes


def rules() -> list[Rule]:
    return [
        Rule("/v1/matches/<match_id>", endpoint="view", methods=["GET"]),
        Rule("/v1/matches/<match_id>/draft", endpoint="draft", methods=["PUT"]),
        Rule("/v1/matches/<match_id>/events", endpoint="events", methods=["GET"]),
        Rule("/docs/", endpoint="docs", methods=["GET"]),
    ]


def answer(url_map: Map, path: str, method: str = "GET") -> tuple[object, object]:
    """What ``url_map`` answers for a request (as Flask asks: the request's own path)."""
    adapter = url_map.bind_to_environ(EnvironBuilder(path=path, method=method).get_environ())
    try:
        rule, values = adapter.match(return_rule=True)
    except (NotFound, MethodNotAllowed, RequestRedirect) as refusal:
        return type(refusal).__name__, getattr(refusal, "new_url", None)
    return rule.endpoint, dict(values)


PATHS = [
    ("/v1/matches/abc", "GET"),
    ("/v1/matches/abc", "PUT"),  # the path matches, not the method: 405
    ("/v1/matches/abc/draft", "PUT"),
    ("/v1/matches/abc/draft", "GET"),
    ("/v1/matches/x%2Fy/events", "GET"),  # decoded: x/y, which no rule takes
    ("/v1/matches/xy/events", "GET"),
    ("/v1/matches/abc/nothing", "GET"),  # 404
    ("/docs", "GET"),  # the router redirects to /docs/: here a 404
    ("/docs/", "GET"),
    ("/v1//matches/abc", "GET"),  # the router merges the slashes and redirects: here a 404
]


def unredirected(found: tuple[object, object], path: str) -> tuple[object, object]:
    """The router's answer, but a redirect (to the path with a slash added) is a 404, and so
    is any path with "//", which the router merges: a redirect's Location would be built
    from the Host header (issue 30)."""
    return ("NotFound", None) if found[0] == "RequestRedirect" or "//" in path else found


@pytest.mark.parametrize("path, method", PATHS)
def test_the_same_answer_as_the_router_the_first_time_and_every_time_after(path, method) -> None:
    plain, remembering = Map(rules()), RememberedRoutes(rules())
    expected = unredirected(answer(plain, path, method), path)
    assert answer(remembering, path, method) == expected
    assert answer(remembering, path, method) == expected  # from memory when it matched
    assert answer(remembering, path, "DELETE") == unredirected(answer(plain, path, "DELETE"), path)


def test_only_matches_are_remembered_and_each_answer_is_a_new_dictionary() -> None:
    url_map = RememberedRoutes(rules())
    for path, method in PATHS:
        answer(url_map, path, method)
    assert sorted((path, method) for _, path, method, _ in url_map.answers) == [
        ("/docs/", "GET"),
        ("/v1/matches/abc", "GET"),
        ("/v1/matches/abc/draft", "PUT"),
        ("/v1/matches/xy/events", "GET"),
    ]
    adapter = url_map.bind_to_environ(EnvironBuilder(path="/v1/matches/abc").get_environ())
    _, first = adapter.match(return_rule=True)
    first["match_id"] = "changed by a view"  # type: ignore[index]
    assert answer(url_map, "/v1/matches/abc") == ("view", {"match_id": "abc"})


def test_what_is_remembered_stays_bounded(monkeypatch) -> None:
    monkeypatch.setattr(routing, "REMEMBERED", 10)
    url_map = RememberedRoutes(rules())
    for number in range(35):
        assert answer(url_map, f"/v1/matches/m{number}") == ("view", {"match_id": f"m{number}"})
        assert len(url_map.answers) <= 10


@pytest.fixture
def pure_app() -> Iterator[object]:
    """The app, for a request that needs no Redis (the meld check)."""
    from service.app import create_app

    yield create_app({"redis_url": "redis://127.0.0.1:1/0"})


def test_a_request_answered_from_memory_leaves_no_cycle_to_collect(pure_app) -> None:
    body = json.dumps({"sets": [["R11", "J", "R13"], ["B1", "B2", "B3"]]}).encode()

    def call() -> None:
        environ = EnvironBuilder(
            path="/v1/meld-check", method="POST", data=body, content_type="application/json"
        ).get_environ()
        environ["wsgi.input"] = io.BytesIO(body)
        statuses: list[str] = []
        b"".join(pure_app(environ, lambda status, headers, exc=None: statuses.append(status)))  # type: ignore[operator]
        assert statuses == ["200 OK"], statuses

    call()  # the route is remembered now
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        for _ in range(200):
            call()
        left = gc.collect()  # what only the collector could free
    finally:
        if was:
            gc.enable()
    # werkzeug's router alone leaves 7 objects a call (a closure's cells, the function, a set)
    assert left < 200, f"{left} objects in reference cycles after 200 requests"


# -- remembered by shape: a path of another match answered from the first one's answer --------


def counted_router(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """Count the calls that reach werkzeug's router (the paths it was asked)."""
    asked: list[str | None] = []
    router = MapAdapter.match

    def counting(self: MapAdapter, *args: object, **kwargs: object) -> object:
        asked.append(self.path_info)
        return router(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(MapAdapter, "match", counting)
    return asked


def test_a_path_of_another_match_is_answered_from_memory_with_its_own_id(monkeypatch) -> None:
    url_map = RememberedRoutes(rules())
    asked = counted_router(monkeypatch)
    assert answer(url_map, "/v1/matches/abc/draft", "PUT") == ("draft", {"match_id": "abc"})
    assert answer(url_map, "/v1/matches/abc") == ("view", {"match_id": "abc"})
    assert len(asked) == 2
    for number in range(50):
        match_id = f"m-{number}"
        assert answer(url_map, f"/v1/matches/{match_id}/draft", "PUT") == (
            "draft",
            {"match_id": match_id},
        )
        assert answer(url_map, f"/v1/matches/{match_id}") == ("view", {"match_id": match_id})
    assert len(asked) == 2  # never the router again
    # a rest, method or segment never matched still goes to the router
    assert answer(url_map, "/v1/matches/m-1/events") == ("events", {"match_id": "m-1"})
    assert answer(url_map, "/v1/matches/m-1/draft", "GET") == ("MethodNotAllowed", None)
    assert answer(url_map, "/v1/matches/m-1/nothing")[0] == "NotFound"
    assert len(asked) == 5


@pytest.mark.parametrize(
    "other",
    [
        Rule("/v1/matches/stats", endpoint="stats", methods=["GET"]),  # static at the segment
        Rule("/v1/matches/<int:number>", endpoint="number", methods=["GET"]),  # a converter
        Rule("/v1/<section>/abc", endpoint="section", methods=["GET"]),  # a variable before
    ],
    ids=["static", "converter", "variable before"],
)
def test_no_shape_where_another_rule_may_match_the_segment(other: Rule, monkeypatch) -> None:
    plain = Map([*rules(), other.empty()])
    url_map = RememberedRoutes([*rules(), other.empty()])
    answer(url_map, "/v1/matches/xyz")
    asked = counted_router(monkeypatch)
    for path in ("/v1/matches/stats", "/v1/matches/42", "/v1/matches/abc", "/v1/matches/q"):
        assert answer(url_map, path) == unredirected(answer(plain, path), path)
    assert url_map.shapes == {}
    assert len(asked) >= 4  # each went to the router (and the plain map's own calls)


SEGMENTS = st.text(
    alphabet=st.sampled_from("ab-_.~%2F/é0 "), min_size=0, max_size=6
)  # with slashes, encoded slashes, dots, spaces and empty segments


@settings(max_examples=300, deadline=None)
@given(first=SEGMENTS, then=SEGMENTS, rest=st.sampled_from(["", "/draft", "/events", "/x", "/"]))
def test_by_shape_the_same_answer_as_the_router(first: str, then: str, rest: str) -> None:
    plain, remembering = Map(rules()), RememberedRoutes(rules())
    for segment in (first, then):
        path = f"/v1/matches/{segment}{rest}"
        for method in ("PUT", "GET"):
            # "%2F" is a slash once decoded: "//" there is a 404 too
            expected = unredirected(answer(plain, path, method), unquote(path))
            assert answer(remembering, path, method) == expected, (path, method)


def test_the_shapes_stay_bounded(monkeypatch) -> None:
    monkeypatch.setattr(routing, "REMEMBERED", 10)
    url_map = RememberedRoutes(
        [Rule("/v1/matches/<match_id>/seats/<int:seat>/time", endpoint="time", methods=["POST"])]
    )
    for number in range(35):
        path = f"/v1/matches/m/seats/{number}/time"
        assert answer(url_map, path, "POST") == ("time", {"match_id": "m", "seat": number})
        assert len(url_map.shapes) <= 10
