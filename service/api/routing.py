"""Requests routed once per path: what werkzeug's router answered is remembered.

werkzeug's router (``StateMachineMatcher.match``, 3.1.9 and upstream) defines a recursive
closure on every call, and that closure is a reference cycle: five cells, a function and a set
that only the garbage collector frees. At a few thousand requests a second, that was almost
all of what filled a worker's young generation (30,000 of its 50,000 objects were cells), so a
young collection came every few seconds and walked tens of thousands of objects while every
request of the worker waited: 13-68 ms each under the drafts load, the requests' p99.

:class:`RememberedRoutes` is the app's URL map (Flask's ``url_map_class``): its adapters
answer a path the router has matched before (same method, same domain part) from what it
answered then, a new dictionary of the same values each time, without calling the router. A
path seen for the first time, one that matched nothing, or one that redirects goes to the
router as before. A match's paths repeat while it is played (its players view, draft, play and
draw on the same few), so under load nearly every request is answered from memory; at most
:data:`REMEMBERED` answers are kept, all forgotten at once when that is reached (paths carry
ids a client chooses, so the memory must not grow with them). A remembered answer skips the
rule's converters too, which is right for the app's (strings, and ``int``), whose values depend
on the path alone; a converter that looked anything else up would need the router every time.

The answers are also remembered by the path's *shape*: a path whose rule takes a whole
segment right after a static start (``/v1/matches/<match_id>/draft``: the start
``/v1/matches/``), with the default converter (any non-empty text without a slash), is
remembered as that start, any segment and the rest of the path, so a path of another match
with the same rest is answered from memory with its own segment as the value. With only the
paths themselves remembered, a worker serving 4,096 live matches (a view and a draft path
each, and more as the matches are played) filled the memory of 8,192 over and over, so most
requests went to the router, and its cycles made the young collections that stalled every
request of the worker again (docs/PERFORMANCE.md, "Eighteenth session"). A start is only
used this way when every rule of the map that could match a path beginning with it takes
that segment with the default converter: no static rule and no other converter there (such
as ``/v1/matches/stats``, or an ``int`` converter), and no rule with a variable before it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from werkzeug.exceptions import NotFound
from werkzeug.routing import Map, MapAdapter, RequestRedirect, Rule, UnicodeConverter

from service.api.context import Serving

__all__ = ["REMEMBERED", "RememberedRoutes", "RoutedOnce"]

REMEMBERED = 8192
"""The most answers a worker keeps (each a rule and a path's values: a few hundred bytes)."""

_Key = tuple[str, str, str, bool]
_Shape = tuple[
    str, str, str, str, bool
]  # domain, static start, rest of the path, method, websocket


class RememberedRoutes(Map):
    """A ``Map`` whose request adapters remember the router's answers (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # A path with "//" names nothing: no 308 to the path merged (see _Remembering.match)
        kwargs.setdefault("merge_slashes", False)
        super().__init__(*args, **kwargs)
        self.answers: dict[_Key, tuple[Rule, dict[str, Any]]] = {}
        # by shape: the rule, the values, the name the segment is the value of
        self.shapes: dict[_Shape, tuple[Rule, dict[str, Any], str]] = {}
        self.starts: tuple[str, ...] = ()  # the static starts shapes are remembered under
        self._start_safe: dict[str, bool] = {}
        self._forgetting = threading.Lock()

    def bind_to_environ(
        self,
        environ: Any,
        server_name: str | None = None,
        subdomain: str | None = None,
    ) -> MapAdapter:
        bound = super().bind_to_environ(environ, server_name=server_name, subdomain=subdomain)
        return _Remembering(
            self,
            bound.server_name,
            bound.script_name,
            bound.subdomain,
            bound.url_scheme,
            bound.path_info,
            bound.default_method,
            bound.query_args,
        )

    def remember(self, key: _Key, rule: Rule, values: Mapping[str, Any]) -> None:
        """Keep the router's answer for ``key``, and by its shape when it has one; forget
        them all first when full."""
        if len(self.answers) >= REMEMBERED:
            with self._forgetting:
                self.answers.clear()
        self.answers[key] = (rule, dict(values))
        domain, path, method, websocket = key
        shaped = self._shape_of(path, rule, values)
        if shaped is None:
            return
        start, rest, name = shaped
        if len(self.shapes) >= REMEMBERED:
            with self._forgetting:
                self.shapes.clear()
        self.shapes[(domain, start, rest, method, websocket)] = (rule, dict(values), name)
        if start not in self.starts:
            self.starts += (start,)

    def recall(
        self, domain: str, path: str, method: str, websocket: bool
    ) -> tuple[Rule, dict[str, Any]] | None:
        """The router's answer for a path of a shape it answered before (see the module),
        with the path's own segment as the value; ``None`` when there is none."""
        for start in self.starts:
            if path.startswith(start):
                segment, slash, rest = path[len(start) :].partition("/")
                known = self.shapes.get((domain, start, slash + rest, method, websocket))
                if known is None or not segment:
                    continue
                rule, values, name = known
                values = dict(values)
                values[name] = segment
                return rule, values
        return None

    def _shape_of(
        self, path: str, rule: Rule, values: Mapping[str, Any]
    ) -> tuple[str, str, str] | None:
        """The static start, the rest of the path and the variable's name, when ``path``
        matched ``rule`` by a whole segment after a start that only such rules begin with."""
        text = rule.rule
        at = text.find("<")
        if at <= 0 or text[at - 1] != "/":
            return None
        name = text[at + 1 : text.find(">", at)]
        start = text[:at]
        if not name.isidentifier() or not path.startswith(start):
            return None
        segment, slash, rest = path[len(start) :].partition("/")
        if not segment or values.get(name) != segment or not self._safe(start):
            return None
        return start, slash + rest, name

    def _safe(self, start: str) -> bool:
        """Whether every rule that could match a path beginning with ``start`` takes the
        segment after it with the default converter (see the module)."""
        known = self._start_safe.get(start)
        if known is not None:
            return known
        safe = self.converters["default"] is UnicodeConverter and not self.host_matching
        for other in self.iter_rules():
            text = other.rule
            at = text.find("<")
            static = text if at < 0 else text[:at]
            if at >= 0 and len(static) < len(start) and start.startswith(static):
                safe = False  # a variable before the start: it may match such paths too
            elif static.startswith(start) and (
                at != len(start) or not text[at + 1 : text.find(">", at)].isidentifier()
            ):
                safe = False  # a static rule or another converter at the segment
        self._start_safe[start] = safe
        return safe


class _Remembering(MapAdapter):
    """An adapter of :class:`RememberedRoutes`: ``match()`` of the request's own path and
    method (what Flask asks) is answered from memory when it can be."""

    map: RememberedRoutes

    def match(
        self,
        path_info: str | None = None,
        method: str | None = None,
        return_rule: bool = False,
        query_args: Mapping[str, Any] | str | None = None,
        websocket: bool | None = None,
    ) -> tuple[Any, Mapping[str, Any]]:
        try:
            return self._match(path_info, method, return_rule, query_args, websocket)
        except RequestRedirect:
            # werkzeug redirects "//" or a missing trailing slash with a 308 whose Location it
            # builds from the Host header, as an HTML page, before any error handler: a path
            # that is not a route's own is answered like any unknown one, a 404 problem
            raise NotFound() from None

    def _match(
        self,
        path_info: str | None,
        method: str | None,
        return_rule: bool,
        query_args: Mapping[str, Any] | str | None,
        websocket: bool | None,
    ) -> tuple[Any, Mapping[str, Any]]:
        asked = (path_info, method, query_args, websocket)
        if asked != (None, None, None, None):  # not the request's own: the router, as ever
            router: Any = super().match
            answer: tuple[Any, Mapping[str, Any]] = router(*asked[:2], return_rule, *asked[2:])
            return answer
        # what the router's answer depends on: the domain part it matches (as werkzeug
        # works it out), the path, the method, and whether it is a websocket
        domain = self.server_name
        if not self.map.host_matching and self.subdomain is not None:
            domain = self.subdomain
        key = (domain, self.path_info, self.default_method, self.websocket)
        known = self.map.answers.get(key)
        values: Mapping[str, Any]
        if known is not None:
            rule, values = known[0], dict(known[1])
        else:
            recalled = self.map.recall(*key)
            if recalled is None:
                rule, values = super().match(return_rule=True)
                self.map.remember(key, rule, values)
            else:
                rule, values = recalled
        return (rule if return_rule else rule.endpoint), values


class RoutedOnce(Serving):
    """The app's Flask: its URL map is a :class:`RememberedRoutes` (and it keeps the app and
    the request at hand while it serves it, ``service.api.context.Serving``)."""

    url_map_class = RememberedRoutes
