"""Weighted reciprocal rank fusion and the convex score combination: exact values on small examples."""

from __future__ import annotations

import pytest

from pi_memory.retrieval import RRF_K, convex_fuse, minmax, weighted_rrf


def test_rrf_exact_values_with_weights():
    lists = {"a": ["x", "y", "z"], "b": ["y", "x"]}
    fused = weighted_rrf(lists, {"a": 1.0, "b": 2.0}, k=1)
    # x: 1/(1+1) + 2/(1+2) = 7/6; y: 1/(1+2) + 2/(1+1) = 4/3; z: 1/(1+3) = 1/4
    assert [key for key, _ in fused] == ["y", "x", "z"]
    assert [score for _, score in fused] == pytest.approx([4 / 3, 7 / 6, 1 / 4])


def test_rrf_default_constant_is_cormacks_60():
    assert RRF_K == 60
    fused = dict(weighted_rrf({"a": ["x"], "b": ["x", "y"]}))
    assert fused["x"] == pytest.approx(2 / 61)
    assert fused["y"] == pytest.approx(1 / 62)


def test_rrf_repeats_count_once_and_ties_keep_first_appearance():
    fused = weighted_rrf({"a": ["p", "q", "p"], "b": ["q", "p"]}, k=0)
    assert dict(fused) == pytest.approx({"p": 1 + 1 / 2, "q": 1 / 2 + 1})
    assert [key for key, _ in fused] == ["p", "q"]  # equal scores: p was seen first


def test_rrf_zero_weight_list_adds_nothing_but_keeps_its_keys():
    fused = weighted_rrf({"a": ["x"], "b": ["y"]}, {"b": 0.0}, k=0)
    assert fused == [("x", 1.0), ("y", 0.0)]


def test_rrf_limit_and_bad_k():
    assert len(weighted_rrf({"a": list("abcdef")}, limit=2)) == 2
    assert weighted_rrf({}) == []
    with pytest.raises(ValueError):
        weighted_rrf({"a": ["x"]}, k=-1)


def test_minmax():
    assert minmax({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    assert minmax({"a": 5.0, "b": 5.0}) == {"a": 1.0, "b": 1.0}
    assert minmax({}) == {}


def test_convex_exact_values():
    scored = {"bm25": {"x": 10.0, "y": 6.0, "z": 2.0}, "vec": {"y": 0.9, "w": 0.5}}
    fused = convex_fuse(scored, {"bm25": 1.5, "vec": 1.0})
    # bm25 normalised: x 1, y 0.5, z 0; vec normalised: y 1, w 0
    assert dict(fused) == pytest.approx({"x": 1.5, "y": 0.75 + 1.0, "z": 0.0, "w": 0.0})
    assert [key for key, _ in fused] == ["y", "x", "z", "w"]
    assert convex_fuse(scored, limit=1)[0][0] == "y"
