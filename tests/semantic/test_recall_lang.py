"""Recall in every language: keyword evidence with Snowball stems and CJK bigrams, language and script
detection, the per-script vector floor, and end to end recall of related prompts (unrelated ones inject
nothing)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from semantic_helpers import ALICE, insert_turns

from pi_memory.index.query import plan_query
from pi_memory.index.words import cjk_bigrams
from pi_memory.retrieval import session_search
from pi_memory.retrieval.engine import DEFAULT_MIN_SIMILARITY, keyword_coverage, recall, script_floor
from pi_memory.retrieval.lang import evidence_terms, languages, script_of
from pi_memory.semantic.terms import keyword_terms


@pytest.mark.parametrize(("prompt", "text", "coverage"), [
    ("机房在哪个城市？", "我们的机房在上海，服务器都放在那里。", 0.5),  # 机 房 of 机 房 城 市
    ("机房", "我们的机房在上海", 1.0),
    ("今天天气怎么样？", "我们的机房在上海，服务器都放在那里。", 0.0),
    ("数据库多久备份一次？", "项目使用PostgreSQL数据库，每天凌晨备份。", 5 / 9),  # 数据库 备份 of 9
    ("デプロイの確認はいつですか？", "ユーザーは毎朝九時にデプロイを確認する。", 1.0),
    ("Где хранить ключ API?", "Ключи API хранятся в хранилище Vault.", 1.0),
    ("Когда запускаются ночные сборки?", "Сборка запускается каждую ночь на сервере CI.", 2 / 3),
    ("Wann werden die Datenbanken gesichert?", "Die Datenbank wird jede Nacht um drei Uhr gesichert.", 1.0),
    ("¿Qué día hacemos el despliegue?", "Los despliegues se hacen los jueves por la tarde.", 2 / 3),
    ("کلید API کجا نگهداری می‌شود؟", "کلیدهای API در خزانه Vault نگهداری می‌شوند.", 1.0),
    ("what does the user prefer", "The user prefers pnpm", 1.0),
    ("Какая сегодня погода?", "Ключи API хранятся в хранилище Vault.", 0.0),
    ("배포는 언제 하나요?", "배포는 매주 금요일 오후에 진행합니다.", 1.0),  # 배포 (언제, 하나요: question words)
    ("언제 배포해요?", "배포는 매주 금요일 오후에 진행합니다.", 1.0),  # 배포해요 -> 배포
    ("배포 서버는 어디에 있나요?", "배포는 매주 금요일 오후에 진행합니다.", 0.5),  # 배포 of 배포 서버
    ("오늘 날씨 어때요?", "배포는 매주 금요일 오후에 진행합니다.", 0.0),
    # an English term at the start of a word; a short one only with an inflection after it ("times" -> "tim"
    # found "timezone", coverage 1.0)
    ("what's 17 times 23?", "The user's name is Tomasz and he works from Warsaw (CET timezone).", 0.0),
    ("what time is it in Tokyo?", "He works from Warsaw (CET timezone).", 0.0),
    # an operator word between two numbers is arithmetic, no keyword ("times" found "time zone", coverage 1.0)
    ("what's 17 times 23?", "The user's time zone is CET (Warsaw).", 0.0),
    ("17 times 23", "Build times went from 4 to 2 minutes", 0.0),
    ("what is 1200 divided by 16?", "Split the work into 16 parts divided by team", 0.0),
    ("what is 7 plus 5", "We pay for the plus plan", 0.0),
    ("wie viel ist 6 mal 7?", "Das Mal in der Ecke", 0.0),
    ("¿cuánto es 12 por 3?", "Pagamos por horas", 0.0),
    ("сколько будет 8 умножить на 9?", "Умножить матрицы на GPU", 0.0),
    ("I run the tests 3 times a day", "The test suite times out", 0.5),  # test, tim(es); no number after it
    ("build times over 10 minutes", "build times went up", 2 / 3),  # build, tim(es) of build, times, minutes
    ("how do I log into jenkins?", "Jenkins login is admin; see the blog post", 0.5),  # jenkin(s), not log
    ("how do I log into jenkins?", "Logs are shipped to Loki", 0.5),  # log(s)
    ("lgtm, ship it", "Logs are shipped to Loki", 0.5),  # ship(ped)
    ("run the tests", "running tests takes 3 minutes", 1.0),  # run(ning), test(s)
    ("base image", "the database image", 0.5),  # not inside a word
    ("which postgres version", "Production runs PostgreSQL 16", 0.5),  # a long term: any ending
    ("what does the user prefer", "The user's preference is tabs", 1.0),
    ("python version", "uses python3.11", 0.5),
])
def test_keyword_coverage_in_every_language(prompt, text, coverage):
    assert keyword_coverage(evidence_terms(prompt), text) == pytest.approx(coverage)


@pytest.mark.parametrize(("text", "langs", "script"), [
    ("Wann werden die Datenbanken gesichert?", ["german", "english"], "latin"),
    ("¿Dónde se guarda la copia de seguridad?", ["spanish", "english"], "latin"),
    ("where are the backups kept", ["english"], "latin"),
    ("Где хранить ключ API?", ["english", "russian"], "cyrillic"),
    ("کاربر چه نوع پاسخی را ترجیح می‌دهد؟", ["persian"], "arabic"),
    ("机房在哪个城市？", [], "cjk"),
    ("PostgreSQL数据库怎么备份", ["english"], "cjk"),
])
def test_language_and_script_detection(text, langs, script):
    assert languages(text) == langs and script_of(text) == script


def test_script_floors():
    assert script_floor("where are the backups kept", DEFAULT_MIN_SIMILARITY) == DEFAULT_MIN_SIMILARITY
    assert script_floor("Wo werden die Backups gespeichert?", DEFAULT_MIN_SIMILARITY) == 0.60
    assert script_floor("机房在哪里", DEFAULT_MIN_SIMILARITY) == 0.80
    assert script_floor("Где ключи?", DEFAULT_MIN_SIMILARITY) == 0.75
    assert script_floor("کلید کجاست", DEFAULT_MIN_SIMILARITY) == 0.95
    assert script_floor("Πού είναι τα κλειδιά;", DEFAULT_MIN_SIMILARITY) == 0.95  # not measured
    assert script_floor("机房在哪里", 0.0) == 0.0  # floor off stays off


@pytest.mark.parametrize(("prompt", "floor"), [
    # Chinese around code names: more Latin letters than Han, the Chinese floor all the same (the English one let
    # three unrelated turns in at cosine 0.41-0.5)
    ("帮我 review 一下 src/auth/login.ts 的 token refresh 逻辑", 0.80),
    ("在 src/cli/main.rs 里用 clap 加一个 --verbose 参数", 0.80),
    ("帮我写 src/sort.rs 的 quicksort 单元测试", 0.80),
    ("Deploy the новый сервер to staging", 0.75),
    # one foreign word in an English sentence is not a foreign prompt
    ("what does 机房 mean in the ops notes", DEFAULT_MIN_SIMILARITY),
    ("fix the bug in app.py line 10", DEFAULT_MIN_SIMILARITY),
])
def test_a_script_holding_a_quarter_of_the_letters_sets_the_floor(prompt, floor):
    assert script_floor(prompt, DEFAULT_MIN_SIMILARITY) == floor


def test_cjk_bigrams_and_the_session_query_broadening():
    assert cjk_bigrams("机房在哪个城市") == ["机房", "房在", "个城", "城市"]
    assert cjk_bigrams("机房") == [] and cjk_bigrams("plain words") == []
    loose = [c.terms[0].text for c in plan_query("机房在哪个城市", words=True).loose]
    assert loose == ["机房在哪个城市", "机房", "房在", "个城", "城市"]


MEMORIES = {
    "ko": "배포는 매주 금요일 오후에 진행합니다.",
    "zh": "我们的机房在上海，服务器都放在那里。",
    "ru": "Ключи API хранятся в хранилище Vault.",
    "de": "Die Datenbank wird jede Nacht um drei Uhr gesichert.",
    "en": "Production runs PostgreSQL 16 behind pgbouncer.",
}


@pytest.fixture
def stored(backend):
    return {lang: backend.add(text, scope=ALICE).id for lang, text in MEMORIES.items()}


@pytest.mark.parametrize(("prompt", "lang"), [
    ("机房在哪个城市？", "zh"), ("我们机房的服务器", "zh"), ("Где хранить ключ API?", "ru"),
    ("Wann werden die Datenbanken gesichert?", "de"), ("배포는 언제 하나요?", "ko"), ("언제 배포해요?", "ko"),
])
def test_related_prompts_recall_their_memory(backend, stored, prompt, lang):
    assert stored[lang] in [h.id for h in recall(backend, prompt, scope=ALICE)]


@pytest.mark.parametrize("prompt", ["帮我把这个函数改成异步的", "Какая сегодня погода?",
                                    "Напиши функцию сортировки списка", "Wie wird das Wetter morgen?",
                                    "리스트를 정렬하는 함수를 작성해 줘"])
def test_unrelated_prompts_inject_nothing(backend, stored, prompt):
    assert recall(backend, prompt, scope=ALICE) == []


@pytest.mark.parametrize("prompt", [
    # Chinese around code names: the English floor let three unrelated turns in (cosine 0.41-0.5)
    "帮我 review 一下 src/auth/login.ts 的 token refresh 逻辑", "在 src/cli/main.rs 里用 clap 加一个 --verbose 参数",
    "帮我写 src/sort.rs 的 quicksort 单元测试", "把 README.md 翻译成英文",
])
def test_unrelated_chinese_prompts_around_code_names_inject_nothing(backend, stored, prompt):
    backend.add("登录接口在 src/api/users.py 里，返回 JSON。", scope=ALICE)
    backend.add("CI 用 GitHub Actions 跑 pytest，每次 push 都会触发。", scope=ALICE)
    assert recall(backend, prompt, scope=ALICE) == []


def test_a_chinese_prompt_around_code_names_recalls_by_its_words(backend, stored):
    ci = backend.add("CI 用 GitHub Actions 跑 pytest，每次 push 都会触发。", scope=ALICE).id
    assert [h.id for h in recall(backend, "每次 push 都会跑 pytest 吗？", scope=ALICE)] == [ci]


@pytest.mark.parametrize("prompt", ["今天天气怎么样？", "오늘 날씨 어때요?", "what's the weather like today?",
                                    "今日の天気はどう？", "what's the weather like this week?"])
def test_an_unrelated_prompt_naming_today_injects_nothing(backend, stored, prompt):
    # "today" is a date window that holds every memory stored today; a day alone passes the floor only in a
    # window the prompt asks about as past, and "the weather" is in no memory: nothing, today or days later
    assert recall(backend, prompt, scope=ALICE) == []
    later = (datetime.now(UTC) + timedelta(days=3)).isoformat()
    assert recall(backend, prompt, scope=ALICE, as_of=later) == []


@pytest.mark.parametrize("prompt", ["what did we do today?", "今天做了什么？", "what happened this week?"])
def test_a_prompt_naming_only_today_recalls_what_was_stored_today(backend, stored, prompt):
    hits = recall(backend, prompt, scope=ALICE)
    assert len(hits) == 5 and all(h.dated for h in hits)  # seven memories, all stored today: the top 5


@pytest.mark.parametrize("prompt", ["The", "on the", "in the", "what is the", "the and of to is a",
                                    "der die das und", "what is it?", "el la de que"])
def test_a_prompt_of_stop_words_alone_has_no_keyword_evidence_and_injects_nothing(backend, stored, conn, prompt):
    assert not evidence_terms(prompt)
    insert_turns(conn, ALICE.project_id, [("e1", "2026-11-02T10:00:00.000Z", "the deploy is on the way, what is the plan"),
                                          ("e2", "2026-11-02T10:01:00.000Z", "Die Datenbank ist in der Cloud und das ist gut")])
    assert recall(backend, prompt, scope=ALICE, include=("semantic", "sessions"), conn=conn) == []


@pytest.mark.parametrize("prompt", ["what's 17 times 23?", "17 times 23", "what is 7 plus 5 minus 2?",
                                    "what's 1200 divided by 16"])
def test_arithmetic_injects_nothing(backend, stored, conn, prompt):
    # "times" was the prompt's one keyword: it found "time zone" and injected the user's time zone
    backend.add("The user's time zone is CET; he works from Warsaw.", scope=ALICE)
    backend.add("We pay for the plus plan of the CI provider.", scope=ALICE)
    insert_turns(conn, ALICE.project_id, [("e1", "2026-11-02T10:00:00.000Z", "Build times went from 4 to 2 minutes"),
                                          ("e2", "2026-11-02T10:01:00.000Z", "Split the work into parts divided by team")])
    assert recall(backend, prompt, scope=ALICE, include=("semantic", "sessions"), conn=conn) == []


def test_stop_words_beside_a_content_word_leave_the_content_word():
    assert evidence_terms("what is the deploy plan").words == ("deploy", "plan")
    assert evidence_terms("wo ist die Datenbank").words == ("datenbank",)


def test_session_search_finds_a_cjk_word_inside_a_sentence(conn):
    insert_turns(conn, ALICE.project_id, [("e1", "2026-11-02T10:00:00.000Z", "我们的机房在上海，服务器都放在那里。"),
                                          ("e2", "2026-11-02T10:01:00.000Z", "今天午饭吃面条")])
    assert [h.entry_id for h in session_search(conn, "机房").results] == ["e1"]
    assert [h.entry_id for h in session_search(conn, "机房在哪个城市？").results] == ["e1"]
    assert session_search(conn, "天气预报怎么样").count == 0


@pytest.mark.parametrize(("query", "terms"), [
    ("机房在哪个城市？", ["机房在", "房在哪", "哪个城", "个城市"]),  # 在哪个: function characters only
    ("机房", ["机房"]),
    ("修改youer服务端", ["修改", "youer", "服务端"]),
    ("What package manager does the user prefer?", ["package", "manager", "user", "prefer"]),
])
def test_keyword_terms_cut_cjk_into_trigrams(query, terms):
    assert keyword_terms(query) == terms


def test_the_trigram_keyword_list_finds_a_chinese_memory_inside_a_sentence(backend, stored):
    found = [mid for mid, _ in backend.keyword_candidates("机房在哪个城市？", scope=ALICE)]
    assert found == [stored["zh"]]
    assert backend.keyword_candidates("今天天气怎么样？", scope=ALICE) == []


@pytest.mark.parametrize("prompt", ["猫", "ไทย", "咖啡", "🚀", "🎉🎉"])
def test_a_prompt_the_model_cannot_read_recalls_nothing_by_meaning(backend, embedder, prompt):
    from pi_memory.embed import carries_meaning

    emoji = backend.add("🚀🔥🐍", scope=ALICE)
    backend.add("Production runs PostgreSQL 16 behind pgbouncer.", scope=ALICE)
    assert not carries_meaning(embedder, prompt)
    assert backend.vector_candidates(prompt, scope=ALICE) == []
    assert emoji.id not in [h.id for h in recall(backend, prompt, scope=ALICE)]


def test_korean_words_lose_their_particles_and_endings_and_question_words_are_no_evidence():
    from pi_memory.retrieval.lang import korean_words

    assert korean_words("배포는 언제 하나요?") == ("배포",)
    assert korean_words("운영 서버의 로그는 어디에 보관되나요?") == ("운영", "서버", "로그", "보관")
    assert korean_words("금요일에 뭐 하나요") == ("금요일",)
    assert korean_words("plain words 机房") == ()


def test_one_known_piece_keeps_the_meaning(embedder):
    from pi_memory.embed import carries_meaning

    assert carries_meaning(embedder, "staging 🚀") and carries_meaning(embedder, "机房在哪个城市")
    assert embedder.unknown_share("🚀🔥🐍") == 1.0 and embedder.unknown_share("deploy the app") == 0.0


def test_a_possessive_name_is_keyword_evidence_for_the_name():
    # "John's" is the term "john" (it was "john'", found only where the text says "John's"): the turn that says
    # the car broke down holds half of the question's evidence, enough for the floor
    terms = evidence_terms("What damages happened to John's car?")
    assert terms.words == ("damag", "happen", "john", "car")
    assert terms.coverage("John: my car broke down last Friday") == 0.5
