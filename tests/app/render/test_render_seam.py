"""Textual's private names stay inside tui/app/render/, which lists them (compat) and falls
back to Textual's stock classes when they are not there as it uses them."""

from __future__ import annotations

import ast
import hashlib
import importlib
import inspect
import os
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import textual

from tui.app.render import compat

REPO = Path(__file__).resolve().parents[3]
SOURCE = REPO / "tui"
SEAM = SOURCE / "app" / "render"


def python_files(root: Path) -> Iterator[Path]:
    yield from sorted(root.rglob("*.py"))


def outside_the_seam() -> Iterator[Path]:
    return (path for path in python_files(SOURCE) if SEAM not in path.parents)


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@cache
def textual_private_names() -> frozenset[str]:
    """Every private name Textual's loaded classes define or use in their methods."""
    importlib.import_module("textual.widgets._markdown")
    names: set[str] = set()
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("textual"):
            continue
        for value in list(vars(module).values()):
            if not (isinstance(value, type) and value.__module__.startswith("textual")):
                continue
            for name, member in vars(value).items():
                if is_private(name):
                    names.add(name)
                code = getattr(getattr(member, "__func__", member), "__code__", None)
                if code is not None:
                    names.update(filter(is_private, code.co_names))
    return frozenset(names)


def textual_part(cls: type) -> set[str]:
    """The private names the Textual classes among `cls`'s bases define or set."""
    names: set[str] = set()
    for base in cls.__mro__:
        if base.__module__.startswith("textual"):
            names.update(filter(is_private, vars(base)))
            init = vars(base).get("__init__")
            if init is not None and hasattr(init, "__code__"):
                names.update(filter(is_private, init.__code__.co_names))
    return names


@cache
def own_private_names() -> frozenset[str]:
    """Private names firsttoken's code outside the seam defines for its own objects."""
    names: set[str] = set()
    for path in outside_the_seam():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_private(node.name):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return frozenset(filter(is_private, names))


def private_touches(path: Path) -> Iterator[str]:
    """Where the module at `path` imports a private Textual module, or uses a private name
    of a Textual object (its own in a Textual subclass, a base's, or another object's)."""
    tree = ast.parse(path.read_text())
    module = importlib.import_module(module_name(path))
    textual_names = textual_private_names()
    ours = own_private_names()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                parts = name.split(".")
                if parts[0] == "textual" and any(map(is_private, parts)):
                    yield f"{path.name}:{node.lineno} imports {name}"
                if name.startswith("tui.app.render.") and SEAM not in path.parents:
                    # Only the package's names switch to the stock ones.
                    yield f"{path.name}:{node.lineno} imports {name}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(module, node.name, None)
        textual_own = textual_part(cls) if isinstance(cls, type) else set()
        for inner in ast.walk(node):
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if inner.name in textual_own:
                    yield f"{path.name}:{inner.lineno} overrides {node.name}.{inner.name}"
            elif isinstance(inner, ast.Attribute) and is_private(inner.attr):
                target = ast.unparse(inner.value)
                if target in ("self", "super()") and inner.attr in textual_own:
                    yield f"{path.name}:{inner.lineno} uses {target}.{inner.attr}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            target = ast.unparse(node.value)
            if target not in ("self", "super()", "cls") and node.attr in textual_names - ours:
                yield f"{path.name}:{node.lineno} uses {target}.{node.attr}"


def test_nothing_outside_the_seam_touches_textual_private_names() -> None:
    touches = [touch for path in outside_the_seam() for touch in private_touches(path)]
    assert touches == []


def test_the_check_finds_what_the_seam_itself_touches() -> None:
    # The seam's own modules are full of them: the scan must see them there.
    touches = [touch for path in python_files(SEAM) for touch in private_touches(path)]
    assert any("imports textual._compositor" in touch for touch in touches)
    assert any("overrides ChatPane._size_updated" in touch for touch in touches)
    assert any("uses self._anchor_released" in touch for touch in touches)
    assert any("uses text_area._line_cache" in touch for touch in touches)


def seam_names(path: Path) -> tuple[set[str], set[str]]:
    """(private names of Textual the module at `path` uses, private names it gives its own
    objects: attributes and methods of its classes that no Textual base defines)."""
    module = importlib.import_module(module_name(path))
    textual_names = textual_private_names()
    used: set[str] = set()
    own: set[str] = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in textual_names:
            used.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("textual"):
            if any(map(is_private, (node.module or "").split("."))):
                used.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ClassDef):
            cls = getattr(module, node.name, None)
            textual_own = textual_part(cls) if isinstance(cls, type) else set()
            for inner in ast.walk(node):
                name = getattr(inner, "name", None) or getattr(inner, "attr", None)
                stored = isinstance(inner, ast.Attribute) and isinstance(inner.ctx, ast.Store)
                defined = isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.AnnAssign))
                if name and (stored or defined) and name not in textual_own:
                    own.add(name)
                target = getattr(inner, "target", None)
                if isinstance(target, ast.Name) and target.id not in textual_own:
                    own.add(target.id)
    return used, own


