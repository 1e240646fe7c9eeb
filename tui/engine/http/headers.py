"""Response headers: names compared without case, several fields of one name kept in order."""

from __future__ import annotations

from collections.abc import Iterator


class Headers:
    """(name, value) pairs as received; names are stored lower-cased, values decoded latin-1."""

    __slots__ = ("_fields",)

    def __init__(self, fields: list[tuple[str, str]] | None = None) -> None:
        self._fields = fields or []

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first field named `name`, or `default`."""
        name = name.lower()
        for field_name, value in self._fields:
            if field_name == name:
                return value
        return default

    def get_all(self, name: str) -> list[str]:
        name = name.lower()
        return [value for field_name, value in self._fields if field_name == name]

    def tokens(self, name: str) -> list[str]:
        """A comma-separated list header (Connection, Content-Encoding) as lower-case items."""
        return [
            item.strip().lower()
            for value in self.get_all(name)
            for item in value.split(",")
            if item.strip()
        ]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __repr__(self) -> str:
        return f"Headers({self._fields!r})"
