"""Date phrases in Russian, German, Spanish, French and Portuguese (pi_memory.retrieval.dates_eu): the windows
date_windows reads from them against a fixed as_of, what is left of the prompt, prompts that must give no
window, and a tester's recall: "Какой порт был у staging gateway в мае?" injected nothing."""

from __future__ import annotations

from datetime import date

import pytest
from semantic_helpers import ALICE, insert_turns

from pi_memory.retrieval.dates import date_windows
from pi_memory.retrieval.engine import recall

AS_OF = "2026-06-17T10:00:00.000Z"  # a Wednesday

TODAY = (date(2026, 6, 16), date(2026, 6, 17))
YESTERDAY = (date(2026, 6, 15), date(2026, 6, 17))
TWO_DAYS = (date(2026, 6, 14), date(2026, 6, 16))
THREE_DAYS = (date(2026, 6, 13), date(2026, 6, 15))
TWO_WEEKS = (date(2026, 5, 27), date(2026, 6, 7))  # the 7 days ending June 3rd, 3 days after, 1 day margin
LAST_WEEK = (date(2026, 6, 7), date(2026, 6, 15))  # Monday June 8th to Sunday June 14th
THIS_WEEK = (date(2026, 6, 14), date(2026, 6, 17))
LAST_MONTH = (date(2026, 4, 30), date(2026, 6, 1))  # May
LAST_YEAR = (date(2024, 12, 31), date(2026, 1, 1))
MAY = LAST_MONTH
MARCH = (date(2026, 2, 28), date(2026, 4, 1))
MAY_3 = (date(2026, 5, 2), date(2026, 5, 4))


@pytest.mark.parametrize(("prompt", "window", "rest"), [
    ("что мы решили вчера?", YESTERDAY, "что мы решили ?"),
    ("Сегодня упал деплой", TODAY, "упал деплой"),
    ("позавчера был релиз", TWO_DAYS, "был релиз"),
    ("ошибка 3 дня назад", THREE_DAYS, "ошибка"),
    ("что было на прошлой неделе", LAST_WEEK, "что было"),
    ("какой порт был у gateway в мае", MAY, "какой порт был у gateway"),
    ("релиз 3 мая", MAY_3, "релиз"),
    ("Was haben wir gestern beschlossen?", YESTERDAY, "Was haben wir beschlossen?"),
    ("der Fehler vor 3 Tagen", THREE_DAYS, "der Fehler"),
    ("das Meeting vor zwei Wochen", TWO_WEEKS, "das Meeting"),
    ("letzte Woche im Team", LAST_WEEK, "im Team"),
    ("Welchen Port hatte das Gateway im Mai?", MAY, "Welchen Port hatte das Gateway ?"),
    ("das Release am 3. Mai", MAY_3, "das Release"),
    ("¿qué decidimos ayer?", YESTERDAY, "¿qué decidimos ?"),
    ("el error de hace 3 días", THREE_DAYS, "el error de"),
    ("¿qué puerto usamos la semana pasada?", LAST_WEEK, "¿qué puerto usamos ?"),
    ("la migración en mayo", MAY, "la migración"),
    ("el despliegue del 3 de mayo", MAY_3, "el despliegue del"),
    ("qu'avons-nous décidé hier ?", YESTERDAY, "qu'avons-nous décidé ?"),
    ("aujourd’hui le build est cassé", TODAY, "le build est cassé"),
    ("la panne il y a trois jours", THREE_DAYS, "la panne"),
    ("la migration en mars", MARCH, "la migration"),
    ("la réunion de la semaine dernière", LAST_WEEK, "la réunion de"),
    ("o que decidimos ontem?", YESTERDAY, "o que decidimos ?"),
    ("o erro de há 3 dias", THREE_DAYS, "o erro de"),
    ("a migração em maio", MAY, "a migração"),
    ("o deploy de 3 de maio", MAY_3, "o deploy de"),
    ("nesta semana o build quebrou", THIS_WEEK, "o build quebrou"),
    ("das Budget letztes Jahr", LAST_YEAR, "das Budget"),
    ("el presupuesto el mes pasado", LAST_MONTH, "el presupuesto"),
    # a year named with the month is kept (a tester's case: these gave 2026)
    ("der Umzug im März 2019", (date(2019, 2, 28), date(2019, 4, 1)), "der Umzug"),
    ("la migration en mars 2019", (date(2019, 2, 28), date(2019, 4, 1)), "la migration"),
    ("что было в мае 2019 года", (date(2019, 4, 30), date(2019, 6, 1)), "что было"),
    ("el despliegue del 3 de mayo de 2021", (date(2021, 5, 2), date(2021, 5, 4)), "el despliegue del"),
    ("das Release am 3. Mai 2020", (date(2020, 5, 2), date(2020, 5, 4)), "das Release"),
])
def test_date_windows_read_against_as_of(prompt, window, rest):
    windows, left = date_windows(prompt, AS_OF)
    assert windows == [window]
    assert left == rest