def test_every_private_name_the_seam_uses_is_listed_and_there() -> None:
    listed = {private.name for private in (*compat.CORE, *compat.MARKDOWN)}
    listed |= {private.owner for private in (*compat.CORE, *compat.MARKDOWN)}
    unlisted: set[str] = set()
    for path in python_files(SEAM):
        used, own = seam_names(path)
        unlisted |= used - own - listed
    assert sorted(unlisted) == []
    assert compat.missing((*compat.CORE, *compat.MARKDOWN)) == []


def source_of(key: str) -> str:
    """The source of `module:Owner.name` (a string attribute: itself)."""
    module, qualified = key.split(":")
    *path, name = qualified.split(".")
    owner: Any = importlib.import_module(module)
    for part in path:
        owner = getattr(owner, part)
    member = inspect.getattr_static(owner, name)
    member = member.fget if isinstance(member, property) else member
    member = getattr(member, "__func__", member)  # a classmethod's function
    return member if isinstance(member, str) else inspect.getsource(member)


def test_the_textual_code_the_seam_mirrors_is_the_tested_one() -> None:
    changed = [
        key
        for key, digest in compat.MIRRORED.items()
        if hashlib.sha256(source_of(key).encode()).hexdigest()[:16] != digest
    ]
    # A change here: read the new code against tui/app/render/ (the module using it), adapt
    # the seam, then update the digest and compat.TESTED_TEXTUAL.
    assert changed == []
    assert compat.installed_textual() in compat.TESTED_TEXTUAL


def test_the_environment_and_the_version_decide_before_the_names() -> None:
    gone = compat.Private("textual.widget", "Widget", "_no_such_name", "instance")
    tested = compat.TESTED_TEXTUAL[0]
    assert compat.stock_reason({}, compat.CORE, tested) is None
    asked = compat.stock_reason({compat.STOCK_ENV: "1"}, compat.CORE, tested)
    assert asked == "FIRSTTOKEN_STOCK_RENDER=1"
    assert "untested" in (compat.stock_reason({}, compat.CORE, "99.0.0") or "")
    # =0 trusts an untested version, but never a missing name.
    assert compat.stock_reason({compat.STOCK_ENV: "0"}, compat.CORE, "99.0.0") is None
    reason = compat.stock_reason({compat.STOCK_ENV: "0"}, (gone, *compat.CORE), "99.0.0")
    assert reason == "Textual 99.0.0 lacks textual.widget.Widget._no_such_name"


def test_a_method_with_other_parameters_counts_as_missing() -> None:
    renamed = compat.Private("textual.widget", "Widget", "_size_updated", "method", ("self",))
    assert compat.missing([renamed]) == ["textual.widget.Widget._size_updated"]
    assert compat.missing([compat.Private("textual.nowhere", "X", "", "class")]) == [
        "textual.nowhere.X"
    ]


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=60
    )


SHOW_MODE = """
import tui.app.render as render
classes = (render.RenderScreen, render.ChatPane, render.reply_markdown_class(),
           render.StoreSizeWithoutRelayout)
print(*(cls.__module__ for cls in classes))
"""
STOCK = ["tui.app.render.stock", "tui.app.render.stock", "textual.widgets._markdown"]
STOCK.append("tui.app.render.stock")


@pytest.mark.e2e
def test_a_textual_without_a_name_the_seam_uses_gets_stock_classes_and_one_warning() -> None:
    # The name removed before the seam is imported, as a Textual without it would be.
    code = "import textual.widget as w; del w.Widget._size_updated\n" + SHOW_MODE
    done = run_python(code, FIRSTTOKEN_STOCK_RENDER="")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == STOCK
    assert done.stderr.splitlines() == [
        "firsttoken: warning: stock rendering (slower, same screen): "
        f"Textual {textual.__version__} lacks textual.widget.Widget._size_updated"
    ]


@pytest.mark.e2e
def test_the_environment_asks_for_stock_classes() -> None:
    done = run_python(SHOW_MODE, FIRSTTOKEN_STOCK_RENDER="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == STOCK
    assert done.stderr.splitlines() == [
        "firsttoken: stock rendering (slower, same screen): FIRSTTOKEN_STOCK_RENDER=1"
    ]


@pytest.mark.e2e
def test_the_tested_textual_gets_the_seams_own_classes_silently() -> None:
    done = run_python(SHOW_MODE, FIRSTTOKEN_STOCK_RENDER="")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "tui.app.render.growth_repaint",
        "tui.app.render.chat_pane",
        "tui.app.render.reply_blocks",
        "tui.app.render.single_layout",
    ]
    assert done.stderr == ""


def test_the_pin_admits_only_the_tested_textual() -> None:
    """The day a new Textual ships, a fresh install must still get the one the seam was read
    against: pyproject pins Textual to a release in TESTED_TEXTUAL, and nothing else."""
    import tomllib
    from packaging.requirements import Requirement

    from tui.app.render.compat import TESTED_TEXTUAL

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    (textual,) = [Requirement(d) for d in project["dependencies"] if d.startswith("textual")]
    assert [s.operator for s in textual.specifier] == ["=="], str(textual.specifier)
    assert {s.version for s in textual.specifier} <= set(TESTED_TEXTUAL)
