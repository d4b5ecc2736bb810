"""The worker model: how the service runs under gunicorn.

- :mod:`~service.workers.gunicorn`: gunicorn's settings and server hooks (what
  ``deploy/gunicorn.conf.py`` imports);
- :mod:`~service.workers.threads`: waits on the worker's event loop, CPU work on threads, and
  the shutdown signal the long waits watch;
- :mod:`~service.workers.rows`: memory the master maps before it forks, a row per worker, the
  base of :mod:`~service.workers.slots` (open streams per client address, across the workers)
  and :mod:`~service.workers.shared_states` (the states the workers last committed).

This package imports nothing: the master loads ``gunicorn``, ``rows``, ``slots`` and
``shared_states`` (the standard library only) before gevent patches anything.
"""
