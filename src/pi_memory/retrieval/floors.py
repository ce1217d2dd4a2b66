"""The evidence floor's cosine: one value for English, raised per script of the prompt and the candidate.

The bundled embedder was trained on English, and two texts of another script sit close together whatever they
say; how close depends on the script (measured by ``benchmarks/recall_floor.py``'s multilingual rows). So the
cosine a candidate needs is read from the scripts of the prompt (:func:`script_floor`): those holding at least
:data:`MIXED_SCRIPT_SHARE` of its letters, the highest of their floors. "帮我 review 一下 src/auth/login.ts 的
token refresh 逻辑" has more Latin letters than Han: read by its main script alone it got the English floor and
injected unrelated Chinese and Russian turns (cosine 0.41-0.5). Judging a candidate written in Latin script by the
Latin floor all the same was measured and left out: such prompts sit close to English texts too
(``recall_floor.py``'s ``zh+code`` row: its three unrelated prompts reached English memories at 0.45-0.52, and all
three injected), so every candidate of a mixed prompt needs its highest floor; keyword evidence still recalls an
English memory sharing half the prompt's terms.
"""

from __future__ import annotations

# The cosine (bundled all-MiniLM-L6-v2 int8) a memory needs to be recalled without keyword evidence. Chosen from
# ``benchmarks/recall_floor.py`` (30 memories, 40 related prompts written to share few words with their memory,
# 40 unrelated coding prompts): unrelated prompts' best matches reach 0.397 (p95 0.365, median 0.182); related
# pairs have median 0.341, so no floor separates the two cleanly with this small model. 0.40 is the lowest
# floor at which no unrelated prompt injects anything by vector alone. End to end (this recall, top 5, keyword
# evidence included) it recalls the right memory for 17 of the 40 related prompts and injects something for
# 1 of the 40 unrelated ones (0.35: 22/40 and 5/40; 0.30: 22/40 and 6/40; no floor: every prompt injects).
# Missing an indirect memory costs less than injecting noise before every run; lower it to recall more.
# Another embedder needs its own value.
DEFAULT_MIN_SIMILARITY = 0.40
# The bundled model was trained on English: any two strings of another script sit close together (two unrelated
# Chinese sentences: 0.45-0.87), so one cosine cannot serve every prompt. Per script of the prompt
# (:func:`pi_memory.retrieval.lang.script_shares`), the floor is at least this (:func:`script_floor`). Measured with
# ``benchmarks/recall_floor.py`` (its multilingual rows: per language 3 memories, 3 related and 3 unrelated
# prompts, all 48 memories of every language in one index): best match of an unrelated prompt, max over the
# language's prompts -- zh 0.663, ja 0.649, ko 0.684 (cjk); ru 0.665 (cyrillic); fa 0.873 (arabic); de 0.506, es 0.496
# (Latin, not English; English: 0.397, above). Each floor is that max plus a margin; cjk went 0.75 -> 0.80 when
# the Chinese-with-code rows ("zh+code") joined the index: "今天天气怎么样？" reached "日志通过 Loki 收集，保留三十天。"
# at 0.764. Related prompts below a floor are still recalled by keyword evidence (:mod:`pi_memory.retrieval.lang`;
# every related prompt of those rows is). Scripts not measured get
# 0.95, which leaves them to keyword evidence. ``latin_other``: Latin-script prompts detected as another
# language than English.
SCRIPT_FLOORS = {"latin": 0.0, "latin_other": 0.60, "cjk": 0.80, "cyrillic": 0.75, "arabic": 0.95}
UNMEASURED_SCRIPT_FLOOR = 0.95
# A script holding at least this share of a text's letters (a CJK character counts twice) is one of its scripts
# (:func:`script_floor`): a Chinese prompt full of code names is still a Chinese prompt.
MIXED_SCRIPT_SHARE = 0.25


def script_floor(query: str, min_similarity: float) -> float:
    """The cosine floor for ``query``: ``min_similarity`` raised to the :data:`SCRIPT_FLOORS` entry of each script
    holding at least :data:`MIXED_SCRIPT_SHARE` of its letters, the highest of them (``0`` stays ``0``: floor
    off); every candidate needs it (module docstring)."""
    if min_similarity <= 0:
        return min_similarity
    from pi_memory.retrieval import lang as recall_lang  # here: the settings import this module's floor only

    floor = min_similarity
    for script, share in recall_lang.script_shares(query).items():
        if share < MIXED_SCRIPT_SHARE:
            continue
        if script == "latin":
            langs = recall_lang.languages(query)
            script = "latin_other" if langs and langs[0] != "english" else "latin"
        floor = max(floor, SCRIPT_FLOORS.get(script, UNMEASURED_SCRIPT_FLOOR))
    return floor
