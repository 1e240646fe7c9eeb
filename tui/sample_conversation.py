"""A deterministic, deliberately bloated conversation for the trimming demo.

It has the shape that makes real agent prompts large: a long system prompt with tool
descriptions, ten rounds of long engineering history, tool calls with verbose results and a
short final question. About 8,200 prompt tokens by the local count (cl100k; about 7,400 by
Gemma's tokenizer, the demo endpoint's), so the default 6,000-token budget has to trim it (the
8,200 -> 5,800 case of README's Origins; tests/commands/test_sample_size.py holds the figures
to the sample). The text is built from templates, not
stored, and is identical on every call.
"""

from __future__ import annotations

import json
from functools import cache

_TOOLS = {
    "search_docs": (
        "Search the engineering knowledge base (runbooks, design docs, vendor documentation) "
        "and return the most relevant passages with their source URL.",
        {"query": "string, the search terms", "limit": "integer, 1-10, default 4"},
    ),
    "query_metrics": (
        "Run a read-only query against the metrics store and return a table of time series "
        "values. Use for latency percentiles, token counts and error rates.",
        {"metric": "string, a metric name", "window": "string like '24h'", "group_by": "list"},
    ),
    "read_file": (
        "Read a file from the service repository at the deployed commit.",
        {"path": "string, repository-relative path", "max_lines": "integer, default 200"},
    ),
    "open_ticket": (
        "Open a tracking ticket for follow-up work. Only call this when the user agrees.",
        {"title": "string", "body": "string, markdown", "team": "string"},
    ),
}

_RULES = [
    "Answer the engineering question that was asked; do not restate it before answering",
    "Prefer measurements over intuition, and say which figure a recommendation rests on",
    "When a figure is an estimate, say so and explain how to measure it properly",
    "Use the tools when the answer depends on the current state of the system",
    "Never invent metric values, file contents, URLs or ticket numbers",
    "Keep code samples short, runnable and in the language of the repository",
    "Call out risks to production traffic before suggesting any change",
    "Separate what to do today from what to plan for the next quarter",
    "Respect the latency budget: time to first token matters more than total time here",
    "If two tools could answer, use the cheaper one first and say why",
    "Quote configuration keys exactly as they appear in the files",
    "Summarise long tool output instead of pasting it back to the user",
]

_GLOSSARY = [
    ("TTFB", "time from sending the request to the first byte of the response, of any kind"),
    (
        "TTFT",
        "time from sending the request to the first chunk that carries generated text; "
        "role-only chunks do not count, and without streaming TTFT equals the total time",
    ),
    ("total", "time from sending the request to the last chunk of generated text"),
    ("TPOT", "time per output token after the first: (total - TTFT) / (output tokens - 1)"),
    ("ITL", "the gaps between consecutive chunks; report the p50 and the p95 per request"),
    (
        "prefill",
        "the model reading the whole prompt before it can produce the first token; "
        "its cost grows with prompt length and dominates TTFT for long prompts",
    ),
    ("decode", "producing output tokens one at a time; its speed sets TPOT"),
    ("prefix cache", "reuse of the prefill work for a prompt prefix seen on an earlier request"),
    ("request class", "a named kind of request (chat, summary, batch) with its own TTFT target"),
    ("token budget", "the most prompt tokens a request may carry after trimming"),
    ("reserve for output", "tokens of the context window kept free for the reply"),
]

