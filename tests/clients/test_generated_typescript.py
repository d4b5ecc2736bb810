"""TypeScript types generated from openapi.yaml by openapi-typescript (npm) with no error, and
a client written against them type-checks: events narrowed by their `type`, typed problems.

The two packages are pinned in tests/tools/package.json with the suite's other npm tools
(tests/support/tools.py installs them); the test is skipped (saying so) only when npm itself
is missing, and fails then under CI=true.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.tools import npm_bin

ROOT = Path(__file__).resolve().parents[2]

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
    """The folder of the pinned npm tools' executables (tests/support/tools.py)."""
    return npm_bin()


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
