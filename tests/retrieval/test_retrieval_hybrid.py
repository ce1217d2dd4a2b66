"""TurnIndex: the hybrid search finds a paraphrased turn that BM25 cannot, priors, groups, modes.

The paraphrase test uses the real bundled MiniLM model (offline); the others use a tiny deterministic
bag-of-words embedder so that they test the pipeline, not the model.
"""

from __future__ import annotations

import threading
import zlib

import numpy as np
import pytest

from pi_memory.retrieval import HybridConfig, KeySpec, Turn, TurnIndex

CONVERSATION = [
    ("Ann", "Morning! How was your weekend?"),
    ("Bob", "Quiet. I stayed home most of the time."),
    ("Ann", "Guess what: we brought home a little puppy from the shelter."),
    ("Bob", "Aww, what breed is it?"),
    ("Ann", "A beagle mix, super playful."),
    ("Bob", "I finally finished reading that long novel about sailors."),
    ("Ann", "I bought a new car on Saturday, a red hatchback."),
    ("Bob", "The weather has been rainy all week, so I stayed in and cooked soup."),
]


def turns(speakers_dates=True) -> list[Turn]:
    return [Turn(f"D1:{i + 1}", text, speaker=sp if speakers_dates else "", when="2023-05-08" if speakers_dates else None,
                 session="1") for i, (sp, text) in enumerate(CONVERSATION)]


class BagOfWords:
    """Deterministic toy embedder: hashed word counts, L2-normalised."""

    model_name, dim = "bow", 512

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace(".", " ").replace("?", " ").replace(",", " ").split():
                out[i, zlib.crc32(word.encode()) % self.dim] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)

    def embed_query(self, text):
        return self.embed([text])[0]


def test_hybrid_finds_a_paraphrase_that_bm25_misses():
    index = TurnIndex()  # the bundled MiniLM
    index.add("c", turns())
    question = "Who got a new dog?"
    lexical = [h.id for h in index.search(question, "c", k=5, mode="bm25")]
    assert lexical[0] == "D1:7"  # "new" finds the new car
    assert "D1:3" not in lexical  # "dog" occurs nowhere ("got" is a stop word): the puppy turn is not found
    assert "D1:3" in [h.id for h in index.search(question, "c", k=2)]
    assert index.search(question, "c", k=1, mode="vector")[0].id == "D1:3"
    # no word in common at all: keyword search finds nothing, the hybrid ranks the puppy first
    assert index.search("Which of them adopted a dog?", "c", k=5, mode="bm25") == []
    assert index.search("Which of them adopted a dog?", "c", k=1)[0].id == "D1:3"


def test_hits_carry_turns_ranks_and_scores():
    index = TurnIndex(BagOfWords())
    index.add("c", turns())
    hits = index.search("novel about sailors", "c", k=3)
    assert hits[0].id == "D1:6" and hits[0].turn.text.startswith("I finally")
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].score >= hits[1].score >= hits[2].score
    assert len(index) == len(CONVERSATION) and index.groups == ["c"]


def test_speaker_prior_prefers_the_named_speaker():
    # keys without the speaker name, so only the prior tells the two turns apart
    config = HybridConfig(rerank_key=None, time_boost=0, date_boost=0, vector_key=KeySpec(), lexical_key=KeySpec())
    ann = Turn("a", "I love soup", speaker="Ann", session="1")
    bob = Turn("b", "I love soup", speaker="Bob", session="1")
    for boost, first in ((0.0, "a"), (0.5, "b")):
        index = TurnIndex(BagOfWords(), config.but(speaker_boost=boost))
        index.add("c", [ann, bob])
        assert index.search("Does Bob love soup?", "c", k=2)[0].id == first


def test_time_and_date_priors():
    base = HybridConfig(rerank_key=None, speaker_boost=0, lexical_key=KeySpec(), vector_key=KeySpec())
    plain = Turn("p", "we went hiking in the hills", session="1", when="2023-01-10")
    cue = Turn("q", "we went hiking in the hills yesterday", session="2", when="2023-03-01")
    other = Turn("o", "hiking boots are expensive", session="3", when="2023-06-01")  # the normalisation's floor
    group = [plain, cue, other]
    index = TurnIndex(BagOfWords(), base.but(time_boost=0, date_boost=0))
    index.add("c", group)
    assert index.search("When did they go hiking in the hills?", "c", 1)[0].id == "p"  # shorter text wins alone
    index = TurnIndex(BagOfWords(), base.but(time_boost=1.0, date_boost=0))
    index.add("c", group)
    assert index.search("When did they go hiking in the hills?", "c", 1)[0].id == "q"
    assert index.search("Did they go hiking in the hills?", "c", 1)[0].id == "p"  # not a "when" question
    index = TurnIndex(BagOfWords(), base.but(time_boost=0, date_boost=1.0))
    index.add("c", group)
    assert index.search("Did they go hiking in the hills in February 2023?", "c", 1)[0].id == "q"
    assert index.search("Did they go hiking in the hills in January 2023?", "c", 1)[0].id == "p"


