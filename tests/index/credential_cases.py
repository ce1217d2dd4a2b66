"""Credentials of every family the secret scanner knows (``pi_memory.safety.secrets.PATTERNS``), each written in
the contexts a transcript holds them in: an env line, a JSON value, URL userinfo, a shell ``export``, YAML,
prose, and split over a tool call (which names the variable) and its result (which prints the bare value).

``secret`` is the part that must never come out again (checked as every 8-character run of it); ``value`` is
what is written (the secret with the syntax its family needs). Values are made up here, random-looking and of
each vendor's public format; none is real.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONTEXTS = ("env", "json", "url", "export", "yaml", "prose", "split")


@dataclass(frozen=True)
class Family:
    id: str
    env: str  # the variable a .env file would hold it in
    secret: str
    value: str = ""  # defaults to the secret
    prose: str = "the token I used was {v} (keep it private)"
    url: str | None = "https://deploy:{v}@git.example.org/shop.git"  # None: the family has no URL form
    skip: frozenset[str] = field(default_factory=frozenset)

    @property
    def written(self) -> str:
        return self.value or self.secret


_KEY_BODY = ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Qm3fZp9XkLr2Vt8sW1aYd4Nc6Ue0Hj5Ko7Bq2Rx9TgPl"
             "\nX3vN8mK2pQ7sL4wR9tY6uH1jE5cB0fG3dA8zC2vM7nQ4kS1xW9eR6tY3uI0oP5aL8sD2fG7hJ4kZ1xC6vB9nM3qW0eR5t")
FAMILIES: tuple[Family, ...] = (
    Family("private_key_block", "TLS_PRIVATE_KEY", _KEY_BODY,
           value=f"-----BEGIN PRIVATE KEY-----\n{_KEY_BODY}\n-----END PRIVATE KEY-----", url=None,
           prose="here is the key:\n{v}\nuse it for staging", skip=frozenset({"split"})),
    Family("anthropic_api_key", "ANTHROPIC_API_KEY", "sk-ant-api03-Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0Ts"),
    Family("openai_api_key", "OPENAI_API_KEY", "sk-proj-Qm4Tz8Lp2Vx7Nc3Rb9Wk5Hd1Jf6Gs0Ya"),
    Family("github_token", "GITHUB_TOKEN", "ghp_R7kQ2mZ9xL4vT8nW3pB6cH1jD5fG0sYaEe"),
    Family("aws_access_key_id", "AWS_ACCESS_KEY_ID", "AKIAZ7Q2M9X4L8V3T6NB"),
    Family("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "q8Zr3Lm7Xv2Tk9Wp4Nb6Hc1Jd5Fg0SyQe7Ua2Io3",
           prose="our aws secret is {v} for the backup bucket"),
    Family("google_api_key", "GOOGLE_API_KEY", "AIzaSyQ7m2Zx9L4vT8nW3pB6cH1jD5fG0sYaEeR"),
    Family("slack_token", "SLACK_BOT_TOKEN", "xoxb-2841937465-7392846152-Qm7Zt2Lx9Vp4Rk8W"),
    Family("webhook_url", "SLACK_WEBHOOK_URL", "T04QZ7M2X/B05LV8T3N6P/Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1",
           value="https://hooks.slack.com/services/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", url=None,
           prose="post the alert to {v} when the job fails"),
    Family("stripe_key", "STRIPE_SECRET_KEY", "sk_live_51Hq7Zm2Lx9Vt4Rk8Wn3Bc6Hy"),
    Family("huggingface_token", "HF_TOKEN", "hf_Qm7Zt2Lx9Vp4Rk8Wn3Bc6Hy1Jd5Fg0TsEa"),
    Family("npm_token", "NPM_TOKEN", "npm_Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEa"),
    Family("gitlab_token", "GITLAB_TOKEN", "glpat-Zq7Lm2Xp9Vt4Rk8Wn3Bc"),
    Family("sendgrid_key", "SENDGRID_API_KEY", "SG.Zq7Lm2Xp9Vt4Rk8Wn3.Bc6Hy1Jd5Fg0TsEaQm7Zt2Lx9Vp"),
    Family("digitalocean_token", "DIGITALOCEAN_TOKEN",
           "dop_v1_" + "3f9a7c2e5b8d1f4a6c0e9b2d7f5a3c8e1b4d6f9a2c5e8b0d3f7a1c4e6b9d2f5a"),
    Family("twilio_key", "TWILIO_API_KEY", "SK3f9a7c2e5b8d1f4a6c0e9b2d7f5a3c8e"),
    Family("jwt", "SESSION_JWT",
           "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiIsImlhdCI6MTcwMH0.Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0Ts"),
    Family("azure_key", "AZURE_STORAGE_CONNECTION_STRING", "Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEaQm7Zt2Lx9Vp4==",
           value="DefaultEndpointsProtocol=https;AccountName=shopfiles;"
                 "AccountKey=Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEaQm7Zt2Lx9Vp4==;EndpointSuffix=core.windows.net",
           url=None, prose="the storage connection string is {v} in prod"),
    Family("url_credentials", "DATABASE_URL", "Vq7zL2mX9tR4",
           value="postgres://shop_app:Vq7zL2mX9tR4@db.internal:5432/shop", url="{v}",
           prose="connect with {v} from the bastion"),
    Family("bearer_token", "API_AUTH_HEADER", "Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5",
           value="Bearer Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5", url=None,
           prose="call it with Authorization: {v} and a JSON body"),
    Family("cli_password", "BACKUP_COMMAND", "Xr8pQ2vL7mZ4",
           value="mysqldump -u backup -pXr8pQ2vL7mZ4 shop", url=None, prose="I ran {v} to dump the shop db"),
    Family("password_in_prose", "DB_PASSWORD", "Tq7wV2xM9pL4",
           prose="the database password is Tq7wV2xM9pL4 until Friday", url=None),
    Family("secret_assignment", "SERVICE_API_TOKEN", "Zq7Lm2Xp9Vt4Rk8Wn3Bc",
           prose="the API token is Zq7Lm2Xp9Vt4Rk8Wn3Bc for the staging box", url=None),
    Family("payment_card", "CARD_NUMBER", "4242 4242 4242 4242",
           prose="charge my visa card 4242 4242 4242 4242 for the renewal", url=None),
)


def render(family: Family, context: str) -> tuple[str, str] | None:
    """``(tool call text or "", text)`` of ``family`` in ``context``; ``None`` when the family has no such form."""
    v, name = family.written, family.env
    field_name = name.lower()
    if context in family.skip:
        return None
    if context == "env":
        return "", f"# .env\nNODE_ENV=production\n{name}={v}\nLOG_LEVEL=info"
    if context == "json":
        escaped = v.replace("\n", "\\n")
        return "", f'{{"service": "shop", "{field_name}": "{escaped}", "region": "eu-west-1"}}'
    if context == "url":
        return None if family.url is None else ("", "git remote set-url origin " + family.url.format(v=v))
    if context == "export":
        return "", f'export {name}="{v}"\nnpm run deploy'
    if context == "yaml":
        indented = v.replace("\n", "\n    ")
        block = f"|\n    {indented}" if "\n" in v else v
        return "", f"services:\n  shop:\n    environment:\n      {name}: {block}\n      REGION: eu"
    if context == "prose":
        return "", family.prose.format(v=v)
    if context == "split":
        return f"printenv {name}", v
    raise ValueError(context)


def cases() -> list[tuple[Family, str]]:
    return [(f, c) for f in FAMILIES for c in CONTEXTS if render(f, c) is not None]


def runs(secret: str, n: int = 8) -> set[str]:
    """Every ``n``-character run of ``secret`` (whitespace-collapsed runs too, as snippets collapse it)."""
    out = {secret[i : i + n] for i in range(len(secret) - n + 1)}
    squeezed = " ".join(secret.split())
    return out | {squeezed[i : i + n] for i in range(len(squeezed) - n + 1)}
