"""Run firsttoken under cProfile inside the render harness and save the profile when the
harness stops it (SIGTERM), so a render run can be read function by function.
RENDER_PROFILE_FROM=send profiles from Enter on (the reply only), =end from the stream's end
(the last token in); with RENDER_PROFILE_UNTIL=first as well, only up to the frame that
shows the first words (the tail).
With the profile path "-" and RENDER_TRACE=trace.jsonl it only logs timestamps (writer
steps, layouts, frames, garbage collections) on the endpoint's clock; RENDER_TRACE_LAYOUT=1
adds which widgets asked for a layout (RENDER_TRACE_REPAINT=1: who asked for a repaint,
through what calls; RENDER_TRACE_OUTPUT=1: the bytes of each terminal write, by row:column painted;
RENDER_TRACE_STALLS=1: every stretch of over 10 ms in which the UI loop ran nothing else).
From Enter on, RENDER_COUNT_LINES=out.json counts the lines each widget class rendered afresh
(and the time), RENDER_THREAD_CPU=out.json the CPU seconds of each app thread,
RENDER_TIME_PARTS=out.json the CPU time of a few phases (layouts, frames, writes, mounts,
styling; nested phases are counted in their own line only); all are written when the app
stops, and any of these switches combine. RENDER_PROBE=script.py runs a script of your own in
the app's process first (to patch in a one-off probe).

    RENDER_FIRSTTOKEN_PROFILE=/tmp/short.prof python -m benchmarks.render.run_all \\
        --apps firsttoken --scenarios short --short-runs 1 --no-warm-up
    python -c "import pstats; pstats.Stats('/tmp/short.prof').sort_stats('tottime').print_stats(30)"
"""

from __future__ import annotations

import cProfile
import itertools
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType

# What the switches below write when the app stops (the harness's SIGTERM, or a normal exit).
AT_STOP: list[Callable[[], None]] = []


def before_submit(step: Callable[[], None]) -> None:
    """Run `step` at Enter, before the app sends (for figures counted from Enter on)."""
    from tui.app.chat.reply_turn import ReplyTurn

    submit = ReplyTurn.submit

    def stepped_submit(turn: ReplyTurn, text: str) -> None:
        step()
        submit(turn, text)

    ReplyTurn.submit = stepped_submit  # type: ignore[method-assign]


def run_at_stop() -> None:
    for write in AT_STOP:
        write()


def main() -> None:
    out, argv = sys.argv[1], sys.argv[2:]
    profiler = cProfile.Profile()
    if out == "-":  # trace only (RENDER_TRACE), no profile
        profiler.enable = profiler.disable = lambda: None  # type: ignore[method-assign]
        profiler.dump_stats = lambda _path: None  # type: ignore[method-assign]

    def stop(_signum: int, _frame: FrameType | None) -> None:
        profiler.disable()
        profiler.dump_stats(out)
        run_at_stop()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    if os.environ.get("RENDER_THREAD_CPU"):
        _thread_cpu(os.environ["RENDER_THREAD_CPU"])
    if os.environ.get("RENDER_COUNT_LINES"):
        _count_lines(os.environ["RENDER_COUNT_LINES"])
    if os.environ.get("RENDER_TIME_PARTS"):
        _time_parts(os.environ["RENDER_TIME_PARTS"])
    if os.environ.get("RENDER_TRACE"):
        _trace(os.environ["RENDER_TRACE"])
        _log_start(os.environ["RENDER_TRACE"])
    from tui.cli import main as firsttoken

    if os.environ.get("RENDER_PROBE"):
        import runpy

        # An ad-hoc probe: a script run in the app's process before the app starts; it finds
        # this module as sys.modules["__main__"] (before_submit, AT_STOP).
        runpy.run_path(os.environ["RENDER_PROBE"])

    start_at = os.environ.get("RENDER_PROFILE_FROM")
    if start_at in ("send", "end"):
        if start_at == "send":
            # Only the reply: start at Enter (startup otherwise dominates the profile).
            before_submit(profiler.enable)
        else:
            _start_at_stream_end(profiler)
        if os.environ.get("RENDER_PROFILE_UNTIL") == "first":
            _stop_after_first_frame(profiler)
    else:
        profiler.enable()
    try:
        firsttoken(argv)
    finally:
        profiler.disable()
        profiler.dump_stats(out)
        run_at_stop()


