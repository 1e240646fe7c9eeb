"""A base_url that does not parse (a bad port, a bad IPv6 address, no host, another scheme) is a
configuration error: exit 2, one line naming where it was set and what is wrong, its secrets
masked; nothing is sent and nothing is stored. `firsttoken config` checks it too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import firsttoken

from tui.config import ConfigError, ConfigFlags, load_config
from tui.engine.http.base_url import check_base_url
from tui.engine.http.url import BadURL
from tui.locations import history_db_path

LEAK = "LEAKA"
MALFORMED = {
    f"http://usr:pw{LEAK}@h:99999/v1?key=qs{LEAK}": "its port 99999 is not between 1 and 65535",
    f"http://usr:pw{LEAK}@[::1/v1?key=qs{LEAK}": "its IPv6 address has no closing ]",
    f"http://usr:pw{LEAK}@h:abc/v1?key=qs{LEAK}": "its port is not a number",
    f"http://usr:pw{LEAK}@/v1?key=qs{LEAK}": "it has no host",
    f"http://usr:pw{LEAK}@[zz]:80/v1": "the address in [ ] is not an IPv6 address",
    "http://h:0/v1": "its port 0 is not between 1 and 65535",
    "ftp://h/v1": "its scheme ftp:// is not http:// or https://",
}


@pytest.mark.parametrize(("url", "reason"), MALFORMED.items())
def test_check_base_url_says_what_is_wrong_without_quoting_a_secret(url: str, reason: str) -> None:
    with pytest.raises(BadURL) as caught:
        check_base_url(url)
    assert reason in str(caught.value) and LEAK not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    ["http://[::1]:8080/v1", "https://api.example.com", " http://h:/v1 ", "http://u:p@h:1/v1?a=b"],
)
def test_usable_base_urls_pass(url: str) -> None:
    assert check_base_url(url) == url.strip()


@pytest.mark.e2e
@pytest.mark.parametrize(("url", "reason"), list(MALFORMED.items())[:4])
def test_ask_json_refuses_a_malformed_base_url_as_a_config_error(url: str, reason: str) -> None:
    result = firsttoken("ask", "--json", "--base-url", url, "hi")
    assert result.returncode == 2
    assert LEAK not in result.stdout + result.stderr
    payload = json.loads(result.stdout)
    assert payload["error"]["kind"] == "config" and payload["endpoint_host"] is None
    (line,) = result.stderr.splitlines()
    assert line.startswith("firsttoken: error: --base-url = ") and reason in line
    assert not history_db_path().exists()  # nothing sent, nothing stored


@pytest.mark.e2e
def test_config_names_where_the_bad_base_url_came_from(tmp_path: Path) -> None:
    url = f"http://usr:pw{LEAK}@h:99999/v1?key=qs{LEAK}"
    config = tmp_path / "config.toml"
    config.write_text(f'[llm]\nbase_url = "{url}"\n', encoding="utf-8")
    from_file = firsttoken("config", "--config", str(config))
    assert from_file.returncode == 2 and LEAK not in from_file.stdout + from_file.stderr
    (line,) = from_file.stderr.splitlines()
    assert f"{config}: llm.base_url = " in line and "port 99999" in line


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"FIRSTTOKEN_BASE_URL": f"http://u:{LEAK}@[::1/v1"}, "$FIRSTTOKEN_BASE_URL = "),
        ({"OPENAI_BASE_URL": f"http://u:{LEAK}@h:abc/v1"}, "$OPENAI_BASE_URL = "),
        ({"AZURE_OPENAI_ENDPOINT": f"https://u:{LEAK}@h:99999"}, "$AZURE_OPENAI_ENDPOINT = "),
    ],
)
def test_a_bad_base_url_from_the_environment_names_the_variable(
    env: dict[str, str], named: str, tmp_path: Path
) -> None:
    provider = "azure" if "AZURE_OPENAI_ENDPOINT" in env else None
    with pytest.raises(ConfigError) as caught:
        load_config(ConfigFlags(provider=provider), env=env, cwd=tmp_path)
    message = str(caught.value)
    assert message.startswith(named) and LEAK not in message and "\n" not in message
