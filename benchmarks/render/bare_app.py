"""The floor: a bare Textual chat app on the same endpoint, for the same table.

`python -m benchmarks.render.bare_app --base-url URL [--interval S]`: a Markdown reply in an
anchored VerticalScroll, an Input and a Footer, nothing else (no side panel, no store, no
token counting). The SSE stream is read by urllib on a thread and handed to the UI loop one
token at a time. With --interval 0 every token is one `MarkdownStream.write()` (oterm's
pattern); with --interval S tokens are coalesced into one
`Markdown.append()` at most every S seconds (firsttoken's idea, without firsttoken). With
--plain the reply is plain text in one `Static`, coalesced the same way: no Markdown at all,
the least a Textual app can do to show a stream.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import urllib.request

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Footer, Input, Markdown, Static

PLACEHOLDER = "bare textual: type and press enter"


def read_stream(base_url: str, prompt: str, put: callable) -> None:  # type: ignore[valid-type]
    body = {"model": "demo", "stream": True, "messages": [{"role": "user", "content": prompt}]}
    request = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
    )
    with urllib.request.urlopen(request) as response:
        for raw in response:
            line = raw.decode().strip()
            if line.startswith("data:") and line != "data: [DONE]":
                for choice in json.loads(line[5:]).get("choices") or ():
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        put(text)
    put(None)


class BareChat(App[None]):
    def __init__(self, base_url: str, interval_s: float, plain: bool = False) -> None:
        super().__init__()
        self.base_url = base_url
        self.interval_s = interval_s
        self.plain = plain

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="chat")
        yield Input(placeholder=PLACEHOLDER)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#chat", VerticalScroll).anchor()
        self.query_one(Input).focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        chat = self.query_one("#chat", VerticalScroll)
        event.input.clear()
        await chat.mount(Static(event.value, classes="user"))
        markdown: Markdown | Static = Static() if self.plain else Markdown()
        await chat.mount(markdown)
        tokens: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def put(text: str | None) -> None:
            loop.call_soon_threadsafe(tokens.put_nowait, text)

        threading.Thread(
            target=read_stream, args=(self.base_url, event.value, put), daemon=True
        ).start()
        self.run_worker(self._render(markdown, tokens))

    async def _render(self, markdown: Markdown | Static, tokens: asyncio.Queue[str | None]) -> None:
        shown: list[str] = []
        if isinstance(markdown, Static):
            while True:
                pending = [await tokens.get()]
                while not tokens.empty():
                    pending.append(tokens.get_nowait())
                done = pending[-1] is None
                shown += [t for t in pending if t]
                markdown.update("".join(shown), layout=True)
                if done:
                    return
                await asyncio.sleep(max(self.interval_s, 0.0))
        if self.interval_s <= 0:
            stream = Markdown.get_stream(markdown)
            while (text := await tokens.get()) is not None:
                await stream.write(text)
            await stream.stop()
            return
        done = False
        while not done:
            pending = [await tokens.get()]
            while not tokens.empty():
                pending.append(tokens.get_nowait())
            done = pending[-1] is None
            text = "".join(t for t in pending if t)
            if text:
                await markdown.append(text)
            if not done:
                await asyncio.sleep(self.interval_s)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--interval", type=float, default=0.0)
    parser.add_argument("--plain", action="store_true")
    args = parser.parse_args()
    BareChat(args.base_url, args.interval, args.plain).run()


if __name__ == "__main__":
    main()
