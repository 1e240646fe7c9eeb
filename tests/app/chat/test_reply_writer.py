"""The coalescing writer on its own: nothing lost, the tail written, the flusher ends by itself.

A recording stand-in plays the Markdown widget (the writer only needs append / update /
source / call_after_refresh); the app-level tests cover the real widget.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from tui.app.chat.reply_writer import (
    EARLY_INTERVAL_S,
    EARLY_WRITES,
    FLUSH_INTERVAL_S,
    MAX_INTERVAL_S,
    SHARED_BEAT_S,
    ReplyWriter,
    on_the_beat,
    pause_after_write,
)


class RecordingMarkdown:
    def __init__(self) -> None:
        self.appended: list[str] = []
        self.updates: list[str] = []

    @property
    def source(self) -> str:
        return "".join(self.appended)

    async def append(self, text: str) -> None:
        await asyncio.sleep(0)  # a real append yields to the loop too
        self.appended.append(text)

    async def update(self, text: str) -> None:
        self.updates.append(text)

    def call_after_refresh(self, callback) -> None:  # type: ignore[no-untyped-def]
        asyncio.get_running_loop().call_soon(callback)


async def test_tokens_fed_from_another_thread_all_arrive_in_few_writes() -> None:
    markdown = RecordingMarkdown()
    writer = ReplyWriter(markdown, interval_s=0.02)  # type: ignore[arg-type]
    writer.start()
    tokens = [f"t{i} " for i in range(3000)]

    def network() -> None:
        for token in tokens:
            writer.feed(token)
        writer.end()

    thread = threading.Thread(target=network)
    thread.start()
    await asyncio.to_thread(thread.join)
    await writer.finish("".join(tokens))
    assert markdown.source == "".join(tokens)
    assert markdown.updates == ["".join(tokens)]
    assert writer.writes < len(tokens)  # coalesced, not one write per token


async def test_the_flusher_ends_by_itself_when_the_stream_ends_while_it_is_idle() -> None:
    # Back to waiting for a wake-up after the end of the stream, the flusher could only be
    # stopped by a cancellation, and Python 3.11's wait_for can swallow one.
    markdown = RecordingMarkdown()
    writer = ReplyWriter(markdown, interval_s=0.01)  # type: ignore[arg-type]
    writer.start()
    writer.feed("hello")
    await _until(lambda: writer._idle)  # written, past the pause: the flusher waits idle
    writer.end()
    task = writer._task
    assert task is not None
    await asyncio.wait_for(task, timeout=5)  # a hang guard, not a timing assertion
    assert not task.cancelled()
    assert markdown.source == "hello"


async def test_the_end_during_the_throttle_pause_writes_the_tail_and_stops() -> None:
    markdown = RecordingMarkdown()
    writer = ReplyWriter(markdown, interval_s=10.0)  # a pause only the end can cut short
    writer.start()
    writer.feed("first ")
    await _first_write(writer)
    writer.feed("tail")  # arrives during the long pause
    writer.end()
    task = writer._task
    assert task is not None
    await asyncio.wait_for(task, timeout=5)
    assert markdown.appended == ["first ", "tail"]
    await writer.finish(None)
    assert markdown.updates == ["first tail"]


async def test_a_reply_that_ends_before_the_widget_is_ready_is_written_once_ready() -> None:
    markdown = RecordingMarkdown()
    writer = ReplyWriter(markdown)  # type: ignore[arg-type]
    mounted = asyncio.get_running_loop().create_future()
    writer.feed("whole ")
    writer.feed("reply")
    writer.end()  # before start(): there is no loop to wake yet
    writer.start(mounted)
    finishing = asyncio.ensure_future(writer.finish("whole reply"))
    await asyncio.sleep(0.02)
    assert markdown.appended == []  # nothing written before the widget exists
    mounted.set_result(None)
    await asyncio.wait_for(finishing, timeout=5)
    assert markdown.source == "whole reply"
    assert markdown.updates == ["whole reply"]


def test_the_first_writes_go_at_the_frame_rate_then_the_throttle_adapts() -> None:
    # A reply can open with syntax only ("##"): the next write must not wait a whole throttle.
    slow_write = 0.04
    early = [pause_after_write(n, slow_write, FLUSH_INTERVAL_S) for n in range(1, EARLY_WRITES + 1)]
    assert early == [EARLY_INTERVAL_S] * EARLY_WRITES
    later = pause_after_write(EARLY_WRITES + 1, slow_write, FLUSH_INTERVAL_S)
    assert later > FLUSH_INTERVAL_S  # a costly write earns a longer pause
    assert pause_after_write(EARLY_WRITES + 1, 0.001, FLUSH_INTERVAL_S) == FLUSH_INTERVAL_S
    assert pause_after_write(50, 10.0, FLUSH_INTERVAL_S) == MAX_INTERVAL_S


def test_writers_streaming_at_once_pause_until_the_same_beat() -> None:
    # Two writers that pause at different moments, for different lengths, wake together.
    beat = SHARED_BEAT_S
    wakes = {
        round(now + on_the_beat(now, pause), 9) for now, pause in [(10.003, 0.05), (10.021, 0.03)]
    }
    assert wakes == {round(10.1, 9)}
    for now, pause in [(3.0, 0.05), (3.01, 0.2), (7.049, 0.0)]:
        stretched = on_the_beat(now, pause)
        assert pause <= stretched < pause + beat + 1e-9
        assert abs(((now + stretched) / beat) - round((now + stretched) / beat)) < 1e-6


async def test_the_flushers_running_are_counted_until_each_ends() -> None:
    before = ReplyWriter.streaming
    writers = [ReplyWriter(RecordingMarkdown(), interval_s=0.01) for _ in range(2)]  # type: ignore[arg-type]
    for writer in writers:
        writer.start()
        writer.feed("Hello")
    await _until(lambda: ReplyWriter.streaming == before + 2)
    for writer in writers:
        writer.end()
        await writer.finish("Hello")
    assert ReplyWriter.streaming == before


async def _until(condition: Callable[[], bool], hang_guard_s: float = 30.0) -> None:
    """Wait for `condition` (failing only if it never comes: a hang guard, not a timing)."""
    for _ in range(int(hang_guard_s / 0.005)):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("never happened")


async def _first_write(writer: ReplyWriter) -> None:
    await _until(lambda: writer.writes > 0)


async def _stream_hello_there(writer: ReplyWriter) -> None:
    """A two-write reply: "Hello" as the first write, " there" as the tail."""
    writer.start()
    writer.feed("Hello")
    await _first_write(writer)
    writer.feed(" there")
    writer.end()
    await writer.finish("Hello there")


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_leading_markup_waits_for_the_first_word() -> None:
    # "##" alone renders nothing: no write (and no frame) is spent on it.
    markdown = RecordingMarkdown()
    writer = ReplyWriter(markdown, interval_s=0.01)  # type: ignore[arg-type]
    first_text: list[str] = []
    writer.on_first_text = lambda: first_text.append(markdown.source)
    writer.start()
    writer.feed("##")
    await _settle()
    assert writer.writes == 0 and markdown.appended == []
    # Told at once, before any write: the first word is a token away, and what waits for
    # the first text (Enter's frame) can be painted meanwhile.
    assert first_text == [""]
    writer.feed(" Title")
    await _first_write(writer)
    assert markdown.appended[0] == "## Title"
    writer.feed("\n\nmore")
    writer.end()
    await writer.finish("## Title\n\nmore")
    assert markdown.source == "## Title\n\nmore" and first_text == [""]  # called once


async def test_the_first_text_is_announced_after_it_is_written() -> None:
    markdown = RecordingMarkdown()
    writer = ReplyWriter(markdown, interval_s=0.01)  # type: ignore[arg-type]
    first_text: list[str] = []
    writer.on_first_text = lambda: first_text.append(markdown.source)
    await _stream_hello_there(writer)
    assert first_text == ["Hello"]  # once, with the first words already in the widget


async def test_a_reply_of_markup_only_is_still_written_when_the_stream_ends() -> None:
    markdown = RecordingMarkdown()
    writer = ReplyWriter(markdown, interval_s=0.01)  # type: ignore[arg-type]
    writer.start()
    writer.feed("---")
    await _settle()
    writer.end()
    await writer.finish(None)
    assert markdown.source == "---"
    assert markdown.updates == ["---"]


async def test_what_rides_with_the_writes_skips_the_tail() -> None:
    # The final record replaces the live figures right after the stream ends: the tail's
    # frame carries the last words only.
    markdown = RecordingMarkdown()
    writer = ReplyWriter(markdown, interval_s=0.01)  # type: ignore[arg-type]
    rode_with: list[str] = []
    writer.with_write = lambda: rode_with.append(markdown.source)
    await _stream_hello_there(writer)
    assert markdown.source == "Hello there" and writer.writes == 2
    assert rode_with == [""]  # with the first write (before its append), not with the tail


async def test_a_widget_removed_during_a_write_ends_the_write_quietly() -> None:
    """A new chat removes the reply's widget while a write is in progress: the write must
    not then ask the widget's (gone) screen for a frame: a NoScreen there would lose the
    reply's record and show an error in the new chat."""
    from textual.app import App, ComposeResult
    from textual.widgets import Markdown

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield Markdown(id="reply")

    app = Host()
    async with app.run_test() as pilot:
        markdown = app.query_one(Markdown)
        real_append = markdown.append

        async def append_while_the_chat_is_cleared(text: str) -> None:
            await real_append(text)
            await markdown.remove()

        markdown.append = append_while_the_chat_is_cleared  # type: ignore[method-assign]
        writer = ReplyWriter(markdown)
        writer.start()
        writer.feed("hello there")
        writer.end()
        await writer.finish(None)  # must not raise NoScreen
        await pilot.pause()
        assert writer.writes == 1
        assert not markdown.is_attached
