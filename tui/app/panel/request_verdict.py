"""The class of the request under way, for the panel's live counter: the same choice the engine
writes into the record when the request ends (`classify_request` over what was sent), made
once per request, so the live colour and the final verdict never disagree."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from tui.engine.metrics.request_classes import ClassChoice, classify_request

if TYPE_CHECKING:
    from tui.session.turn import Turn

_chosen: weakref.WeakKeyDictionary[Turn, ClassChoice | None] = weakref.WeakKeyDictionary()


def expected_class(turn: Turn) -> ClassChoice | None:
    """The class `turn`'s request is in (None when no class covers it), chosen once."""
    if turn in _chosen:
        return _chosen[turn]
    request = turn.request
    classes = getattr(turn.client, "request_classes", ())
    choice = classify_request(
        request.messages, request.max_tokens, request.max_tokens_asked, classes
    )
    _chosen[turn] = choice
    return choice
