"""Chat templates: the text a server's model actually reads for a list of messages.

A real server never tokenises the messages one by one: it renders the model's chat template
(role markers, separators, a generation prompt) and tokenises that text, which is why its
prompt count differs from a client's sum over the messages. Gemma's and ChatML's are written
here by hand, following the templates those models ship (Gemma 3's tokenizer_config.json,
Qwen2.5's ChatML), and kept lenient: any role renders, nothing is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui.demo.reply import message_text

# The special tokens each template writes; a server tokenises each as one token.
SPECIAL_TOKENS: dict[str, dict[str, int]] = {
    "gemma": {"<eos>": 1, "<bos>": 2, "<start_of_turn>": 105, "<end_of_turn>": 106},
    "chatml": {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645},
}
VOCABULARY_SIZE = {"gemma": 262_144, "chatml": 151_643}


def _gemma(messages: Sequence[dict], add_generation_prompt: bool) -> str:
    # Gemma has no system role: the system text opens the first turn, then a blank line.
    parts = ["<bos>"]
    first_prefix = ""
    turns = list(messages)
    if turns and turns[0].get("role") == "system":
        first_prefix = message_text(turns[0]) + "\n\n"
        turns = turns[1:]
    for index, message in enumerate(turns):
        role = message.get("role")
        role = "model" if role == "assistant" else str(role)
        parts.append(f"<start_of_turn>{role}\n")
        if index == 0:
            parts.append(first_prefix)
        parts.append(message_text(message).strip())
        parts.append("<end_of_turn>\n")
    if add_generation_prompt:
        parts.append("<start_of_turn>model\n")
    return "".join(parts)


def _chatml(messages: Sequence[dict], add_generation_prompt: bool) -> str:
    parts = [
        f"<|im_start|>{message.get('role')}\n{message_text(message)}<|im_end|>\n"
        for message in messages
    ]
    if add_generation_prompt:
        parts.append("<|im_start|>assistant\n")
    return "".join(parts)


def render(template: str, messages: Sequence[dict], add_generation_prompt: bool = True) -> str:
    """The prompt text `template` makes of `messages` (ending in the generation prompt)."""
    if template == "gemma":
        return _gemma(messages, add_generation_prompt)
    if template == "chatml":
        return _chatml(messages, add_generation_prompt)
    raise ValueError(f"unknown chat template {template!r}")
