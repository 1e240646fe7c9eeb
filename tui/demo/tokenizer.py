"""The demo server's own tokenizer: what its tokenizer endpoints answer and its usage counts.

A real local model's vocabulary is not the client's cl100k estimate, so the demo counts with
its own: the same pieces its replies stream (a word with its leading space, one CJK character,
a run of 1-3 symbols), and each chat-template marker (`<start_of_turn>`, `<|im_start|>`) as one
special token. Ids are stable across runs: the template's real special-token ids, and for
other pieces a hash into the rest of the model's vocabulary.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

from tui.demo.reply import tokenize
from tui.demo.templates import SPECIAL_TOKENS, VOCABULARY_SIZE

_FIRST_ORDINARY_ID = 256  # below it, a real vocabulary keeps control and byte tokens


class ServerTokenizer:
    """Pieces and ids of text for one chat template's vocabulary."""

    def __init__(self, template: str) -> None:
        self.specials = SPECIAL_TOKENS[template]
        self._split = re.compile("(" + "|".join(re.escape(s) for s in self.specials) + ")")
        self._span = VOCABULARY_SIZE[template] - _FIRST_ORDINARY_ID

    def pieces(self, text: str, parse_special: bool = True) -> list[str]:
        """The tokens of `text`; with parse_special, each template marker is one token."""
        if not parse_special:
            return tokenize(text)
        out: list[str] = []
        specials = self.specials
        for segment in self._split.split(text):
            if segment in specials:
                out.append(segment)
            elif segment:
                out.extend(tokenize(segment))
        return out

    def token_id(self, piece: str) -> int:
        special = self.specials.get(piece)
        if special is not None:
            return special
        return _FIRST_ORDINARY_ID + zlib.crc32(piece.encode("utf-8")) % self._span

    def ids(self, pieces: Sequence[str]) -> list[int]:
        return [self.token_id(piece) for piece in pieces]
