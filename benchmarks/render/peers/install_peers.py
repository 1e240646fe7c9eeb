"""Install the peer apps (oterm, elia) from PyPI, each into its own virtual environment.

Run: python -m benchmarks.render.peers.install_peers [--apps oterm,elia]
The venvs live in benchmarks/render/peers/.venvs/<app>/ (gitignored); versions are pinned to
the ones in benchmarks/render/README.md's table, so the comparison stays reproducible.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import venv
from pathlib import Path

VENVS = Path(__file__).resolve().parent / ".venvs"

# app -> (pip requirement, console script that starts it)
PEERS: dict[str, tuple[str, str]] = {
    "oterm": ("oterm==0.26.1", "oterm"),
    "elia": ("elia-chat==1.10.0", "elia"),
}


def venv_dir(app: str) -> Path:
    return VENVS / app


def executable(app: str) -> Path:
    """The peer's console script inside its venv."""
    return venv_dir(app) / "bin" / PEERS[app][1]


def install(app: str, python: str = sys.executable) -> Path:
    requirement, _ = PEERS[app]
    target = venv_dir(app)
    if executable(app).exists():
        print(f"{app}: already installed in {target}")
        return executable(app)
    print(f"{app}: creating {target}")
    # venv.create uses the running interpreter; peers need >=3.10, as does firsttoken.
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    pip = [str(target / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
    subprocess.run([*pip, "-q", requirement], check=True)
    print(f"{app}: installed {requirement}")
    return executable(app)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(PEERS), help="comma-separated: oterm,elia")
    args = parser.parse_args(argv)
    for app in filter(None, args.apps.split(",")):
        if app not in PEERS:
            print(f"install_peers: error: unknown app {app!r}; known: {', '.join(PEERS)}")
            return 2
        install(app)
    return 0


if __name__ == "__main__":
    sys.exit(main())
