"""The loop's sources: each polled on its own, each keeping its last good state.

A source that fails (bad YAML, unreadable, a problem in a pod) keeps the pods it had
and reports the error - never read as empty; a source never read successfully is not
ready (its pods are not deleted); ConfigMaps of one source feed pods of another, as
``load_pods`` reads them. Files on disk, no clock."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from podsync.host._node import NodeInfo
from podsync.load._source_set import SourceSet

NODE = NodeInfo(name="node-1", milli_cpu=2000, memory=4 * 1024**3)


def pod_yaml(name: str, image: str = "busybox:1", env: str = "") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: {image}
{env}"""


CONFIG_ENV = """\
    env:
    - name: GREETING
      valueFrom:
        configMapKeyRef:
          name: greetings
          key: hello
"""


def config_map(value: str) -> str:
    return f"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: greetings
data:
  hello: "{value}"
"""


def names(sources: SourceSet) -> list[str]:
    return [p.name for p in sources.desired]


def poll_all(sources: SourceSet) -> dict[str, str]:
    """Poll every source once and merge; the errors reported."""
    return sources.update({name: sources.poll(name) for name in sources.names}).errors


def test_sources_are_merged_in_order_and_ready_once_read(tmp_path: Path) -> None:
    web = tmp_path / "web.yaml"
    web.write_text(pod_yaml("web"))
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "db.yaml").write_text(pod_yaml("db"))
    sources = SourceSet([str(web), str(pods)], node=NODE)
    assert sources.not_ready == frozenset({str(web), str(pods)})
    assert poll_all(sources) == {}
    assert names(sources) == ["web", "db"]
    assert sources.not_ready == frozenset()


def test_an_unchanged_source_is_not_parsed_again(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "db.yaml").write_text(pod_yaml("db"))
    sources = SourceSet([str(pods)], node=NODE)
    first = sources.poll(str(pods))
    assert first.changed
    sources.update({str(pods): first})
    again = sources.poll(str(pods))
    assert not again.changed
    assert not again.error
    result = sources.update({str(pods): again})
    assert not result.desired_changed


def test_bad_yaml_keeps_the_pods_and_reports_the_error(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    sources = SourceSet([str(pods)], node=NODE)
    poll_all(sources)
    (pods / "web.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: [unclosed\n")
    errors = poll_all(sources)
    assert list(errors) == [str(pods)]
    assert "web.yaml" in errors[str(pods)]
    assert names(sources) == ["web"]
    # Fixed: back to what the file says.
    (pods / "web.yaml").write_text(pod_yaml("web", image="busybox:2"))
    assert poll_all(sources) == {}
    assert [c.image for c in sources.desired[0].containers] == ["busybox:2"]


def test_a_source_that_was_never_read_is_not_ready_and_gives_no_pods(tmp_path: Path) -> None:
    web = tmp_path / "web.yaml"
    web.write_text("kind: [")
    sources = SourceSet([str(web)], node=NODE)
    errors = poll_all(sources)
    assert list(errors) == [str(web)]
    assert sources.desired == ()
    assert sources.not_ready == frozenset({str(web)})


def test_a_file_removed_from_a_directory_removes_its_pod(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "web.yaml").write_text(pod_yaml("web"))
    (pods / "db.yaml").write_text(pod_yaml("db"))
    sources = SourceSet([str(pods)], node=NODE)
    poll_all(sources)
    os.remove(pods / "web.yaml")
    assert poll_all(sources) == {}
    assert names(sources) == ["db"]


def test_a_named_file_that_disappears_is_an_error_not_an_empty_source(tmp_path: Path) -> None:
    web = tmp_path / "web.yaml"
    web.write_text(pod_yaml("web"))
    sources = SourceSet([str(web)], node=NODE)
    poll_all(sources)
    os.remove(web)
    errors = poll_all(sources)
    assert "No such file" in errors[str(web)]
    assert names(sources) == ["web"]


def test_an_empty_file_is_an_error_not_zero_pods(tmp_path: Path) -> None:
    # What a reader sees of a file truncated to be rewritten.
    web = tmp_path / "web.yaml"
    web.write_text(pod_yaml("web"))
    sources = SourceSet([str(web)], node=NODE)
    poll_all(sources)
    web.write_text("")
    assert str(web) in poll_all(sources)
    assert names(sources) == ["web"]


def test_a_config_map_of_one_source_feeds_a_pod_of_another(tmp_path: Path) -> None:
    web = tmp_path / "web.yaml"
    web.write_text(pod_yaml("web", env=CONFIG_ENV))
    config = tmp_path / "config.yaml"
    config.write_text(config_map("hi"))
    sources = SourceSet([str(web), str(config)], node=NODE)
    assert poll_all(sources) == {}
    assert [(e.name, e.value) for e in sources.desired[0].containers[0].env] == [("GREETING", "hi")]
    # The ConfigMap changes: the pod of the unchanged file sees the new value.
    config.write_text(config_map("hello"))
    result = sources.update({str(config): sources.poll(str(config))})
    assert result.errors == {}
    assert result.desired_changed
    assert [(e.name, e.value) for e in sources.desired[0].containers[0].env] == [
        ("GREETING", "hello")
    ]


def test_a_config_map_taken_away_fails_the_container_that_reads_it(tmp_path: Path) -> None:
    web = tmp_path / "web.yaml"
    web.write_text(pod_yaml("web", env=CONFIG_ENV))
    config = tmp_path / "config"
    config.mkdir()
    (config / "greetings.yaml").write_text(config_map("hi"))
    sources = SourceSet([str(web), str(config)], node=NODE)
    poll_all(sources)
    os.remove(config / "greetings.yaml")
    errors = sources.update({str(config): sources.poll(str(config))}).errors
    # Not a problem of a file: the container cannot be created (CreateContainerConfigError;
    # the planner keeps an instance that runs, as the kubelet never touches its env).
    assert errors == {}
    assert [c.config_error for c in sources.desired[0].containers] == [
        "ConfigMap default/greetings not found (not optional)"
    ]


def test_a_pod_defined_in_two_sources_is_refused_in_the_source_that_changed(
    tmp_path: Path,
) -> None:
    first = tmp_path / "first"
    first.mkdir()
    second = tmp_path / "second"
    second.mkdir()
    (second / "web.yaml").write_text(pod_yaml("web"))
    sources = SourceSet([str(first), str(second)], node=NODE)
    poll_all(sources)
    # The earlier source now defines web too: it is refused there, the running one stays.
    (first / "web.yaml").write_text(pod_yaml("web", image="busybox:2"))
    errors = poll_all(sources)
    assert list(errors) == [str(first)]
    assert "duplicate pod default/web" in errors[str(first)]
    assert [(p.name, p.containers[0].image) for p in sources.desired] == [("web", "busybox:1")]


def test_an_error_in_one_source_leaves_the_others_alone(tmp_path: Path) -> None:
    web = tmp_path / "web.yaml"
    web.write_text(pod_yaml("web"))
    db = tmp_path / "db.yaml"
    db.write_text(pod_yaml("db"))
    sources = SourceSet([str(web), str(db)], node=NODE)
    poll_all(sources)
    web.write_text("kind: [")
    db.write_text(pod_yaml("db", image="busybox:2"))
    errors = poll_all(sources)
    assert list(errors) == [str(web)]
    assert [(p.name, p.containers[0].image) for p in sources.desired] == [
        ("web", "busybox:1"),
        ("db", "busybox:2"),
    ]


def test_standard_input_cannot_be_polled() -> None:
    with pytest.raises(ValueError, match="standard input"):
        SourceSet(["-"], node=NODE)


def test_kinds_not_ready(tmp_path: Path) -> None:
    sources = SourceSet([str(tmp_path), "http://127.0.0.1:9/pods"], node=NODE)
    assert sources.kinds_not_ready() == frozenset({"file", "http"})
    poll_all_files = {str(tmp_path): sources.poll(str(tmp_path))}
    sources.update(poll_all_files)
    assert sources.kinds_not_ready() == frozenset({"http"})


class _Server:
    """A loopback HTTP server whose answer a test sets: a body, an error, or a hang."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.mode = "ok"
        self.body = b""
        self.release = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if server.mode == "hang":
                    server.release.wait(10)
                    return
                if server.mode == "error":
                    self.send_error(500, "broken")
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(server.body)))
                self.end_headers()
                self.wfile.write(server.body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/pods"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.real_clock
def test_an_http_source_that_fails_or_hangs_keeps_its_pods() -> None:
    server = _Server()
    try:
        server.body = pod_yaml("web").encode()
        sources = SourceSet([server.url], node=NODE, http_timeout=0.5)
        assert poll_all(sources) == {}
        assert names(sources) == ["web"]
        # The same body again: nothing changed, nothing parsed.
        assert not sources.poll(server.url).changed
        server.mode = "error"
        errors = poll_all(sources)
        assert "HTTP status 500" in errors[server.url]
        assert names(sources) == ["web"]
        server.mode = "hang"
        errors = poll_all(sources)
        assert "timed out" in errors[server.url]
        assert names(sources) == ["web"]
        server.release.set()
        server.mode = "ok"
        server.body = pod_yaml("web", image="busybox:2").encode()
        assert poll_all(sources) == {}
        assert [p.containers[0].image for p in sources.desired] == ["busybox:2"]
    finally:
        server.close()
