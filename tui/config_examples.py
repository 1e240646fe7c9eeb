"""The canonical text of config.example.toml and settings.example.json.

The top-level example files must equal these constants byte for byte (a test checks it), so
`firsttoken config init` can write them from an installed wheel, where the repository's top
level is not available.
"""

# ruff: noqa: E501

CONFIG_EXAMPLE_TOML = r"""# firsttoken: config.toml
#
# Where it is read from, first found wins: --config PATH, then $FIRSTTOKEN_CONFIG, then
# ./config.toml, then the user config dir (`firsttoken config` shows the paths searched;
# `firsttoken config init` copies this file there). Every key is optional; the values shown
# are the defaults unless a comment says otherwise.
#
# Precedence, highest first: command-line flags > environment variables (FIRSTTOKEN_API_KEY,
# FIRSTTOKEN_BASE_URL, FIRSTTOKEN_MODEL, then OPENAI_API_KEY, OPENAI_BASE_URL) > settings.json
# > this file > defaults. Where this file and settings.json set the same thing (token budget,
# output reserve, streaming switch, TTFT warn threshold), settings.json wins.
#
# "${VAR}" in any string is replaced by the environment variable VAR. An unset VAR is an
# error, except in api_key, where it means "no key".

[llm]
# The API root of any OpenAI-compatible endpoint, often ending in /v1 (not the website).
# With neither base_url nor an API key configured, firsttoken starts its embedded demo
# endpoint (simulated latency) so it works out of the box. Default: unset.
# base_url = "https://api.example.com/v1"

# The API key. Keep it out of this file: "${FIRSTTOKEN_API_KEY}" reads the environment, and
# FIRSTTOKEN_API_KEY / OPENAI_API_KEY / --api-key-env NAME override this line anyway.
# Default: unset (no key).
api_key = "${FIRSTTOKEN_API_KEY}"

# Optional: a provider preset. It fills base_url, the environment variable the key is read
# from, default headers and, for OpenAI's models, the context window; anything set explicitly
# (this file, FIRSTTOKEN_*, a flag) wins over it. With a preset other than openai,
# OPENAI_API_KEY and OPENAI_BASE_URL are not used (an OpenAI key never goes elsewhere).
#   openai      https://api.openai.com/v1                     $OPENAI_API_KEY
#   openrouter  https://openrouter.ai/api/v1                  $OPENROUTER_API_KEY, X-Title: firsttoken
#   deepseek    https://api.deepseek.com/v1                   $DEEPSEEK_API_KEY
#   dashscope   https://dashscope-intl.aliyuncs.com/compatible-mode/v1  $DASHSCOPE_API_KEY
#   ollama      http://localhost:11434/v1
#   llamacpp    http://localhost:8080/v1
#   vllm        http://localhost:8000/v1                      $VLLM_API_KEY
#   lmstudio    http://localhost:1234/v1
#   azure       $AZURE_OPENAI_ENDPOINT + /openai/v1 (the v1 API: no api-version needed),
#               $AZURE_OPENAI_API_KEY sent as the api-key header; model = the deployment name
# Also --provider NAME. Default: unset.
# provider = "openrouter"

# Optional: the header the key is sent in instead of "Authorization: Bearer KEY" (Azure's is
# "api-key"). Default: unset.
# api_key_header = "api-key"

# Optional: headers sent with every request. "${VAR}" expands here too; `firsttoken config`
# masks a value whose name looks like a credential. Default: none.
# extra_headers = { "HTTP-Referer" = "https://example.com", "X-Title" = "firsttoken" }

# Optional: query parameters added to every request URL, after base_url's own query (which is
# kept: base_url = "https://host/v1?x=1" sends to /v1/chat/completions?x=1). Default: none.
# extra_query = { "api-version" = "2024-10-21" }

# Proxies are read from the environment as curl reads them: https_proxy or HTTPS_PROXY for
# https:// endpoints (through a CONNECT tunnel), http_proxy in lower case for http:// ones,
# ALL_PROXY for both, NO_PROXY (names, domains, IP addresses, CIDR ranges, *) for hosts that
# go direct; http://user:password@host:port for a proxy that wants credentials (never shown).
# `firsttoken config` shows the proxies in effect.

# The model to request: an id your endpoint lists (F2 in the app shows them). Default:
# "gpt-4o-mini"; the embedded demo endpoint answers to any name. The article this file grew
# from asked its provider for "qwen-7b-chat":
# model = "qwen-7b-chat"

# Optional: the models offered by the app's model picker. Default: empty.
# models = ["qwen-7b-chat", "qwen-14b-chat", "deepseek-chat"]

# Seconds to wait for the reply to start (and for a non-streamed reply). Default 60.
timeout_seconds = 60

# Optional: the model's context window in tokens. When set, token_budget +
# reserve_for_output must fit in it. Default: unset (not checked).
# context_window = 8192

# Retries before the first token, on 429, 5xx and connection errors, with backoff; their time
# counts in TTFT. 0 to 10, default 2.
max_retries = 2

[llm.streaming]
# Stream the reply token by token (settings.json streaming.enabled wins). Default true.
enabled = true
# After the first token, a gap longer than this is a pause: reported live ("no token for
# 1.2 s…") and counted in the request's record, and the reply goes on. Milliseconds,
# default 800.
chunk_timeout_ms = 800
# Optional: a gap longer than this ends the stream as "stalled" (the partial reply is kept);
# at least chunk_timeout_ms. Milliseconds, default 30000.
# stall_timeout_ms = 30000
# TTFT from this many milliseconds is shown as a warning (settings.json metrics.ttftWarnMs
# wins). Default 1200.
first_token_warn_ms = 1200

[llm.prompt]
# Prompt token budget the trimmer keeps the conversation within (settings.json
# promptTrimmer.defaultBudget wins). Default 6000.
token_budget = 6000
# Tokens kept free for the reply; max_tokens sent never exceeds it (settings.json
# promptTrimmer.reserveForOutput wins). Default 2000.
reserve_for_output = 2000
# Never drop the system message(s). Default true.
keep_system = true
# Never drop the latest user message. Default true.
keep_latest_user = true
# "priority" (settings.json promptTrimmer.priorityOrder decides what goes first), "recent"
# (keep the newest messages that fit) or "none" (trimming off by default). Default "priority".
trim_strategy = "priority"

# Optional: request classes with their own TTFT target (an SLO), checked per request as
# met/missed; the target is also where the TTFT turns from ok to warn. A short prompt that
# asks for no length is in the first class; one that asks to write, asks for a length, is
# long, or sets max_tokens itself is in the first class whose max_output_tokens covers its
# max_tokens. A class without max_output_tokens catches the rest, so put it last. This table
# replaces the defaults below; a default class named here keeps the fields you leave out.
[llm.request_classes]
short_qa = { ttft_target_ms = 500, max_output_tokens = 512 }
long_generation = { ttft_target_ms = 2000 }

# Optional: the KV cache's element type (f16 by default; q8_0, q4_0, ... for llama.cpp's
# --cache-type-k/-v), and the configured model's attention shape when no preset names its id
# (layers, kv_heads, head_dim; or architecture = "Qwen3 8B"): docs/configuration.md.
# [llm.kv_cache]
# type = "q8_0"

# Optional: the embedded demo endpoint's latency model (`firsttoken demo-server` and the
# endpoint used when no API is configured). Its numbers are always labelled simulated.
[demo]
# "cpu-small" (1.2 ms per prompt token, 60 tokens/s: a 270M model on 2 CPU cores),
# "seed-qwen7b" (0.42 ms, 25 tokens/s), "h100-70b" (0.08 ms, 53 tokens/s) or "instant".
# Default "cpu-small".
preset = "cpu-small"
# Any of these overrides the preset's value:
# prefill_ms_per_token = 1.2    # TTFT grows by this per prompt token
# decode_tokens_per_s = 60      # output speed after the first token
# rtt_ms = 20                   # network round trip
# queue_ms = 0                  # waiting before prefill starts
# jitter_ms = 0                 # random extra delay (seeded, reproducible)
# reply_tokens = 120            # the longest reply when the prompt asks for no length; it
#                               # ends at the last sentence that fits
# seed = 0                      # jitter seed
# prefix_cache = true           # reuse the previous answered prompt's prefix, as llama.cpp's
#                               # slot does: prefill is charged only for the prompt tokens
#                               # beyond the prefix shared with it (llama.cpp compares tokens
#                               # and computes the last one again; vllm caches 16-token blocks;
#                               # openai compares whole messages). Reported as usage's
#                               # prompt_tokens_details.cached_tokens. On for cpu-small only.
# server = "llamacpp"           # which real server the endpoint plays: "llamacpp" (timings,
#                               # /tokenize and /apply-template), "vllm" (/tokenize with
#                               # messages), "llama-cpp-python" (no usage in a stream, no
#                               # timings, /extras/tokenize/count) or "openai" (none of them).
#                               # Default: the preset's (cpu-small llamacpp, seed-qwen7b and
#                               # h100-70b vllm, instant openai).
# draft_acceptance = 0          # speculative decoding played in llama.cpp's timings: the
#                               # share (0-1) of a draft model's tokens accepted; 0: none
"""

