"""One request/response of the demo endpoint: the writer, the response framing, the log stamps."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from tui.demo import http


def error_body(message: str, type_: str, code: str | None, param: str | None = None) -> bytes:
    """OpenAI's error JSON."""
    error = {"message": message, "type": type_, "param": param, "code": code}
    return json.dumps({"error": error}).encode()


class Exchange:
    """One request/response on a connection: the writer, the response framing, the log entry."""

    def __init__(self, request: http.Request, writer: asyncio.StreamWriter, entry: dict) -> None:
        self.request = request
        self.writer = writer
        self.entry = entry
        self.keep_alive = request.keep_alive
        self.chunked = request.chunked_ok

    async def send(self, data: bytes) -> float:
        """Stamp, write, then wait for buffer room. Stamped just before the write so that a
        client on another thread can never receive the bytes before their stamp (causality
        is what tests compare against; a stamp after the write loses to a preempted thread)."""
        written_at = time.perf_counter()
        self.writer.write(data)
        if self.entry.get("first_byte_at") is None:
            self.entry["first_byte_at"] = written_at
        await self.writer.drain()
        return written_at

    async def send_full(self, status: int, body: bytes, content_type: str, **kw: Any) -> None:
        self.entry["status"] = status
        await self.send(
            http.full_response(status, body, content_type, keep_alive=self.keep_alive, **kw)
        )

    async def send_error(
        self, status: int, message: str, type_: str, code: str | None, **kw: Any
    ) -> None:
        param = kw.pop("param", None)
        body = error_body(message, type_, code, param)
        await self.send_full(status, body, "application/json", **kw)

    def frame(self, event: bytes) -> bytes:
        return http.chunk(event) if self.chunked else event

    async def start_stream(self) -> float:
        self.entry["status"] = 200
        headers = [
            ("Content-Type", "text/event-stream; charset=utf-8"),
            ("Cache-Control", "no-cache"),
            ("X-Request-Id", self.entry["id"]),
        ]
        if self.chunked:
            headers.append(("Transfer-Encoding", "chunked"))
        else:  # HTTP/1.0: the end of the body is the end of the connection
            self.keep_alive = False
        return await self.send(http.response_head(200, headers, keep_alive=self.keep_alive))
