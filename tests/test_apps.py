"""App keys: read from REFEREE_API_KEYS and its file, identified in constant time, never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.api.apps import AppKeys, BadKeyConfig
from service.config import Settings

KEY_A = "a" * 23 + "-first-app-key"
KEY_B = "B" * 30


def keys(api_keys: str = "", api_keys_file: str = "") -> AppKeys:
    return AppKeys.from_settings(Settings(api_keys=api_keys, api_keys_file=api_keys_file))


def test_apps_are_named_by_name_key_pairs_and_found_by_their_key() -> None:
    apps = keys(f"mobile={KEY_A}, web-backend={KEY_B}")
    assert apps.names == ("mobile", "web-backend")
    assert apps.identify(KEY_A) == "mobile"
    assert apps.identify(KEY_B) == "web-backend"
    assert apps.identify(KEY_A[:-1]) is None
    assert apps.identify("") is None
    assert keys().names == ()


def test_a_mounted_file_adds_apps_one_a_line_with_comments_and_blank_lines(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "keys"
    secret.write_text(f"# the apps\n\nboard={KEY_B}\n", encoding="utf-8")
    apps = keys(f"mobile={KEY_A}", str(secret))
    assert apps.names == ("mobile", "board")
    assert apps.identify(KEY_B) == "board"


@pytest.mark.parametrize(
    "config",
    [
        "mobile=short-key",
        f"={KEY_A}",
        KEY_A,
        f"mo bile={KEY_A}",
        "mobile=" + "k" * 20 + " with spaces",
        f"mobile={KEY_A},mobile={KEY_B}",
        f"mobile={KEY_A},other={KEY_A}",
    ],
)
def test_a_malformed_entry_stops_the_start_without_showing_any_key(config: str) -> None:
    with pytest.raises(BadKeyConfig) as raised:
        keys(config)
    for secret in (KEY_A, KEY_B, "short-key"):
        assert secret not in str(raised.value)


def test_a_missing_keys_file_stops_the_start(tmp_path: Path) -> None:
    with pytest.raises(BadKeyConfig, match="REFEREE_API_KEYS_FILE"):
        keys(api_keys_file=str(tmp_path / "absent"))


def test_keys_never_appear_in_a_repr() -> None:
    settings = Settings(api_keys=f"mobile={KEY_A}")
    assert KEY_A not in repr(settings)
    assert KEY_A not in repr(AppKeys.from_settings(settings))
