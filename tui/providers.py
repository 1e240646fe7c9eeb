"""Provider presets (`--provider NAME`, `[llm] provider`): the base URL, the environment variable
that holds the key, default headers and the context windows each provider documents.

A preset sits just above the defaults: anything set explicitly (a file, FIRSTTOKEN_*, a flag)
wins over it. Context windows are only those the provider's own documentation states, filled in
when the configured model is one of them and no `context_window` is set:

- OpenAI (https://platform.openai.com/docs/models): gpt-4o and gpt-4o-mini 128,000 tokens;
  gpt-4.1, -mini and -nano 1,047,576; o1, o3, o3-mini and o4-mini 200,000.
- Azure OpenAI's v1 API (https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle)
  is `<endpoint>/openai/v1` with the key in an `api-key` header and no api-version; the model is
  the deployment's name, whose window depends on the deployment, so none is filled in.

The others serve models whose window depends on the model or on how the server was started (a
local llama.cpp, vLLM, Ollama or LM Studio), so none is filled in for them either.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str | None  # None: made from `base_url_env` (Azure's endpoint is per resource)
    key_env: str | None = None  # the environment variable the key is read from
    headers: Mapping[str, str] = field(default_factory=dict)
    context_windows: Mapping[str, int] = field(default_factory=dict)
    key_header: str | None = None  # the key goes in this header instead of Authorization: Bearer
    base_url_env: str | None = None  # azure: AZURE_OPENAI_ENDPOINT
    base_url_path: str = ""  # appended to the value of base_url_env

    def base_url_from(self, env: Mapping[str, str]) -> str | None:
        if self.base_url is not None:
            return self.base_url
        endpoint = env.get(self.base_url_env or "", "").strip().rstrip("/")
        return endpoint + self.base_url_path if endpoint else None


_OPENAI_WINDOWS = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "o1": 200_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
}

PROVIDERS: dict[str, Provider] = {
    provider.name: provider
    for provider in (
        Provider(
            "openai", "https://api.openai.com/v1", "OPENAI_API_KEY", context_windows=_OPENAI_WINDOWS
        ),
        # X-Title names the app in OpenRouter's analytics; add HTTP-Referer (your app's URL)
        # in [llm] extra_headers to appear in its rankings.
        Provider(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            headers={"X-Title": "firsttoken"},
        ),
        Provider("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
        # Alibaba Cloud Model Studio, international (Singapore); mainland China is
        # https://dashscope.aliyuncs.com/compatible-mode/v1 (set base_url).
        Provider(
            "dashscope",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            "DASHSCOPE_API_KEY",
        ),
        Provider("ollama", "http://localhost:11434/v1"),
        Provider("llamacpp", "http://localhost:8080/v1"),
        Provider("vllm", "http://localhost:8000/v1", "VLLM_API_KEY"),
        Provider("lmstudio", "http://localhost:1234/v1"),
        Provider(
            "azure",
            None,
            "AZURE_OPENAI_API_KEY",
            key_header="api-key",
            base_url_env="AZURE_OPENAI_ENDPOINT",
            base_url_path="/openai/v1",
        ),
    )
}
