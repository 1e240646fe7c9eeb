"""Every private name of Textual the render seam uses, and the Textual versions it is tested
with.

The seam checks the names when it is imported (the Markdown ones when the first reply's
Markdown is built, since importing Textual's Markdown is left off the start-up path): a
method must be there with the parameters the seam calls it with, an attribute must be on the
class, an instance attribute must still be set by the method that sets it today. The checks
read code objects only (no source, no package metadata), so they add next to nothing to
start-up. An untested Textual, a missing name or `FIRSTTOKEN_STOCK_RENDER=1` makes the seam
hand out Textual's stock classes instead: slower to paint, the same on screen.

Names can stay while the code behind them changes: MIRRORED lists the Textual code the seam
copies or depends on line by line, with a hash of its source; tests/app/render/test_render_seam.py
compares them with the installed Textual, so a new Textual is read against the seam before
it is added to TESTED_TEXTUAL.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Literal

    Kind = Literal["class", "method", "attribute", "instance"]

TESTED_TEXTUAL = ("8.2.8",)
STOCK_ENV = "FIRSTTOKEN_STOCK_RENDER"

log = logging.getLogger("firsttoken.render")


class Private:
    """One private name: `owner.name` in `module`, and how it is used. (A plain class: a
    dataclass would add the building of its methods to start-up.)"""

    __slots__ = ("kind", "module", "name", "owner", "parameters")

    def __init__(
        self,
        module: str,
        owner: str,
        name: str,
        kind: Kind,
        parameters: tuple[str, ...] = (),
    ) -> None:
        self.module = module
        self.owner = owner
        self.name = name
        # "class": the owner itself (`name` unused); "method": called or overridden, with
        # these parameters; "attribute": read from the class; "instance": an attribute of the
        # instances, set in the owner's `__init__`.
        self.kind = kind
        self.parameters = parameters

    def __str__(self) -> str:
        name = f".{self.name}" if self.name else ""
        return f"{self.module}.{self.owner}{name}"


def _method(module: str, owner: str, name: str, *parameters: str) -> Private:
    return Private(module, owner, name, "method", parameters)


def _instance(module: str, owner: str, *names: str) -> tuple[Private, ...]:
    return tuple(Private(module, owner, name, "instance") for name in names)


APP, SCREEN, WIDGET = "textual.app", "textual.screen", "textual.widget"
COMPOSITOR, STYLES_CACHE = "textual._compositor", "textual._styles_cache"
TEXT_AREA, MARKDOWN_MODULE = "textual.widgets._text_area", "textual.widgets._markdown"

# Checked at import: the compositor, the layout pass, painting, the scrollbar, the prompt.
CORE: tuple[Private, ...] = (
    # frame_rows, growth_repaint: the screen's compositor, replaced by a subclass.
    _method(COMPOSITOR, "Compositor", "_render_chops", "self", "crop", "is_rendered_line"),
    *_instance(COMPOSITOR, "Compositor", "_dirty_regions", "_full_map", "_full_map_invalidated"),
    *(
        Private(COMPOSITOR, "MapGeometry", field, "attribute")
        for field in ("region", "order", "clip", "virtual_region", "visible_region", "_replace")
    ),
    *_instance(SCREEN, "Screen", "_compositor", "_dirty_widgets"),
    # paint_now: the screen's update timer's work, run at once.
    _method(SCREEN, "Screen", "_on_timer_update", "self"),
    *_instance(APP, "App", "_batch_count"),
    # single_layout, steady_height, steady_scrollbar, chat_pane: sizes, caches, repaint flags.
    _method(
        WIDGET,
        "Widget",
        "_size_updated",
        "self",
        "size",
        "virtual_size",
        "container_size",
        "layout",
    ),
    _method(WIDGET, "Widget", "_render_content", "self"),
    *_instance(
        WIDGET,
        "Widget",
        "_size",
        "_styles_cache",
        "_repaint_regions",
        "_layout_required",
        "_repaint_required",
        "_scroll_required",
        "_render_markup",
        "_vertical_scrollbar",
        "_anchor_released",
    ),
    *_instance(STYLES_CACHE, "StylesCache", "_cache", "_dirty_lines"),
    _method(APP, "App", "_start_widget", "self", "parent", "widget"),
    # The prompt's rendered lines (set_cursor_blink).
    *_instance(TEXT_AREA, "TextArea", "_line_cache"),
)

# Checked when the first reply's Markdown is built: reply_blocks, steady_height.
MARKDOWN: tuple[Private, ...] = (
    *(
        Private(MARKDOWN_MODULE, name, "", "class")
        for name in (
            "MarkdownBlock",
            "MarkdownBlockQuote",
            "MarkdownBullet",
            "MarkdownFence",
            "MarkdownHeader",
            "MarkdownHorizontalRule",
            "MarkdownList",
            "MarkdownListItem",
            "MarkdownOrderedList",
            "MarkdownParagraph",
        )
    ),
    _method(MARKDOWN_MODULE, "MarkdownBlock", "_update_from_block", "self", "block"),
    _method(MARKDOWN_MODULE, "MarkdownBlock", "_copy_context", "self", "block"),
    *_instance(MARKDOWN_MODULE, "MarkdownBlock", "_content", "_token", "_blocks"),
    Private(MARKDOWN_MODULE, "MarkdownBlock", "_markdown", "attribute"),
    *_instance(MARKDOWN_MODULE, "MarkdownListItem", "bullet"),
    *_instance(MARKDOWN_MODULE, "MarkdownFence", "_highlighted_code"),
    _method(MARKDOWN_MODULE, "Markdown", "_parse_markdown", "self", "tokens"),
    *_instance(
        MARKDOWN_MODULE,
        "Markdown",
        "_markdown",
        "_theme",
        "_table_of_contents",
        "_last_parsed_line",
        "_parser_factory",
    ),
    _method(
        WIDGET,
        "Widget",
        "_get_box_model",
        *("self", "container", "viewport", "width_fraction", "height_fraction"),
        *("constrain_width", "greedy"),
    ),
    _method("textual.dom", "DOMNode", "_get_component_classes", "cls"),
    # settled_blocks: the reply's arrangement of its live blocks, cached as Textual caches it.
    *_instance(WIDGET, "Widget", "_arrangement_cache"),
    *_instance("textual.dom", "DOMNode", "_nodes"),
    # list_rows, drawn_lists: a list item's paragraph, or a list of paragraphs, renders its
    # content (Widget._render_content, in CORE) with the bullets in front, into the widget's
    # render cache.
    *_instance(WIDGET, "Widget", "_render_cache", "_dirty_regions"),
    Private(WIDGET, "_RenderCache", "", "class"),
)

# Textual code the seam copies, mirrors or relies on line by line (module:qualified name),
# with the first 16 hex digits of the sha256 of its source in the tested Textual.
MIRRORED: Mapping[str, str] = {
    "textual._compositor:Compositor._render_chops": "ca8c3359d7afd017",
    "textual._compositor:Compositor._get_renders": "8ac93299aa5d3bef",
    "textual._compositor:Compositor.render_partial_update": "888dccc892d8ecc2",
    "textual._compositor:Compositor.reflow": "a08580a81a779473",
    "textual.screen:Screen._on_timer_update": "421401660de142c5",
    "textual.widget:Widget._size_updated": "21ffb00b8a983315",
    "textual.widget:Widget.vertical_scrollbar": "6b140a728f0b50e4",
    "textual.widget:Widget._get_box_model": "2af27ebacc60142b",
    "textual.scrollbar:ScrollBar.render": "43a56156a9a6cc05",
    "textual.scrollbar:ScrollBarRender.render_bar": "ea7d1cc4da619e96",
    "textual.widgets._text_area:TextArea._render_line": "11d1cc3274dc185b",
    "textual.widgets._markdown:MarkdownBlock.set_content": "062a1b691e71b8e8",
    "textual.widgets._markdown:MarkdownBlock._update_from_block": "87b3ab6f1f2a3b3d",
    "textual.widgets._markdown:MarkdownOrderedList.compose": "c13bac9023d3f6c1",
    "textual.widgets._markdown:MarkdownFence.compose": "10d0ae3e9c00a476",
    "textual.widgets._markdown:Markdown.DEFAULT_CSS": "ade098003b97e1cf",
    "textual.widgets._markdown:Markdown._parse_markdown": "d70e24a87ac99b0d",
    "textual.widgets._markdown:Markdown.append": "3b8e4ea53d2a616e",
    "textual.widgets._markdown:Markdown.update": "3629ab041067edb6",
    # settled_blocks: the reply's own arrangement (cached as Textual's is, margins collapsed
    # by the vertical layout, its measure of a container), the folded blocks left out of
    # selection, and the place lookup it answers from the last layout's map.
    "textual.widget:Widget.arrange": "e876510bea8f9a59",
    "textual.layouts.vertical:VerticalLayout.arrange": "b9e3aee8d11b26a9",
    "textual.layout:Layout.get_content_height": "67a97e227d2179c5",
    "textual.selection:SelectState._walk_selected_widgets": "16d1c203ec056801",
    "textual._compositor:Compositor.find_widget": "40531dc312b3cadf",
    # list_rows: a one-paragraph list item paints what Textual's row, bullet and column paint
    # for it (the content rendered as a widget's is, a line below the text padded as
    # render_line pads it), and is selected as the bullet and paragraph are.
    "textual.widget:Widget._render_content": "50c545576ca20403",
    "textual.widget:Widget.render_line": "36df21323c2e9fea",
    "textual.widgets._markdown:MarkdownBullet.DEFAULT_CSS": "afa8c56f6c00298b",
    "textual.widgets._markdown:MarkdownBullet.render": "e4ca455fa743c6bb",
    "textual.widgets._markdown:MarkdownBullet.get_selection": "f06acf39d11a97fb",
    "textual.widgets._markdown:MarkdownBulletList.compose": "80c47ecac7d7c17f",
    # drawn_lists: a list of paragraphs paints what Textual's rows, bullets and columns paint
    # for it (items stacked without margins, each paragraph rendered as a widget renders its
    # content) and is selected as they are: the offsets a frame's segments carry, which
    # widgets a drag selects, and how a selection is laid over the text.
    "textual.widgets._markdown:MarkdownList.DEFAULT_CSS": "e1ec4c776129257e",
    "textual.widgets._markdown:MarkdownListItem.DEFAULT_CSS": "8f6ab3e8a3b48f67",
    "textual.visual:Visual.to_strips": "237262d432caa6c4",
    "textual.content:Content.render_strips": "5595f673f3a2e010",
    "textual._compositor:Compositor.get_widget_and_offset_at": "f03b92a100acbc94",
    "textual.walk:walk_selectable_widgets": "4127ba81b9595d83",
    "textual.selection:SelectState._apply_content_selections": "396e3ab8e4e4b153",
    "textual.selection:Selection.extract": "d14ceda5d07096ea",
}


def _code(function: Any) -> Any:
    function = getattr(function, "__func__", function)
    function = getattr(function, "__wrapped__", function)  # lru_cache and the like
    return getattr(function, "__code__", None)


def missing(names: Iterable[Private]) -> list[str]:
    """The names not there as the seam uses them, each as `module.Owner.name`."""
    found: list[str] = []
    for private in names:
        try:
            owner = getattr(importlib.import_module(private.module), private.owner)
        except (ImportError, AttributeError):
            found.append(str(private))
            continue
        if private.kind == "class":
            ok = isinstance(owner, type)
        elif private.kind == "attribute":
            ok = hasattr(owner, private.name)
        elif private.kind == "instance":
            code = _code(owner.__dict__.get("__init__"))
            ok = code is not None and private.name in code.co_names
        else:
            code = _code(getattr(owner, private.name, None))
            ok = code is not None and (
                code.co_varnames[: code.co_argcount + code.co_kwonlyargcount] == private.parameters
            )
        if not ok:
            found.append(str(private))
    return found


def installed_textual() -> str | None:
    """The installed Textual's version, from its dist-info folder beside the package (None:
    not found). `importlib.metadata` would add its own import and a search of the installed
    distributions to start-up for the same answer."""
    import textual

    site = Path(textual.__file__).resolve().parent.parent
    try:
        names = os.listdir(site)
    except OSError:
        return None
    for name in names:
        if name.startswith("textual-") and name.endswith(".dist-info"):
            return name[len("textual-") : -len(".dist-info")]
    return None


def stock_reason(
    env: Mapping[str, str], names: Iterable[Private], version: str | None
) -> str | None:
    """Why the stock classes are to be used (None: the seam's own are safe): asked for in
    the environment, an untested Textual, or names missing."""
    wanted = env.get(STOCK_ENV, "").strip()
    if wanted == "1":
        return f"{STOCK_ENV}=1"
    if wanted != "0" and version is not None and version not in TESTED_TEXTUAL:
        tested = ", ".join(TESTED_TEXTUAL)
        return f"Textual {version} is untested with firsttoken's render path (tested: {tested})"
    absent = missing(names)
    if absent:
        more = f" and {len(absent) - 1} more" if len(absent) > 1 else ""
        return f"Textual {version or '(unknown version)'} lacks {absent[0]}{more}"
    return None


_warned: set[str] = set()


def warn_once(reason: str) -> str:
    """Log, once per reason, that stock rendering is used; returns the one-line notice."""
    notice = f"stock rendering (slower, same screen): {reason}"
    if reason not in _warned:
        _warned.add(reason)
        kind = "" if reason.startswith(STOCK_ENV) else "warning: "  # asked for, or not
        log.warning("firsttoken: %s%s", kind, notice)
    return notice


def decide(names: Iterable[Private]) -> str | None:
    """`stock_reason` for this process: its environment and the installed Textual."""
    wanted = os.environ.get(STOCK_ENV, "").strip()
    version = None if wanted == "1" else installed_textual()
    return stock_reason(os.environ, names, version)
