"""`firsttoken export CHAT`: a saved chat as Markdown, each reply followed by its figures, or
as the JSON message list `--messages` reads back (tui/session/export.py writes both).

To a file (`-o FILE`, whose .json or .md suffix picks the format unless --format does) the
text goes unchanged; to stdout it is made inert, since a terminal may be reading. Exit codes:
0 ok, 1 the history or the file cannot be read or written, 2 usage (no such chat).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from tui.commands._common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, error


def _form(args: argparse.Namespace) -> str:
    from tui.session.export import JSON, MARKDOWN

    if args.format:
        return str(args.format)
    if args.output is not None and args.output.suffix.lower() == ".json":
        return JSON
    return MARKDOWN


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out  # looked up now: a caller may have replaced it
    err = sys.stderr if err is None else err
    from tui.engine.store.database import Store, StoreError
    from tui.engine.text.inert import inert
    from tui.locations import history_db_path
    from tui.session.export import NoSuchChat, export_text, read_chat

    path = history_db_path()
    missing = f"export {args.chat}: no such chat (`firsttoken chats` lists them)"
    if not path.exists():
        error(missing, err)
        return EXIT_USAGE
    form = _form(args)
    try:
        with Store(path, read_only=True) as store:
            text = export_text(read_chat(store, args.chat), form)
    except NoSuchChat:
        error(missing, err)
        return EXIT_USAGE
    except StoreError as unreadable:
        error(str(unreadable), err)
        return EXIT_FAILED
    if args.output is None:
        out.write(inert(text))
        return EXIT_OK
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as problem:
        error(f"-o {args.output}: cannot write it ({problem.strerror or problem}): "
              "choose a writable path", err)  # fmt: skip
        return EXIT_FAILED
    print(f"chat {args.chat} written to {args.output} ({form})", file=err)
    return EXIT_OK
