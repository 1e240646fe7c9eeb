"""Whether the side panel shows: the terminal's width decides (it collapses below
`narrow_width` columns), unless the user chose with F10; that choice holds until the terminal
crosses `narrow_width`, and then the width decides again. So one F10 press on a wide terminal
does not turn auto-collapse off for the rest of the run."""

from __future__ import annotations


class PanelFit:
    def __init__(self, narrow_width: int, collapsed_by_choice: bool = False) -> None:
        self.narrow_width = narrow_width
        # The user's choice (None: none, the width decides) and the side of the width rule it
        # was made on. A choice kept from an earlier run was made on a wide terminal.
        self.chosen: bool | None = False if collapsed_by_choice else None
        self._chosen_wide = True

    def _wide(self, width: int) -> bool:
        return width >= self.narrow_width

    def visible(self, width: int) -> bool:
        """Whether the panel shows at `width` columns (crossing the rule drops a choice)."""
        wide = self._wide(width)
        if self.chosen is not None and wide != self._chosen_wide:
            self.chosen = None
        return wide if self.chosen is None else self.chosen

    def toggle(self, width: int, shown: bool) -> bool:
        """F10 at `width` columns with the panel `shown` or not: whether it shows now."""
        self.chosen = not shown
        self._chosen_wide = self._wide(width)
        return self.chosen
