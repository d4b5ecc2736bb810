"""The ``web`` blueprint: the table page, the docs page and their static assets."""

from __future__ import annotations

from flask import Blueprint, Response, send_from_directory

__all__ = ["blueprint"]

blueprint = Blueprint("web", __name__, static_folder="static", static_url_path="/assets")

# Everything the pages load comes from this origin: no CDN, no inline script.
# Swagger UI sets inline styles and shows data: images, hence those two allowances.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)


@blueprint.get("/")
def table_page() -> Response:
    """The reference web client: create a match, play it, follow it live."""
    return _page("index.html")


@blueprint.get("/docs")
def docs_page() -> Response:
    """Swagger UI rendering the served ``/openapi.yaml``."""
    return _page("docs.html")


@blueprint.after_request
def _secure(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    return response


def _page(name: str) -> Response:
    response = send_from_directory(blueprint.static_folder or "static", name, max_age=0)
    response.headers["Cache-Control"] = "no-cache"
    return response
