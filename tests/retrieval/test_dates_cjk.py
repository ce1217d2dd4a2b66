"""Chinese, Japanese and Korean date phrases (pi_memory.retrieval.dates_cjk): the windows date_windows reads
from them against a fixed as_of, what is left of the prompt, the absolute dates find_dates reads, and prompts
that must give no window."""

from __future__ import annotations

from datetime import date

import pytest

from pi_memory.retrieval import expand_query, find_dates
from pi_memory.retrieval.dates import date_windows
from pi_memory.retrieval.lang import evidence_terms

AS_OF = "2023-05-20T12:00:00.000Z"  # a Saturday


def d(text: str) -> date:
    return date.fromisoformat(text)


TODAY = (d("2023-05-19"), d("2023-05-20"))
YESTERDAY = (d("2023-05-18"), d("2023-05-20"))
TWO_DAYS = (d("2023-05-17"), d("2023-05-19"))
THREE_DAYS = (d("2023-05-16"), d("2023-05-18"))
TWO_WEEKS = (d("2023-04-29"), d("2023-05-10"))  # the 7 days ending May 6th, 3 days after, 1 day margin
TWO_MONTHS = (d("2023-02-28"), d("2023-04-01"))  # March
THREE_YEARS = (d("2019-12-31"), d("2021-01-01"))  # 2020
LAST_WEEK = (d("2023-05-07"), d("2023-05-15"))  # Monday May 8th to Sunday May 14th
WEEK_BEFORE = (d("2023-04-30"), d("2023-05-08"))
THIS_WEEK = (d("2023-05-14"), d("2023-05-20"))  # Monday May 15th to as_of's day
LAST_MONTH = (d("2023-03-31"), d("2023-05-01"))  # April
THIS_MONTH = (d("2023-04-30"), d("2023-05-20"))
LAST_YEAR = (d("2021-12-31"), d("2023-01-01"))
YEAR_BEFORE = (d("2020-12-31"), d("2022-01-01"))
THIS_YEAR = (d("2022-12-31"), d("2023-05-20"))
MAY_8 = (d("2023-05-07"), d("2023-05-09"))
DECEMBER = (d("2022-11-30"), d("2023-01-01"))  # the latest December: last year's


@pytest.mark.parametrize(("prompt", "window", "rest"), [
    ("今天的部署失败了吗", TODAY, "的部署失败了吗"),
    ("今日は何を話した？", TODAY, "は何を話した？"),
    ("오늘 회의 내용", TODAY, "회의 내용"),
    ("昨天讨论了什么", YESTERDAY, "讨论了什么"),
    ("昨日の会議", YESTERDAY, "の会議"),
    ("어제 배포는 어떻게 됐어?", YESTERDAY, "배포는 어떻게 됐어?"),
    ("前天的bug", TWO_DAYS, "的bug"),
    ("一昨日のバグ", TWO_DAYS, "のバグ"),
    ("그저께 회의", TWO_DAYS, "회의"),
    ("3天前的错误", THREE_DAYS, "的错误"),
    ("３日前のエラー", THREE_DAYS, "のエラー"),
    ("三天之前的错误", THREE_DAYS, "的错误"),
    ("3일 전에 본 에러", THREE_DAYS, "에 본 에러"),
    ("2周前的会议", TWO_WEEKS, "的会议"),
    ("2週間前の会議", TWO_WEEKS, "の会議"),
    ("两个星期前的会议", TWO_WEEKS, "的会议"),
    ("2주 전 회의", TWO_WEEKS, "회의"),
    ("2个月前的数据库迁移", TWO_MONTHS, "的数据库迁移"),
    ("2ヶ月前の移行", TWO_MONTHS, "の移行"),
    ("2か月前の移行", TWO_MONTHS, "の移行"),
    ("두 달 전 이전 작업", TWO_MONTHS, "이전 작업"),
    ("3年前的架构", THREE_YEARS, "的架构"),
    ("3년 전 설계", THREE_YEARS, "설계"),
    ("上周的讨论", LAST_WEEK, "的讨论"),
    ("上週的討論", LAST_WEEK, "的討論"),
    ("先週の会議で決めたこと", LAST_WEEK, "の会議で決めたこと"),
    ("上周末部署了什么", LAST_WEEK, "部署了什么"),
    ("지난주에 배포한 것", LAST_WEEK, "에 배포한 것"),
    ("上上周的会议", WEEK_BEFORE, "的会议"),
    ("本周的任务", THIS_WEEK, "的任务"),
    ("这周做了什么", THIS_WEEK, "做了什么"),
    ("今週のタスク", THIS_WEEK, "のタスク"),
    ("上周五的会议", ((d("2023-05-11"), d("2023-05-13"))), "的会议"),
    ("上个月的发布", LAST_MONTH, "的发布"),
    ("上個月的發布", LAST_MONTH, "的發布"),
    ("先月のリリース", LAST_MONTH, "のリリース"),
    ("지난달 릴리스", LAST_MONTH, "릴리스"),
    ("这个月的预算", THIS_MONTH, "的预算"),
    ("本月的预算", THIS_MONTH, "的预算"),
    ("今月の予算", THIS_MONTH, "の予算"),
    ("去年的项目", LAST_YEAR, "的项目"),
    ("昨年のプロジェクト", LAST_YEAR, "のプロジェクト"),
    ("작년에 한 프로젝트", LAST_YEAR, "에 한 프로젝트"),
    ("一昨年のプロジェクト", YEAR_BEFORE, "のプロジェクト"),
    ("今年的目标", THIS_YEAR, "的目标"),
    ("5月8日讨论了什么", MAY_8, "讨论了什么"),
    ("5月8号的会议", MAY_8, "的会议"),
    ("５月８日の会議", MAY_8, "の会議"),
    ("五月八日的会议", MAY_8, "的会议"),
    ("5월 8일에 한 회의", MAY_8, "에 한 회의"),
    ("6月1日的会议", ((d("2022-05-31"), d("2022-06-02"))), "的会议"),  # not yet this year: last year's
    ("5月的部署", THIS_MONTH, "的部署"),
    ("5月份的部署", THIS_MONTH, "的部署"),
    ("12月のデプロイ", DECEMBER, "のデプロイ"),
    ("12월 배포", DECEMBER, "배포"),
    ("2023年5月8日的会议", MAY_8, "的会议"),
    ("２０２３年５月８日の会議", MAY_8, "の会議"),
    ("2023 年 5 月 8 日的会议", MAY_8, "的会议"),
    ("2023년 5월 8일 회의", MAY_8, "회의"),
    ("2022年12月的事故", DECEMBER, "的事故"),
    ("2021年的项目", YEAR_BEFORE, "的项目"),
    ("2021년 프로젝트", YEAR_BEFORE, "프로젝트"),
    ("what did we decide 上周 about kafka", LAST_WEEK, "what did we decide about kafka"),
])
def test_cjk_phrases_are_read_against_as_of(prompt, window, rest):
    assert date_windows(prompt, AS_OF) == ([window], rest)


