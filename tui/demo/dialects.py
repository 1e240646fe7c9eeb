"""Which real server the demo endpoint plays: what it counts, reports and serves besides chat.

Real OpenAI-compatible servers differ where a latency client looks hardest: how they count a
prompt (the chat template's text, or OpenAI's own accounting), whether a stream carries
`usage`, llama.cpp's `timings`, and which tokenizer endpoints exist. `[demo] server` picks one;
each preset defaults to the server its figures were measured on.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    name: str
    # The chat template whose text is tokenised for prompt_tokens ("gemma", "chatml"), or None
    # for OpenAI's own accounting (the client's cl100k count of the messages).
    template: str | None
    timings: bool  # llama.cpp's `timings` object in the last chunk and in a non-stream body
    stream_usage: bool  # `usage` in a stream when `stream_options.include_usage` asks for it
    # How `usage` is detailed: "openai" (prompt and completion token details, all fields),
    # "cached" (`prompt_tokens_details.cached_tokens` only) or "none" (the three counts).
    usage_details: str
    # The prefix cache's unit: whole leading messages (None) or tokens in blocks of this size.
    cache_block: int | None
    tokenizer_paths: tuple[str, ...]  # served at the server's root, as the real server does
    context_window: int  # vLLM's `max_model_len` in its /tokenize answer


DIALECTS: dict[str, Dialect] = {
    # llama.cpp's own llama-server with a Gemma 3 model (cpu-small was measured there).
    "llamacpp": Dialect(
        "llamacpp", "gemma", True, True, "cached", 1, ("/tokenize", "/apply-template"), 8192
    ),
    # vLLM with a Qwen (ChatML) model, --enable-prompt-tokens-details; prefix caching hashes
    # 16-token blocks.
    "vllm": Dialect("vllm", "chatml", False, True, "cached", 16, ("/tokenize",), 32768),
    # llama-cpp-python's server (Gemma 3): no usage in a stream whatever the request asks, no
    # timings, and its own tokenizer under /extras.
    "llama-cpp-python": Dialect(
        "llama-cpp-python",
        "gemma",
        False,
        False,
        "none",
        1,
        ("/extras/tokenize", "/extras/tokenize/count"),
        8192,
    ),
    # OpenAI's API: usage with all its details, no timings, no tokenizer endpoint.
    "openai": Dialect("openai", None, False, True, "openai", None, (), 128_000),
}
SERVER_DIALECTS = tuple(DIALECTS)
