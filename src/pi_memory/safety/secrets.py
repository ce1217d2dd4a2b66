"""Secret detection and redaction for text about to be stored or handed to another service.

Shapes
------
* ``scan_secrets(text) -> list[Finding]`` — one ``Finding(id, "secret", span)`` per id (first occurrence),
  ordered by position. ``span`` covers the secret *value* only (not the ``password:`` label), in raw offsets.
* ``redact(text) -> str`` — every secret value replaced by ``[REDACTED:<id>]``; the words around it stay.
* ``secret_spans(text) -> list[SecretSpan]`` — every secret value (not only the first per id) as
  ``SecretSpan(start, end, id)`` in raw offsets, sorted and non-overlapping: for callers that must know where
  each credential is (the session index redacts at index time and keeps snippet windows off them).

Ids (ours; the formats are the vendors' public token formats):

=======================  =============================================================================
id                       detects
=======================  =============================================================================
private_key_block        ``-----BEGIN … PRIVATE KEY-----`` (the whole block up to its END line; a block cut short,
                         with no END line, from the header to the last line of base64 after it)
putty_private_key        the ``Private-Lines: N`` base64 lines of a PuTTY ``.ppk`` key (format 2/3) and its
                         ``Private-MAC:`` line; the header and public lines stay
age_secret_key           ``AGE-SECRET-KEY-1`` (or ``-PQ-1``) + its bech32 body (an age encryption key)
anthropic_api_key        ``sk-ant-…`` (20+ chars)
openai_api_key           ``sk-…``, ``sk-proj-…``, ``sk-svcacct-…`` (20+ chars with letters and digits)
github_token             ``ghp_/gho_/ghu_/ghs_/ghr_`` + 30+ chars, ``github_pat_`` + 22+ chars
aws_access_key_id        ``AKIA``/``ASIA`` + 16 upper-case letters or digits
aws_secret_access_key    ``aws_secret_access_key = <40 chars>``, or a 40-char base64 value (upper, lower and a
                         digit or ``/``/``+``; not hex) within 80 chars after or 40 before "aws"/"secret"/"amazon"
google_api_key           ``AIza`` + 35 chars
slack_token              ``xoxb-/xoxp-/xoxa-/xoxr-/xoxs-/xapp-`` + 10+ chars
webhook_url              Slack ``https://hooks.slack.com/services/…``, Discord ``/api/webhooks/…``, Teams
                         ``….webhook.office.com/webhookb2/…`` (the URL is the credential)
stripe_key               ``sk_live_/rk_live_/sk_test_/rk_test_`` + 16+ chars (publishable ``pk_`` keys are not secret)
huggingface_token        ``hf_`` + 30+ letters/digits
npm_token                ``npm_`` + 30+ letters/digits
gitlab_token             ``glpat-`` + 20+ chars; ``glrt-`` (runner), ``gldt-``, ``glptt-``, ``glft-``, ``glimt-``,
                         ``glagent-``, ``glsoat-``, ``glcbt-``, ``gloas-``, ``glffct-``, ``glrtr-`` + 20+ chars with a
                         digit or both cases; the routable ``.xx…`` suffix and an instance prefix (``SIE-glpat-``)
pypi_token               ``pypi-AgE…`` + 50+ base64url chars (a PyPI / TestPyPI API token, a macaroon)
dockerhub_token          Docker Hub ``dckr_pat_`` / ``dckr_oat_`` + 24+ chars
shopify_token            Shopify ``shpat_/shpss_/shpca_/shppa_`` + 32 hex
google_oauth_secret      Google OAuth client secret ``GOCSPX-`` + 24-40 chars
vault_token              HashiCorp Vault ``hvs.``/``hvb.``/``hvr.`` + 24+ chars; the older ``s.`` + 24 letters and
                         digits only with "vault"/"token" within 60 chars
telegram_bot_token       ``<6-12 digit bot id>:<30-40 chars>``, the secret part starting ``AA`` or with "telegram"/"bot"
                         within 80 chars, mixed case and entropy >= 3.5 bits/char
sendgrid_key             ``SG.<16-32 chars>.<16-64 chars>``
digitalocean_token       ``dop_v1_/doo_v1_/dor_v1_`` + 64 hex
twilio_key               ``SK`` + 32 hex (an API key SID), alone as a word
jwt                      three base64url segments, the first starting ``eyJ``
discord_bot_token        Discord bot token: ``<base64url of the bot id>.<6>.<27-38>``, the first part decoding to
                         17-20 digits (``_secret_formats``)
azure_key                ``AccountKey=…``, ``SharedAccessKey=…``, ``SharedAccessSignature=…``, a SAS ``sig=…``
url_credentials          ``scheme://user:password@host`` (the password part)
netrc_password           a ``.netrc`` entry's ``password`` value (``machine <host> login <user> password <pw>``,
                         one line or several; ``default`` entries too)
pgpass_password          a ``.pgpass`` line ``host:port:database:user:password`` (numeric port or ``*``)
basic_auth               ``Basic <base64>`` that decodes to ``user:password``
docker_auth              Docker ``config.json`` ``"auth": "<base64 of user:password>"``
bearer_token             ``Bearer <20+ token chars>`` (not a CONSTANT_NAME placeholder, entropy ≥ 3 bits/char)
cli_password             ``sshpass -p pw``, ``mysql -pPW``, ``redis-cli -a pw``, ``curl -u user:pw``,
                         ``--password pw``, ``--db-password pw``, ``docker/podman/… login -p pw``,
                         ``twine upload -p pw``, ``mongosh/mongodump/… -p pw``
cli_token                ``--token X``, ``--api-token X``, ``--github-token=X``, ``-client-secret X``, … with a value an
                         assignment takes (16+ chars, letters and digits, entropy ≥ 3)
xml_secret               an XML element ``<password>``/``<dbPassword>``/``<secret>``/``<token>``/``<apiKey>``/… up
                         to its closing tag, or ``<add key="ApiKey" value="…"/>`` / ``<property name="password"
                         value="…"/>`` (rules in ``_secret_formats``)
password_in_prose        ``password: x``, ``Password for Test WebUI: x``, ``pw = "x"``, ``the password is x``,
                         ``password is: x``, ``pass=x``, ``passphrase x`` or ``'x y z'`` (6+ chars; not "forgot my password",
                         "password policy", "password: required"); a passphrase of 3-8 words ("password is correct
                         horse battery staple", rule in ``_secret_words``); a 4-5 character value after ``pw:``,
                         ``pass=``, ``pass:`` as a label, 4-5 after ``pw is``, 2-3 mixed after ``password:``, one
                         letter (``pw: toor``, ``pass: toor``, ``pw is toor``, ``password: 42x``, ``pass = x``;
                         ``_secret_keys``), a value alone on the line after its label or heading
                         (``Password:\nX``, ``## Password\nX``), a cell under a password column of a Markdown table,
                         and a password cell of a table row with no header (``| db | admin | X |``, ``| root | toor
                         |``; ``_secret_layout``)
secret_assignment        ``api_key/secret/token/… = <16+ chars, letters and digits, entropy ≥ 3 bits/char>``,
                         also written ``the API token is <value>`` / ``the secret is: <value>`` / ``the api token for
                         sentry is <value>`` (``_secret_qualified``), and with only a space when the value is 32+ hex
                         or random base64 (``use token 3f9a…``; ``_secret_pairs``);
                         key material after a label naming a key, cookie, seed or salt (``encryption key: 4Gx7…==``,
                         ``session cookie is …``; ``_secret_keys``), on the line after such a label or under such a
                         table column (``_secret_layout``)
password_phrase          a password/secret label in 11 languages (``Passwort ist X``, ``пароль: X``, ``密码是X``,
                         ``wifi pass: X``, ``secret=X``, ``set password to X``) with a value that looks like a
                         credential, or a plain word in a definite form (``Passwort ist sommerwiese``,
                         ``пароль: подсолнух``, ``密码是向日葵``; ``_secret_words``); also ``password -> X``,
                         ``password is now X``, ``пароль X`` and the Persian ``رمز عبور سرور X است`` when X looks
                         random (rule and reasons in ``_secret_phrases``), ``contraseña del wifi es Gato-Azul-77``;
                         only what the rows above miss
credential_pair          the password of a login pair: ``login: admin / hunter2``, ``creds are admin:Sup3rS3cret!``,
                         ``Zugangsdaten: admin / Geheim123`` (the user name stays; rule in ``_secret_pairs``),
                         ``login admin:X on grafana`` (``_secret_qualified``)
payment_card             13-19 digits with a card network's prefix passing the Luhn check, grouped
                         (``4111 1111 1111 1111``) or with a card word nearby (``visa 4111111111111111``)
pin_code                 a PIN, PUK, passcode, door/gate/alarm code or safe combination: ``PIN: 4821``, ``my bank PIN
                         is 4821``, ``the door code is 7731``, ``safe combination: 12-34-56`` (4-8 digits after a label
                         that names a secret code; not a board's ``pin 13``; rule in ``_secret_codes``)
seed_phrase              a BIP39 wallet seed: 12-24 words of one of its lists (any language the ``mnemonic`` package
                         ships, any case, mid-sentence too) with a valid checksum or after a seed label
                         (``seed phrase: legal winner thank …``; rule in ``_secret_seeds``; last row)
=======================  =============================================================================

Only values count: an environment variable *name* (``OPENAI_API_KEY``) is where a secret lives, not a secret.
When two patterns cover the same text, the earlier row of the table wins (so ``OPENAI_API_KEY=sk-proj-…``
reports ``openai_api_key``, not ``secret_assignment``).

Escaped text is read as decoded too (``_escapes``): a tool call is stored as compact JSON, so a config file it
writes holds ``{\\"password\\": \\"x\\"}`` or ``password: x\\n``; each level of JSON-style escapes (at most three) is
decoded, scanned near its escapes, and what it finds is mapped back to the text, whose escapes stay.

Matching runs on the folded text of ``_text.fold`` (NFKC, ignorable characters removed), so a key typed
in full-width characters or split by a soft hyphen / zero-width space is still found; spans are mapped
back to the raw text, so ``redact`` removes the hidden characters along with the value.

Decisions
---------
* Placeholders are not secrets. A password-like value (``password_in_prose``, ``url_credentials``,
  ``cli_password``, ``azure_key``) is ignored when it starts with ``$ < { % * [ (`` (``${PASSWORD}``,
  ``<password>``, ``****``, ``[REDACTED:…]``), contains "example", "placeholder", "changeme", "redacted",
  "dummy" or starts with "your" (``example-only``, ``your_password``), uses at most two distinct characters
  (``xxxxxxxx``), or is a well-known default (``password``, ``secret``, ``admin``, ``root``, ``postgres``,
  ``changeme``, …): defaults are documented, not secret. Cost: a real password that happens to be
  ``postgres`` is not caught. Token formats with a vendor prefix have no placeholder exemption.
* "the password is <word>": a plain lower-case word of 6+ letters counts when it ends the clause and does not
  read as prose (required, incorrect, expired, stored, wrong, unique, …; or an -ed/-ly/-ing/-able/-ive/… ending),
  unless it is a word people choose ("butterfly", ``_secret_values._COMMON_WORDS``): "password is letmein" is
  caught, "the password is required" / "is too short" / "is stored in the vault" are not. Cost: another word with
  such an ending ("password is lightning") or one a sentence goes on after ("is letmein and …") is missed.
* ``url_credentials`` needs a password part (``postgres://user@host`` has none) of 4+ characters. ``bearer_token``
  ignores CONSTANT_NAME placeholders (``Bearer YOUR_ACCESS_TOKEN``) and low-entropy values.
* ``pass`` alone (``pass=x``) counts with ``=``, and with ``:`` only as a label (nothing but list marks, a bracket,
  a comma, a pipe, a slash or a user name before it on its line): "tests pass: 42", "mountain pass: Furka" and "the
  pass is ..." are prose. ``passphrase x`` without ``:``/``=``/``is`` needs 8+ characters with a digit or symbol.
* ``twilio_key`` needs ``SK`` in capitals and exactly 32 hex digits as a whole word; ``aws_secret_access_key`` in
  prose needs its context word, so random 40-char base64 strings elsewhere and git hashes are not reported.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from . import _secret_codes as _codes
from . import _secret_layout as _layout
from . import _secret_qualified as _qual
from ._escapes import merge_spans, still_missing, view_spans, views
from ._keywords import keyword_hits
from ._secret_formats import (
    CLI_TOKEN_KEYWORDS,
    CLI_TOKEN_PATTERN,
    DISCORD_HINT,
    DISCORD_PATTERN,
    XML_ATTRIBUTE_HINT,
    XML_ATTRIBUTE_PATTERN,
    XML_ELEMENT_HINT,
    XML_ELEMENT_PATTERN,
    XML_KEYWORDS,
    cli_token,
    discord_token,
    random_body,
    xml_attribute,
    xml_element,
)
from ._secret_pairs import (
    BARE_TOKEN_ANCHOR,
    BARE_TOKEN_KEYWORDS,
    BARE_TOKEN_PATTERN,
    PAIR_ANCHOR,
    PAIR_KEYWORDS,
    PAIR_PATTERN,
    bare_token,
    pair_password,
)
from ._secret_phrases import (
    NETRC_PATTERN,
    PHRASE_KEYWORDS,
    PHRASE_PATTERN,
    PUTTY_PATTERN,
    netrc_password,
    phrase_value,
    putty_private_key,
)
from ._secret_search import matches as search_row
from ._secret_seeds import SEED_ROWS, seed_phrase
from ._secret_values import (
    _assignment_value,
    _aws_prose,
    _basic_credentials,
    _bearer_value,
    _card_number,
    _cli_password,
    _first_group_value,
    _key_block,
    _password_value,
    _pgpass_line,
    _telegram_token,
    _url_password,
    _vault_legacy,
)
from ._secret_words import PASSPHRASE_KEYWORDS, PASSPHRASE_PATTERN, passphrase_value
from ._text import escape_readings, fold
from .threats import Finding

SECRET = "secret"

@dataclass(frozen=True)
class _SecretPattern:
    id: str
    pattern: str
    keywords: tuple[str, ...]  # prefilter, matched against the lower-cased text
    group: str | int = 0  # the group holding the secret value
    validate: Callable[[re.Match[str], str], tuple[int, int] | None] | None = None
    flags: int = 0
    requires: tuple[str, ...] = ()  # none of the secret rows has a second keyword list
    hint: str | None = None  # a regex every match holds (``_secret_search``)
    anchor: int | None = None  # every match holds a keyword at most this many characters after its start
    near: tuple[int, int] | None = None  # (reach, width): see ``_secret_search.near``

    @functools.cached_property
    def regex(self) -> re.Pattern[str]:
        """Compiled on first use (the keyword prefilter decides whether a row ever runs): see
        :class:`pi_memory.safety._threat_base.ThreatPattern`."""
        return re.compile(self.pattern, self.flags)

    @functools.cached_property
    def hint_regex(self) -> re.Pattern[str] | None:
        return re.compile(self.hint, self.flags) if self.hint is not None else None


def _sp(id_: str, pattern: str, *keywords: str, flags: int = 0, group: str | int = 0, validate=None,
        hint: str | None = None, anchor: int | None = None, near: tuple[int, int] | None = None):
    return _SecretPattern(id_, pattern, keywords, group, validate, flags, (), hint, anchor, near)


_I = re.IGNORECASE
_QV = r"(?:(?P<q{n}>[\"'])(?P<v{n}>[^\"'\n]{{1,200}})(?P=q{n})|(?P<v{m}>[^\s\"'|;&]{{1,200}}))"


def _qv(n: int) -> str:
    """A quoted or bare command-line value, as named groups ``v<n>`` (quoted) and ``v<n+1>`` (bare)."""
    return _QV.format(n=n, m=n + 1)


# Literal-first patterns ("sk-(?<![\w-]sk-)…") check the word boundary *after* the prefix so that the
# regex engine can jump between prefix hits instead of trying every position.
PATTERNS: tuple[_SecretPattern, ...] = (
    _sp("private_key_block",
        r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?P<body>(?:(?!-----(?:BEGIN|END))[\s\S])"
        r"{0,20000}-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----)?",
        "private key", flags=_I, validate=_key_block),
    _sp("putty_private_key", PUTTY_PATTERN, "private-lines", validate=putty_private_key),
    _sp("age_secret_key", r"AGE-SECRET-KEY-(?<![\w-]AGE-SECRET-KEY-)(?:PQ-)?1[02-9AC-HJ-NP-Z]{50,300}(?![A-Za-z0-9])",
        "age-secret-key-", flags=_I),
    _sp("anthropic_api_key", r"sk-ant-(?<![\w-]sk-ant-)[A-Za-z0-9_-]{20,}", "sk-ant-"),
    _sp("openai_api_key",
        r"sk-(?<![\w-]sk-)(?!ant-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]{0,200}?\d)"
        r"(?=[A-Za-z0-9_-]{0,200}?[A-Za-z])[A-Za-z0-9_-]{20,}",
        "sk-"),
    _sp("github_token",
        r"(?:gh[pousr]_(?<![A-Za-z0-9_]gh._)[A-Za-z0-9]{30,}"
        r"|github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{22,})",
        "gh", "github_pat_"),
    _sp("pi_memory_token", r"pim_(?<![\w-]pim_)[0-9a-f]{12}_[A-Za-z0-9_-]{40,}", "pim_"),  # serve token create
    _sp("aws_access_key_id", r"A[KS]IA(?<![A-Za-z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Za-z0-9])", "akia", "asia"),
    _sp("aws_secret_access_key",
        r"aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        "secret", flags=_I, group=1, anchor=4),
    _sp("google_api_key", r"AIza(?<![\w-]AIza)[0-9A-Za-z_-]{35}(?![\w-])", "aiza"),
    _sp("slack_token", r"x(?<![\w-]x)(?:ox[abprs]|app)-[A-Za-z0-9-]{10,}", "xox", "xapp-"),
    _sp("webhook_url",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,300}"
        r"|https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{5,30}/[\w-]{20,200}"
        r"|https://[\w-]{1,63}\.webhook\.office\.com/webhookb2/[^\s\"'<>]{20,500}",
        "hooks.slack.com", "discord", "webhook.office.com", flags=_I, anchor=72),  # 8 + 63 + 1 before the last
    _sp("stripe_key", r"[sr]k_(?<![\w-][sr]k_)(?:live|test)_[A-Za-z0-9]{16,}", "_live_", "_test_"),
    _sp("huggingface_token", r"hf_(?<![\w-]hf_)[A-Za-z0-9]{30,}(?![A-Za-z0-9])", "hf_"),
    _sp("npm_token", r"npm_(?<![\w-]npm_)[A-Za-z0-9]{30,}(?![A-Za-z0-9])", "npm_"),
    _sp("gitlab_token", r"glpat-(?<![A-Za-z0-9_]glpat-)[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{2,12}){0,2}(?![\w-])", "glpat-"),
    _sp("gitlab_token",  # the other prefixes GitLab gives its tokens (runner, deploy, trigger, feed, OAuth app, ...)
        r"gl(?<![A-Za-z0-9_]gl)(?:rtr?|dt|ptt|ft|imt|agent|soat|cbt|oas|ffct)-[A-Za-z0-9_-]{20,}"
        r"(?:\.[0-9a-z]{2,12}){0,2}(?![\w-])", "gl", validate=random_body),
    _sp("pypi_token", r"pypi-(?<![\w-]pypi-)AgE[A-Za-z0-9_-]{50,}", "pypi-"),
    _sp("dockerhub_token", r"dckr_(?<![\w-]dckr_)(?:pat|oat)_[A-Za-z0-9_-]{24,}(?![\w-])", "dckr_"),
    _sp("shopify_token", r"shp(?<![\w-]shp)(?:at|ss|ca|pa)_[a-fA-F0-9]{32}(?![A-Za-z0-9])", "shp"),
    _sp("google_oauth_secret", r"GOCSPX-(?<![\w-]GOCSPX-)[A-Za-z0-9_-]{24,40}(?![\w-])", "gocspx-"),
    _sp("vault_token", r"hv[sbr]\.(?<![\w.-]hv[sbr]\.)[A-Za-z0-9_-]{24,}(?![\w-])", "hvs.", "hvb.", "hvr."),
    _sp("vault_token", r"s\.(?<![\w.-]s\.)[A-Za-z0-9]{24}(?![\w-])", "vault", "token",
        validate=_vault_legacy),
    _sp("telegram_bot_token", r"[b\d](?<![\w:.-][b\d])(?:(?<=b)ot\d{6,12}|(?<=\d)\d{5,11}):(?P<v>[A-Za-z0-9_-]{30,40})(?![\w-])",
        ":aa", "telegram", "bot", validate=_telegram_token, hint=r":(?<=\d:)[A-Za-z0-9_-]{30}"),
    _sp("sendgrid_key", r"SG\.(?<![\w.-]SG\.)[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}(?![\w-])", "sg."),
    _sp("digitalocean_token", r"do[opr]_v1_(?<![\w-]do[opr]_v1_)[a-f0-9]{64}(?![A-Za-z0-9])", "_v1_"),
    _sp("twilio_key", r"SK(?<![A-Za-z0-9]SK)[0-9a-fA-F]{32}(?![A-Za-z0-9])", "sk", anchor=0),
    _sp("jwt", r"eyJ(?<![\w-]eyJ)[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "eyj"),
    _sp("discord_bot_token", DISCORD_PATTERN, ".", validate=discord_token, hint=DISCORD_HINT),
    _sp("azure_key",  # every branch starts with a literal, so the engine can skip between candidates
        r"AccountKey(?<![\w-]AccountKey)[ \t]*=[ \t]*(?P<v1>[A-Za-z0-9+/=]{20,200})"
        r"|SharedAccessKey(?<![\w-]SharedAccessKey)[ \t]*=[ \t]*(?P<v2>[A-Za-z0-9+/=]{20,200})"
        r"|SharedAccessSignature(?<![\w-]SharedAccessSignature)[ \t]*=[ \t]*(?P<v3>[^;\s\"']{20,500})"
        r"|\?sig=(?P<v4>[A-Za-z0-9%+/=]{20,200})|&sig=(?P<v5>[A-Za-z0-9%+/=]{20,200})",
        "accountkey", "sharedaccess", "sig=", validate=_first_group_value(20)),
    _sp("url_credentials",  # anchored on "://"; the validator checks the scheme before it
        r"://[^\s:/@?#\[\]\"'<>]{0,100}:(?P<v1>[^\s/@?#\"'<>]{1,200})@(?=[\w\[])",
        "://", validate=_url_password, anchor=0),
    _sp("netrc_password", NETRC_PATTERN, "machine", "default", validate=netrc_password, anchor=0),
    _sp("pgpass_password",  # host:port:database:user:password, each of the first four may be "*"
        r"(?<![^\s\"'`])(?P<host>[A-Za-z0-9._-]{1,253}|\*):(?:\d{1,5}|\*):(?:[^\s:\\\"'`]|\\.){1,100}"
        r":(?:[^\s:\\\"'`]|\\.){1,100}:(?P<v>(?:[^\s:\\\"'`]|\\.){1,200})(?![^\s\"'`])",
        ":", validate=_pgpass_line, hint=r":(?:\d{1,5}|\*):[^\s:]"),  # a port (or "*") between colons
    _sp("basic_auth", r"Basic(?<![\w-]Basic)[ \t]+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=-])", "basic",
        flags=_I, validate=_basic_credentials, anchor=0),
    _sp("docker_auth", r"\"auth\"[ \t]*:[ \t]*\"(?P<v>[A-Za-z0-9+/]{8,}={0,2})\"", '"auth"',
        validate=_basic_credentials),
    _sp("bearer_token", r"\bBearer[ \t]+([A-Za-z0-9._~+/=-]{20,})", "bearer",
        flags=_I, group=1, validate=_bearer_value, anchor=0),
    # Anchored on the flag; the validator looks back for the tool in the same command.
    _sp("cli_password",
        rf"-(?:(?<![^ \t]-)(?P<p>p)(?P<sp>[ \t]*){_qv(1)}"
        rf"|(?<![^ \t]-)(?P<a>a)[ \t]+{_qv(3)}"
        r"|(?<![^ \t]-)(?P<u>u|-user)[ \t=]*[\"']?[^\s:\"']{1,100}:(?P<v5>[^\s\"'|;&@]{1,200})"
        rf"|(?<![\w-]-)-(?:[A-Za-z0-9]{{1,20}}-){{0,3}}(?:password|passwd|passphrase)[ \t]+(?!-){_qv(6)})",
        "sshpass", "mysql", "mariadb", "redis-cli", "curl", "--pass", "docker", "podman", "nerdctl", "buildah",
        "skopeo", "oras", "helm", "crane", "pass", "twine", "mongo", validate=_cli_password),
    _sp("cli_token", CLI_TOKEN_PATTERN, *CLI_TOKEN_KEYWORDS, validate=cli_token),
    _sp("xml_secret", XML_ELEMENT_PATTERN, *XML_KEYWORDS, flags=_I, validate=xml_element, hint=XML_ELEMENT_HINT),
    _sp("xml_secret", XML_ATTRIBUTE_PATTERN, *XML_KEYWORDS, flags=_I, validate=xml_attribute,
        hint=XML_ATTRIBUTE_HINT),
    # a passphrase of several words ("wifi password is correct horse battery staple"), before the one-word row
    _sp("password_in_prose", PASSPHRASE_PATTERN, *PASSPHRASE_KEYWORDS, validate=passphrase_value, anchor=0),
    _sp("password_in_prose",
        r"(?P<key>password|passwd|passphrase|passcode|pwd|pw|pass)(?![A-Za-z0-9])"
        r"(?:[ \t]+(?:for|of|on|at|to)[ \t]+[^:=\n\"]{1,40}?)?[\"']?"
        r"(?:(?P<sep>[ \t]*[:=][ \t]*)|[ \t]+(?:is|was)[ \t]*:[ \t]*|[ \t]+(?P<is>is|was)[ \t]+"
        r"|(?<=passphrase)(?P<bare>[ \t]+))"
        r"(?:(?P<qc>[\"'`])(?P<q>[^\"'`\n]{6,200}?)(?P=qc)|(?P<v>[^\s\"'`,;]{6,200}))",
        "pass", "pw", flags=_I, validate=_password_value, anchor=0),
    _sp("secret_assignment",
        r"(?<![A-Za-z0-9])(?:api[_-]?key|apikey|secret(?:[_-]?key)?"
        r"|client[_-]?secret|access[_-]?key|private[_-]?key|signing[_-]?key|(?:access|auth|api|bearer|refresh"
        r"|session|bot|id)?[_-]?token)(?:[_.-][A-Za-z0-9]{1,24}){0,2}"
        r"(?:[\"']?[ \t]*[:=][ \t]*[\"']?|[ \t]+(?:is|was)[ \t]*:?[ \t]*[\"'`]?)"
        r"(?P<v>[A-Za-z0-9_\-+/=.~]{16,400})",
        "key", "secret", "token", flags=_I, validate=_assignment_value, anchor=12),  # "refresh_token"
    _sp("secret_assignment", BARE_TOKEN_PATTERN, *BARE_TOKEN_KEYWORDS, flags=_I, validate=bare_token,
        anchor=BARE_TOKEN_ANCHOR),  # "use token 3f9a…": no separator, a long random value (``_secret_pairs``)
    _sp("secret_assignment", _qual.QUALIFIED_TOKEN_PATTERN, *_qual.QUALIFIED_TOKEN_KEYWORDS, flags=_I,
        validate=_qual.qualified_token, anchor=_qual.QUALIFIED_TOKEN_ANCHOR),  # "token for sentry is 3f9a…"
    _sp("aws_secret_access_key", r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
        "aws", "secret", "amazon", validate=_aws_prose, near=(80, 40)),  # the check: a word within 80
    _sp("payment_card",  # groups of 4 (Amex 4-6-5) with one space or dash, or one run of 13-19 digits
        r"\d(?<![\w.-]\d)(?:\d{3}(?:([ -])\d{4}){2,3}(?:\1\d{1,3})?|\d{3}([ -])\d{6}\2\d{5}|\d{12,18})(?![\w-]|\.\d)",
        *"0123456789", validate=_card_number, hint=r"\d\d\d\d[ -]?\d\d\d\d"),  # 8 digits, one gap at most
    _sp("credential_pair", PAIR_PATTERN, *PAIR_KEYWORDS, flags=_I, validate=pair_password, anchor=PAIR_ANCHOR),
    _sp("credential_pair", _qual.LOGIN_PATTERN, *_qual.LOGIN_KEYWORDS, flags=_I, validate=_qual.login_password,
        anchor=_qual.LOGIN_ANCHOR),  # "login admin:X on grafana" (``_secret_qualified``)
    # last: it only adds what the rows above leave (their ids stay as they were)
    _sp("password_phrase", PHRASE_PATTERN, *PHRASE_KEYWORDS, flags=_I, validate=phrase_value, anchor=0),
    # after it: "密码：123456" stays a password_phrase; a PIN, a PUK, a door code is what the rows above leave
    _sp("pin_code", _codes.CODE_PATTERN, *_codes.CODE_KEYWORDS, flags=_I, validate=_codes.code_value,
        anchor=_codes.CODE_ANCHOR),
    _sp("pin_code", _codes.OPEN_PATTERN, *_codes.OPEN_KEYWORDS, flags=_I, validate=_codes.open_value, anchor=0),
    # after it, what a label's layout or a short form gives (``_secret_keys``, ``_secret_layout``): ids as above
    _sp("secret_assignment", _layout.KEY_PATTERN, *_layout.KEY_KEYWORDS, flags=_I, validate=_layout.key_value,
        anchor=0),
    _sp("password_in_prose", _layout.PASSWORD_PATTERN, *_layout.PASSWORD_KEYWORDS, flags=_I,
        validate=_layout.password_value, anchor=0),
    _sp("password_in_prose", _layout.TABLE_PATTERN, *_layout.TABLE_KEYWORDS, validate=_layout.table_password,
        hint=_layout.TABLE_HINT, anchor=_layout.TABLE_ANCHOR),
    _sp("secret_assignment", _layout.TABLE_PATTERN, *_layout.TABLE_KEYWORDS, validate=_layout.table_key,
        hint=_layout.TABLE_HINT, anchor=_layout.TABLE_ANCHOR),
    _sp("password_in_prose", _layout.ROW_PATTERN, *_layout.ROW_KEYWORDS, validate=_layout.row_password,
        hint=_layout.ROW_HINT, anchor=_layout.ROW_ANCHOR),
    *(_sp("seed_phrase", pat, *words, validate=seed_phrase, anchor=anchor, hint=hint) for pat, words, anchor, hint in SEED_ROWS),
)
_PRIORITY = {id(pat): prio for prio, pat in enumerate(PATTERNS)}  # earlier rows win an overlap


def _folded_matches(text: str, anchored: bool = True, lacking: frozenset[str] = frozenset()
                    ) -> list[tuple[int, int, int, str]]:
    """All accepted (start, end, priority, id) value spans in ``text``, overlaps resolved by table order.
    ``anchored=False`` runs every row's regex over the whole text, without its hint, anchor or reach (what
    ``_secret_search`` must equal; for tests). ``lacking``: keywords known not to be in the text."""
    hits = keyword_hits(text)
    if lacking and anchored:
        hits.lacks(lacking)
    lowered = hits.lowered  # text.lower(), as the keywords were looked for in it
    taken: list[tuple[int, int, int, str]] = []  # kept sorted and non-overlapping
    seen: dict[str, list[int]] = {}  # each keyword's places, found once for every row that names it
    for pat in hits.rows(PATTERNS):
        prio = _PRIORITY[id(pat)]
        found = search_row(pat, text, lowered, seen) if anchored else pat.regex.finditer(text)
        for m in found:
            span = pat.validate(m, text) if pat.validate else m.span(pat.group)
            for start, end in (span if isinstance(span, list) else (span,) if span else ()):  # a table: a list
                i = bisect_left(taken, (start,))
                if start == end or (i > 0 and taken[i - 1][1] > start) or (i < len(taken) and taken[i][0] < end):
                    continue
                taken.insert(i, (start, end, prio, pat.id))
    return taken


def _plain_matches(text: str, lacking: frozenset[str] = frozenset()) -> list[tuple[int, int, int, str]]:
    """Like ``_folded_matches`` on the folded text, with spans mapped back to ``text`` (non-overlapping)."""
    norm = fold(text)
    out: list[tuple[int, int, int, str]] = []
    for start, end, prio, ident in _folded_matches(norm.text, lacking=lacking):
        raw_start, raw_end = norm.raw_span(start, end)
        if out and raw_start < out[-1][1]:
            continue
        out.append((raw_start, raw_end, prio, ident))
    return out


def _escaped_matches(text: str) -> list[tuple[int, int, int, str]]:
    """:func:`_plain_matches` of ``text`` and of its other readings around terminal escapes
    (:func:`._text.escape_readings`), overlapping spans joined: nothing any reading finds stays in the clear."""
    found = _plain_matches(text)
    readings = escape_readings(text)
    if not readings:
        return found
    spans = sorted(found + [m for reading in readings for m in _plain_matches(reading)])
    out: list[tuple[int, int, int, str]] = []
    for start, end, prio, ident in spans:
        if out and start < out[-1][1]:
            last = out[-1]
            out[-1] = (last[0], max(last[1], end), last[2], last[3])
            continue
        out.append((start, end, prio, ident))
    return out


def _matches(text: str) -> list[tuple[int, int, int, str]]:
    """Every accepted secret span of ``text`` (raw offsets, sorted, non-overlapping): the spans of the text
    itself (every reading around terminal escapes) and of each decoded view of its backslash escapes
    (:mod:`._escapes`), the deepest view first."""
    plain = _escaped_matches(text)
    levels = views(text) if "\\" in text else []
    if not levels:
        return plain
    # The keywords the text lacks that each level surely lacks too (``still_missing``): the keyword check of
    # each decoded stretch does not look for them again.
    lacking = keyword_hits(fold(text).text).lacking()
    scans = []
    for _decoded, chain in levels:
        lacking = still_missing(lacking, chain[-1])
        scans.append(partial(_plain_matches, lacking=lacking))
    taken: list[tuple[int, int, int, str]] = []
    for (decoded, chain), scan in zip(reversed(levels), reversed(scans), strict=True):
        merge_spans(taken, view_spans(decoded, chain, scan), text)
    merge_spans(taken, plain, text)
    return taken


class SecretSpan(NamedTuple):
    """One secret value in a text: raw ``[start, end)`` offsets and the pattern id."""

    start: int
    end: int
    id: str


def secret_spans(text: str) -> list[SecretSpan]:
    """Every secret value in ``text`` (all occurrences), sorted by position and non-overlapping."""
    if not text:
        return []
    return [SecretSpan(start, end, ident) for start, end, _prio, ident in _matches(text)]


def scan_secrets(text: str) -> list[Finding]:
    """Return one ``Finding`` per secret id found in ``text`` (first occurrence), ordered by position."""
    if not text:
        return []
    seen: dict[str, Finding] = {}
    for start, end, _prio, ident in _matches(text):
        seen.setdefault(ident, Finding(ident, SECRET, (start, end)))
    return list(seen.values())


def redact(text: str) -> str:
    """Replace every secret value in ``text`` with ``[REDACTED:<id>]``, keeping the words around it."""
    if not text:
        return text
    out: list[str] = []
    pos = 0
    for start, end, _prio, ident in _matches(text):
        out.append(text[pos:start])
        out.append(f"[REDACTED:{ident}]")
        pos = end
    out.append(text[pos:])
    return "".join(out)

