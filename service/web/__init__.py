"""The reference web client (``/``) and the interactive API docs (``/docs``).

Static files only, served from ``service/web/static`` under ``/assets/``: plain HTML, CSS
and ES modules, no build step and nothing fetched from elsewhere. The client plays through
the public API alone; see ``docs/CLIENTS.md``.
"""

from service.web.pages import blueprint

__all__ = ["blueprint"]
