"""Late interaction (MaxSim), session support and the first-person rewrite, on small hand-made inputs."""

from __future__ import annotations

import numpy as np
import pytest

from pi_memory.retrieval import first_person, maxsim, maxsim_ranking, session_support, token_matrix
from pi_memory.retrieval.late import keep_tokens, pooled


def test_keep_tokens_drops_specials_punctuation_and_query_stop_words():
    tokens = ["[CLS]", "what", "does", "ann", "play", "?", "[SEP]"]
    assert keep_tokens(tokens, drop_stop_words=False) == [1, 2, 3, 4]
    assert keep_tokens(tokens, drop_stop_words=True) == [3, 4]
    assert keep_tokens(["[CLS]", "[SEP]"], drop_stop_words=True) == [0, 1]  # nothing left: keep all


def test_token_matrix_centres_and_normalises():
    states = np.array([[9.0, 9.0], [3.0, 1.0], [1.0, 3.0], [9.0, 9.0]])
    rows = token_matrix(["[CLS]", "a", "b", "[SEP]"], states, centre=np.array([1.0, 1.0]))
    assert rows.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert token_matrix(["x", "y"], states[:2], dtype=np.float16).dtype == np.float16
    with pytest.raises(ValueError, match="2 rows"):
        token_matrix(["a", "b"], states)


def test_maxsim_is_the_mean_best_match_of_each_query_token():
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    near = np.array([[1.0, 0.0], [0.6, 0.8]])  # best for token 1: 1.0, for token 2: 0.8
    far = np.array([[0.6, -0.8]])  # best: 0.6 and -0.8
    assert maxsim(query, near) == pytest.approx(0.9)
    assert maxsim(query, far) == pytest.approx(-0.1)
    assert maxsim(query, np.zeros((0, 2))) == 0.0
    ranked = maxsim_ranking(query, [far, near, far], [0, 2, 1])
    assert [row for row, _ in ranked] == [1, 0, 2]  # ties keep the order given
    assert [round(score, 6) for _, score in ranked] == [0.9, -0.1, -0.1]


def test_maxsim_ranking_matches_maxsim_on_each_candidate():
    rng = np.random.default_rng(7)
    docs = [token_matrix(["a"] * n, rng.normal(size=(n, 8))) for n in (3, 1, 5, 2)] + [np.zeros((0, 8))]
    query = token_matrix(["q"] * 3, rng.normal(size=(3, 8)))
    ranked = dict(maxsim_ranking(query, docs, [4, 3, 2, 1, 0]))
    assert ranked == pytest.approx({i: maxsim(query, d) for i, d in enumerate(docs)})
    assert maxsim_ranking(query, docs, []) == []


def test_pooled_is_the_normalised_mean():
    assert pooled(np.array([[3.0, 0.0], [3.0, 8.0]])).tolist() == pytest.approx([0.6, 0.8])


def test_session_support_lifts_the_turns_of_a_strong_session():
    ranked = [(0, 1.0), (1, 0.5), (2, 0.6), (3, 0.1)]
    sessions = ["a", "a", "b", "b"]
    lifted = session_support(ranked, sessions, 0.5)
    # session a's best is the top (factor 1.5), session b's best is 0.6 (factor 1.3)
    assert [(row, round(score, 6)) for row, score in lifted] == [(0, 1.5), (2, 0.78), (1, 0.75), (3, 0.13)]
    assert session_support(ranked, sessions, 0.0) == ranked
    assert session_support([], sessions, 0.5) == []
    assert session_support([(0, 0.0)], sessions, 0.5) == [(0, 0.0)]


def test_first_person():
    assert first_person("What instruments does Melanie play?", ["Melanie"]) == "What instruments does I play?"
    assert first_person("What are Nate's favorite desserts?", ["Nate"]) == "What are my favorite desserts?"
    assert (
        first_person("Did ann lee call Ann's  brother Annie?", ["Ann Lee"]) == "Did I call my brother Annie?"
    )
    assert first_person("Where did James' dog go?", ["James"]) == "Where did my dog go?"
    assert first_person("What did Bob say?", []) == "What did Bob say?"