# (theme of the round, what the user saw, what the assistant recommends, tool or None)
_ROUNDS = [
    (
        "the baseline",
        "TTFT of 3.5 s at p50 for prompts around 8,200 tokens",
        "measure prefill separately from queueing before changing anything",
        None,
    ),
    (
        "where prompt tokens come from",
        "the system prompt alone is 1,500 tokens",
        "attribute every prompt token to system, retrieval, history or tool output",
        None,
    ),
    (
        "retrieval chunk sizes",
        "retrieval adds six chunks of 512 tokens to each request",
        "retrieve fewer, smaller chunks and rerank them",
        "search_docs",
    ),
    (
        "gateway buffering",
        "the first token reaches the browser 900 ms after the model sent it",
        "turn off response buffering for the streaming route",
        "search_docs",
    ),
    (
        "prefix caching",
        "identical system prompts are prefilled again on every request",
        "enable prefix caching and keep the stable part of the prompt first",
        None,
    ),
    (
        "history trimming",
        "long chats carry forty turns of history into every request",
        "keep the first two and the last four turns and drop the middle",
        None,
    ),
    (
        "tool output bloat",
        "one log-search tool result was 2,400 tokens of raw JSON",
        "summarise tool results before they enter the history",
        "query_metrics",
    ),
    (
        "load testing",
        "the benchmark used one short prompt repeated a thousand times",
        "replay a sample of real prompt lengths at realistic concurrency",
        None,
    ),
    (
        "latency targets",
        "interactive chat and batch summaries share one TTFT alert",
        "set a TTFT target per request class and alert on each",
        "read_file",
    ),
    (
        "the rollout",
        "the team wants to ship trimming and streaming in one release",
        "ship behind a flag, one change at a time, and compare TTFT per cohort",
        None,
    ),
]

_STACK = (
    "For context, our stack: a Python FastAPI gateway in front of a vLLM deployment serving a "
    "7B chat model on two GPUs, nginx in front of the gateway, Redis for session history and a "
    "vector store for retrieval. Traffic is about 40 requests per second at peak, mostly "
    "interactive chat from the support console, plus nightly batch summaries."
)


def _system_prompt() -> str:
    rules = "\n".join(f"{n}. {rule}." for n, rule in enumerate(_RULES, start=1))
    glossary = "\n".join(
        f"- {term}: {meaning}. Use the term {term} only in this sense."
        for term, meaning in _GLOSSARY
    )
    tools = "\n\n".join(
        f"### {name}\n{summary}\nArguments:\n"
        + "\n".join(f"- {arg}: {kind}" for arg, kind in args.items())
        + f'\nReturns: JSON. Errors are returned as {{"error": "..."}}; report them to the '
        f"user and do not retry {name} more than twice with the same arguments."
        for name, (summary, args) in _TOOLS.items()
    )
    return (
        "You are Relay, the latency engineering assistant for the platform team. You help "
        "engineers find out why their LLM-backed services are slow and what to change. You "
        "have read access to metrics, documentation and the repository through tools.\n\n"
        f"## Rules\n{rules}\n\n## Definitions\n{glossary}\n\n## Tools\n{tools}\n\n## Style\n"
        + " ".join(
            f"When the question is about {topic}, lead with the single most useful change, "
            "then the evidence, then the risks, and end with how to verify the change worked."
            for topic, _, _, _ in _ROUNDS
        )
        + "\n\n## Output format\nUse Markdown. Put figures in tables when comparing more than "
        "two numbers, give units on every figure (ms, tokens, requests per second), and end "
        "each answer with a line starting with 'Verify:' that says which measurement will show "
        "whether the change worked. Keep answers under 400 words unless the user asks for more."
        "\n\n## Escalation\nIf a question touches customer data, production credentials or "
        "an ongoing incident, say so in the first line and point the engineer to the on-call "
        "runbook instead of proposing changes yourself. If metrics and documentation disagree, "
        "trust the metrics, name the document that is out of date and offer to open a ticket "
        "for it. If you are unsure whether a change is safe, say what would make it safe."
    )


def _user_message(number: int, topic: str, symptom: str) -> str:
    return (
        f"Next question, about {topic}. We measured that {symptom}. {_STACK}\n\n"
        f"What we tried so far for {topic}:\n"
        f"- Re-ran the measurement three times at different hours; {symptom} every time.\n"
        f"- Checked the dashboards for {topic}; nothing else moved during the test window.\n"
        f"- Compared with last month's numbers; the regression started with release {number}.4.\n"
        f"- Read the runbook section on {topic}, which predates streaming and prompt budgets.\n\n"
        "Constraints: we cannot change the model this quarter, we cannot add GPUs, and any "
        "change has to be reversible within five minutes. What should we do about "
        f"{topic}, in what order, and how do we know it worked?"
    )


