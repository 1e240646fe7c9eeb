"""Whether the side panel shows: the terminal's width decides (it collapses below
`narrow_width` columns), unless the user chose with F10 on a terminal of that width class.

A choice is kept per width class (narrow, wide), in this run and the next: the panel hidden on
an 80-column terminal says nothing of what a 160-column one should show, so crossing the rule
brings back that side's own choice, or the width's answer when there is none.
"""

from __future__ import annotations

from collections.abc import Mapping

NARROW = "narrow"
WIDE = "wide"
WIDTH_CLASSES = (NARROW, WIDE)


class PanelFit:
    def __init__(self, narrow_width: int, chosen: Mapping[str, bool] | None = None) -> None:
        self.narrow_width = narrow_width
        # Width class -> whether the user chose to see the panel there (absent: no choice).
        self.chosen: dict[str, bool] = {
            width: shown for width, shown in (chosen or {}).items() if width in WIDTH_CLASSES
        }

    def width_class(self, width: int) -> str:
        return WIDE if width >= self.narrow_width else NARROW

    def visible(self, width: int) -> bool:
        """Whether the panel shows at `width` columns."""
        width_class = self.width_class(width)
        return self.chosen.get(width_class, width_class == WIDE)

    def toggle(self, width: int, shown: bool) -> bool:
        """F10 at `width` columns with the panel `shown` or not: whether it shows now."""
        self.chosen[self.width_class(width)] = not shown
        return not shown
