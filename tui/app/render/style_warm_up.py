"""Register the reply's block styles while idle, before the first reply needs them.

Textual adds a widget class's DEFAULT_CSS to the stylesheet the first time a widget of that
class is mounted, and the next style lookup then parses the whole stylesheet again. A fresh
app has never mounted a Markdown heading, paragraph or list, so the first reply's first
write would pay for that, just as the first words are due. Mounting one hidden reply with
every block kind while the app waits for the first Enter pays it then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.widget import Widget
    from textual.widgets import Markdown

# One of each block kind a reply can mount, with the inline styles.
EVERY_BLOCK = """\
# h1

## h2

### h3

#### h4

##### h5

###### h6

text *em* **strong** ~~s~~ `code`

- bullet

1. ordered

> quote

```python
x = 1
```

| a | b |
|---|---|
| 1 | 2 |

---
"""


async def warm_up_block_styles(parent: Widget, probe: Widget, markdown: Markdown) -> None:
    """Mount `probe` (a hidden reply block whose Markdown is `markdown`) into `parent`, show
    every block kind in it, then remove it."""
    probe.display = False
    await parent.mount(probe)
    await markdown.update(EVERY_BLOCK)
    await probe.remove()
