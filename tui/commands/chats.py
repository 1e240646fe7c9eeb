"""`firsttoken chats`: the saved chats, the last used first (with `--search TEXT`, those whose
title or messages hold every word, through the history's full-text index); `chats rename ID
TITLE`; `chats delete ID` (asks first unless `--yes`; the chat's requests' latency records stay,
no longer linked to it).

Exit codes: 0 ok (also when nothing matches), 1 the history cannot be read or written, 2 usage
(no such chat, an empty title, or delete without --yes where nobody can answer).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from tui.commands._common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, error
from tui.engine.text.inert import inert_line, json_text

if TYPE_CHECKING:
    from tui.engine.store.database import Store

TITLE_MAX = 200


def _listed(store: Store, args: argparse.Namespace) -> list[dict[str, Any]]:
    kind = None if args.kind == "all" else args.kind
    if args.search:
        found = store.search_chats(args.search, kind=kind, limit=args.limit)
        by_id = {chat["id"]: chat for chat in store.chats(ids=found)} if found else {}
        return [by_id[chat_id] for chat_id in found if chat_id in by_id]
    return store.chats(kind=kind, limit=args.limit)


def _list(store: Store, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from tui.commands.history import chat_lines

    chats = _listed(store, args)
    if args.json:
        out.write("".join(json_text(chat) + "\n" for chat in chats))
    elif not chats:
        kind = "" if args.kind == "all" else f"{args.kind} "
        print("no chats match" if args.search else f"no saved {kind}chats yet", file=err)
    else:
        out.write("\n".join(chat_lines(chats)) + "\n")
    return EXIT_OK


def _confirmed(chat: dict[str, Any], args: argparse.Namespace, err: TextIO) -> bool | None:
    """Whether to delete: --yes, or the user's answer on a terminal; None when nobody can
    answer."""
    if args.yes:
        return True
    if not sys.stdin.isatty():
        return None
    title = inert_line(str(chat["title"]))[:60]
    err.write(f"delete chat {chat['id']} “{title}” and its {chat['message_count']} messages? "
              "(its latency records stay) [y/N] ")  # fmt: skip
    err.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, KeyboardInterrupt):
        return False
    return answer.strip().lower() in ("y", "yes")


def _change(store: Store, args: argparse.Namespace, err: TextIO) -> int:
    found = store.chats(ids=[args.chat])
    if not found:
        error(f"chats {args.chats_action} {args.chat}: no such chat (`firsttoken chats` "
              "lists them)", err)  # fmt: skip
        return EXIT_USAGE
    if args.chats_action == "rename":
        title = " ".join(args.title.split())[:TITLE_MAX]
        if not title:
            error("chats rename: TITLE is empty: give the chat a title", err)
            return EXIT_USAGE
        store.rename_chat(args.chat, title)
        print(f"chat {args.chat} renamed “{inert_line(title)}”", file=err)
        return EXIT_OK
    confirmed = _confirmed(found[0], args, err)
    if confirmed is None:
        error(f"chats delete {args.chat}: nobody can answer the question here: add --yes", err)
        return EXIT_USAGE
    if not confirmed:
        print("not deleted", file=err)
        return EXIT_OK
    store.delete_chat(args.chat)
    print(f"chat {args.chat} deleted (its latency records are kept)", file=err)
    return EXIT_OK


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out  # looked up now: a caller may have replaced it
    err = sys.stderr if err is None else err
    from tui.engine.store.database import Store, StoreError
    from tui.locations import history_db_path

    path = history_db_path()
    action = getattr(args, "chats_action", None)
    if not path.exists():
        if action is None:
            print(f"no saved chats yet ({path})", file=err)
            return EXIT_OK
        error(f"chats {action} {args.chat}: no such chat (no history yet: {path})", err)
        return EXIT_USAGE
    try:
        with Store(path, read_only=action is None) as store:
            return _list(store, args, out, err) if action is None else _change(store, args, err)
    except StoreError as problem:
        error(str(problem), err)
        return EXIT_FAILED
