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
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from flask import Flask
from werkzeug.exceptions import NotFound
from werkzeug.routing import Map, MapAdapter, RequestRedirect, Rule

__all__ = ["REMEMBERED", "RememberedRoutes", "RoutedOnce"]

REMEMBERED = 8192
"""The most answers a worker keeps (each a rule and a path's values: a few hundred bytes)."""

_Key = tuple[str, str, str, bool]


class RememberedRoutes(Map):
    """A ``Map`` whose request adapters remember the router's answers (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # A path with "//" names nothing: no 308 to the path merged (see _Remembering.match)
        kwargs.setdefault("merge_slashes", False)
        super().__init__(*args, **kwargs)
        self.answers: dict[_Key, tuple[Rule, dict[str, Any]]] = {}
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
        """Keep the router's answer for ``key``; forget them all first when full."""
        if len(self.answers) >= REMEMBERED:
            with self._forgetting:
                self.answers.clear()
        self.answers[key] = (rule, dict(values))


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
        if known is None:
            rule, values = super().match(return_rule=True)
            self.map.remember(key, rule, values)
        else:
            rule, values = known[0], dict(known[1])
        return (rule if return_rule else rule.endpoint), values


class RoutedOnce(Flask):
    """The app's Flask: its URL map is a :class:`RememberedRoutes`."""

    url_map_class = RememberedRoutes