def _start_at_stream_end(profiler: cProfile.Profile) -> None:
    """Start profiling when the UI loop learns that the stream ended (the last token is in):
    what stands between the last token and the last words on screen."""
    from tui.app.chat.reply_writer import ReplyWriter

    end_now = ReplyWriter._end_now

    def profiled_end_now(self: ReplyWriter) -> None:
        if not self._ended.is_set():
            profiler.enable()
        end_now(self)

    ReplyWriter._end_now = profiled_end_now  # type: ignore[method-assign]


def _stop_after_first_frame(profiler: cProfile.Profile) -> None:
    """Stop profiling after the first frame painted once a write was made while profiling
    (from Enter: the first words; from the stream's end: the tail)."""
    from textual.screen import Screen

    from tui.app.chat.reply_writer import ReplyWriter

    written = [False]
    write, refresh = ReplyWriter._write, Screen._compositor_refresh

    async def noted_write(self: ReplyWriter, chunk: str) -> None:
        if sys.getprofile() is not None:  # cProfile is on for this thread
            written[0] = True
        await write(self, chunk)

    def refresh_then_stop(self: Screen) -> None:
        refresh(self)
        if written[0]:
            profiler.disable()

    ReplyWriter._write = noted_write  # type: ignore[method-assign]
    Screen._compositor_refresh = refresh_then_stop  # type: ignore[method-assign]


PRECISE = "process, all threads (process_time)"


def _thread_cpu(path: str) -> None:
    """CPU seconds of each thread of the app (Linux /proc), from Enter on, written to `path`
    as JSON when the harness stops the app: the UI thread's share vs the network's."""
    import json
    import threading
    import time
    from pathlib import Path

    tick = os.sysconf("SC_CLK_TCK")

    def cpu_by_thread() -> dict[str, float]:
        names = {thread.native_id: thread.name for thread in threading.enumerate()}
        seconds: dict[str, float] = {}
        for task in Path("/proc/self/task").iterdir():
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            name = names.get(int(task.name), f"native {task.name}")
            seconds[name] = seconds.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
        return seconds

    at_enter: dict[str, float] = {}

    def at_submit() -> None:
        at_enter.update(cpu_by_thread())
        at_enter[PRECISE] = time.process_time()

    before_submit(at_submit)

    def dump() -> None:
        now = cpu_by_thread()
        spent = {name: round(now[name] - at_enter.get(name, 0.0), 2) for name in now}
        # /proc counts in clock ticks (10 ms): too coarse to compare two builds on a short
        # reply. The whole process, to the microsecond (Enter until the harness stops it).
        spent[PRECISE] = round(time.process_time() - at_enter.get(PRECISE, 0.0), 4)
        Path(path).write_text(json.dumps(spent, indent=1))

    AT_STOP.append(dump)


