"""The service layer: one method per use case, each reading "load, act, commit".

A :class:`Referee` loads a match from the :class:`~service.store.MatchStore`, settles what time
(and bots) owe it, applies one transition from :mod:`service.game`, and commits the new state
with its events in one version-checked step. A commit that loses a race is computed again on
the fresh state (a bounded number of times, :func:`~service.referee.commits.retrying`), so no
update is lost and a move that has become illegal meanwhile is refused instead of applied twice.

A move is first computed on the worker's cached copy of the match: when that copy is still
current the commit is the only round trip to Redis; when it is not, the commit's answer
carries the fresh state and the move is computed again. A refusal is only given on a state
read fresh from Redis. Each move takes its :class:`Guards` (If-Match, Idempotency-Key).

- :mod:`~service.referee.usecases`: the :class:`Referee`;
- :mod:`~service.referee.errors`: what it refuses (the exception tree);
- :mod:`~service.referee.answers`: the guards it takes and the answers it gives;
- :mod:`~service.referee.commits`: the change of a use case and the one retry loop;
- :mod:`~service.referee.tokens`: seat tokens; :mod:`~service.referee.searches`: where the
  solver's searches run.

Beside its own refusals, the use cases let the store's through, exported here so that callers
catch them from the service layer: :class:`StoreUnavailable` (with :class:`OutcomeUnknown`, a
commit whose outcome cannot be told) and :class:`BadCursor` (a listing's cursor).

The owner's use cases (an app's key): :meth:`Referee.list_matches`, :meth:`~Referee.reissue_token`,
:meth:`~Referee.leave`, :meth:`~Referee.cancel`, :meth:`~Referee.rematch`.
"""

from service.referee import errors
from service.referee.answers import NO_GUARDS, Created, Guards, Idempotency, Moved, Rematched
from service.referee.commits import MAX_ATTEMPTS
from service.referee.errors import *  # the refusals: errors.__all__, pinned there
from service.referee.records import Archived, RecordNotFound, Records, TurnNotFound
from service.referee.searches import Runner, SteppingAside, run_inline
from service.referee.usecases import LAST_EVENTS, Action, Referee
from service.store import BadCursor, OutcomeUnknown, StoreUnavailable

__all__ = [
    *errors.__all__,
    "Archived",
    "RecordNotFound",
    "Records",
    "TurnNotFound",
    "LAST_EVENTS",
    "MAX_ATTEMPTS",
    "NO_GUARDS",
    "Action",
    "BadCursor",
    "Created",
    "Guards",
    "Idempotency",
    "Moved",
    "OutcomeUnknown",
    "Referee",
    "Rematched",
    "Runner",
    "SteppingAside",
    "StoreUnavailable",
    "run_inline",
]
