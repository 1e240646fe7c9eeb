"""The layers of the configuration that come from where the requests go: a provider preset
(just above the defaults) and the proxy variables of the environment.

The preset fills base_url, the key (from the provider's own variable, e.g. $OPENROUTER_API_KEY),
default headers and the key's header; explicit settings win over each. Proxies are read from the
environment as curl reads them (tui/engine/http/proxy.py) and checked here, so a bad one is a
one-line configuration error before anything is sent.
"""

from __future__ import annotations

from collections.abc import Mapping

from tui.config_files import Setting
from tui.config_schema import ConfigError, Invalid, show_url, url
from tui.engine.http.proxy import BadProxy, ProxyRules, proxy_rules
from tui.providers import PROVIDERS, Provider

# Header or query names whose value is a credential: masked wherever the config is shown.
SECRET_NAMES = ("auth", "key", "token", "secret", "password", "cookie", "sig", "credential")


def preset(name: str, where: str) -> Provider:
    provider = PROVIDERS.get(name)
    if provider is None:
        raise ConfigError(f"{where} {name}: expected one of {', '.join(PROVIDERS)}")
    return provider


def provider_layer(provider: Provider, env: Mapping[str, str]) -> list[Setting]:
    """What the preset sets, each value's origin naming the provider."""
    origin = f"provider:{provider.name}"
    layer: list[Setting] = []
    base_url = provider.base_url_from(env)
    if base_url is not None:
        if provider.base_url_env:  # a URL from the environment: checked like any base_url
            base_url = _checked_url(base_url, f"${provider.base_url_env}")
        layer.append(Setting("base_url", base_url, origin))
    if provider.key_env and env.get(provider.key_env, "").strip():
        key_origin = f"env:{provider.key_env} (provider {provider.name})"
        layer.append(Setting("api_key", env[provider.key_env].strip(), key_origin))
    if provider.headers:
        layer.append(Setting("extra_headers", dict(provider.headers), origin))
    if provider.key_header:
        layer.append(Setting("api_key_header", provider.key_header, origin))
    return layer


def _checked_url(value: str, where: str) -> str:
    try:
        return url(value)
    except Invalid as invalid:
        raise ConfigError(f"{where} = {show_url(value)}: expected {invalid.expected}") from None


def missing_base_url(provider: Provider) -> ConfigError:
    return ConfigError(
        f"provider {provider.name}: set ${provider.base_url_env} to your resource's endpoint "
        f"(https://NAME.openai.azure.com) or set base_url"
    )


def proxies(env: Mapping[str, str], warnings: list[str]) -> tuple[ProxyRules, str]:
    """The proxy rules and their origin ("env:HTTPS_PROXY, env:NO_PROXY", or "default")."""
    try:
        rules = proxy_rules(env)
    except BadProxy as bad:
        raise ConfigError(str(bad)) from None
    if env.get("HTTP_PROXY", "").strip() and not env.get("http_proxy", "").strip():
        warnings.append(
            "$HTTP_PROXY is ignored, as curl ignores it (a CGI server sets it from a request "
            "header): set http_proxy in lower case for http:// endpoints"
        )
    sources = [p.source for p in (rules.https, rules.http) if p is not None]
    if rules.no_proxy_source is not None:
        sources.append(rules.no_proxy_source)
    origin = ", ".join(f"env:{name}" for name in dict.fromkeys(sources)) or "default"
    return rules, origin


def looks_secret(name: str) -> bool:
    lowered = name.lower()
    return any(part in lowered for part in SECRET_NAMES)


def shown_proxies(rules: ProxyRules) -> str:
    """The proxies as `firsttoken config` shows them: credentials masked."""
    if not rules.any and not rules.no_proxy:
        return "(none)"
    parts = [
        f"https {rules.https.shown if rules.https else '(none)'}",
        f"http {rules.http.shown if rules.http else '(none)'}",
    ]
    if rules.no_proxy:
        parts.append("no_proxy " + ",".join(rules.no_proxy))
    return ", ".join(parts)
