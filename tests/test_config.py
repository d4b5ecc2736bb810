"""Settings come from the environment, each documented in docs/OPERATIONS.md's table."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from service.config import Settings

README = Path(__file__).resolve().parents[1] / "docs" / "OPERATIONS.md"


def test_every_setting_is_read_from_a_variable_the_readme_documents() -> None:
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", README.read_text()))
    variables = Settings._ENV
    assert {f.name for f in fields(Settings)} == set(variables)
    assert set(variables.values()) <= documented, set(variables.values()) - documented


def test_values_are_converted_to_each_setting_s_type() -> None:
    settings = Settings.from_env(
        {
            "STREAM_KEEPALIVE_SECONDS": "2.5",
            "STREAM_MAX_SECONDS": "60",
            "REDIS_MAX_CONNECTIONS": "7",
            "REFEREE_TEST_MODE": "yes",
            "CORS_ORIGINS": "https://a.example, https://b.example,",
        }
    )
    assert settings.stream_keepalive_seconds == 2.5
    assert settings.stream_max_seconds == 60.0
    assert settings.redis_max_connections == 7
    assert settings.test_mode is True
    assert settings.cors_origins == ("https://a.example", "https://b.example")
    assert Settings.from_env({}) == Settings()


def test_a_value_that_does_not_fit_names_its_setting() -> None:
    with pytest.raises(ValueError, match=r"stream_max_seconds.*'ten'"):
        Settings.from_env({"STREAM_MAX_SECONDS": "ten"})
