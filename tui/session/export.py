"""A saved chat as a document: Markdown with each reply's figures in a short note under it, or
the JSON message list that `--messages` reads back unchanged. `firsttoken export` and the app's
palette both write through here.

The text is the chat's own, unchanged (a file keeps what was said); whoever shows it on a
terminal makes it inert first.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.engine.text.figures import duration
from tui.engine.text.inert import json_text

if TYPE_CHECKING:
    from tui.engine.store.database import Store

MARKDOWN, JSON = "md", "json"
_ROLES = {"user": "You", "assistant": "Assistant", "system": "System", "tool": "Tool"}


class NoSuchChat(LookupError):
    """The id names no saved chat."""


@dataclass(frozen=True, slots=True)
class ChatDocument:
    """A chat as the store keeps it: its row, each lane's messages (one lane unless a race's),
    the lanes' labels, and its requests' records oldest first."""

    chat: dict[str, Any]
    lanes: list[list[dict[str, Any]]]
    labels: list[str]
    records: list[dict[str, Any]]


def read_chat(store: Store, chat_id: int) -> ChatDocument:
    found = store.chats(ids=[chat_id])
    if not found:
        raise NoSuchChat(chat_id)
    labels = store.lanes(chat_id)
    lanes = [store.messages(chat_id, lane) for lane in range(max(1, len(labels)))]
    records = list(reversed(store.records(limit=-1, chat_id=chat_id)))
    return ChatDocument(found[0], lanes, labels, records)


def text_of(message: dict[str, Any]) -> str:
    """A message's text: its content, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n\n".join(p for p in parts if isinstance(p, str))
    return ""


def figure_note(record: dict[str, Any]) -> str:
    """`TTFT 420 ms · total 3.12 s · 128 tokens · gpt-4o · 2026-12-06 23:18`."""
    total = f"total {duration(record.get('total_ms'))}"
    if record.get("streamed"):
        parts = [f"TTFT {duration(record.get('ttft_ms'))}", total]
    else:
        parts = [f"{total} (not streamed)"]
    tokens = record.get("output_tokens")
    if isinstance(tokens, int):
        parts.append(f"{tokens:,} tokens")
    parts.append(str(record.get("model", "")))
    if record.get("status") not in (None, "ok"):
        parts.append(str(record["status"]))
    started = record.get("started_at_epoch")
    if isinstance(started, (int, float)):
        parts.append(time.strftime("%Y-%m-%d %H:%M", time.localtime(started)))
    return " · ".join(parts)


def _replies(records: list[dict[str, Any]], label: str | None) -> list[dict[str, Any]]:
    """The records whose replies a lane kept, oldest first (a race's by its target)."""
    mine = [r for r in records if label is None or r.get("race_target") == label]
    return [r for r in mine if r.get("status") in ("ok", "cancelled") and not r.get("incomplete")]


def _noted(messages: list[dict[str, Any]], records: list[dict[str, Any]]) -> list[str | None]:
    """Each message's figure note: an assistant message takes the next record whose reply is
    its text (a retried reply's record is passed over), others none."""
    notes: list[str | None] = []
    next_record = 0
    for message in messages:
        note = None
        if message.get("role") == "assistant":
            text = text_of(message)
            for index in range(next_record, len(records)):
                if records[index].get("reply_text") == text:
                    note = figure_note(records[index])
                    next_record = index + 1
                    break
        notes.append(note)
    return notes


def _fence(text: str) -> str:
    """A fence longer than any run of backticks in `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _message_block(message: dict[str, Any], note: str | None) -> list[str]:
    role = str(message.get("role", ""))
    lines = [f"### {_ROLES.get(role, role.title() or 'Message')}", ""]
    text = text_of(message)
    if text:
        lines += [text, ""]
    calls = message.get("tool_calls")
    if calls:
        body = json.dumps(calls, indent=2, ensure_ascii=False)
        fence = _fence(body)
        lines += [f"{fence}json", body, fence, ""]
    if note:
        lines += [f"> {note}", ""]
    return lines


def markdown(saved: ChatDocument) -> str:
    chat = saved.chat
    title = " ".join(str(chat.get("title") or f"chat {chat['id']}").split())
    made = time.strftime("%Y-%m-%d %H:%M", time.localtime(chat["created_at_epoch"]))
    where = f" @ {chat['endpoint_host']}" if chat.get("endpoint_host") else ""
    lines = [
        f"# {title}",
        "",
        f"firsttoken chat {chat['id']} · {chat['kind']} · started {made} · {chat['model']}{where}",
        "",
    ]
    racing = len(saved.labels) > 1
    for lane, messages in enumerate(saved.lanes):
        label = saved.labels[lane] if racing else None
        if label is not None:
            lines += [f"## {label}", ""]
        notes = _noted(messages, _replies(saved.records, label))
        for message, note in zip(messages, notes, strict=True):
            lines += _message_block(message, note)
    return "\n".join(lines).rstrip("\n") + "\n"


def message_list(saved: ChatDocument) -> str:
    """The first lane's messages as `--messages` reads them (the same value, with the controls
    JSON leaves raw escaped too, so it is inert on a terminal)."""
    return json_text(saved.lanes[0], indent=2) + "\n"


def export_text(saved: ChatDocument, form: str) -> str:
    return message_list(saved) if form == JSON else markdown(saved)


def file_name(chat: dict[str, Any], form: str) -> str:
    """`firsttoken-chat-12-why-is-ttft-slow.md`: the id, a slug of the title, the format."""
    slug = "-".join(re.findall(r"[a-z0-9]+", str(chat.get("title", "")).lower()))[:40].strip("-")
    return f"firsttoken-chat-{chat['id']}{'-' + slug if slug else ''}.{form}"
