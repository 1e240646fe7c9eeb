"""Which proxy a request goes through, from the environment variables curl reads, read as curl
reads them.

- an https:// URL: `https_proxy`, then `HTTPS_PROXY`; an http:// URL: `http_proxy` only (curl
  ignores `HTTP_PROXY` in capitals: a CGI server sets it from a request's `Proxy:` header);
  either, when its own is unset: `all_proxy`, then `ALL_PROXY`. Lower case first, empty is unset.
- `no_proxy` (then `NO_PROXY`): comma-separated names, each matching itself and every name
  under it (a leading dot changes nothing), IP addresses and CIDR ranges, or `*` for every host.
- A proxy URL without a scheme is http://; without a port, port 1080 (curl's default). Only
  http:// proxies are spoken to: an https:// URL goes through a CONNECT tunnel, an http:// URL
  as an absolute-form request. Credentials in the proxy URL become Proxy-Authorization (Basic)
  and are never shown: messages name the proxy by host and port.

Nothing here reads os.environ: the caller passes the environment (tui/wiring.py).
"""

from __future__ import annotations

import base64
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from tui.engine.http.url import Origin

CURL_DEFAULT_PROXY_PORT = 1080


class BadProxy(ValueError):
    """A proxy variable that cannot be used; one line naming the variable, never its password."""


@dataclass(frozen=True, slots=True)
class Proxy:
    origin: Origin
    source: str  # the environment variable it came from, e.g. "HTTPS_PROXY"
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    @property
    def authorization(self) -> str | None:
        """The Proxy-Authorization header value, when the URL carried credentials."""
        if self.username is None:
            return None
        pair = f"{self.username}:{self.password or ''}".encode()
        return "Basic " + base64.b64encode(pair).decode("ascii")

    @property
    def shown(self) -> str:
        """The proxy as messages and `firsttoken config` name it: credentials masked."""
        credentials = "***@" if self.username is not None else ""
        return f"http://{credentials}{self.origin.host_port}"


def parse_proxy(value: str, source: str) -> Proxy:
    text = value.strip()
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise BadProxy(f"${source}: not a proxy URL (expected http://host:port)") from None
    scheme = parts.scheme.lower()
    if scheme != "http":
        raise BadProxy(
            f"${source}: a {scheme}:// proxy; firsttoken speaks to http:// proxies only "
            "(https:// endpoints still go through them, tunnelled)"
        )
    if not parts.hostname:
        raise BadProxy(f"${source}: the proxy URL has no host (expected http://host:port)")
    return Proxy(
        Origin("http", parts.hostname.lower(), port or CURL_DEFAULT_PROXY_PORT),
        source,
        unquote(parts.username) if parts.username is not None else None,
        unquote(parts.password) if parts.password is not None else None,
    )


def _first(env: Mapping[str, str], *names: str) -> tuple[str, str] | None:
    for name in names:
        value = env.get(name, "")
        if value.strip():
            return name, value
    return None


@dataclass(frozen=True, slots=True)
class ProxyRules:
    """The proxies for http:// and https:// URLs, and the hosts that go direct."""

    http: Proxy | None = None
    https: Proxy | None = None
    no_proxy: tuple[str, ...] = ()
    no_proxy_source: str | None = None

    @property
    def any(self) -> bool:
        return self.http is not None or self.https is not None

    def proxy_for(self, origin: Origin) -> Proxy | None:
        proxy = self.https if origin.scheme == "https" else self.http
        if proxy is None or bypasses(origin.host, self.no_proxy):
            return None
        return proxy


def proxy_rules(env: Mapping[str, str]) -> ProxyRules:
    """The rules the environment sets; BadProxy for a proxy URL that cannot be used."""
    every = _first(env, "all_proxy", "ALL_PROXY")
    https = _first(env, "https_proxy", "HTTPS_PROXY") or every
    http = _first(env, "http_proxy") or every
    no_proxy = _first(env, "no_proxy", "NO_PROXY")
    entries = tuple(
        item.strip() for item in (no_proxy[1] if no_proxy else "").split(",") if item.strip()
    )
    return ProxyRules(
        http=parse_proxy(http[1], http[0]) if http else None,
        https=parse_proxy(https[1], https[0]) if https else None,
        no_proxy=entries,
        no_proxy_source=no_proxy[0] if no_proxy else None,
    )


def bypasses(host: str, entries: tuple[str, ...]) -> bool:
    """Whether `host` is in a no_proxy list, matched as curl matches it."""
    name = host.lower().rstrip(".").strip("[]")
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(name)
    except ValueError:
        address = None
    for entry in entries:
        if entry == "*":
            return True
        token = entry.lower().strip("[]").rstrip(".")
        if address is not None:
            try:
                if address in ipaddress.ip_network(token, strict=False):
                    return True
            except ValueError:
                continue
            continue
        token = token.lstrip(".")
        if token and (name == token or name.endswith("." + token)):
            return True
    return False
