"""The demo's model ids that behave like particular real models (any other id is a plain chat
model): reasoning models that stream their thinking, and an OpenAI reasoning model that thinks
out of sight and refuses the parameters OpenAI's reasoning models refuse."""

from __future__ import annotations

from dataclasses import dataclass

from tui.demo.exchange import error_body


@dataclass(frozen=True)
class ModelKind:
    # The delta/message field the thinking is streamed in ("reasoning_content" as llama.cpp,
    # vLLM and DeepSeek send it, "reasoning" as OpenRouter does), or None.
    reasoning_field: str | None = None
    hidden_reasoning: bool = False  # thinks, counts it in usage, never sends it (OpenAI)
    openai_parameters: bool = False  # refuses max_tokens and a temperature other than 1


REASONING_MODEL_ID = "firsttoken-demo-reasoning"
OPENROUTER_REASONING_MODEL_ID = "firsttoken-demo-reasoning-openrouter"
OPENAI_REASONING_MODEL_ID = "firsttoken-demo-openai-reasoning"

MODEL_KINDS: dict[str, ModelKind] = {
    REASONING_MODEL_ID: ModelKind(reasoning_field="reasoning_content"),
    OPENROUTER_REASONING_MODEL_ID: ModelKind(reasoning_field="reasoning"),
    OPENAI_REASONING_MODEL_ID: ModelKind(hidden_reasoning=True, openai_parameters=True),
}
PLAIN = ModelKind()


def model_kind(model: str) -> ModelKind:
    return MODEL_KINDS.get(model, PLAIN)


def _number(value: object) -> str:
    return format(value, "g") if isinstance(value, float) else str(value)


def refused_parameter(kind: ModelKind, body: dict) -> bytes | None:
    """OpenAI's 400 body when a reasoning model is sent a parameter it does not take, else None.

    The wording, `param` and `code` are OpenAI's own (as many clients logged them).
    """
    if not kind.openai_parameters:
        return None
    if body.get("max_tokens") is not None:
        return error_body(
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "invalid_request_error",
            "unsupported_parameter",
            "max_tokens",
        )
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        return error_body(
            f"Unsupported value: 'temperature' does not support {_number(temperature)} with "
            "this model. Only the default (1) value is supported.",
            "invalid_request_error",
            "unsupported_value",
            "temperature",
        )
    return None
