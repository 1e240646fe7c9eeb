"""The server tokenizer endpoints, and that they count a chat's prompt as its usage does."""

from __future__ import annotations

import pytest
from helpers.demo_wire import post, running

from tui.demo import count_prompt_tokens

MESSAGES = [
    {"role": "system", "content": "You answer briefly."},
    {"role": "user", "content": "What is time to first token?"},
    {"role": "assistant", "content": "The wait before the first word."},
    {"role": "user", "content": [{"type": "text", "text": "And prefill? reply 3 tokens"}]},
]


async def usage_prompt_tokens(base_url: str, messages: list[dict]) -> int:
    status, reply = await post(f"{base_url}/chat/completions", {"model": "m", "messages": messages})
    assert status == 200
    return int(reply["usage"]["prompt_tokens"])


async def test_llamacpp_apply_template_then_tokenize_is_the_chats_prompt_count() -> None:
    async with running(server="llamacpp") as demo:
        status, template = await post(f"{demo.root_url}/apply-template", {"messages": MESSAGES})
        assert status == 200
        prompt = template["prompt"]
        status, tokens = await post(f"{demo.root_url}/tokenize", {"content": prompt})
        assert status == 200
        used = await usage_prompt_tokens(demo.base_url, MESSAGES)
        _, pieces = await post(
            f"{demo.root_url}/tokenize", {"content": prompt, "with_pieces": True}
        )
        _, literal = await post(
            f"{demo.root_url}/tokenize", {"content": "<end_of_turn>", "parse_special": False}
        )
        _, with_bos = await post(
            f"{demo.root_url}/tokenize", {"content": "hi", "add_special": True}
        )
    # Gemma's template: no system role (its text opens the first user turn), `model` turns,
    # and the generation prompt at the end.
    assert prompt == (
        "<bos><start_of_turn>user\nYou answer briefly.\n\nWhat is time to first token?"
        "<end_of_turn>\n<start_of_turn>model\nThe wait before the first word.<end_of_turn>\n"
        "<start_of_turn>user\nAnd prefill? reply 3 tokens<end_of_turn>\n<start_of_turn>model\n"
    )
    ids = tokens["tokens"]
    assert all(isinstance(i, int) for i in ids)
    assert len(ids) == used == demo.requests[0]["prompt_tokens"]
    # The markers are single special tokens with Gemma's ids; pieces rejoin to the text.
    assert ids[:2] == [2, 105] and ids.count(106) == 3
    assert [p["id"] for p in pieces["tokens"]] == ids
    assert "".join(p["piece"] for p in pieces["tokens"]) == prompt
    assert len(literal["tokens"]) > 1  # parse_special false: the marker is plain text
    assert with_bos["tokens"][0] == 2 and len(with_bos["tokens"]) == 2


async def test_the_server_count_is_not_the_clients_estimate() -> None:
    async with running(server="llamacpp") as demo:
        used = await usage_prompt_tokens(demo.base_url, MESSAGES)
    # The client's local estimate (cl100k, OpenAI's per-message overhead) differs: the template
    # has its own markers and the server its own vocabulary.
    assert used != count_prompt_tokens("m", MESSAGES)
    async with running(server="openai") as demo:
        assert await usage_prompt_tokens(demo.base_url, MESSAGES) == count_prompt_tokens(
            "m", MESSAGES
        )


