"""argparse's errors as one line naming the flag and the fix, like every other error.

argparse prints a usage block of five to seven lines before the line that matters, and an
unknown flag of a subcommand as the top level's error. Here each of its messages becomes one
line: which flag (or command), what is wrong, and what to do; `--help` still prints the usage.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

# argparse's own wording (Python 3.10 to 3.13), matched to say the same in one line.
_ARGUMENT = re.compile(r"^argument (?P<name>[^:]+): (?P<problem>.*)$", re.DOTALL)
_CHOICE = re.compile(r"^invalid choice: (?P<value>.*?) \(choose from (?P<choices>.*)\)$")
_NOT_WITH = re.compile(r"^not allowed with argument (?P<other>.+)$")
_EXPLICIT = re.compile(r"^ignored explicit argument (?P<value>.+)$")
_INVALID_TYPE = re.compile(r"^invalid \S+ value: (?P<value>.+)$")


class UsageProblem(Exception):
    """A command line argparse could not read; str() is the one line to print."""


def command_of(parser: argparse.ArgumentParser) -> str:
    """The subcommand a parser reads ("ask"), or "" for the top level."""
    return parser.prog.partition(" ")[2]


def _help(command: str) -> str:
    return f"`firsttoken {command} --help` lists them".replace("firsttoken  ", "firsttoken ")


def _metavar(parser: argparse.ArgumentParser, name: str) -> str | None:
    """What the flag's value is called in its help (NAME, N, FILE.json)."""
    for action in parser._actions:  # argparse keeps no public list of a parser's actions
        if name in action.option_strings and action.metavar is not None:
            return str(action.metavar)
    return None


def _choices(text: str) -> str:
    return ", ".join(part.strip().strip("'") for part in text.split(","))


def argument_problem(parser: argparse.ArgumentParser, message: str) -> str:
    """One line for an error argparse raised while reading `parser`'s arguments."""
    command = command_of(parser)
    where = f"{command}: " if command else ""
    match = _ARGUMENT.match(message)
    if match is None:
        return f"{where}{message} ({_help(command)})"
    name, problem = match["name"], " ".join(match["problem"].split())
    if name == "COMMAND" and (choice := _CHOICE.match(problem)):
        return (
            f"unknown command {choice['value']}: expected one of {_choices(choice['choices'])} "
            "(`firsttoken --help` says what each does)"
        )
    if problem.startswith("expected") and "argument" in problem:
        metavar = _metavar(parser, name)
        example = f" (e.g. {name} {metavar})" if metavar else ""
        return f"{where}{name} needs a value after it{example}"
    if (choice := _CHOICE.match(problem)) and not name.startswith("-"):  # a word, not a flag
        return f"{where}unexpected {choice['value']}: expected {_choices(choice['choices'])}"
    if choice:
        return f"{where}{name} {choice['value']}: expected one of {_choices(choice['choices'])}"
    if other := _NOT_WITH.match(problem):
        return f"{where}{name} and {other['other']} cannot be used together: choose one"
    if explicit := _EXPLICIT.match(problem):
        return f"{where}{name} takes no value: drop ={explicit['value'].strip(chr(39))}"
    if invalid := _INVALID_TYPE.match(problem):
        return f"{where}{name} {invalid['value']}: not a usable value ({_help(command)})"
    return f"{where}{name}: {problem}"


def unrecognized(command: str | None, extras: Sequence[str]) -> str:
    """One line for what no parser took: unknown flags, or words after a one-word argument."""
    flags = [extra for extra in extras if extra.startswith("-")]
    where = f"{command}: " if command else ""
    if flags:
        many = "s" if len(flags) > 1 else ""
        return f"{where}unknown flag{many} {' '.join(flags)} ({_help(command or '')})"
    words = " ".join(extras)
    if command == "ask":
        return f'ask: unexpected {words!r} after the prompt: quote the prompt (ask "what is …")'
    return f"{where}unexpected {words!r} ({_help(command or '')})"
