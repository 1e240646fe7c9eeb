"""The class of the request under way, for the panel's live counter: the same choice the engine
writes into the record when the request ends (`classify_request` over what was sent), made
once per request, so the live colour and the final verdict never disagree."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from tui.engine.metrics.request_classes import ClassChoice, classify_request

if TYPE_CHECKING:
    from tui.app.request_runner import RequestRunner

_chosen: weakref.WeakKeyDictionary[RequestRunner, ClassChoice | None] = weakref.WeakKeyDictionary()


def expected_class(runner: RequestRunner) -> ClassChoice | None:
    """The class `runner`'s request is in (None when no class covers it), chosen once."""
    if runner in _chosen:
        return _chosen[runner]
    request = runner.request
    classes = getattr(runner.client, "request_classes", ())
    choice = classify_request(
        request.messages, request.max_tokens, request.max_tokens_asked, classes
    )
    _chosen[runner] = choice
    return choice
