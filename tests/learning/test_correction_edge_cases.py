"""The tester's second round on the correction rules (:mod:`pi_memory.learning.corrections`), in the table style
of ``test_correction_rules.py``.

* time: ``learning detect "no, use uv:" + 20,000 dashes`` took 8.5 s, ``"no, use uv" + 50,000 spaces + "x"`` 57 s
  and ``+ ", " * 30,000`` over a minute (the trailing "thanks" pattern started again at each separator; a run of
  blank lines was crossed again from each of its characters);
* chit-chat in the new languages was saved as lessons ("Mach immer weiter so!", "一定要加油！");
* a lesson holding a credential was saved redacted in Russian and Chinese (refused in English), and a password
  without a known pattern was saved in clear;
* "不对，用 uv。" kept its full-width period, "Nein nein nein, nimm pnpm" one "nein", and "no—use uv",
  "不对 - 用 uv", "From now on: always use uv" were missed.
"""

from __future__ import annotations

import time

import pytest

from pi_memory.learning.corrections import CorrectionRules, capture

RULES = CorrectionRules.from_lists()
GITHUB = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
SLACK = "xoxb-" + "123456789012-1234567890123-abcdefghijklmnopqrstuvwx"
CPU_BOUND_S = 5  # the slowest input takes about 1 s of CPU; the quadratic patterns took 8.5-149 s


@pytest.mark.parametrize(("text", "lesson"), [
    ("no, use uv:" + "-" * 20_000 + " x", "Use uv:" + "-" * 393),
    ("no, use uv" + " " * 50_000 + "x", "Use uv x"),
    ("no, use uv" + ", " * 30_000 + "x", "Use uv" + ", " * 196 + ","),
    ("no, use uv" + " ,-;:" * 20_000 + "x", ("Use uv" + " ,-;:" * 79)[:400]),
    ("no, use uv" + " " * 50_000 + "thanks", "Use uv"),
    ("no, use uv" + "\n" * 50_000, "Use uv"),
    ("a" + " \n" * 20_000 + "never use uv", "Never use uv"),
    ("a" + "\n" * 50_000 + "b", None),
    ("> " + "\n" * 50_000 + "x", None),
    ("no" + " ,-" * 20_000 + "use uv", "Use uv"),
])
def test_a_pathological_message_is_decided_fast(text, lesson):
    start = time.process_time()  # CPU time: a loaded machine does not make it fail; a quadratic pattern took 57 s
    found = RULES.detect(text)
    assert time.process_time() - start < CPU_BOUND_S
    assert found.directive == lesson


def test_capture_of_a_long_run_of_separators_is_fast():
    start = time.process_time()
    found = capture(RULES, "no, use uv" + " " * 50_000 + "x", None)
    assert time.process_time() - start < CPU_BOUND_S
    assert found.entry == "[correction] Use uv x — Failed: User corrected the agent"


CHIT_CHAT = [
    "Mach immer weiter so!", "Nein, mach weiter.",
    "No, haz lo que quieras.", "Siempre haz lo mejor.", "Nunca dejes de aprender.",
    "Non, laisse-moi réfléchir.", "Fais toujours de ton mieux.", "Garde toujours le sourire.", "Ne laisse pas tomber.",
    "一定要加油！", "永远不要放弃。",
    "From now on, always be nice.", "You should always keep smiling!",
]


@pytest.mark.parametrize("text", CHIT_CHAT)
def test_chit_chat_in_any_language_is_no_lesson(text):
    found = RULES.detect(text)
    assert (found.correction, found.directive) == (False, None)


@pytest.mark.parametrize("text", [
    f"Всегда используй токен {GITHUB}",
    f"以后都用令牌 {GITHUB}",
    f"no, use {SLACK} for slack",
    f"Always use token {GITHUB}",
    f"Nimm immer das Token {GITHUB}",
    "Always use password hunter2 for the db",
    "Siempre usa la contraseña hunter2 para la base",
    "N'utilise jamais le mot de passe hunter2, utilise plutôt Tr0ub4dor&3",
    "never set password: hunter2",
    "Nimm immer das Passwort geheim123",
    "以后都用密码abc123",
    "никогда не используй пароль qwerty123",
])
def test_a_lesson_holding_a_credential_is_not_saved_in_any_language(text):
    found = capture(RULES, text, None)
    assert (found.detection.correction, found.detection.rule, found.entry) == (False, "credential", None)


@pytest.mark.parametrize(("text", "lesson"), [
    # a credential word with no value after it is a lesson about credentials
    ("Never put passwords in the repo", "Never put passwords in the repo"),
    ("Never commit the api key to git", "Never commit the api key to git"),
    ("Never hardcode the port 8080, read PORT", "Never hardcode the port 8080, read PORT"),
])
def test_a_lesson_about_credentials_without_one_is_saved(text, lesson):
    found = RULES.detect(text)
    assert (found.correction, found.directive) == (True, lesson)


@pytest.mark.parametrize(("text", "lesson", "rule"), [
    # the full-width period goes as the closing period does ("no, use uv." saves "Use uv")
    ("不对，用 uv。", "用 uv", "weak:^\\s*(不对|不是|错了|不行|不)\\s*[，,。.！!：:；;、]+用"),
    ("no, use uv.", "Use uv", r"weak:^\s*(no|wrong|actually|stop)[\s,.!:;-]+use"),
    # every repeated opener goes, in any language
    ("Nein nein nein, nimm pnpm", "Nimm pnpm",
     r"weak:^\s*(nein|falsch|non|faux|нет|неправильно|неверно|не\s+так|incorrecto)[\s,.!:;-]+nimm"),
    ("нет нет, используй uv", "Используй uv",
     r"weak:^\s*(nein|falsch|non|faux|нет|неправильно|неверно|не\s+так|incorrecto)[\s,.!:;-]+используй"),
    # a dash of any kind after the opener, with or without spaces
    ("no—use uv", "Use uv", r"weak:^\s*(no+|nope|wrong|actually|stop)\s*[\u2013\u2014]+use"),
    ("no \u2013 use uv", "Use uv", r"weak:^\s*(no|wrong|actually|stop)[\s,.!:;-]+use"),
    ("不对 - 用 uv", "用 uv",
     "weak:^\\s*(nein|falsch|non|faux|нет|неправильно|неверно|не\\s+так|incorrecto|不对|不是|错了|不行)\\s*"
     "[-\u2013\u2014]+用"),
    ("nein—nimm uv", "Nimm uv",
     "weak:^\\s*(nein|falsch|non|faux|нет|неправильно|неверно|не\\s+так|incorrecto|不对|不是|错了|不行)\\s*"
     "[-\u2013\u2014]+nimm"),
    # a colon after the time marker
    ("From now on: always use uv", "From now on: always use uv", "standing:from now on always+use"),
    ("Going forward: never push to main", "Going forward: never push to main", "standing:going forward never+push"),
])
def test_a_correction_is_not_mangled_nor_missed(text, lesson, rule):
    found = RULES.detect(text)
    assert (found.correction, found.directive, found.rule) == (True, lesson, rule)
