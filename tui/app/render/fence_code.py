"""A code fence whose code grows without a second layout per write.

Textual's fence shows its highlighted code in a `Label`. When a write lengthens the code, the
layout pass that measures the label stores its new size through a reactive that asks for
another full screen layout (see single_layout), which finds nothing new: a code-dense reply
paid two layouts and two frames per write. The reply's fences show their code in a label that
stores its size without asking again.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Label

from tui.app.render.single_layout import StoreSizeWithoutRelayout

# Same name, so the fence's `& > Label` rules and its `query_one("#code-content", Label)` match.
CodeLabel = type("Label", (StoreSizeWithoutRelayout, Label), {})


class FenceCode:
    """Mixin for a Markdown code fence (first in the bases): its code in a `CodeLabel`, built
    as Textual's `MarkdownFence.compose` builds its label."""

    def compose(self) -> Any:
        yield CodeLabel(self._highlighted_code, id="code-content", expand=True)  # type: ignore[attr-defined]