LAST_TUESDAY = (date(2026, 6, 15), date(2026, 6, 17))  # Tuesday June 16th, one day each side
LAST_FRIDAY = (date(2026, 6, 11), date(2026, 6, 13))  # Friday June 12th
LAST_WEDNESDAY = (date(2026, 6, 9), date(2026, 6, 11))  # asked on a Wednesday: the week before's


@pytest.mark.parametrize(("prompt", "window", "rest"), [
    # "last <weekday>": the tester's three prompts read no window
    ("Was haben wir letzten Dienstag entschieden?", LAST_TUESDAY, "Was haben wir entschieden?"),
    ("¿Qué decidimos sobre la caché el martes pasado?", LAST_TUESDAY, "¿Qué decidimos sobre la caché ?"),
    ("что мы решили в прошлый вторник?", LAST_TUESDAY, "что мы решили ?"),
    ("что было в прошлую пятницу?", LAST_FRIDAY, "что было ?"),
    ("¿Qué pasó el pasado viernes?", LAST_FRIDAY, "¿Qué pasó ?"),
    ("qu'avons-nous décidé mardi dernier ?", LAST_TUESDAY, "qu'avons-nous décidé ?"),
    ("o que decidimos na terça-feira passada?", LAST_TUESDAY, "o que decidimos ?"),
    ("Wir haben am vergangenen Mittwoch deployt", LAST_WEDNESDAY, "Wir haben deployt"),
    # a tester's phrasings that read no window
    ("na última terça o deploy falhou", LAST_TUESDAY, "o deploy falhou"),
    ("¿Qué pasó el último martes?", LAST_TUESDAY, "¿Qué pasó ?"),
    ("qu'est-ce qu'on a fait le mardi passé ?", LAST_TUESDAY, "qu'est-ce qu'on a fait ?"),
    ("Letzter Dienstag war chaotisch", LAST_TUESDAY, "war chaotisch"),
    ("o que fizemos terça-feira passada?", LAST_TUESDAY, "o que fizemos ?"),
])
def test_last_weekday_in_five_languages(prompt, window, rest):
    assert date_windows(prompt, AS_OF) == ([window], rest)


@pytest.mark.parametrize("prompt", [
    "am Dienstag deployen wir", "el martes hacemos deploy", "mardi on déploie",  # no "last": maybe the coming one
    # Portuguese "segunda/quinta passada" is also "the second/fifth pass": no window without "na"/"no" or "-feira"
    "Otimize a segunda passada do algoritmo de ordenação", "a quinta passada do teste falhou",
    "hier ist der Code für das Gateway",  # German "here", not French "yesterday"
    "Mars is the fourth planet", "Mai Tran reviewed the gateway", "el mayo es un mes",  # no preposition
    "der Mai-Baum", "la marche en avant", "вчерашний отчёт готов",  # a longer word, not the date word
    "mañana lo vemos", "morgen früh", "завтра релиз",  # the future: no window
    # a tester's cases: Russian words that start like a month, numbers before an English word that is a month
    # elsewhere, Dutch "hier" ("here"), a day that does not exist
    "он в маяке", "в майке", "3 майки", "3 Mars rovers", "2 Mai Tais", "hier is de config",
    "el 30 de febrero de 2021",
])
def test_prompts_without_a_date_phrase_have_no_window(prompt):
    assert date_windows(prompt, AS_OF)[0] == []


def test_a_russian_question_with_a_date_recalls_the_turn_with_its_technical_words(backend, conn):
    insert_turns(conn, ALICE.project_id, [
        ("e1", "2026-05-12T10:00:00.000Z", "The staging gateway now listens on port 7002"),
        ("e2", "2026-06-02T10:00:00.000Z", "lunch plans for friday, the thai place again")])
    for prompt in ("Какой порт был у staging gateway в мае?", "Welchen Port hatte das staging gateway im Mai?",
                   "¿Qué puerto tenía el staging gateway en mayo?"):
        hits = recall(backend, prompt, scope=ALICE, include=("sessions",), conn=conn, as_of=AS_OF)
        assert hits and hits[0].id == "s1#e1", prompt  # (its neighbour may follow: the answer's next turn)
        assert hits[0].dated and "dates" in hits[0].ranks


@pytest.mark.parametrize(("prompt", "bare"), [
    ("что мы сделали сегодня?", True), ("Was haben wir heute gemacht?", True), ("¿Qué hicimos hoy?", True),
    ("¿Qué hemos hecho hoy?", True), ("Qu'avons-nous fait aujourd'hui ?", True), ("O que fizemos hoje?", True),
    ("il fait beau aujourd'hui", False), ("was hat der Kunde heute über Kafka gesagt", False),
    ("как погода сегодня", False),
])
def test_a_prompt_asking_only_what_went_on_today_is_told_apart(prompt, bare):
    """Such a prompt lets a day of today's window alone past recall's floor (dates.what_went_on)."""
    from pi_memory.retrieval.dates import what_went_on
    from pi_memory.retrieval.lang import evidence_terms

    windows, rest = date_windows(prompt, AS_OF)
    assert [w.holds_today for w in windows] == [True]
    left = what_went_on(rest)
    assert (left is not None and not evidence_terms(left)) is bare
