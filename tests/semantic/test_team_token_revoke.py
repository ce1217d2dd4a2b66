"""`pi-memory serve token revoke` (a tester's finding): given the whole token as `token create` printed it, it
said "No active token '<the whole secret>'", exited 1 and left the token valid, printing the secret on the
terminal and in --json output. The whole token now revokes the token it names (after its secret is checked),
and no message repeats a secret."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def run(invoke_cli):
    def run(*args: str):
        result = invoke_cli(*args)
        return result.exit_code, " ".join(result.output.split())

    return run


@pytest.fixture
def tokens(run, pg_url):
    from pi_memory.semantic.backends.pg_connect import open_pool
    from pi_memory.semantic.backends.team_auth import TokenStore

    pool = open_pool(pg_url, max_size=1)
    yield TokenStore(pool)
    pool.close()


def _create(run, pg_url, user):
    code, said = run("serve", "token", "create", "--user", user, "--database-url", pg_url, "--json")
    assert code == 0, said
    made = json.loads(said)
    return made["id"], made["token"]


def test_the_whole_token_revokes_it_and_no_output_holds_the_secret(run, pg_url, tokens):
    token_id, token = _create(run, pg_url, "revoke-alice")
    assert tokens.resolve(token.encode()) is not None
    code, said = run("serve", "token", "revoke", token, "--database-url", pg_url)
    assert (code, said) == (0, f"revoked {token_id} (user revoke-alice); every server refuses it from its next "
                               "request.")
    assert tokens.resolve(token.encode()) is None
    revoked_at = tokens.record(token_id).revoked_at
    code, said = run("serve", "token", "revoke", token, "--database-url", pg_url, "--json")
    assert code == 1 and json.loads(said) == {
        "success": False, "exitCode": 1, "error": f"token {token_id} (user 'revoke-alice') was already revoked at "
                                                   f"{revoked_at}; every server refuses it. Nothing to do."}
    secret = token.split("_", 2)[2]
    assert secret not in said


def test_the_whole_token_with_json_names_the_id_only(run, pg_url, tokens):
    token_id, token = _create(run, pg_url, "revoke-bob")
    code, said = run("serve", "token", "revoke", token, "--database-url", pg_url, "--json")
    assert code == 0 and token not in said
    done = json.loads(said)
    assert done == {"revoked": token_id, "userId": "revoke-bob", "revokedAt": tokens.record(token_id).revoked_at}


def test_a_mistyped_secret_revokes_nothing_and_is_not_echoed(run, pg_url, tokens):
    token_id, token = _create(run, pg_url, "revoke-carol")
    wrong = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    code, said = run("serve", "token", "revoke", wrong, "--database-url", pg_url)
    assert (code, said) == (1, f"refused: the token you gave names id {token_id} (user 'revoke-carol'), but its "
                               "secret is not that token's (mistyped or cut short?); nothing was revoked. To revoke "
                               f"that token by its id: pi-memory serve token revoke {token_id}")
    assert tokens.resolve(token.encode()) is not None
    assert run("serve", "token", "revoke", token_id, "--database-url", pg_url)[0] == 0
    assert tokens.resolve(token.encode()) is None


@pytest.mark.parametrize(("given", "message"), [
    ("pim_000000000000_" + "S3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3c", "refused: no token of this database has the "
     "id 000000000000 (the token you gave is not one of this database's); nothing was revoked. `pi-memory serve "
     "token list` shows the ids."),
    ("pim_S3cr3tS3cr3tS3cr3tS3cr3t", "refused: what you gave starts like a token (pim_) but is not a whole one "
     "(pim_<id>_<secret>) nor a token id; nothing was revoked. Give the id `pi-memory serve token list` shows, or "
     "the whole token exactly as `token create` printed it."),
    ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "refused: No token has the id you gave (not repeated: it is not "
     "an id and may be a secret); nothing was revoked. `pi-memory serve token list` shows the ids."),
    ("abc123", "refused: No token has the id 'abc123'; nothing was revoked. `pi-memory serve token list` shows "
               "the ids."),
])
def test_what_names_no_token_is_refused_without_repeating_a_secret(run, pg_url, given, message):
    assert run("serve", "token", "revoke", given, "--database-url", pg_url) == (1, message)