def _assistant_message(topic: str, symptom: str, advice: str) -> str:
    return (
        f"Short answer on {topic}: {advice}.\n\n"
        f"Why: {symptom} is consistent with prefill dominating time to first token. Prefill "
        "cost grows with prompt length (a little faster than linearly at long prompts), while "
        "decode speed barely depends on it, so every prompt token you remove comes straight "
        "off TTFT. Queueing can look similar from the outside, which is why the first step "
        "separates the two.\n\n"
        "Steps:\n"
        f"1. Record TTFB, TTFT and total per request for {topic}, with prompt token counts.\n"
        f"2. Apply the change for {topic} to 5% of traffic behind a flag.\n"
        "3. Compare p50 and p95 TTFT between the cohorts for at least one peak hour.\n"
        "4. Roll forward if p95 improves and answer quality holds; otherwise flip the flag.\n\n"
        "```python\n"
        f"# {topic}: log what the next step depends on\n"
        "log.info('llm_request', prompt_tokens=usage.prompt_tokens, ttft_ms=ttft_ms,\n"
        "         total_ms=total_ms, request_class=request_class)\n"
        "```\n\n"
        f"Risk: changes to {topic} alter what the model sees, so check a sample of answers "
        "by hand, not only the latency graphs."
    )


def _tool_result(tool: str, topic: str) -> str:
    if tool == "query_metrics":
        rows = [
            {
                "hour": f"2025-03-{day:02d}T14:00Z",
                "p50_ttft_ms": 2900 + 61 * day,
                "p95_ttft_ms": 5100 + 97 * day,
                "prompt_tokens_p50": 7400 + 55 * day,
            }
            for day in range(1, 9)
        ]
        return json.dumps({"metric": "llm.ttft", "window": "8d", "rows": rows}, indent=1)
    results = [
        {
            "title": f"{topic.capitalize()}: {title}",
            "url": f"https://docs.internal.example/{topic.replace(' ', '-')}/{slug}",
            "passage": f"{body} This applies to {topic} in both the gateway and the model "
            "server; measure before and after, because the effect depends on prompt length "
            "and on how much of the prompt is shared between requests.",
        }
        for title, slug, body in [
            ("runbook", "runbook", "Check the p95 first; averages hide the slow tail."),
            ("design notes", "design", "Streaming only helps if every hop flushes each chunk."),
            ("vendor guide", "vendor", "Long prompts cost prefill time on every request."),
            ("postmortem 2024-11", "pm-2024-11", "A config change doubled TTFT for a week."),
        ]
    ]
    return json.dumps({"query": topic, "results": results}, indent=1)


def _tool_call_messages(number: int, tool: str, topic: str) -> list[dict]:
    call_id = f"call_{number:02d}_{tool}"
    arguments = (
        {"metric": "llm.ttft", "window": "8d", "group_by": ["hour"]}
        if tool == "query_metrics"
        else {"path": "deploy/alerts.yaml"}
        if tool == "read_file"
        else {"query": topic, "limit": 4}
    )
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(arguments)},
    }
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": _tool_result(tool, topic)},
    ]


@cache
def sample_system_prompt() -> str:
    """The sample's system prompt, which opens it (and tells a chat holding the sample)."""
    return _system_prompt()


def bloated_sample() -> list[dict]:
    """System prompt, ten long rounds (some with tool calls) and a short final question."""
    messages: list[dict] = [{"role": "system", "content": sample_system_prompt()}]
    for number, (topic, symptom, advice, tool) in enumerate(_ROUNDS, start=1):
        messages.append({"role": "user", "content": _user_message(number, topic, symptom)})
        if tool:
            messages.extend(_tool_call_messages(number, tool, topic))
        messages.append(
            {"role": "assistant", "content": _assistant_message(topic, symptom, advice)}
        )
    messages.append(
        {"role": "user", "content": "Given all that, which single change should we ship first?"}
    )
    return messages
