"""A reply block whose box comes from its content alone, not from its container's height."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from textual.geometry import Size


class BoxIgnoresContainerHeight:
    """Mixin for the reply's paragraphs, headings, rules, code fences and lists (first in the
    bases). Their height is `auto` (a rule: 1) and nothing in them takes its height from the
    container (a bullet in Textual's list rows does), so their box does not depend on the
    container's height. Textual's box-model cache has that height in its
    key, though, and the reply's Markdown grows with every write: every block's box was worked
    out again on each write (a quarter of a long reply's CPU, profiled). Asking with a fixed
    height keeps the cache valid while the reply grows. A block that holds widgets which take
    their height from it says so (`box_from_content` false: a list with Textual's rows)."""

    box_from_content = True

    def _get_box_model(
        self,
        container: Size,
        viewport: Size,
        width_fraction: Fraction,
        height_fraction: Fraction,
        constrain_width: bool = False,
        greedy: bool = True,
    ) -> Any:
        if not self.box_from_content:
            return super()._get_box_model(  # type: ignore[misc]
                container, viewport, width_fraction, height_fraction, constrain_width, greedy
            )
        return super()._get_box_model(  # type: ignore[misc]
            Size(container.width, viewport.height),
            viewport,
            width_fraction,
            Fraction(1),
            constrain_width,
            greedy,
        )
