"""`json_edit.edit`: a JSON settings file changed in place, every byte the change does not need kept."""

from __future__ import annotations

import json

import pytest

from pi_memory.integrations.hooks.json_edit import edit


@pytest.mark.parametrize(("old", "new", "expected"), [
    # a member added after the others, in the file's indent; the compact array untouched
    ('{\n  "allow": ["Bash(ls:*)"]\n}\n', {"allow": ["Bash(ls:*)"], "hooks": {"Stop": []}},
     '{\n  "allow": ["Bash(ls:*)"],\n  "hooks": {\n    "Stop": []\n  }\n}\n'),
    # a tab-indented file, a member nested two levels down
    ('{\n\t"a": {\n\t\t"b": 1\n\t}\n}', {"a": {"b": 1, "c": [1]}},
     '{\n\t"a": {\n\t\t"b": 1,\n\t\t"c": [\n\t\t\t1\n\t\t]\n\t}\n}'),
    # a one-line file stays one line with its own separators
    ('{"a":1,"b":[1,2]}', {"a": 1, "b": [1, 2, 3], "c": "x"}, '{"a":1,"b":[1,2,3],"c":"x"}'),
    # members removed, first and last; the space the file had around the rest stays
    ('{\n    "x": 1,\n    "y":  2,\n    "z": 3\n}\n', {"y": 2}, '{\n    "y":  2\n}\n'),
    # an element removed from the middle of an array, the others' own layouts kept
    ('[1, {"a" : 2},\n 3]', [1, 3], '[1,\n 3]'),
    # a value of one-line object changed: the object keeps its line
    ('{\n  "o": {"k": "v", "n": 1}\n}', {"o": {"k": "w", "n": 1}}, '{\n  "o": {"k": "w", "n": 1}\n}'),
    # every non-ASCII character escaped in the file: new text is escaped too
    ('{"name": "na\\u00efve"}', {"name": "naïve", "more": "é"}, '{"name": "na\\u00efve", "more": "\\u00e9"}'),
    # 1 and true are different JSON: a changed type is written anew
    ('{"a": 1}', {"a": True}, '{"a": true}'),
    # nothing changed: the very same text
    ('{ "a" : [ 1 ] }\n\n', {"a": [1]}, '{ "a" : [ 1 ] }\n\n'),
])
def test_only_what_changed_is_written(old, new, expected):
    assert edit(old, new) == expected
    assert json.loads(expected) == new


@pytest.mark.parametrize("old", ["{not json", '{"a": 1} {"b": 2}', ""])
def test_a_text_it_cannot_edit_in_place_is_refused(old):
    assert edit(old, {"a": 3}) is None


@pytest.mark.parametrize(("old", "new", "expected"), [
    # CRLF: the lines added end in CRLF too
    ('{\r\n  "a": 1\r\n}\r\n', {"a": 1, "b": {"c": [1]}},
     '{\r\n  "a": 1,\r\n  "b": {\r\n    "c": [\r\n      1\r\n    ]\r\n  }\r\n}\r\n'),
    # one member, after an LF "{" in a CRLF file: the break copied from after "{" becomes CRLF
    ('{\n\t"a": 1\r\n}\r\n', {"a": 1, "b": 2}, '{\n\t"a": 1,\r\n\t"b": 2\r\n}\r\n'),
    # mostly CRLF: the user's LF line stays, the break copied from it before the new member becomes CRLF
    ('{\r\n  "a": 1,\n  "m": "o"\r\n}\r\n', {"a": 1, "m": "o", "b": [2]},
     '{\r\n  "a": 1,\n  "m": "o",\r\n  "b": [\r\n    2\r\n  ]\r\n}\r\n'),
    # mostly LF: the user's CRLF line stays, ours are LF
    ('{\r\n  "a": 1,\n  "b": 2,\n  "m": "o"\n}\n', {"a": 1, "b": 2, "m": "o", "h": {}},
     '{\r\n  "a": 1,\n  "b": 2,\n  "m": "o",\n  "h": {}\n}\n'),
])
def test_the_lines_added_end_like_the_files(old, new, expected):
    assert edit(old, new) == expected


@pytest.mark.parametrize(("old", "new", "expected"), [
    # a member added: both copies of "m" and of "x" stay as they are
    ('{"m": 1, "p": {"x": 1, "x": 2}, "m": 2}', {"m": 2, "p": {"x": 2}, "h": []},
     '{"m": 1, "p": {"x": 1, "x": 2}, "m": 2, "h": []}'),
    # the value changed is the last copy's (the one a reader sees); the earlier copy stays
    ('{"m": 1, "p": {"x": 1, "x": 2}, "m": 2}', {"m": 3, "p": {"x": 2}}, '{"m": 1, "p": {"x": 1, "x": 2}, "m": 3}'),
    # a key dropped goes with all its copies
    ('{\n  "m": 1,\n  "p": 0,\n  "m": 2\n}', {"p": 0}, '{\n  "p": 0\n}'),
    # inside an array element
    ('[{"a": 1, "a": 2}]', [{"a": 2}, 3], '[{"a": 1, "a": 2}, 3]'),
])
def test_duplicate_keys_are_kept(old, new, expected):
    assert edit(old, new) == expected
    assert json.loads(expected) == new
