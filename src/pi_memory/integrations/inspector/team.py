"""The inspector against a team server (``pi-memory serve`` on PostgreSQL, per-user tokens).

Where the server comes from (decided for issue 15): the data root's own semantic settings when their
``backend`` is ``self-hosted`` (what the agent uses, so the page shows what the agent sees), or for this
inspector only ``pi-memory ui --server URL`` with the token from ``--token-file`` or ``--token-env`` (never a
command-line value, which other users of the computer can read in the process list). The CLI reads the token
and hands a ready :class:`~pi_memory.semantic.backends.rest_client.RestBackend` in a :class:`ServerChoice`.

Whose memories: the token's user, as the server names it (``GET /whoami``): a user's token reaches only that
user's memories, so the semantic views, history and recall preview use a scope of that user (in the
project's scope, as the agent's). An admin or the shared team token acts for the settings' ``userId``. When the
settings name another user than the token, the page says the agent's own requests will be refused and how to
fix it.

The token never reaches the page or a URL: it stays in the backend's HTTP client; the page shows the server's
address (without any user:password part), the user and the token's id. Every failure (refused token, server
down, server error) is :func:`explain`-ed in words for a person: what happened and what to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_memory.safety.urls import redact_url
from pi_memory.semantic.backend import BackendError
from pi_memory.semantic.backends.rest_client import TOKEN_ENV, ServerRefusedError, ServerUnreachableError


@dataclass
class ServerChoice:
    """A team server named on the command line: its ``backend`` (holding the token), and where the URL and the
    token came from, for messages (``"--server"``, ``"the file ~/.team-token"``)."""

    backend: Any
    url_origin: str = "--server"
    token_origin: str = f"${TOKEN_ENV}"


@dataclass
class TeamStatus:
    """What the team server says about the token: ``user`` / ``admin`` / ``token_id`` when it answered, else
    ``problem`` (a person's message). ``note``: a warning that does not stop the page (a settings mismatch)."""

    url: str
    user: str | None = None
    admin: bool = False
    token_id: str | None = None
    problem: str | None = None
    note: str | None = None
    named: bool = True  # False: the server has no /whoami (Mem0, an older pi-memory)
    showing: str | None = None  # the user whose memories the page shows

    def to_public(self) -> dict[str, Any]:
        return {"url": self.url, "user": self.user, "admin": self.admin, "tokenId": self.token_id,
                "showing": self.showing, "problem": self.problem, "note": self.note}


class _Borrowed:
    """The team backend lent to a service: everything passes through but ``close`` (its owner closes it)."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def close(self) -> None:
        pass


class TeamLink:
    """The inspector's view of a team server (module docstring): ``None`` from :meth:`backend` when semantic
    memory is not on a self-hosted server."""

    def __init__(self, memory, choice: ServerChoice | None = None) -> None:
        self.memory = memory
        self.choice = choice
        self._services: dict[tuple[str, str], Any] = {}

    # --- where ------------------------------------------------------------------------------------------
    def _settings_service(self):
        return self.memory.semantic()

    def backend(self):
        if self.choice is not None:
            return self.choice.backend
        service = self._settings_service()
        backend = getattr(service, "backend", None)
        return backend if getattr(backend, "name", None) == "self-hosted" else None

    @property
    def active(self) -> bool:
        return self.backend() is not None

    def url(self) -> str:
        return redact_url(str(getattr(self.backend(), "base_url", "")))  # never a token written into it

    def _origins(self) -> tuple[str, str]:
        """(where the URL is set, where the token comes from) for the messages."""
        if self.choice is not None:
            return self.choice.url_origin, self.choice.token_origin
        service = self._settings_service()
        files = ", ".join(service.settings.sources) if service is not None else ""
        where = f'"backend" of the semantic settings ({files or "settings.json"})'
        has_key = service is not None and service.settings.backend.options.get("apiKey")
        return f'"baseUrl" in the {where}', (f'"apiKey" in the {where}' if has_key else f"${TOKEN_ENV}")

    def settings_user(self) -> str | None:
        service = self._settings_service()
        return service.settings.user_id if service is not None else None

    # --- asking the server --------------------------------------------------------------------------------
    def check(self) -> TeamStatus:
        """Ask the server whom the token acts for; a refusal or an unreachable server becomes ``problem``."""
        status = TeamStatus(self.url())
        try:
            who = self.backend().whoami()
        except Exception as exc:  # every failure is a message for the person, never a stack trace
            status.problem = self.explain(exc)
            return status
        if who is None:  # no /whoami: the server cannot say; the settings' user is used
            status.named, status.showing = False, self.settings_user()
            return status
        status.user, status.admin, status.token_id = who.get("user_id"), bool(who.get("admin")), who.get("token_id")
        wanted = self.settings_user()
        if status.user and not status.admin and self.choice is None and wanted and wanted != status.user:
            _, token_origin = self._origins()
            status.note = (f"The semantic settings name user {wanted!r}, but this token belongs to {status.user!r}: "
                           f"this page shows {status.user}'s memories, and the agent's own requests for "
                           f"{wanted!r} will be refused. Set \"userId\": \"{status.user}\" in the settings, or "
                           f"put {wanted}'s own token in {token_origin}.")
        status.showing = self.user_for(status)
        return status

    def user_for(self, status: TeamStatus) -> str | None:
        """The user whose memories the page shows: the token's user, or for an admin token the settings'."""
        if status.user and not status.admin:
            return status.user
        return self.settings_user() or status.user

    def service(self, project: str | None = None) -> tuple[Any, TeamStatus]:
        """A semantic service over the team server for the token's user, in this project's scope or (a folder)
        ``project``'s; ``(None, status)`` when the server refuses or does not answer."""
        status = self.check()
        user = status.showing
        if user is None:
            status.problem = status.problem or ("The team server did not say whose token this is and the settings "
                                                "name no user; set \"userId\" in the semantic settings.")
            return None, status
        folder = Path(project).expanduser().resolve() if project else self.memory.cwd
        key = (str(folder), user)
        if key not in self._services:
            from pi_memory.semantic import open_semantic
            from pi_memory.semantic.config import SemanticSettings

            base = self._settings_service()
            settings = base.settings if base is not None else SemanticSettings()
            try:
                self._services[key] = open_semantic(
                    settings=settings.model_copy(update={"user_id": user}), cwd=folder,
                    data_dir=self.memory.settings.data_dir, conn=self.memory.index(),
                    backend=_Borrowed(self.backend()), background_reembed=False, warm=False)
            except Exception as exc:  # e.g. an unusable index: say so in the page
                status.problem = f"The memories of {user} cannot be shown: {exc}."
                return None, status
        return self._services[key], status

    def explain(self, exc: BaseException) -> str:
        """A failure of the team server in words for a person: what happened and what to do."""
        url = self.url()
        url_origin, token_origin = self._origins()
        if isinstance(exc, ServerUnreachableError):
            return (f"The team server at {url} does not answer: nothing accepts connections at that address. "
                    f"Check that `pi-memory serve` runs there and that the address ({url_origin}) is right, "
                    "then reload this page.")
        if isinstance(exc, ServerRefusedError) and exc.status == 401:
            return (f"The team server at {url} refused the token: it was revoked, or it is not a token of this "
                    "server. Ask the server's admin for a new one (`pi-memory serve token create --user NAME`), "
                    f"put it in {token_origin}, and start `pi-memory ui` again.")
        if isinstance(exc, ServerRefusedError):
            return (f"The team server at {url} does not allow this token to read these memories "
                    f"(it said: {exc.detail}). Use the token of the user whose memories you want to see, or an "
                    "admin token.")
        if isinstance(exc, BackendError):
            return (f"The team server at {url} could not answer ({exc}). Reload in a moment; if it keeps failing, "
                    "the server's log says why.")
        return f"Reading the team server at {url} failed ({exc}). Reload the page; if it keeps failing, check the server."

    def close(self) -> None:
        """Close the services this link opened (the backend is its owner's: the CLI or the memory)."""
        for service in self._services.values():
            service.close()
        self._services.clear()


def explain_local(exc: BaseException) -> str:
    """A failure of the local semantic store in words for a person."""
    return f"The semantic memory store could not be read ({exc}). Run `pi-memory semantic status` for details."


__all__ = ["ServerChoice", "TeamLink", "TeamStatus", "explain_local"]
