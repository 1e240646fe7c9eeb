"""The client reads the SSE body itself: what servers send that the demo endpoint does not.

Real HTTP on loopback against `Canned`, a scripted server: [DONE] with and without a finish
reason, an `{"error": ...}` object mid-stream, CRLF line ends and comments, reasoning and
tool-call deltas, an event split across two writes, bodies that are not JSON objects, and the
connection kept for the next request after [DONE].
"""

from __future__ import annotations

from helpers.client import DONE, Canned, collect, make_client, make_request, sse

from tui.engine.chat.events import Delta, FirstByte, FirstToken, UsageReported
from tui.engine.metrics.record import RequestStatus

ROLE = sse({"role": "assistant", "content": ""})
USAGE = sse(None, usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10})


def tokens(*texts: str) -> list[bytes | float]:
    return [sse({"content": text}) for text in texts]


async def test_a_complete_stream_reports_usage_and_finish() -> None:
    pieces = [ROLE, *tokens("a", "b", "c"), sse({}, "stop"), USAGE, DONE]
    async with Canned(pieces) as server:
        events, finished = await collect(make_client(server.base_url), make_request())
    record = finished.record
    assert record.status is RequestStatus.OK and record.error_kind is None
    assert finished.text == "abc" and record.finish_reason == "stop"
    assert record.output_tokens == 3 and record.output_tokens_source == "usage"
    assert record.prompt_tokens_usage == 7
    assert [e.completion_tokens for e in events if isinstance(e, UsageReported)] == [3]


async def test_done_without_a_finish_reason_is_complete() -> None:
    # ended_early is a stream that ends without a finish reason AND without [DONE].
    async with Canned([ROLE, *tokens("a", "b"), DONE]) as server:
        _, finished = await collect(make_client(server.base_url), make_request())
    assert finished.record.status is RequestStatus.OK
    assert finished.record.finish_reason is None and finished.text == "ab"


async def test_a_finish_reason_without_done_is_complete() -> None:
    async with Canned([ROLE, *tokens("a"), sse({}, "length")]) as server:
        _, finished = await collect(make_client(server.base_url), make_request())
    assert finished.record.status is RequestStatus.OK
    assert finished.record.finish_reason == "length"


async def test_a_clean_end_without_finish_or_done_is_ended_early() -> None:
    async with Canned([ROLE, *tokens("a", "b")]) as server:
        _, finished = await collect(make_client(server.base_url), make_request())
    record = finished.record
    assert record.status is RequestStatus.ENDED_EARLY and record.error_kind == "ended_early"
    assert finished.text == "ab"


async def test_an_error_object_mid_stream_keeps_the_partial_reply() -> None:
    error = b'data: {"error": {"message": "model overloaded", "type": "server_error"}}\n\n'
    async with Canned([ROLE, *tokens("a", "b"), error]) as server:
        _, finished = await collect(make_client(server.base_url, max_retries=2), make_request())
    record = finished.record
    assert record.status is RequestStatus.ERROR and record.error_kind == "server"
    assert "mid-stream" in record.error_message and "model overloaded" in record.error_message
    assert finished.text == "ab" and record.retries == 0  # after the first token: no retry


async def test_a_context_error_mid_stream_hints_at_trimming() -> None:
    error = b'data: {"error": {"message": "maximum context length is 4096 tokens"}}\n\n'
    history = [
        {"role": "user", "content": "an earlier question"},
        {"role": "assistant", "content": "an earlier answer"},
        {"role": "user", "content": "and now?"},
    ]
    async with Canned([ROLE, error]) as server:
        _, finished = await collect(make_client(server.base_url), make_request(messages=history))
    assert finished.record.error_kind == "context_length"
    assert "turn trimming on with a budget below 4,096 (the server's window)" in (
        finished.record.error_message or ""
    )


