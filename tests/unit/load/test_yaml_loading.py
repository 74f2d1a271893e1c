"""Reading YAML through libyaml (issue 16): the fast path and its guards.

libyaml parses in C and ``_Builder`` builds the data from its events, with podsync's guards;
whatever it does not vouch for is read again by the guarded composer, which words the
problem. So the fast path must never accept a stream that the guarded loader refuses,
and must give the same data for every stream it accepts.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from podsync import load_pods
from podsync.load.schema import _yaml as loader
from tests.support import paths
from tests.unit.load.test_bad_inputs import CASES, CORPUS

EXAMPLES = paths.EXAMPLES

# Streams that exercise every refusal and every shape the fast path hands back.
TRICKY = {
    "anchors and aliases": "a: &x [1, 2]\nb: *x\nc: *x\n",
    "merge key": "base: &b {x: 1}\nthis:\n  <<: *b\n  y: 2\n",
    "value key": "=: 1\n",
    "duplicate key": "a: 1\nb: 2\na: 3\n",
    "duplicate key through quoting": "a: 1\n'a': 2\n",
    "same text, other type": "1: a\n'1': b\n",
    "set": "!!set {a, b}\n",
    "omap": "!!omap [a: 1, b: 2]\n",
    "unknown tag": "!thing {a: 1}\n",
    "binary": "!!binary aGVsbG8=\n",
    "bad int": "!!int abc\n",
    "list key": "? [a, b]\n: c\n",
    "mapping key": "? {a: 1}\n: c\n",
    "recursive alias": "&a [*a]\n",
    "64 deep": "[" * 64 + "]" * 64,
    "65 deep": "[" * 65 + "]" * 65,
    "deep mapping": "".join(f"{'  ' * i}k{i}:\n" for i in range(70)) + "  " * 70 + "x\n",
    "2000 deep": "[" * 2000 + "]" * 2000,
    "alias bomb": "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(6)
    ),
    "several documents": "a: 1\n---\n---\nb: [2, 3]\n...\n",
    "empty": "",
    "dates stay strings": "when: 2014-11-01\n",
    "floats and nulls": "a: 1.5\nb: ~\nc: .inf\nd: 0x1f\ne: yes\n",
    "not YAML": "a: [1, 2\n",
    "a map tag on a key": "!!map <<: \n",
    "a seq tag on a key": "? !!seq x\n: 1\n",
    "the same number twice, and quoted": "a: 80\nb: 80\nc: '80'\nd: 0x50\ne: [80, 8e1]\n",
    "the same number as a key twice": "80: a\n80: b\n",
}


def _guarded(text: str) -> tuple[str, object]:
    """What the guarded composer (the pre-libyaml path) makes of ``text``."""
    budget = loader._NODE_BUDGET_BASE + len(text)
    reader = loader._LOADER(text, budget)
    try:
        documents = []
        while reader.check_node():
            node = reader.get_node()
            documents.append(None if node is None else reader.construct_document(node))
        return "ok", documents
    except yaml.YAMLError as exc:
        return "refused", loader._yaml_message(exc)
    finally:
        reader.dispose()


def _texts() -> dict[str, str]:
    texts = dict(TRICKY)
    for name in CASES:
        data = (CORPUS / name).read_bytes()
        try:
            texts[f"corpus {name}"] = loader._decode(data)
        except loader._Invalid:
            continue  # refused before any YAML is read
    for path in sorted(EXAMPLES.iterdir()):
        texts[f"example {path.name}"] = path.read_text(encoding="utf-8")
    return texts


TEXTS = _texts()


@pytest.mark.skipif(loader._C_PARSER is None, reason="PyYAML has no libyaml")
@pytest.mark.parametrize("name", sorted(TEXTS))
def test_fast_path_agrees_with_the_guarded_loader(name):
    """The fast path refuses (hands back) every stream the guarded loader refuses, and
    gives the same documents for every stream it accepts."""
    text = TEXTS[name]
    outcome, result = _guarded(text)

    fast = loader._fast_documents(text, loader._NODE_BUDGET_BASE + len(text))

    assert fast is None or ("ok", result) == (outcome, fast)


@pytest.mark.skipif(loader._C_PARSER is None, reason="PyYAML has no libyaml")
def test_pod_files_are_read_by_libyaml_alone(monkeypatch):
    """Honest pod files never need the guarded composer: libyaml reads them."""

    class Refused(loader._PyLoader):
        def __init__(self, text: str, budget: int) -> None:
            raise AssertionError("the guarded composer was used")

    monkeypatch.setattr(loader, "_LOADER", Refused)

    pods = load_pods(sorted(EXAMPLES.iterdir()), secret_key=b"k" * 32)

    assert 3 <= len(pods)


_WITHOUT_LIBYAML = """
import logging, sys
sys.modules["yaml._yaml"] = None  # as if PyYAML had been built without libyaml
logging.basicConfig(level=logging.DEBUG, format="%(name)s %(levelname)s %(message)s")
from podsync import parse_pods
pods = parse_pods("apiVersion: v1\\nkind: Pod\\nmetadata: {name: a}\\n"
                  "spec: {containers: [{name: c, image: busybox}]}\\n")
print(len(pods))
"""


def test_without_libyaml_the_pure_python_loader_reads_and_says_so():
    """Without PyYAML's C extension, pods are still read (pure Python), and a debug log
    line says which loader read them."""
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_LIBYAML],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(paths.REPO)},
    )

    assert "1" == result.stdout.strip()
    assert (
        "podsync DEBUG reading YAML with the pure-Python loader: PyYAML's libyaml extension "
        "is not available"
    ) in result.stderr


@pytest.mark.skipif(loader._C_PARSER is None, reason="PyYAML has no libyaml")
def test_no_node_graph_is_built(monkeypatch):
    """The data is built from the parser's events: no collection node is made, so a big
    document leaves nothing behind for the garbage collector to walk."""
    from yaml.nodes import CollectionNode

    made: list[str] = []
    monkeypatch.setattr(
        CollectionNode, "__init__", lambda self, *a, **k: made.append(type(self).__name__)
    )

    pods = load_pods(sorted(EXAMPLES.iterdir()), secret_key=b"k" * 32)

    assert ([], True) == (made, len(pods) >= 3)


@pytest.mark.skipif(loader._C_PARSER is None, reason="PyYAML has no libyaml")
def test_each_scalar_text_is_resolved_once_per_stream(monkeypatch):
    """Pod files repeat the same keys and values thousands of times; the resolver (a
    regular expression per try) runs once per distinct text and style of a stream, and
    the same text quoted or plain still resolves apart."""
    resolved: list[str] = []
    resolve = yaml.resolver.BaseResolver.resolve

    def counting(self, kind, value, implicit):
        resolved.append(value)
        return resolve(self, kind, value, implicit)

    monkeypatch.setattr(yaml.resolver.BaseResolver, "resolve", counting)
    text = "- {name: a, port: 80}\n- {name: b, port: 80}\n- {name: a, port: '80'}\n"

    fast = loader._fast_documents(text, loader._NODE_BUDGET_BASE + len(text))

    assert fast == [
        [{"name": "a", "port": 80}, {"name": "b", "port": 80}, {"name": "a", "port": "80"}]
    ]
    assert sorted(resolved) == ["80", "80", "a", "b", "name", "port"]
