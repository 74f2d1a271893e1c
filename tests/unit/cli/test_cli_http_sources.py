"""HTTP sources through the command line: ``--source-header`` and its refusals, and a
Secret served behind Basic authentication, planned, saved and applied, its URL's
credentials in no output and no saved plan (issue 28)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from podsync.cli._source_args import source_header
from podsync.testing import FakeRuntime
from tests.unit.cli import test_cli_secrets as secrets
from tests.unit.cli import test_cli_unit as unit
from tests.unit.cli.test_cli_unit import Result
from tests.unit.load.test_http_credentials import PASSWORD, TOKEN, USER, serve

clock, fake, run = unit.clock, unit.fake, unit.run

# id, the argument, (name, value) or the error
_HEADER_CASES = [
    ("plain", "X-Node: a", ("X-Node", "a")),
    ("blanks-trimmed", "  Authorization :  Bearer SEKRIT ", ("Authorization", "Bearer SEKRIT")),
    ("colon-in-value", "X-Time: 12:00", ("X-Time", "12:00")),
    ("empty-value", "X-Empty:", ("X-Empty", "")),
    (
        "no-colon",
        "Bearer SEKRIT",
        "expected 'Name: value', with a header name of letters, digits and "
        "!#$%&'*+.^_`|~- (the value is not shown)",
    ),
    (
        "space-in-name",
        "X Node: SEKRIT",
        "expected 'Name: value', with a header name of letters, digits and "
        "!#$%&'*+.^_`|~- (the value is not shown)",
    ),
    (
        "line-break-in-value",
        "X-Node: a\r\nX-Evil: SEKRIT",
        "the value of header X-Node holds a line break or NUL (the value is not shown)",
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in _HEADER_CASES], ids=[c[0] for c in _HEADER_CASES]
)
def test_source_header_is_name_colon_value(text, expected):
    if isinstance(expected, tuple):
        assert source_header(text) == expected
        return
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        source_header(text)
    assert str(caught.value) == expected
    assert "SEKRIT" not in str(caught.value)


@pytest.fixture
def secret_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A URL serving the Secret and the pod of ``test_cli_secrets`` behind Basic
    authentication and an ``X-Node: a`` check, with a token in its query."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    for server in serve():
        server.body = (secrets.secret() + "---\n" + secrets.POD).encode()  # type: ignore[attr-defined]
        port = server.server_address[1]
        password = quote(PASSWORD, safe="")
        yield f"http://{USER}:{password}@127.0.0.1:{port}/pod?token={TOKEN}"


@pytest.mark.real_clock
def test_a_secret_behind_basic_auth_is_planned_saved_and_applied(
    run: Callable[..., Result], fake: FakeRuntime, tmp_path: Path, secret_url: str
) -> None:
    saved = tmp_path / "p.json"
    header = ("--source-header", "X-Node: a")

    refused = run("plan", secret_url, runtime=fake)  # no X-Node: 403
    planned = run("plan", *header, "--out", str(saved), secret_url, runtime=fake)
    without = run("apply", "--plan", str(saved), *header, runtime=fake)
    applied = run("apply", "--plan", str(saved), *header, secret_url, runtime=fake)

    assert refused.code != 0
    assert "HTTP status 403 (Forbidden)" in refused.err
    assert 0 == planned.code == applied.code, (planned.err, applied.err)
    assert without.code != 0
    assert "saved without its credentials: give that URL, with them, as a SOURCE" in without.err
    outputs = [r.out + r.err for r in (refused, planned, without, applied)]
    for text in (*outputs, saved.read_text()):
        for leak in ("pa ss", "pa%20ss", TOKEN, secrets.PASSWORD):
            assert leak not in text
    assert "DB_PASSWORD=" + secrets.PASSWORD in secrets.app_env(fake)
