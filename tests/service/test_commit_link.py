"""The commits' own connections to a single Redis (service/store/commitlink.py), on a real
redis-server: each run gets its own answer, a connection is never used again once Redis
dropped it or a round trip on it was cut off, and a kept connection Redis closed fails as such
(``KeptConnectionClosed``: its runs may go again) without being asked before each use."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from hypothesis import given
from hypothesis import strategies as st
from redis.connection import Connection
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from service.store.commitlink import CommitLink, KeptConnectionClosed, packed_commands
from service.store.topology import script_digest
from tests.support.redis_process import RedisProcess

ECHO = """
if ARGV[1] == 'refuse' then return redis.error_reply('refused as asked') end
return {KEYS[1], ARGV[1]}
"""


def link_to(url: str, *, socket_timeout: float = 5.0) -> CommitLink:
    pool = redis.BlockingConnectionPool.from_url(
        url, decode_responses=True, socket_timeout=socket_timeout, max_connections=4
    )
    return CommitLink(pool)


def echoed(link: CommitLink, *values: str) -> list[object]:
    runs = [([f"k{at}"], [value]) for at, value in enumerate(values)]
    answers, acknowledged = link.round_trip(ECHO, script_digest(ECHO), runs, 0, 100)
    assert acknowledged == -1
    return answers


@pytest.fixture
def loaded(redis_client: redis.Redis) -> str:
    return str(redis_client.script_load(ECHO))


def test_each_run_gets_its_own_answer_and_a_refused_run_its_error(redis_url, loaded) -> None:
    answers = echoed(link_to(redis_url), "a", "refuse", "c")
    assert answers[0] == ["k0", "a"] and answers[2] == ["k2", "c"]
    assert isinstance(answers[1], ResponseError) and "refused as asked" in str(answers[1])


def test_a_run_redis_does_not_know_by_its_digest_is_refused_unrun(redis_url, redis_client) -> None:
    redis_client.script_flush()  # as after a restart
    answers = echoed(link_to(redis_url), "a")
    assert isinstance(answers[0], redis.exceptions.NoScriptError)
    runs = [(["k"], ["b"])]
    again, _ = link_to(redis_url).round_trip(ECHO, script_digest(ECHO), runs, 0, 100, whole=True)
    assert again == [["k", "b"]]


def test_a_connection_redis_closed_while_it_was_kept_fails_as_such_and_is_not_used_again(
    redis_url, redis_client, loaded
) -> None:
    link = link_to(redis_url)
    assert echoed(link, "before") == [["k0", "before"]]
    killed = redis_client.client_kill_filter(_type="normal", skipme=True)
    assert killed >= 1  # the kept connection among them
    with pytest.raises(KeptConnectionClosed):  # lost before any answer: its runs may go again
        echoed(link, "after")
    assert echoed(link, "again") == [["k0", "again"]]  # on a new connection, no error


def test_a_kept_connection_is_not_asked_whether_it_can_be_read(
    redis_url, loaded, monkeypatch
) -> None:
    """Asking (redis-py's ``can_read``) cost 30,000 instructions a commit; a connection the
    link keeps is only ever closed meanwhile, which its round trip tells (above)."""
    link = link_to(redis_url)
    assert echoed(link, "first") == [["k0", "first"]]  # taken from the pool, which asks
    asked: list[object] = []
    polled = Connection.can_read

    def counted(self: Connection, timeout: float = 0) -> bool:
        asked.append(self)
        return polled(self, timeout)

    monkeypatch.setattr(Connection, "can_read", counted)
    for value in ("two", "three", "four"):
        assert echoed(link, value) == [["k0", value]]
    assert asked == []


def test_when_a_kept_connection_was_closed_the_others_kept_as_long_are_let_go(
    redis_url, redis_client, loaded
) -> None:
    link = link_to(redis_url)
    first = link._take()[0]
    second = link._take()[0]  # two batches on their way at once: two connections kept
    link._kept += [first, second]
    assert echoed(link, "on the second") == [["k0", "on the second"]]
    redis_client.client_kill_filter(_type="normal", skipme=True)  # a restart closes them all
    with pytest.raises(KeptConnectionClosed):
        echoed(link, "lost")
    assert echoed(link, "fresh") == [["k0", "fresh"]]  # not the other closed one


def test_a_round_trip_cut_off_leaves_no_late_answer_for_the_next(tmp_path) -> None:
    with RedisProcess(data_dir=tmp_path / "redis") as server:
        with server.client() as client:
            client.script_load(ECHO)
        link = link_to(server.url, socket_timeout=0.5)
        assert echoed(link, "first") == [["k0", "first"]]
        server.pause()  # SIGSTOP: the next round trip is sent and times out unanswered
        try:
            with pytest.raises(RedisTimeoutError):
                echoed(link, "late")
        finally:
            server.resume()  # Redis now answers the late run, on a connection nobody reads
        assert echoed(link, "next") == [["k0", "next"]]


@pytest.fixture
def pool_of_one(redis_url: str) -> Iterator[redis.BlockingConnectionPool]:
    pool = redis.BlockingConnectionPool.from_url(
        redis_url, decode_responses=True, max_connections=1, timeout=1
    )
    yield pool
    pool.disconnect()


def test_a_kept_connection_is_taken_again_rather_than_a_new_one(pool_of_one, loaded) -> None:
    link = CommitLink(pool_of_one)
    for value in ("one", "two", "three"):  # a pool of one would refuse a second connection
        answers, _ = link.round_trip(ECHO, loaded, [(["k"], [value])], 0, 100)
        assert answers == [["k", value]]


arguments = st.lists(
    st.text() | st.binary() | st.integers(-(2**63), 2**63 - 1), min_size=0, max_size=8
)


@given(st.lists(arguments, min_size=1, max_size=4))
def test_commands_are_packed_as_redis_py_packs_them(commands) -> None:
    commands = [("EVALSHA", "f" * 40, *arguments) for arguments in commands]
    expected = b"".join(redis.connection.Connection().pack_commands(commands))
    assert packed_commands(commands) == [expected]


def test_a_text_that_is_not_unicode_is_refused_as_redis_py_refuses_it() -> None:
    command = ("EVALSHA", "f" * 40, 1, "k", "lone \ud800")
    with pytest.raises(UnicodeEncodeError):
        redis.connection.Connection().pack_commands([command])
    with pytest.raises(UnicodeEncodeError):
        packed_commands([command])