async def test_vllm_tokenize_takes_messages_and_counts_as_usage() -> None:
    async with running(server="vllm") as demo:
        status, answer = await post(
            f"{demo.root_url}/tokenize",
            {"model": "m", "messages": MESSAGES, "return_token_strs": True},
        )
        used = await usage_prompt_tokens(demo.base_url, MESSAGES)
        _, text = await post(f"{demo.root_url}/tokenize", {"model": "m", "prompt": "hello world"})
        _, open_ended = await post(
            f"{demo.root_url}/tokenize",
            {"messages": MESSAGES, "add_generation_prompt": False, "continue_final_message": True},
        )
        status_both, both = await post(
            f"{demo.root_url}/tokenize", {"messages": MESSAGES, "continue_final_message": True}
        )
        status_llamacpp, _ = await post(f"{demo.root_url}/apply-template", {"messages": MESSAGES})
    assert status == 200
    assert set(answer) == {"count", "max_model_len", "tokens", "token_strs"}
    assert answer["count"] == len(answer["tokens"]) == used
    assert answer["max_model_len"] == 32768
    # ChatML: a system turn of its own, then the generation prompt.
    assert answer["token_strs"][:2] == ["<|im_start|>", "system"]
    assert answer["token_strs"][-3:] == ["<|im_start|>", "assistant", "\n"]
    assert answer["tokens"][0] == 151644
    assert text == {
        "count": 2,
        "max_model_len": 32768,
        "tokens": text["tokens"],
        "token_strs": None,
    }
    assert open_ended["count"] == used - 5  # no end of the last turn, no generation prompt
    assert status_both == 400 and both["error"]["type"] == "BadRequestError"
    assert status_llamacpp == 404  # vLLM has no /apply-template


async def test_llama_cpp_python_counts_the_text_it_is_given() -> None:
    async with running(server="llama-cpp-python") as demo:
        status, counted = await post(
            f"{demo.root_url}/extras/tokenize/count", {"model": "m", "input": "hello world"}
        )
        _, tokens = await post(f"{demo.root_url}/extras/tokenize", {"input": "hello world"})
        status_missing, missing = await post(f"{demo.root_url}/extras/tokenize/count", {})
        status_llamacpp, _ = await post(f"{demo.root_url}/tokenize", {"content": "x"})
    assert status == 200 and counted == {"count": 3}  # a BOS, then the two words
    assert tokens["tokens"][0] == 2 and len(tokens["tokens"]) == 3
    assert status_missing == 422 and missing["detail"][0]["loc"] == ["body", "input"]
    assert status_llamacpp == 404


@pytest.mark.parametrize(
    ("server", "served"),
    [
        ("llamacpp", {"/tokenize", "/apply-template"}),
        ("vllm", {"/tokenize"}),
        ("llama-cpp-python", {"/extras/tokenize", "/extras/tokenize/count"}),
        ("openai", set()),
    ],
)
async def test_each_server_serves_its_own_paths_at_the_root(server: str, served: set) -> None:
    paths = ("/tokenize", "/apply-template", "/extras/tokenize", "/extras/tokenize/count")
    body = {"content": "hi", "prompt": "hi", "input": "hi", "messages": MESSAGES}
    async with running(server=server) as demo:
        found = set()
        for path in paths:
            status, _ = await post(f"{demo.root_url}{path}", body)
            if status == 200:
                found.add(path)
            # Never under /v1: there it is the API's JSON 404, as on the real servers.
            status_v1, answer = await post(f"{demo.base_url}{path}", body)
            assert status_v1 == 404 and answer["error"]["code"] == "unknown_url"
        assert demo.requests == []  # tokenizer calls are not chat requests
    assert found == served


async def test_tokenizer_ids_are_stable_across_servers() -> None:
    async with running(server="llamacpp") as first:
        _, one = await post(f"{first.root_url}/tokenize", {"content": "Stable ids, 首个令牌."})
    async with running(server="llamacpp") as second:
        _, two = await post(f"{second.root_url}/tokenize", {"content": "Stable ids, 首个令牌."})
    assert one == two and len(one["tokens"]) == 8


async def test_status_faults_apply_to_the_tokenizer_too() -> None:
    async with running(server="llamacpp") as demo:
        status, answer = await post(f"{demo.root_url}/fault/503x1/tokenize", {"content": "hi"})
        retried, tokens = await post(f"{demo.root_url}/fault/503x1/tokenize", {"content": "hi"})
    assert status == 503 and answer["error"]["code"] == "service_unavailable"
    assert retried == 200 and len(tokens["tokens"]) == 1
