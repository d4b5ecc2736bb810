"""What is worked out once per object (service/game/memo.py)."""

from __future__ import annotations

from service.game.memo import per_object


def test_a_value_is_made_once_per_object_not_per_equal_object_and_all_let_go_at_the_size() -> None:
    made: list[tuple[int, ...]] = []

    def make(key: tuple[int, ...]) -> list[int]:
        made.append(key)
        return list(key)

    rows = per_object(make, 3)
    first, equal = tuple(range(10)), tuple(range(10))
    assert first == equal and first is not equal
    assert rows(first) is rows(first)  # made once, handed out as it was made
    assert rows(equal) == [*range(10)] and len(made) == 2  # an equal object: made again
    third = tuple(range(5))
    rows(third)
    assert len(made) == 3
    rows(tuple(range(7)))  # the size reached: everything held is let go first
    rows(first)
    assert len(made) == 5 and made[-1] is first
