"""One load client of the team server's load and fault tests: ``python -m pi_memory.devtools.team_load``.

A client runs ``--ops`` mixed operations (add 35 %, get 25 %, search 15 %, update 10 %, delete 10 %, list 5 %,
chosen by a generator seeded with ``--worker``) through the REST API as one user, against its ``--primary``
server; when that server stops answering (connection refused or dropped: a killed process) it moves to
``--fallback`` for good, as a load balancer would. A ``503`` (the database is down or restarting) is retried
after a short pause until ``--patience`` seconds have passed. Writes carry unique small texts, so the test can
check each one afterwards.

Every finished operation is one JSON line on ``--log`` (flushed, so the test can follow the progress):
``{"op", "t", "server", "status", "attempts", "errors": [[status, message]], "acked": bool, "id", "text",
"old_id", "uncertain"}``. ``acked``: the server answered 2xx. ``uncertain``: an earlier attempt of a write may
have been applied before its answer was lost (a dropped connection, or a 503 after the commit), so a retry's
404 says nothing; the test then only checks the write is stored at most once.

Only the standard library and httpx: a client process starts fast.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid

import httpx

MIX = (("add", 35), ("get", 25), ("search", 15), ("update", 10), ("delete", 10), ("list", 5))
DROPPED = (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


class Client:
    def __init__(self, primary: str, fallback: str, token: str, patience: float) -> None:
        self.servers = [primary, fallback]
        self.clients = {u: httpx.Client(base_url=u, headers={"Authorization": f"Bearer {token}"}, timeout=30)
                        for u in self.servers}
        self.patience = patience

    def call(self, method: str, path: str, **kw) -> tuple[httpx.Response | None, dict]:
        """``(response, info)``: the first answer that is not a 503 (or the last 503 once patience ran out);
        ``info``: the server that answered, attempts, the errors met and whether one of them left a write's
        fate unknown."""
        errors: list[list] = []
        uncertain = False
        deadline = time.monotonic() + self.patience
        attempts = 0
        while True:
            attempts += 1
            url = self.servers[0]
            try:
                r = self.clients[url].request(method, path, **kw)
            except DROPPED as exc:
                errors.append([0, f"{type(exc).__name__}: {exc}"])
                uncertain = uncertain or not isinstance(exc, httpx.ConnectError)
                if len(self.servers) > 1:
                    self.servers.pop(0)  # that server is gone: the other one from now on
                    continue
                r = None
            except httpx.TimeoutException as exc:
                errors.append([0, f"{type(exc).__name__}: {exc}"])
                uncertain, r = True, None
            if r is not None and r.status_code != 503:
                return r, {"server": url, "attempts": attempts, "errors": errors, "uncertain": uncertain}
            if r is not None:
                errors.append([503, r.json().get("error", "")])
                uncertain = True
            if time.monotonic() > deadline:
                return r, {"server": url, "attempts": attempts, "errors": errors, "uncertain": uncertain}
            time.sleep(0.2)


def run(worker: int, ops: int, user: str, client: Client, log) -> None:
    rng = random.Random(worker)
    names, weights = zip(*MIX, strict=True)
    live: dict[str, str] = {}  # id -> text of this client's active memories
    scope = {"user_id": user}
    for n in range(ops):
        op = rng.choices(names, weights)[0]
        if op in ("get", "update", "delete") and not live:
            op = "add"
        rec: dict = {"op": op, "worker": worker, "n": n}
        if op == "add":
            text = f"w{worker} n{n} {uuid.uuid4().hex[:10]}"
            r, info = client.call("POST", "/memories", json={"text": text, "infer": False, **scope})
            rec["text"] = text
            if r is not None and r.status_code == 200:
                rec["id"] = r.json()["results"][0]["id"]
                live[rec["id"]] = text
        elif op == "get":
            mid = rng.choice(sorted(live))
            r, info = client.call("GET", f"/memories/{mid}", params=scope)
            rec["id"] = mid
            rec["consistent"] = r is not None and r.status_code == 200 and r.json()["memory"] == live[mid]
        elif op == "search":
            r, info = client.call("POST", "/search", json={"query": f"w{worker} n{rng.randrange(n + 1)}",
                                                           "top_k": 3, **scope})
        elif op == "list":
            r, info = client.call("GET", "/memories", params={**scope, "limit": 20})
        elif op == "update":
            old = rng.choice(sorted(live))
            text = f"w{worker} n{n} updated {uuid.uuid4().hex[:10]}"
            r, info = client.call("PUT", f"/memories/{old}", params=scope, json={"text": text})
            rec.update(old_id=old, text=text)
            if r is not None and r.status_code == 200:
                rec["id"] = r.json()["id"]
                live[rec["id"]] = text
            if r is not None and r.status_code in (200, 404):
                live.pop(old, None)
        else:
            mid = rng.choice(sorted(live))
            r, info = client.call("DELETE", f"/memories/{mid}", params=scope)
            rec["id"] = mid
            if r is not None and r.status_code in (200, 404):
                live.pop(mid, None)
        status = r.status_code if r is not None else 0
        rec.update(info, t=time.time(), status=status, acked=200 <= status < 300)
        log.write(json.dumps(rec) + "\n")
        log.flush()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="one load client of the team server tests")
    ap.add_argument("--worker", type=int, required=True)
    ap.add_argument("--ops", type=int, default=500)
    ap.add_argument("--user", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--primary", required=True)
    ap.add_argument("--fallback", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--patience", type=float, default=60.0)
    args = ap.parse_args(argv)
    client = Client(args.primary, args.fallback, args.token, args.patience)
    with open(args.log, "w", encoding="utf-8") as log:
        run(args.worker, args.ops, args.user, client, log)


if __name__ == "__main__":
    main(sys.argv[1:])
