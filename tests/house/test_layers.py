"""The layers hold: what each part of `tui` may import, checked on the source itself.

Data flows one way (config → messages → trimmer → client → events → app | commands → store):
the engine takes value objects and knows nothing of the config, the session, the commands, the
app, the demo server or Textual; the session (the chat and its turn, shared by the app and the
commands) knows no surface and no Textual; the demo server is a server of its own; the app
never speaks HTTP; headless code never loads the app; nothing imports an HTTP library (the
engine has its own). Imports inside functions count as much as those at the top.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

TUI = Path(__file__).resolve().parents[2] / "tui"

# Module prefix -> imports it must never make (prefixes too).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    # firsttoken speaks HTTP itself (tui/engine/http/): no HTTP library anywhere.
    "tui": ("openai", "httpx", "httpx2", "httpcore", "httpcore2", "h11", "anyio"),
    "tui.engine": (
        "tui.config", "tui.commands", "tui.app", "tui.demo", "tui.wiring", "tui.cli",
        "tui.sample_conversation", "tui.session", "textual",
    ),
    # The engine's rooms, each below the next: text and http know no other room; metrics,
    # tokens and the store know no client; the chat client sits on all of them.
    "tui.engine.text": ("tui.",),
    "tui.engine.http": ("tui.engine.chat", "tui.engine.tokens", "tui.engine.metrics",
                        "tui.engine.store", "tui.engine.bench", "tui.engine.race"),
    "tui.engine.metrics": ("tui.engine.chat", "tui.engine.tokens", "tui.engine.store",
                           "tui.engine.http", "tui.engine.bench", "tui.engine.race"),
    "tui.engine.tokens": ("tui.engine.chat", "tui.engine.store", "tui.engine.http",
                          "tui.engine.bench", "tui.engine.race"),
    "tui.engine.store": ("tui.engine.chat", "tui.engine.tokens", "tui.engine.http",
                         "tui.engine.bench", "tui.engine.race"),
    # The app's rooms: the render seam knows no widget of the app's; the panel no chat pane.
    "tui.app.render": ("tui.app.chat", "tui.app.panel", "tui.app.race", "tui.app.screens",
                       "tui.session"),
    "tui.app.panel": ("tui.app.chat", "tui.app.race", "tui.app.screens"),
    # The turn every surface shares: the engine and the config below it, no surface above.
    "tui.session": ("tui.app", "tui.commands", "tui.demo", "tui.cli", "textual"),
    "tui.demo": ("tui.config", "tui.commands", "tui.app", "tui.wiring", "tui.cli", "textual"),
    "tui.app": ("openai", "httpx", "httpcore", "h11", "tui.commands", "tui.demo", "tui.cli"),
    "tui.config": ("tui.app", "tui.commands", "tui.cli", "textual", "openai", "httpx"),
    "tui.locations": ("tui.app", "tui.commands", "tui.engine", "textual"),
    "tui.wiring": ("tui.app", "tui.commands", "textual"),
    "tui.sample_conversation": ("tui.",),
    "tui.commands": ("tui.app",),
}  # fmt: skip
# The one command that opens the app.
ALLOWED = {("tui.commands.open_app", "tui.app.app")}


def _module_name(path: Path) -> str:
    parts = path.relative_to(TUI.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _matches(name: str, prefix: str) -> bool:
    return name == prefix.rstrip(".") or name.startswith(
        prefix if prefix.endswith(".") else prefix + "."
    )


def _violations() -> list[str]:
    problems = []
    for path in sorted(TUI.rglob("*.py")):
        module = _module_name(path)
        for owner, banned in FORBIDDEN.items():
            if not _matches(module, owner):
                continue
            for name in sorted(_imports(path, module)):
                if any(_matches(name, ban) for ban in banned) and not any(
                    module == allowed_module and _matches(name, allowed)
                    for allowed_module, allowed in ALLOWED
                ):
                    problems.append(f"{module} imports {name}")
    return problems


def test_every_part_imports_only_what_its_layer_allows() -> None:
    assert _violations() == []


def test_the_checker_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text("def f():\n    from tui.config import Config\n    import textual.app\n")
    assert {"tui.config", "tui.config.Config", "textual.app"} <= _imports(
        source, "tui.engine.probe"
    )


@pytest.mark.e2e
@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["ask", "--help"]])
def test_the_command_line_starts_without_the_heavy_libraries(argv: list[str]) -> None:
    probe = (
        "import sys\n"
        "from tui.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('textual', 'openai', 'tiktoken', 'httpx', 'tui.engine', 'tui.app')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith(heavy)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_every_package_is_in_the_wheel() -> None:
    """pyproject.toml lists the packages by hand (the themes folder is mapped into `tui`):
    a room missing from the list would be missing from every installed copy."""
    import tomllib

    listed = set(
        tomllib.loads((TUI.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {_module_name(path) for path in TUI.rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)


def test_no_module_imports_itself_round_a_circle() -> None:
    """Imports between tui's modules (inside functions and TYPE_CHECKING blocks too) form no
    circle: a circle is a thing in the wrong room."""
    from graphlib import CycleError, TopologicalSorter

    modules = {_module_name(path): path for path in TUI.rglob("*.py")}
    graph = {
        module: {
            name
            for name in _imports(path, module)
            if name in modules and name != module and not module.startswith(name + ".")
        }
        for module, path in modules.items()
    }
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as circle:
        raise AssertionError(f"an import circle: {' -> '.join(circle.args[1])}") from None
