from cases import tiles

from service.rules import Reason, StalemateScoring, score_stalemate, score_went_out


def test_going_out_the_spanish_example_a_scores_18() -> None:
    # 002: B has 5 left, C 10 and D 3: A scores 18, the others minus theirs.
    racks = [(), tiles("R5"), tiles("R4 B6"), tiles("K3")]
    outcome = score_went_out(racks, winner=0)
    assert outcome.scores == (18, -5, -10, -3)
    assert outcome.reason is Reason.WENT_OUT


def test_a_joker_left_on_a_rack_costs_30() -> None:
    assert score_went_out([(), tiles("J R2")], winner=0).scores == (32, -32)


def test_in_a_stalemate_the_lowest_total_wins_and_others_lose_the_difference() -> None:
    outcome = score_stalemate([tiles("R10"), tiles("R4"), tiles("B7 K2")])
    assert outcome.winner == 1
    assert outcome.scores == (-6, 11, -5)


def test_in_a_stalemate_others_can_lose_their_full_total_by_option() -> None:
    outcome = score_stalemate(
        [tiles("R10"), tiles("R4"), tiles("B7 K2")], scoring=StalemateScoring.FULL_TOTAL
    )
    assert outcome.scores == (-10, 19, -9)


def test_a_stalemate_tie_goes_to_fewer_tiles_then_turn_order() -> None:
    assert score_stalemate([tiles("R4 R2"), tiles("R6")]).winner == 1
    assert score_stalemate([tiles("R6"), tiles("B6"), tiles("K6")], next_seat=1).winner == 1
    assert score_stalemate([tiles("R6"), tiles("B6"), tiles("K9")], next_seat=2).winner == 0