async def test_crlf_comments_reasoning_and_tool_calls() -> None:
    tool = {"index": 0, "id": "t", "function": {"name": "search", "arguments": '{"q":'}}
    more = {"index": 0, "function": {"arguments": '"x"}'}}
    body = b"".join(
        [
            b": keep-alive\n\n",
            ROLE,
            b"event: message\nid: 1\n" + sse({"reasoning_content": "think"}),
            sse({"tool_calls": [tool]}),
            sse({"tool_calls": [more]}),
            sse({"content": "done"}, "stop"),
            DONE,
        ]
    ).replace(b"\n", b"\r\n")
    async with Canned([body]) as server:
        events, finished = await collect(make_client(server.base_url), make_request())
    deltas = [(e.kind, e.text) for e in events if isinstance(e, Delta)]
    assert deltas == [
        ("reasoning", "think"),
        ("tool_call", 'search{"q":'),
        ("tool_call", '"x"}'),
        ("content", "done"),
    ]
    first_token = next(e.at for e in events if isinstance(e, FirstToken))
    assert first_token == next(e.at for e in events if isinstance(e, Delta))  # the reasoning
    assert finished.text == "done" and finished.record.status is RequestStatus.OK


async def test_an_event_split_across_writes_is_stamped_when_it_completes() -> None:
    token = sse({"content": "late"})
    pieces: list[bytes | float] = [ROLE, 0.05, token[:20], 0.2, token[20:], DONE]
    async with Canned(pieces) as server:
        events, finished = await collect(make_client(server.base_url), make_request())
        role_sent, half_sent, rest_sent = server.written_at[:3]
    first_byte = next(e.at for e in events if isinstance(e, FirstByte))
    first_token = next(e.at for e in events if isinstance(e, FirstToken))
    # Against the server's own clock (one process, one perf_counter): the role event is stamped
    # before the token's first half was written, the token only after its second half was.
    assert role_sent <= first_byte < half_sent
    assert rest_sent <= first_token
    assert finished.text == "late"


async def test_the_connection_is_kept_after_done() -> None:
    async with Canned([ROLE, *tokens("a"), sse({}, "stop"), DONE]) as server:
        client = make_client(server.base_url)
        try:
            for _ in range(3):
                async for _event in client.stream(make_request()):
                    pass
        finally:
            await client.aclose()
        assert server.requests == 3 and server.connections == 1


async def test_a_body_held_open_after_done_does_not_hold_the_reply() -> None:
    # [DONE] says the reply is whole: the client must not wait for the body to end.
    pieces: list[bytes | float] = [ROLE, *tokens("a"), DONE, 3.0, b": late\n\n"]
    async with Canned(pieces) as server:
        _, finished = await collect(
            make_client(server.base_url, chunk_timeout_ms=100), make_request()
        )
        assert len(server.written_at) == 3  # finished before the server's pause was over
    assert finished.record.status is RequestStatus.OK and finished.text == "a"


async def test_event_data_that_is_not_a_json_object_is_bad_json() -> None:
    for bad in (b"data: [1, 2]\n\n", b"data: \xff\xfe\n\n"):
        async with Canned([ROLE, *tokens("a"), bad]) as server:
            _, finished = await collect(make_client(server.base_url), make_request())
        assert finished.record.error_kind == "bad_json", bad
        assert finished.text == "a"


async def test_non_streaming_body_with_reasoning_and_tool_calls() -> None:
    message = {
        "role": "assistant",
        "content": "answer",
        "reasoning_content": "think",
        "tool_calls": [
            {"id": "t", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    body = {
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9},
    }
    import json

    async with Canned(
        [json.dumps(body).encode()], chunked=False, content_type="application/json"
    ) as server:
        events, finished = await collect(make_client(server.base_url), make_request(stream=False))
    assert [e.kind for e in events if isinstance(e, Delta)] == ["reasoning", "tool_call", "content"]
    record = finished.record
    assert record.status is RequestStatus.OK and finished.text == "answer"
    assert record.ttft_ms == record.total_ms and record.output_tokens == 4


async def test_non_streaming_body_that_is_not_an_object_is_bad_json() -> None:
    async with Canned([b"[]"], chunked=False, content_type="application/json") as server:
        _, finished = await collect(
            make_client(server.base_url, max_retries=0), make_request(stream=False)
        )
    assert finished.record.error_kind == "bad_json"
