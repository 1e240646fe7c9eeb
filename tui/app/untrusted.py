"""Untrusted text made inert where the app receives it, before any widget sees it.

A server's reply and reasoning, its error bodies and model ids, and everything read back from
the history file can carry terminal escape sequences (a prompt-injected document can make a
model write `ESC ] 52 ; c ; …` to set the clipboard). Textual writes a widget's text to the
terminal as it is, so each of those strings goes through `tui.engine.text.inert` on its way in:
the chat's state keeps the exact text (it is what is sent and stored); what is shown is a
copy. A streamed reply is made inert on its way in (tui/session/intake.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tui.engine.text.inert import inert, inert_line

if TYPE_CHECKING:
    from tui.session.history import SavedChat


def shown(value: Any) -> Any:
    """A copy of a message (or any JSON value) with every string value in it inert."""
    if isinstance(value, str):
        return inert(value)
    if isinstance(value, dict):
        return {key: shown(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [shown(item) for item in value]
    return value


def shown_messages(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as the chat shows them (the chat's own list is left exact)."""
    return [shown(message) for message in messages]


def shown_line(text: object) -> str:
    """One line of untrusted text (a model id, a title, an error kind) as it may be shown."""
    return inert_line(str(text))


def shown_host(base_url: str) -> str:
    """The endpoint's host:port, never its userinfo (`http://user:key@host` holds a key)."""
    from urllib.parse import urlsplit

    netloc = urlsplit(base_url).netloc.rpartition("@")[2]
    return inert_line(netloc or "(no host)")


def shown_error(kind: str | None, message: str | None, fallback: str) -> tuple[str, str]:
    """An error block's title and text: the engine's hint may quote the server's body."""
    return inert_line(kind or fallback), inert(message or fallback)


def shown_chats(chats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history's chat list for the picker: titles, models and endpoints are untrusted (an
    endpoint stored by an older release may still hold a URL's credentials: masked)."""
    from tui.engine.text.redact import redact_text

    def endpoint(host: object) -> str | None:
        return None if host is None else inert_line(redact_text(str(host)))

    return [
        {
            **chat,
            "title": inert_line(str(chat["title"])),
            "model": inert_line(str(chat["model"])),
            "endpoint_host": endpoint(chat.get("endpoint_host")),
        }
        for chat in chats
    ]


def saved_reply_notes(saved: SavedChat, status: Callable[[Any], str]) -> dict[int, tuple[str, str]]:
    """Each reopened reply's model and figures line, from its stored record; a reply cut off
    by a kill says so."""
    from dataclasses import replace

    from tui.engine.metrics.record import RequestStatus

    notes = {}
    for index, record in saved.reply_records().items():
        if record.id in saved.incomplete:
            figures = status(replace(record, status=RequestStatus.OK))
            line = " · ".join(part for part in (INCOMPLETE_MARK, figures) if part)
        else:
            line = status(record)
        notes[index] = (inert_line(record.model), inert_line(line))
    return notes


INCOMPLETE_MARK = "⚠ incomplete: firsttoken stopped before the reply ended"
