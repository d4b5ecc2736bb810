"""Problems in the client's language: ``Accept-Language`` picks English, Spanish or Swedish for
the title, the detail and each violation's message; ``Content-Language`` says which; each
violation keeps its stable ``code`` and its ``params`` in every language."""

from __future__ import annotations

import pytest

from tests.api.matchclient import setup


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True}


def refused(client, language: str | None):
    _, (ann, _bo) = setup(client, ["R10 B10 K10 O3 O4", "K1 K2 K3"], pool="B7 R2")
    headers = {"Accept-Language": language} if language else {}
    return ann.play("R10 B10 O3", **headers)


def test_a_refused_play_reads_naturally_in_spanish(client) -> None:
    response = refused(client, "es-ES,es;q=0.9,en;q=0.5")
    assert response.status_code == 422
    assert response.headers["Content-Language"] == "es"
    assert "Accept-Language" in response.headers["Vary"]
    problem = response.get_json()
    assert problem["title"] == "La jugada incumple las reglas"
    assert [v["message"] for v in problem["violations"]] == [
        "combinación 1 (R10 B10 O3): una combinación debe ser una escalera (un color, números "
        "consecutivos) o un grupo (un número, colores distintos)",
        "tu bajada inicial vale 0 puntos (las combinaciones no válidas no cuentan); debe valer "
        "al menos 30",
    ]
    assert problem["detail"].startswith("la jugada incumple 2 reglas: combinación 1 (R10 B10 O3)")


def test_a_refused_play_reads_naturally_in_swedish(client) -> None:
    problem = refused(client, "sv").get_json()
    assert problem["title"] == "Draget bryter mot reglerna"
    assert problem["violations"][1]["message"] == (
        "ditt första utlägg är värt 0 poäng (ogiltiga kombinationer räknas inte); det måste "
        "vara värt minst 30"
    )
    assert problem["detail"].startswith("draget bryter mot 2 regler: kombination 1")


def test_codes_and_params_are_the_same_in_every_language(client) -> None:
    answers = {lang: refused(client, lang).get_json() for lang in ("en", "es", "sv")}
    shapes = {
        lang: [(v["code"], v["params"], v["set_index"], v["tiles"]) for v in body["violations"]]
        for lang, body in answers.items()
    }
    assert shapes["en"] == shapes["es"] == shapes["sv"]
    assert shapes["en"] == [
        (
            "not_a_run_or_group",
            {"set_index": 0, "tiles": ["R10", "B10", "O3"]},
            0,
            ["R10", "B10", "O3"],
        ),
        (
            "initial_meld_below_threshold",
            {"points": 0, "threshold": 30, "invalid_sets": True},
            None,
            [],
        ),
    ]


@pytest.mark.parametrize(
    ("header", "language"), [(None, "en"), ("fr", "en"), ("de, sv;q=0.2", "sv")]
)
def test_english_is_the_default_and_content_language_says_which(client, header, language) -> None:
    response = refused(client, header)
    assert response.headers["Content-Language"] == language


def test_other_problems_are_translated_too(client) -> None:
    _, (ann, bo) = setup(client, ["R10 B10 K10", "K1 K2 K3"], pool="B7 R2")
    not_yours = bo.draw(**{"Accept-Language": "es"}).get_json()
    assert (not_yours["title"], not_yours["detail"]) == (
        "No permitido ahora",
        "es el turno del asiento 0, no del asiento 1",
    )
    unknown = client.get("/v1/matches/nope", headers={"Accept-Language": "sv"})
    assert unknown.headers["Content-Language"] == "sv"
    assert unknown.get_json()["title"] == "Partiet finns inte"
    assert unknown.get_json()["detail"].startswith("det finns inget parti nope")
    stale = ann.draw(**{"If-Match": '"1"', "Accept-Language": "es"}).get_json()
    assert stale["detail"].startswith(
        "If-Match indica una versión antigua; la partida está en la versión 2"
    )


def test_the_meld_checker_gives_its_reasons_in_the_language_asked_for(client) -> None:
    sets = {"sets": [["R12", "R13", "J"], ["R11", "J", "R13"]]}
    response = client.post("/v1/meld-check", json=sets, headers={"Accept-Language": "sv"})
    assert response.headers["Content-Language"] == "sv"
    invalid, valid = response.get_json()["sets"]
    assert invalid["reason"] == "en joker kan inte stå för 14: inget kommer efter 13"
    assert (invalid["code"], valid["reason"]) == ("joker_out_of_range", None)