def test_groups_are_isolated_and_replaced():
    index = TurnIndex(BagOfWords())
    index.add("one", [Turn("x", "sailing on the lake")])
    index.add("two", [Turn("y", "sailing on the sea")])
    assert [h.id for h in index.search("sailing", "one", 5)] == ["x"]
    assert [h.id for h in index.search("sailing", "two", 5, mode="bm25")] == ["y"]
    index.add("one", [Turn("z", "knitting a scarf")])
    assert [h.id for h in index.search("sailing", "one", 5, mode="bm25")] == []
    assert index.search("sailing", "nope", 5) == []
    assert index.search("   ", "one", 5) == [] and index.search("x", "one", 0) == []


def test_modes_and_errors():
    index = TurnIndex(BagOfWords())
    index.add("lex", turns(), vectors=False)
    assert index.search("novel", "lex", 1, mode="bm25")[0].id == "D1:6"
    with pytest.raises(ValueError, match="without vectors"):
        index.search("novel", "lex", 1)
    with pytest.raises(ValueError, match="unknown mode"):
        index.search("novel", "lex", 1, mode="dense")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="column_weights"):
        TurnIndex(BagOfWords(), HybridConfig(column_weights=(1.0, float("inf"), 1.0)))
    with pytest.raises(ValueError, match="repeat"):
        index.add("dup", [Turn("a", "x"), Turn("a", "y")])


def test_query_text_is_never_fts_syntax():
    index = TurnIndex(BagOfWords())
    index.add("c", turns())
    for q in ('"unbalanced', "NOT OR AND", "col:umn * ^ (x", "NEAR(a b)", "-", "\u0000"):
        index.search(q, "c", 3)  # no exception


def test_precomputed_vectors_and_query_vector():
    emb = BagOfWords()
    index = TurnIndex(emb, HybridConfig(rerank_key=None))
    index.add("c", turns(), vectors=False)
    index.set_vectors("c", "vector", emb.embed([t.text for t in turns()]))
    assert index.vectors("c").shape == (len(CONVERSATION), 512)
    hits = index.search("soup", "c", 1, mode="vector", query_vector=emb.embed_query("soup"))
    assert hits[0].id == "D1:8"
    with pytest.raises(ValueError):
        index.set_vectors("c", "vector", np.zeros((2, 512)))


def test_external_lexical_hook():
    seen = []

    def lexical(query, group, expanded, limit):
        seen.append((query, group, expanded.terms, limit))
        return ["D1:5", "unknown-id"]

    index = TurnIndex(BagOfWords(), HybridConfig(rerank_key=None), lexical=lexical)
    index.add("c", turns())
    assert [h.id for h in index.search("Which breed?", "c", 1, mode="bm25")] == ["D1:5"]
    assert seen[0][:3] == ("Which breed?", "c", ("breed",))


def test_rrf_fusion_and_blend_rerank_run():
    for config in (HybridConfig(fusion="rrf"), HybridConfig(rerank="blend", rerank_weight=0.3)):
        index = TurnIndex(BagOfWords(), config)
        index.add("c", turns())
        assert index.search("weather rainy soup", "c", 1)[0].id == "D1:8"


def test_concurrent_searches():
    index = TurnIndex(BagOfWords())
    index.add("c", turns())
    errors = []

    def work():
        try:
            for _ in range(50):
                assert index.search("novel sailors", "c", 1)[0].id == "D1:6"
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


class CountingBagOfWords(BagOfWords):
    """BagOfWords that records its query texts."""

    def __init__(self):
        self.queries = []

    def embed_query(self, text):
        self.queries.append(text)
        return super().embed_query(text)


class TokenBagOfWords(CountingBagOfWords):
    """BagOfWords with token states: one hashed one-hot row per word, between [CLS] and [SEP] rows."""

    def embed_tokens(self, texts):
        out = []
        for text in texts:
            words = text.lower().replace("?", " ").replace(":", " ").split()
            tokens = ["[CLS]", *words, "[SEP]"]
            states = np.zeros((len(tokens), self.dim), dtype=np.float32)
            states[0, 0] = states[-1, 1] = 1.0
            for i, word in enumerate(words, 1):
                states[i, zlib.crc32(word.encode()) % self.dim] = 1.0
            out.append((tokens, states))
        self.token_calls = getattr(self, "token_calls", 0) + 1
        return out


