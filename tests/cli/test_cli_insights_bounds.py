"""``pi-memory insights`` (and pi's ``/memory-insights``, the same lines) listed every line of a hand-made
STANDING.md (a fresh tester's 5,000 rules: 5,000 lines, each raw, a credential included) and every block's whole
value in ``--json``. Now it lists the first 20 rules (``pin list``'s bound: the agent is given no more) shown as
``pin list`` shows them, says how many more the file holds and where, and shows blocks as ``blocks show`` does
(redacted, a block far past its limit cut with a note)."""

from __future__ import annotations

import json

import pytest

from cli_homes import isolated_cli  # tests/: on sys.path by the conftest

PASSWORD = "Hunter2!x9"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def cli(tmp_path, monkeypatch):
    (tmp_path / "mem").mkdir()
    return isolated_cli(tmp_path, monkeypatch)


def standing(tmp_path, rules: list[str]):
    path = tmp_path / "mem" / "STANDING.md"
    path.write_text("".join(f"- {r}\n" for r in rules), encoding="utf-8")
    return path


def section(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Standing instructions"))
    return lines[start:lines.index("", start)]


@pytest.mark.parametrize(("count", "more"), [(21, 1), (25, 5), (5000, 4980)])
def test_only_the_first_20_rules_are_listed_with_how_many_more_and_where(tmp_path, cli, count, more):
    path = standing(tmp_path, [f"Rule number {i}" for i in range(1, count + 1)])
    lines = section(cli("insights").stdout)
    assert lines[0] == f"Standing instructions ({count:,}/20)"
    assert lines[1:21] == [f"  {i}. Rule number {i}" for i in range(1, 21)]
    assert lines[21:] == [f"  … and {more:,} more rule(s) in {path}, not listed: the agent is given at most 20 "
                          "rules, so none of these reach it. Remove them from the file."]
    data = json.loads(cli("insights", "--json").stdout)
    assert data["standing"] == [f"Rule number {i}" for i in range(1, 21)]
    info = data["standingInstructions"]
    assert {k: info[k] for k in ("count", "more", "file", "given", "withheld", "redacted", "duplicates")} == {
        "count": count, "more": more, "file": str(path), "given": 20, "withheld": [], "redacted": [], "duplicates": []}
    assert info["reach"] == [{"rule": i, "why": None, "threats": [], "credentials": [], "duplicateOf": None}
                             for i in range(1, 21)]


@pytest.mark.parametrize("count", [0, 1, 20])
def test_up_to_20_rules_are_all_listed_with_no_more_line(tmp_path, cli, count):
    path = standing(tmp_path, [f"Rule number {i}" for i in range(1, count + 1)])
    lines = section(cli("insights").stdout)
    assert lines == [f"Standing instructions ({count}/20)",
                     *([f"  {i}. Rule number {i}" for i in range(1, count + 1)] or ["  (none)"])]
    info = json.loads(cli("insights", "--json").stdout)["standingInstructions"]
    assert {k: info[k] for k in ("count", "more", "file", "given")} == {
        "count": count, "more": 0, "file": str(path), "given": count}
    assert [row["why"] for row in info["reach"]] == [None] * count


def test_rules_and_blocks_are_shown_redacted(tmp_path, cli):
    standing(tmp_path, [f"Log in with password: {PASSWORD}", "Always run the tests"])
    (tmp_path / "mem" / "blocks").mkdir()
    (tmp_path / "mem" / "blocks" / "ops.md").write_text(
        f"---\ndescription: Ops\nlimit: 100\n---\n\nToken {GITHUB} for CI.\n" + "x" * 30_000 + "\n", encoding="utf-8")
    out = cli("insights").stdout
    assert PASSWORD not in out and GITHUB not in out
    assert section(out)[1] == "  1. Log in with password: [REDACTED:password_in_prose]"
    assert "  ops (global) 30055% — 30,055/100 chars: Token [REDACTED:github_token] for CI. xxxxxxxx" in out
    data = json.loads(cli("insights", "--json").stdout)
    (block,) = data["blocks"]
    assert (block["chars"], len(block["value"])) == (30_055, 19_983)
    assert block["cut"] == [f"Only the first 20,000 of its value's 30,055 characters are shown here; the whole text "
                            f"is in {tmp_path / 'mem' / 'blocks' / 'ops.md'}."]
    assert GITHUB not in json.dumps(data)
