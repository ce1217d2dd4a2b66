"""pi's ``/memory limit KEY CHARS``: the twin of ``pi-memory blocks limit`` (:func:`pi_memory.blocks.change_limit`),
its refusals a warning, a wrong use the usage line."""

from __future__ import annotations

import json


def block_file(folder, key: str, value: str, limit: int = 2000) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{key}.md").write_text(f"---\ndescription: {key} notes\nlimit: {limit}\n---\n\n{value}\n")


def test_pi_memory_limit_command(make_bridge, tmp_path):
    bridge = make_bridge({"semantic": False})
    block_file(tmp_path / "mem" / "blocks", "user", "Prefers tabs.")

    def command(args: str) -> dict:
        return bridge.handle(json.dumps({"id": 1, "method": "command", "params": {"name": "memory",
                                                                                   "args": args}}))["result"]

    r = command("limit user 2500")
    assert (r["level"], r["text"]) == ("info", "Block 'user' (global): limit 2,000 -> 2,500 characters (now 0% — "
                                               "13/2,500 chars). It counts from the next prompt on. To undo: "
                                               "pi-memory blocks limit user 2000")
    r = command("limit user 5")
    assert (r["level"], r["code"]) == ("warning", "below_text")
    assert r["text"].startswith("refused: Block 'user' holds 13 characters, more than a limit of 5")
    assert command("limit user")["text"] == ("Usage: /memory limit KEY CHARS (a memory block's character limit, "
                                             "e.g. /memory limit user 4000; /memory lists the blocks)")