def test_speaker_query_list_ranks_the_named_speakers_turns_in_the_first_person():
    group = [Turn("b", "Ann, what do you play?", speaker="Bob", session="1"),
             Turn("a", "I play the violin", speaker="Ann", session="1"),
             Turn("c", "what a lovely day", speaker="Ann", session="1")]
    only_speaker = HybridConfig(weights={"vector": 0.0, "lexical": 0.0}, rerank_weight=0.0, speaker_boost=0.0,
                                time_boost=0.0, speaker_query_weight=1.0, vector_key=KeySpec(), lexical_key=KeySpec())
    emb = CountingBagOfWords()
    index = TurnIndex(emb, only_speaker)
    index.add("c", group)
    assert index.search("What does Ann play?", "c", 3)[0].id == "a"  # Bob's turn has "play" too, but is Bob's
    assert emb.queries == ["What does Ann play?", "What does I play?"]
    ranking = index.speaker_ranking("What does Ann play?", index._groups["c"], index.expand("What does Ann play?", "c"), 5)
    assert [row for row, _ in ranking] == [1, 2]  # Ann's turns only
    emb.queries.clear()
    index.search("What does anyone play?", "c", 3)  # no speaker named: no second embedding
    index.search("What do Ann and Bob play?", "c", 3)  # every speaker named: none either
    assert emb.queries == ["What does anyone play?", "What do Ann and Bob play?"]


def test_late_interaction_list_uses_token_states_from_one_model_call():
    group = [Turn("1", "the cat sat on the mat"), Turn("2", "cat and dog played"), Turn("3", "a bird sang")]
    late_only = HybridConfig(weights={"vector": 0.0, "lexical": 0.0}, rerank_weight=0.0, late_weight=1.0,
                             late_key=KeySpec(), vector_key=KeySpec(), lexical_key=KeySpec())
    emb = TokenBagOfWords()
    index = TurnIndex(emb, late_only)
    index.add("c", group)
    assert emb.token_calls == 1 and len(index._groups["c"].tokens) == 3
    hits = index.search("cat dog", "c", 3)
    assert [h.id for h in hits][:2] == ["2", "1"]
    assert emb.token_calls == 2 and emb.queries == []  # the query vector came from its token states
    plain = TurnIndex(BagOfWords(), late_only)  # no embed_tokens: the step is skipped
    plain.add("c", group)
    assert plain._groups["c"].tokens == []
    assert len(plain.search("cat dog", "c", 3)) == 3


def test_bundled_token_states_pool_to_the_query_vector():
    from pi_memory.embed import get_embedder
    from pi_memory.retrieval.late import pooled

    emb = get_embedder()
    ((tokens, states),) = emb.embed_tokens(["Which of them adopted a dog?"])
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and states.shape == (len(tokens), 384)
    assert float(pooled(states) @ emb.embed_query("Which of them adopted a dog?")) > 0.999


class Blind(BagOfWords):
    """An embedder that cannot tell texts apart: every vector is the same unit vector."""

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, 0] = 1.0
        return out


class CountingExtra(CountingBagOfWords):
    """BagOfWords that records its document batches too."""

    def __init__(self):
        super().__init__()
        self.batches = []

    def embed(self, texts):
        self.batches.append(list(texts))
        return super().embed(texts)


def test_extra_embedder_adds_its_own_vector_and_rescoring_lists():
    extra = CountingExtra()
    index = TurnIndex(Blind(), HybridConfig(vector_key=KeySpec(speaker=True)), extra_embedders={"bow": extra})
    index.add("c", turns())
    assert len(extra.batches) == 2  # one batch per key: the vector key (with speaker) and the re-rank key (turn alone)
    assert extra.batches[0][5] == "Bob: I finally finished reading that long novel about sailors."
    assert extra.batches[1][5] == "I finally finished reading that long novel about sailors."
    assert index.vectors("c", "vector@bow").shape == (8, 512) and index.vectors("c", "rerank@bow").shape == (8, 512)
    hits = index.search("novel about sailors", "c", k=3, mode="vector")
    assert hits[0].id == "D1:6"
    # min-max normalised lists at their default weights: blind vector 1 + blind re-rank 0.25 + extra vector 0.5
    # + extra re-rank 0.25 = 2.0, times session support 1 + 0.2 (one session, the best turn's own score)
    assert hits[0].score == pytest.approx(2.0 * 1.2)
    assert extra.queries == ["novel about sailors"]
    index.search("novel about sailors", "c", k=3, mode="bm25")  # keyword only: no model call
    assert extra.queries == ["novel about sailors"]


def test_extra_embedder_with_zero_weights_changes_nothing():
    off = HybridConfig(extra_vector_weight=0.0, extra_rerank_weight=0.0)
    extra = CountingExtra()
    with_extra = TurnIndex(Blind(), off, extra_embedders={"bow": extra})
    alone = TurnIndex(Blind(), off)
    for index in (with_extra, alone):
        index.add("c", turns())
    for question in ("novel about sailors", "What did Ann buy on Saturday?"):
        got = [(h.id, h.score) for h in with_extra.search(question, "c", k=8)]
        assert got == [(h.id, h.score) for h in alone.search(question, "c", k=8)]
    assert extra.queries == []  # weights 0: its query is never embedded
    # the blind embedder alone ties every turn: vector 1 + re-rank 0.25, times session support 1.2
    assert {round(h.score, 9) for h in alone.search("novel about sailors", "c", k=8, mode="vector")} == {1.5}
