"""Why a recalled line passed the evidence floor, in words (the inspector's recall preview), and that the words
agree with ``has_evidence``."""

from __future__ import annotations

import pytest

from pi_memory.retrieval.engine import RecallHit, evidence_reasons, has_evidence


@pytest.mark.parametrize(("hit", "floor", "reasons"), [
    (RecallHit("semantic", "a", "x", similarity=0.52, coverage=0.0), 0.4,
     ["similarity 0.520 is at or above the floor 0.4"]),
    (RecallHit("semantic", "a", "x", similarity=0.2, coverage=0.5), 0.4,
     ["50% of the prompt's keywords are in its text (at least 50% needed)"]),
    (RecallHit("session", "s#1", "x", similarity=None, coverage=1.0), 0.4,
     ["100% of the prompt's keywords are in its text (at least 50% needed)"]),
    (RecallHit("semantic", "a", "x", similarity=0.9, coverage=1.0), 0.4,
     ["similarity 0.900 is at or above the floor 0.4",
      "100% of the prompt's keywords are in its text (at least 50% needed)"]),
    (RecallHit("semantic", "a", "x", similarity=0.1, coverage=0.0), 0.0,
     ["the similarity floor is off (recallMinSimilarity 0)"]),
    (RecallHit("semantic", "a", "x", unscored=True), 0.4, ["ranked by the memory service, which sends no scores"]),
    (RecallHit("session", "s#2", "x", similarity=0.2, coverage=0.0, near_evidence=True), 0.4,
     ["a turn next to it in its session has a similarity at or above the floor"]),
    (RecallHit("semantic", "a", "x", similarity=0.39, coverage=0.49), 0.4,
     ["similarity 0.390 and 49% of the prompt's keywords together (at least 0.30 and 34%)"]),
    (RecallHit("session", "s#3", "x", similarity=0.31, coverage=0.34), 0.4,
     ["similarity 0.310 and 34% of the prompt's keywords together (at least 0.30 and 34%)"]),
    (RecallHit("session", "s#4", "x", similarity=0.1, coverage=0.0, dated=True), 0.4,  # "dates" / "dated" lists
     ["its day is inside a date window the prompt names"]),
    (RecallHit("semantic", "a", "x", similarity=0.29, coverage=0.49), 0.4, []),  # cosine under 3/4 of the floor
    (RecallHit("semantic", "a", "x", similarity=0.39, coverage=0.33), 0.4, []),  # under a third of the keywords
    (RecallHit("semantic", "a", "x", similarity=None, coverage=0.49), 0.4, []),  # no cosine known
    (RecallHit("semantic", "a", "x", similarity=0.55, coverage=0.4), 0.75, []),  # a CJK prompt's floor: 0.5625
    (RecallHit("semantic", "a", "x", similarity=0.57, coverage=0.4), 0.75,
     ["similarity 0.570 and 40% of the prompt's keywords together (at least 0.56 and 34%)"]),
])
def test_reasons_name_each_condition_that_holds(hit, floor, reasons) -> None:
    assert evidence_reasons(hit, floor) == reasons
    assert has_evidence(hit, floor) == bool(reasons)