@pytest.mark.parametrize("prompt", [
    "2023年度的预算",  # a fiscal year: which days is unclear
    "今年度の予算",
    "2023년도 예산",
    "2020年代的音乐",  # a decade
    "升级到v1.5月底发布",  # a version number
    "用了3个月才完成",  # a duration, not a date
    "3ヶ月かかった",
    "3日間の研修",
    "上周期的数据",  # 周期: a cycle
    "这周围有什么",  # 周围: around
    "登上月球",  # 上 + 月球: the moon
    "日本周边的国家",
    "오늘날의 기술",  # 오늘날: nowadays
    "지난 주제로 돌아가자",  # 주제: a topic
    "내가 한 일 전부",  # 한 일: what I did
    "明天的会议",  # the future
    "15月的计划",  # no such month
    "第5月",
])
def test_cjk_look_alikes_give_no_window(prompt):
    assert date_windows(prompt, AS_OF) == ([], prompt)


def test_several_phrases_most_specific_first_and_the_calendar_ends():
    windows, rest = date_windows("2023年5月8日和上个月的讨论", AS_OF)
    assert windows == [MAY_8, LAST_MONTH] and rest == "和 的讨论"
    assert date_windows("3天前", "0001-01-02T00:00:00.000Z")[0] == []  # before the calendar: no window
    assert date_windows("今天", "9999-12-31T23:59:59.999Z")[0] == [(d("9999-12-30"), d("9999-12-31"))]
    assert date_windows("2023年2月30日", AS_OF)[0] == [(d("2023-01-31"), d("2023-03-01"))]  # no such day: month


def test_find_dates_reads_cjk_dates_with_a_year():
    assert find_dates("2023年5月8日") == [(d("2023-05-08"), d("2023-05-08"))]
    assert find_dates("２０２３年５月８号") == [(d("2023-05-08"), d("2023-05-08"))]
    assert find_dates("2023년 5월") == [(d("2023-05-01"), d("2023-05-31"))]
    assert find_dates("2022年と2023年5月8日") == [(d("2023-05-08"), d("2023-05-08")),
                                                (d("2022-01-01"), d("2022-12-31"))]  # most specific first
    assert find_dates("2024年2月29日 and May 2023") == [(d("2024-02-29"), d("2024-02-29")),
                                                     (d("2023-05-01"), d("2023-05-31"))]
    assert find_dates("2023年度") == [] and find_dates("5月8日") == []  # no year: read against as_of
    assert expand_query("2023年5月に何を決めた？").dates == ((d("2023-05-01"), d("2023-05-31")),)


@pytest.mark.parametrize("prompt", ["5月8号左右的会议", "3天以前的会议", "上个月份的会议", "去年底的会议",
                                    "2023年5月中旬的会议", "5月8日頃の会議", "2日ほど前の会議", "지난 주말의 회의"])
def test_no_fragment_of_a_phrase_is_left_as_a_keyword(prompt):
    windows, rest = date_windows(prompt, AS_OF)
    assert windows
    evidence = evidence_terms(rest)
    kept = {c for grams in evidence.cjk for g in grams for c in g} | set("".join(evidence.words))
    assert kept <= set("的会议の会議회의")  # only the prompt's own words are keyword evidence
