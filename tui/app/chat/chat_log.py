"""The scrolling chat pane. Once its content overflows it is anchored to the bottom, so it
follows a streaming reply without a scroll call per chunk; scrolling up releases the anchor
(Textual's own rule) and scrolling back to the end re-engages it.

Not anchoring before the content overflows keeps a short chat at the top and still: an
anchored pane bottom-aligns its content, so every growing line would shift (and repaint)
everything above it.

While idle the pane keeps the next user message's block and the next reply's block mounted
but hidden: Enter then fills and shows them instead of mounting two blocks while the first
token is already on its way (those mounts would hold the first token's write back). Spares
are always the last children and never count as messages. They are hidden with an inline
`display`, not a CSS class: changing a class restyles the block's whole subtree (Textual
matches the stylesheet again), work Enter need not do.

A long chat lays out only its latest VISIBLE_MESSAGES blocks. Every layout pass arranges
every block on screen, and a streamed write needs one, so without a limit a reply's UI cost
grows with the chat (benchmarks/bench_long_chat.py measures it). A loaded or reopened chat
builds only its latest blocks; after each reply, while the view follows the chat, the oldest
ones beyond the limit are hidden (display: none, which Textual's layout skips). An
`EarlierMessages` row above them says how many; scrolling to the top or clicking it shows
more, keeping the block that was at the top in place.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any

from rich.text import Text
from textual.widget import AwaitMount
from textual.widgets import Static

from tui.app.chat.earlier_messages import EarlierMessages
from tui.app.chat.message_view import (
    AssistantMessage,
    ErrorMessage,
    MessageView,
    PlainMessage,
    message_text,
)
from tui.app.chat.reasoning_block import reasoning_text
from tui.app.render import ChatPane, warm_up_block_styles

VISIBLE_MESSAGES = 30  # blocks laid out while following the chat
REVEAL_STEP = 40  # blocks shown per scroll to the top (or click on the row)


def _show_spare(view: MessageView) -> None:
    view.spare = False
    view.display = True


class ChatLog(ChatPane):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._spare_user: PlainMessage | None = None
        self._spare_reply: AssistantMessage | None = None
        self._spares_mounted: AwaitMount | None = None
        self._block_styles_warm = False
        self._unbuilt: list[tuple[int, dict]] = []  # loaded messages not built yet, in order
        self._folded: list[MessageView] = []  # built blocks hidden, oldest first
        self._earlier_row: EarlierMessages | None = None
        self._dropped: set[int] = set()  # the trim preview's marks, for blocks built later
        # A reopened chat's replies: message index -> (model, the record's figures).
        self._reply_notes: dict[int, tuple[str, str]] = {}
        self._replacing = asyncio.Lock()

    def on_mount(self) -> None:
        self.show_welcome()

    def size_changed(self) -> None:
        self._anchor_on_overflow()

    def _anchor_on_overflow(self) -> None:
        """Anchored while the content overflows, not once it fits again (a long reply
        removed by a retry): anchored, a short chat would sit at the bottom under blank rows
        until it grew past the screen."""
        overflows = self.virtual_size.height > self.scrollable_content_region.height
        if overflows != self.is_anchored:
            self.anchor(overflows)

    def show_welcome(self) -> None:
        text = Text.assemble(
            ("firsttoken", "bold"),
            ("  ask anything: the panel shows time to first token, live.\n", "dim"),
            ("enter", "bold"),
            (" send  ", "dim"),
            ("ctrl+j", "bold"),
            (" newline  ", "dim"),
            ("f6", "bold"),
            (" load a bloated sample chat  ", "dim"),
            ("f1", "bold"),
            (" all keys", "dim"),
        )
        self.mount(Static(text, id="welcome"))

    def _drop_welcome(self) -> None:
        for welcome in self.query_children("#welcome"):
            welcome.remove()

    # -- spare blocks ------------------------------------------------------------------------

    def prepare_turn(self) -> None:
        """Mount the hidden blocks the next Enter will show (call while idle)."""
        self._fold_old()
        spares: list[MessageView] = []
        if self._spare_user is None:
            self._spare_user = PlainMessage(None, "user", "")
            spares.append(self._spare_user)
        if self._spare_reply is None:
            self._spare_reply = AssistantMessage(None)
            spares.append(self._spare_reply)
        for spare in spares:
            spare.spare = True
            spare.display = False
        if spares:
            self._spares_mounted = self.mount_all(spares)
        if not self._block_styles_warm:
            self._block_styles_warm = True
            # exit_on_error=False: an app closed mid-way makes the mount fail, and a warm-up
            # that does not finish costs the first reply a restyle, never the app.
            probe = AssistantMessage(None)
            probe.spare = True  # never counted as a message while it exists
            self.run_worker(
                warm_up_block_styles(self, probe, probe.markdown),
                group="warm-up-styles",
                exit_on_error=False,
            )

    def _forget_spares(self) -> None:
        self._spare_user = self._spare_reply = None
        self._spares_mounted = None

    def _mount_views(self, views: list[MessageView]) -> AwaitMount:
        """Mount before the spares, which stay last."""
        first_spare = self._spare_user or self._spare_reply
        if first_spare is not None and first_spare.parent is self:
            return self.mount_all(views, before=first_spare)
        return self.mount_all(views)

    # -- messages ----------------------------------------------------------------------------

    def _new_view(self, index: int, message: dict) -> MessageView:
        role = str(message.get("role", "user"))
        view: MessageView
        if role == "assistant":
            model, figures = self._reply_notes.get(index, ("", ""))
            text, reasoning = message_text(message), reasoning_text(message)
            view = AssistantMessage(index, text, model=model, reasoning=reasoning)
            if figures:
                view.set_status(figures)
        else:
            view = PlainMessage(index, role, message_text(message))
        if index in self._dropped:
            view.set_dropped(True)
        return view

    def add_message(self, index: int, message: dict) -> MessageView:
        self._drop_welcome()
        spare = self._spare_user
        if spare is not None and message.get("role") == "user":
            self._spare_user = None
            spare.message_index = index
            spare.set_text(message_text(message))
            _show_spare(spare)
            return spare
        view = self._new_view(index, message)
        self._mount_views([view])
        return view

    def add_messages(self, messages: Iterable[dict], start: int = 0) -> None:
        """Show a loaded conversation's messages: only the latest are built now."""
        self._drop_welcome()
        pairs = [(start + n, message) for n, message in enumerate(messages)]
        held = max(0, len(pairs) - VISIBLE_MESSAGES)
        self._unbuilt.extend(pairs[:held])
        views = [self._new_view(index, message) for index, message in pairs[held:]]
        if views:
            self._mount_views(views)
        self._show_earlier_row()

    def next_reply(self, index: int, model: str) -> AssistantMessage:
        """The block the next reply streams into: the spare if there is one (shown by
        `show_reply`), else a new one."""
        spare = self._spare_reply
        if spare is None:
            return AssistantMessage(index, model=model)
        self._spare_reply = None
        if self._spare_user is not None:
            # A reply without a new user message (retry): the user spare sits before this
            # block, so it would come back in the wrong place. Mounted again after the reply.
            self._spare_user.remove()
            self._spare_user = None
        spare.message_index = index
        spare.set_model(model)
        return spare

    def show_reply(self, view: AssistantMessage) -> Awaitable[Any] | None:
        """Show the reply's block; what to await before writing into it (None: nothing)."""
        self._drop_welcome()
        if view.spare:
            _show_spare(view)
            return None if view.is_mounted else self._spares_mounted
        return self._mount_views([view])

    def add_error(self, kind: str, hint: str) -> ErrorMessage:
        view = ErrorMessage(kind, hint)
        self._mount_views([view])
        return view

    def shown_views(self) -> list[MessageView]:
        return [v for v in self.query_children(MessageView) if not v.spare]

    def message_views(self) -> list[MessageView]:
        """The blocks of the ChatSession's messages, in order."""
        return [v for v in self.shown_views() if v.message_index is not None]

    def replies(self) -> list[AssistantMessage]:
        return [v for v in self.shown_views() if isinstance(v, AssistantMessage)]

    def mark_dropped(self, dropped: set[int]) -> None:
        self._dropped = set(dropped)
        for view in self.message_views():
            view.set_dropped(view.message_index in dropped)

    def remove_last_turn_replies(self) -> None:
        """Remove the reply and error blocks after the last user (or loaded) message."""
        for view in reversed(self.shown_views()):
            if isinstance(view, PlainMessage):
                break
            if isinstance(view, (AssistantMessage, ErrorMessage)):
                view.remove()

    @property
    def replacing(self) -> bool:
        """Another conversation is going on screen (its blocks not all there yet)."""
        return self._replacing.locked()

    async def replaced(self) -> None:
        """Return once no other conversation is going on screen."""
        async with self._replacing:
            pass

    async def show_messages(
        self, messages: list[dict], reply_notes: dict[int, tuple[str, str]] | None = None
    ) -> None:
        """Replace everything shown with these messages (the welcome text if none);
        `reply_notes` gives replies their model and figures (a reopened chat's records)."""
        # One replacement at a time: chats opened in quick succession each await the old
        # blocks' removal, and without this the first would add its blocks after the second
        # had emptied the pane (both chats on screen).
        async with self._replacing:
            self.anchor(False)
            # Forget the old chat before awaiting its removal: emptying the pane scrolls it
            # to the top, which asks for earlier messages, and that can run during the await.
            self._forget_spares()
            self._unbuilt, self._folded, self._earlier_row = [], [], None
            self._reply_notes = dict(reply_notes or {})
            messages = list(messages)  # as they are now: ChatSession's list may grow meanwhile
            await self.remove_children()
            if messages:
                self.add_messages(messages)
            else:
                self.show_welcome()

    # -- a long chat: only the latest blocks laid out -----------------------------------------

    @property
    def hidden_messages(self) -> int:
        return len(self._unbuilt) + len(self._folded)

    def _fold_old(self) -> None:
        """Hide the oldest blocks beyond the limit, unless the user is reading up there."""
        if not self.following():
            return
        laid_out = [view for view in self.shown_views() if view.display]
        excess = len(laid_out) - VISIBLE_MESSAGES
        if excess <= 0:
            return
        for view in laid_out[:excess]:
            view.display = False
        self._folded.extend(laid_out[:excess])
        self._show_earlier_row()

    async def reveal_earlier(self, count: int = REVEAL_STEP) -> None:
        """Show up to `count` more of the earlier messages, newest of them first; the block
        that was the oldest shown stays where it is on screen."""
        if not self.hidden_messages:
            return
        oldest_shown = next((view for view in self.shown_views() if view.display), None)
        while self._folded and count:
            self._folded.pop().display = True
            count -= 1
        if count and self._unbuilt:
            taken = self._unbuilt[-count:]
            del self._unbuilt[-count:]
            views = [self._new_view(index, message) for index, message in taken]
            await self.mount_all(views, after=self._earlier_row)
        self._show_earlier_row()
        if oldest_shown is not None:
            # After the layout that places what was shown above it.
            self.call_after_refresh(self._keep_at_top, oldest_shown)

    def _keep_at_top(self, view: MessageView) -> None:
        if view.parent is self:  # not if another chat replaced this one meanwhile
            self.scroll_to_widget(view, top=True, animate=False, immediate=True)

    def _show_earlier_row(self) -> None:
        hidden = self.hidden_messages
        row = self._earlier_row
        if not hidden:
            if row is not None:
                row.remove()
                self._earlier_row = None
            return
        if row is None:
            row = self._earlier_row = EarlierMessages()
            self.mount(row, before=0)
        row.show_count(hidden, REVEAL_STEP)

    async def on_earlier_messages_wanted(self, event: EarlierMessages.Wanted) -> None:
        event.stop()
        await self.reveal_earlier()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Scrolled up to the top (not merely started there): show more, as chat apps do.
        if new_value <= 0 < old_value and self.hidden_messages:
            self.call_after_refresh(self.reveal_earlier)