def _count_lines(path: str) -> None:
    """Count the widget lines each widget class renders afresh (Textual's line cache missed),
    from Enter on, written to `path` as JSON when the harness stops the app."""
    import json
    import time
    from collections import Counter

    from textual._styles_cache import StylesCache
    from textual.widget import Widget

    counts: Counter[str] = Counter()
    micros: Counter[str] = Counter()
    counting = [False]
    render_widget = StylesCache.render_widget

    def counted(self: StylesCache, widget: Widget, crop: object) -> object:
        if counting[0]:
            missing = sum(
                1
                for y in crop.line_range
                if y in self._dirty_lines or y not in self._cache  # type: ignore[attr-defined]
            )
            counts[type(widget).__name__] += missing
            started = time.perf_counter()
            strips = render_widget(self, widget, crop)  # type: ignore[arg-type]
            micros[type(widget).__name__] += int((time.perf_counter() - started) * 1e6)
            return strips
        return render_widget(self, widget, crop)  # type: ignore[arg-type]

    StylesCache.render_widget = counted  # type: ignore[method-assign]
    before_submit(lambda: counting.__setitem__(0, True))

    def dump() -> None:
        with open(path, "w") as out:
            rows = {name: [counts[name], micros[name] // 1000] for name, _ in micros.most_common()}
            json.dump({"widget: [lines rendered afresh, ms rendering]": rows}, out, indent=1)

    AT_STOP.append(dump)


def _time_parts(path: str) -> None:
    """CPU time of the UI thread (thread_time: sleeps and the other threads are not counted)
    in a few phases from Enter on, written to `path` as JSON when the app stops, with the
    thread's whole time beside them. A phase run inside another (a frame inside a layout)
    is taken out of the outer one's figure. The reply writer's write is awaited: its figure
    also holds whatever ran while it waited (mounts it started, mostly)."""
    import functools
    import inspect
    import json
    import time
    from collections import Counter
    from pathlib import Path
    from typing import Any

    from textual._compositor import Compositor
    from textual.css.stylesheet import Stylesheet
    from textual.screen import Screen

    from tui.app.chat.reply_writer import ReplyWriter

    spent: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    inside: list[str] = []  # the phases running now, innermost last
    on = [False]

    def enter(label: str) -> float:
        inside.append(label)
        return time.thread_time()

    def leave(label: str, started: float) -> None:
        took = time.thread_time() - started
        inside.pop()
        spent[label] += took
        calls[label] += 1
        if inside:
            spent[inside[-1]] -= took  # the outer phase keeps only its own time

    def timed(owner: type, name: str, label: str) -> None:
        original = getattr(owner, name)
        if inspect.iscoroutinefunction(original):

            @functools.wraps(original)
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                if not on[0]:
                    return await original(*args, **kwargs)
                started = enter(label)
                try:
                    return await original(*args, **kwargs)
                finally:
                    leave(label, started)

            setattr(owner, name, timed_async)
        else:

            @functools.wraps(original)
            def timed_sync(*args: Any, **kwargs: Any) -> Any:
                if not on[0]:
                    return original(*args, **kwargs)
                started = enter(label)
                try:
                    return original(*args, **kwargs)
                finally:
                    leave(label, started)

            setattr(owner, name, timed_sync)

    timed(Compositor, "reflow", "layout: arrange (reflow)")
    timed(Screen, "_refresh_layout", "layout: the rest (resize events, signals)")
    timed(Screen, "_compositor_refresh", "frame: render and write")
    timed(Stylesheet, "apply", "styling (stylesheet.apply)")
    timed(ReplyWriter, "_write", "reply writer: write (parse, update, mount)")
    started = [0.0]

    def at_submit() -> None:
        on[0] = True
        started[0] = time.thread_time()

    before_submit(at_submit)

    def dump() -> None:
        rows = {label: [round(s * 1000, 1), calls[label]] for label, s in spent.most_common()}
        rows["(UI thread, all)"] = [round((time.thread_time() - started[0]) * 1000, 1), 1]
        Path(path).write_text(json.dumps({"phase: [ms, calls]": rows}, indent=1))

    AT_STOP.append(dump)


def _log_start(path: str) -> None:
    import json
    import time

    with open(path, "a") as out:
        out.write(json.dumps({"t": time.perf_counter(), "kind": "main"}) + "\n")


def _trace(path: str) -> None:
    """Timestamps (perf_counter, the endpoint's clock) of the reply writer's steps and of
    every frame, appended to `path` as JSON lines: where the final render lag goes."""
    import json
    import time

    from textual.screen import Screen

    from tui.app.chat.reply_writer import ReplyWriter

    out = open(path, "a", buffering=1)  # noqa: SIM115 - open for the process's lifetime

    def log(kind: str, **fields: object) -> None:
        out.write(json.dumps({"t": time.perf_counter(), "kind": kind, **fields}) + "\n")

    from tui.app.app import FirstTokenApp
    from tui.app.chat.reply_turn import ReplyTurn
    from tui.app.start_up import StartUp

    end, write, finish = ReplyWriter.end, ReplyWriter._write, ReplyWriter.finish
    submit = ReplyTurn.submit

    def traced_submit(self: ReplyTurn, text: str) -> None:
        log("submit", tracked=len(gc.get_objects()), frozen=gc.get_freeze_count())
        submit(self, text)
        log("submitted")

    settle = StartUp._settle

    def traced_settle(self: StartUp) -> None:
        settle(self)
        log("settle", tracked=len(gc.get_objects()), frozen=gc.get_freeze_count())

    refresh, layout = Screen._compositor_refresh, Screen._refresh_layout

    def traced_end(self: ReplyWriter) -> None:
        log("end")
        end(self)

    async def traced_write(self: ReplyWriter, chunk: str) -> None:
        log("write", chars=len(chunk))
        await write(self, chunk)
        log("written")

    async def traced_finish(self: ReplyWriter, text: str | None) -> None:
        log("finish")
        await finish(self, text)
        log("finished")

    def traced_refresh(self: Screen) -> None:
        started = time.perf_counter()
        refresh(self)
        log("frame", ms=(time.perf_counter() - started) * 1000)

    def traced_layout(self: Screen, *args: object, **kwargs: object) -> None:
        started = time.perf_counter()
        full = not (kwargs.get("scroll") and not self._layout_widgets)
        layout(self, *args, **kwargs)  # type: ignore[arg-type]
        log("layout", ms=(time.perf_counter() - started) * 1000, full=full)

    import gc
    from collections import Counter

    gc_started: list[float] = []

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_started[:] = [time.perf_counter()]
        elif gc_started:
            ms = (time.perf_counter() - gc_started[0]) * 1000
            log("gc", ms=ms, generation=info["generation"])

    gc.callbacks.append(on_gc)
    StartUp._settle = traced_settle  # type: ignore[method-assign]
    from textual.widget import Widget

    widget_refresh = Widget.refresh

    def traced_widget_refresh(self: Widget, *regions: object, **kwargs: object) -> Widget:
        if kwargs.get("layout") and not self._layout_required:
            log("wants-layout", widget=type(self).__name__)
        elif os.environ.get("RENDER_TRACE_REPAINT") and kwargs.get("repaint", True):
            callers = [sys._getframe(depth).f_code.co_name for depth in range(1, 5)]
            whole = "whole" if not regions else f"{len(regions)} regions"
            log("wants-repaint", widget=type(self).__name__, area=whole, via="<".join(callers))
        return widget_refresh(self, *regions, **kwargs)  # type: ignore[arg-type]

    on_layout = Screen._on_layout

    async def traced_on_layout(self: Screen, message: object) -> None:
        log("layout-message", widget=type(message.widget).__name__)  # type: ignore[attr-defined]
        await on_layout(self, message)  # type: ignore[arg-type]

    timer_update = Screen._on_timer_update

    def traced_timer_update(self: Screen) -> None:
        names = Counter(type(widget).__name__ for widget in self._dirty_widgets)
        log(
            "screen-tick",
            layout=self._layout_required,
            dirty=len(self._dirty_widgets),
            batch=self.app._batch_count,
            widgets=",".join(f"{name}x{count}" for name, count in sorted(names.items())),
        )
        timer_update(self)

    if os.environ.get("RENDER_TRACE_STALLS"):
        # Every stretch of over 10 ms in which the UI loop ran nothing else, from mount on:
        # what a key pressed then would wait for.
        import asyncio

        on_mount = FirstTokenApp.on_mount

        async def watch_loop() -> None:
            last = time.perf_counter()
            while True:
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                if now - last > 0.010:
                    log("stall", ms=(now - last) * 1000, since=last)
                last = now

        async def watched_on_mount(self: FirstTokenApp) -> None:
            await on_mount(self)
            self._stall_watch = asyncio.ensure_future(watch_loop())  # type: ignore[attr-defined]

        FirstTokenApp.on_mount = watched_on_mount  # type: ignore[method-assign]
    if os.environ.get("RENDER_TRACE_OUTPUT"):
        # Which screen rows each write to the terminal paints, and how many bytes each.
        import re

        from textual.drivers.linux_driver import LinuxDriver

        driver_write = LinuxDriver.write
        move = re.compile(r"\x1b\[(\d+);(\d+)H")

        def traced_driver_write(self: LinuxDriver, data: str) -> None:
            spans = [m.start() for m in move.finditer(data)] + [len(data)]
            rows: Counter[str] = Counter()
            for start, end in itertools.pairwise(spans):
                found = move.match(data, start)
                if found:
                    rows[f"{found.group(1)}:{found.group(2)}"] += len(data[start:end].encode())
            painted = ",".join(f"{cell}={size}" for cell, size in sorted(rows.items()))
            log("output", n=len(data.encode()), cells=painted)
            driver_write(self, data)

        LinuxDriver.write = traced_driver_write  # type: ignore[method-assign]
    if os.environ.get("RENDER_TRACE_LAYOUT"):
        Screen._on_timer_update = traced_timer_update  # type: ignore[method-assign]
        Widget.refresh = traced_widget_refresh  # type: ignore[method-assign]
        Screen._on_layout = traced_on_layout  # type: ignore[method-assign]
    Screen._refresh_layout = traced_layout  # type: ignore[method-assign]
    ReplyTurn.submit = traced_submit  # type: ignore[method-assign]
    ReplyWriter.end = traced_end  # type: ignore[method-assign]
    ReplyWriter._write = traced_write  # type: ignore[method-assign]
    ReplyWriter.finish = traced_finish  # type: ignore[method-assign]
    Screen._compositor_refresh = traced_refresh  # type: ignore[method-assign]


if __name__ == "__main__":
    main()