SETTINGS_EXAMPLE_JSON = r"""{
  "//": [
    "firsttoken: settings.json. Every key is optional; the values shown are the defaults.",
    "Read from --settings PATH, then $FIRSTTOKEN_SETTINGS, then ./settings.json, then the",
    "user config dir (`firsttoken config` shows the paths searched).",
    "Where this file and config.toml set the same thing, this file wins; environment",
    "variables and command-line flags win over both.",
    "JSON has no comments: keys starting with // are comments and are ignored.",
    "\"${VAR}\" in a string is replaced by the environment variable VAR.",
    "Where requests go (base_url, the provider preset, extra headers and query parameters,",
    "proxies) is set in config.toml and the environment: see config.example.toml."
  ],
  "promptTrimmer": {
    "//defaultBudget": "Prompt token budget the trimmer keeps the conversation within (wins over config.toml llm.prompt.token_budget). Whole number >= 1.",
    "defaultBudget": 6000,
    "//reserveForOutput": "Tokens kept free for the reply; max_tokens sent never exceeds it (wins over llm.prompt.reserve_for_output). Whole number >= 1.",
    "reserveForOutput": 2000,
    "//priorityOrder": "With trim_strategy \"priority\": what is kept first. Items from system, latest_user, tool_result, history, no repeats. Tool results are kept newest first; a tool call and its results are kept or dropped together.",
    "priorityOrder": ["system", "latest_user", "tool_result", "history"],
    "//historyKeepHead": "History messages always kept from the start of the conversation (removal happens in the middle). Whole number >= 0.",
    "historyKeepHead": 2,
    "//historyKeepTail": "History messages always kept from the end of the conversation. Whole number >= 0.",
    "historyKeepTail": 4
  },
  "streaming": {
    "//enabled": "Stream the reply token by token (wins over config.toml llm.streaming.enabled). true or false.",
    "enabled": true,
    "//temperature": "Sampling temperature sent with each request, 0 to 2.",
    "temperature": 0.1,
    "//maxTokens": "max_tokens for the reply; capped by reserveForOutput. Whole number >= 1.",
    "maxTokens": 2048,
    "//recordTtft": "Measure and keep TTFT and the other latency figures for each request. true or false.",
    "recordTtft": true
  },
  "metrics": {
    "//ttftWarnMs": "TTFT from this many milliseconds is shown as a warning (wins over config.toml llm.streaming.first_token_warn_ms).",
    "ttftWarnMs": 1200,
    "//ttftErrorMs": "TTFT from this many milliseconds is shown as an error; must not be below ttftWarnMs.",
    "ttftErrorMs": 2500,
    "//logEveryRequest": "Log each request's latency record. true or false.",
    "logEveryRequest": true
  }
}
"""
