"""One arrangement of a reply's blocks per layout pass instead of three.

Textual arranges a container's children once per size it is asked about, and in one layout
pass the reply's Markdown is asked about three: its message block measures it (height 0,
then the block's own height, see `VerticalLayout.get_content_height`) and the compositor
places it at its final size. Each arrangement resolves the box model of every block and
builds a placement for each, so a reply with many blocks would pay that three times per
write, and the arrangement is most of a write's layout.

Every block of a reply is `height: auto` or fixed (a rule), and what a block measures does not
depend on its container's height (the reply blocks ask with a fixed height, see
`BoxIgnoresContainerHeight`, and tests/app/render/test_one_arrangement.py checks every kind of
block, lists, quotes and tables included). The placements are then the same at any height,
so the container arranges once per width and content, at height 0, and answers every size
with that.
"""

from __future__ import annotations

from textual.geometry import Size


def arranged_size(size: Size) -> Size:
    """The size a container whose children's placements do not depend on its height is
    arranged at, whatever height it is asked about."""
    return Size(size.width, 0)
