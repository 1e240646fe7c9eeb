"""The tokenizer endpoints real servers offer beside chat, for exact prompt counts.

Each dialect serves its server's own paths at the root (not under /v1), with that server's
request and answer shapes:

- llama.cpp's llama-server (tools/server/README.md, "POST /tokenize" and "POST /apply-template"):
  `/tokenize` {"content", "add_special": false, "parse_special": true, "with_pieces": false}
  -> {"tokens": [ids]} or [{"id", "piece"}]; `/apply-template` {"messages"} -> {"prompt"}.
  The exact prompt count of a chat request is `/tokenize` of `/apply-template`'s prompt.
- vLLM (vllm/entrypoints/openai/protocol.py, TokenizeChatRequest / TokenizeCompletionRequest /
  TokenizeResponse): `/tokenize` {"model", "messages", "add_generation_prompt": true,
  "continue_final_message": false, "add_special_tokens": false, "return_token_strs": false}
  or {"model", "prompt", "add_special_tokens": true} -> {"count", "max_model_len", "tokens",
  "token_strs"}.
- llama-cpp-python (llama_cpp/server/app.py): `/extras/tokenize` and `/extras/tokenize/count`
  {"input", "model"} -> {"tokens"} / {"count"}; the text as given, special tokens parsed, and a
  BOS in front (unless the text starts with one).

`answer_tokenizer` is pure, (status, JSON-able answer) from the parsed body; `serve_tokenizer`
answers one request with it (status faults apply here too).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tui.demo.dialects import Dialect
from tui.demo.exchange import Exchange
from tui.demo.faults import Fault, FaultCounter, error_parts, wait_for_close
from tui.demo.prompt import server_tokenizer
from tui.demo.templates import render
from tui.demo.tokenizer import ServerTokenizer

Answer = tuple[int, Any]


def _messages_problem(messages: object) -> str | None:
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array of message objects"
    if not all(isinstance(m, dict) for m in messages):
        return "each entry of 'messages' must be an object with a role"
    return None


def _flag(body: dict, key: str, default: bool) -> bool:
    value = body.get(key, default)
    return value if isinstance(value, bool) else default


# -- llama.cpp ---------------------------------------------------------------------------------


def _llamacpp_error(message: str) -> Answer:
    return 400, {"error": {"code": 400, "message": message, "type": "invalid_request_error"}}


def _llamacpp_tokenize(tokenizer: ServerTokenizer, body: dict) -> Answer:
    content = body.get("content", "")
    if not isinstance(content, str):
        return _llamacpp_error('"content" must be a string')
    pieces = tokenizer.pieces(content, parse_special=_flag(body, "parse_special", True))
    if _flag(body, "add_special", False):
        pieces.insert(0, "<bos>")
    if _flag(body, "with_pieces", False):
        return 200, {"tokens": [{"id": tokenizer.token_id(p), "piece": p} for p in pieces]}
    return 200, {"tokens": tokenizer.ids(pieces)}


def _llamacpp_apply_template(template: str, body: dict) -> Answer:
    messages = body.get("messages")
    problem = _messages_problem(messages)
    if problem is not None:
        return _llamacpp_error(problem)
    assert isinstance(messages, list)
    return 200, {"prompt": render(template, messages)}


# -- vLLM --------------------------------------------------------------------------------------


def _vllm_error(message: str) -> Answer:
    error = {"message": message, "type": "BadRequestError", "param": None, "code": 400}
    return 400, {"error": error}


def _vllm_tokenize(dialect: Dialect, tokenizer: ServerTokenizer, body: dict) -> Answer:
    template = dialect.template or "chatml"
    if "messages" in body:
        messages = body["messages"]
        problem = _messages_problem(messages)
        if problem is not None:
            return _vllm_error(problem)
        generation = _flag(body, "add_generation_prompt", True)
        continue_final = _flag(body, "continue_final_message", False)
        if generation and continue_final:
            return _vllm_error(
                "Cannot set both `continue_final_message` and `add_generation_prompt` to True."
            )
        text = render(template, messages, add_generation_prompt=generation)
        if continue_final:  # the last message stays open: no end-of-turn after it
            text = text.removesuffix("<|im_end|>\n")
    else:
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            return _vllm_error("Either 'messages' or a string 'prompt' is required.")
        text = prompt
    pieces = tokenizer.pieces(text)
    answer = {
        "count": len(pieces),
        "max_model_len": dialect.context_window,
        "tokens": tokenizer.ids(pieces),
        "token_strs": pieces if _flag(body, "return_token_strs", False) else None,
    }
    return 200, answer


# -- llama-cpp-python --------------------------------------------------------------------------


def _llama_cpp_python(tokenizer: ServerTokenizer, body: dict, count_only: bool) -> Answer:
    text = body.get("input")
    if not isinstance(text, str):
        kind, message = ("missing", "Field required")
        if "input" in body:
            kind, message = ("string_type", "Input should be a valid string")
        detail = {"type": kind, "loc": ["body", "input"], "msg": message, "input": body}
        return 422, {"detail": [detail]}
    pieces = tokenizer.pieces(text)
    if not pieces or pieces[0] != "<bos>":
        pieces.insert(0, "<bos>")
    if count_only:
        return 200, {"count": len(pieces)}
    return 200, {"tokens": tokenizer.ids(pieces)}


def answer_tokenizer(dialect: Dialect, path: str, body: object) -> Answer:
    """The answer to a POST of `body` (parsed JSON) to one of `dialect.tokenizer_paths`."""
    if not isinstance(body, dict):
        if dialect.name == "llama-cpp-python":
            detail = {
                "type": "model_attributes_type",
                "loc": ["body"],
                "msg": "Input should be a valid dictionary or object to extract fields from",
                "input": body,
            }
            return 422, {"detail": [detail]}
        message = "the request body must be a JSON object"
        return _vllm_error(message) if dialect.name == "vllm" else _llamacpp_error(message)
    template = dialect.template or "gemma"
    tokenizer = server_tokenizer(template)
    if dialect.name == "vllm":
        return _vllm_tokenize(dialect, tokenizer, body)
    if dialect.name == "llama-cpp-python":
        return _llama_cpp_python(tokenizer, body, count_only=path.endswith("/count"))
    if path == "/apply-template":
        return _llamacpp_apply_template(template, body)
    return _llamacpp_tokenize(tokenizer, body)


async def serve_tokenizer(
    ex: Exchange,
    dialect: Dialect,
    path: str,
    fault: Fault | None,
    faults: FaultCounter,
    reader: asyncio.StreamReader,
) -> bool:
    """Answer a POST to one of the dialect's tokenizer paths; False: close the connection."""
    kind = fault.kind if fault else None
    if kind == "drop":
        return False
    if kind == "hang":
        await wait_for_close(reader)
        return False
    if (status := faults.status(fault)) is not None:
        message, type_, code, extra = error_parts(status)
        await ex.send_error(status, message, type_, code, extra=extra)
        return True
    try:
        body = json.loads(ex.request.body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        body = None
    # A long prompt takes milliseconds to tokenise: off the loop, as chat counting is.
    answer_status, answer = await asyncio.to_thread(answer_tokenizer, dialect, path, body)
    await ex.send_full(
        answer_status, json.dumps(answer, ensure_ascii=False).encode(), "application/json"
    )
    return True
