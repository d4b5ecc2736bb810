"""TypeScript types generated from openapi.yaml by openapi-typescript (npm) with no error, and
a client written against them type-checks: events narrowed by their `type`, typed problems.

npm installs the two pinned packages into a cache folder the first time; the test is skipped
(saying so) only when npm itself is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("openapi-typescript@7.13.0", "typescript@5.9.3")
CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "rummikub-referee"
    / "-".join(p.replace("@", "-") for p in PACKAGES)
)

CLIENT = """
import type { components } from "./referee";

type Event = components["schemas"]["Event"];
type Problem = components["schemas"]["Problem"];

export function describe(event: Event): string {
  switch (event.type) {
    case "played":
      return `seat ${event.seat} added ${event.data.added.join(" ")}; next ${event.data.next_seat}`;
    case "drew":
      return `seat ${event.seat} drew ${event.data.count}`;
    case "turn_timed_out":
      return `seat ${event.seat} owes ${event.data.penalty}`;
    case "game_over":
      return `game ${event.data.game_number}: ${event.data.scores.join(",")}`;
    default:
      return event.type;
  }
}

export function reasons(problem: Problem): string[] {
  return (problem.violations ?? []).map((v) => `${v.code}: ${v.message}`);
}

const rules: components["schemas"]["RuleOptions"] = { turn_seconds: 0 };
export const created: components["schemas"]["CreateMatch"] = {
  players: [{ name: "Ann" }, { name: "Bot", bot: true }],
  rules,
};
"""


def tools() -> Path:
    """The folder of the npm packages' executables, installed into the cache when missing."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the TypeScript generator cannot be run")
    bin_dir = CACHE / "node_modules" / ".bin"
    if not (bin_dir / "openapi-typescript").exists() or not (bin_dir / "tsc").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", *PACKAGES],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return bin_dir


def test_openapi_typescript_generates_types_a_client_compiles_against(tmp_path: Path) -> None:
    bin_dir = tools()
    generated = subprocess.run(
        [str(bin_dir / "openapi-typescript"), str(ROOT / "openapi.yaml"), "-o", "referee.d.ts"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = generated.stdout + generated.stderr
    assert generated.returncode == 0, output
    assert "error" not in output.lower() and "warn" not in output.lower(), output
    types = (tmp_path / "referee.d.ts").read_text()
    assert 'type: "played";' in types

    (tmp_path / "client.ts").write_text(CLIENT)
    compiled = subprocess.run(
        [str(bin_dir / "tsc"), "--strict", "--noEmit", "--target", "es2020", "client.ts"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr


def test_a_client_that_reads_a_field_an_event_does_not_have_does_not_compile(
    tmp_path: Path,
) -> None:
    bin_dir = tools()
    subprocess.run(
        [str(bin_dir / "openapi-typescript"), str(ROOT / "openapi.yaml"), "-o", "referee.d.ts"],
        cwd=tmp_path,
        capture_output=True,
        check=True,
        timeout=300,
    )
    (tmp_path / "client.ts").write_text(
        CLIENT.replace("event.data.count", "event.data.added.length")
    )
    compiled = subprocess.run(
        [str(bin_dir / "tsc"), "--strict", "--noEmit", "--target", "es2020", "client.ts"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert compiled.returncode != 0
    assert "added" in compiled.stdout
