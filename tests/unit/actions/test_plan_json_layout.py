"""The saved plan's layout: indented down to each pod's list of actions, each action on
one line, so that encoding stays in the C JSON encoder at fleet scale, while a
plan saved in the older fully indented layout still reads."""

from __future__ import annotations

import json

from podsync import Container, Pod, Port, plan, plan_from_json, plan_to_json

NOW = 1_700_000_000.0

WEB = Pod(
    "web",
    (
        Container("nginx", "nginx:1.27", ports=(Port(container_port=80, host_port=8080),)),
        Container("shipper", "busybox:1.36", command=("sh", "-c", "tail -f /dev/null # é")),
    ),
    namespace="team-a",
    source="file",
)


def test_each_action_is_one_line():
    """A pod's actions are each one line (format 11: no space after ``,`` and ``:``)."""
    text = plan_to_json(plan([WEB], [], now=NOW))

    lines = text.splitlines()
    creates = [line for line in lines if line.lstrip().startswith('{"action":"create",')]
    assert 3 == len(creates)
    assert all(line.startswith('        {"action":"create",') for line in creates)
    assert "tail -f /dev/null # é" in text
    assert text.endswith("}\n")


def test_the_text_is_canonical_and_round_trips():
    """Equal plans give equal text; reading it back gives the same plan and the same text."""
    p = plan([WEB], [], now=NOW)

    text = plan_to_json(p)

    assert text == plan_to_json(plan([WEB], [], now=NOW))
    assert p == plan_from_json(text)
    assert text == plan_to_json(plan_from_json(text))


def test_a_plan_saved_fully_indented_still_reads():
    """Plans saved before this layout (json.dumps with indent=2 throughout) read the same."""
    p = plan([WEB], [], now=NOW)
    old = json.dumps(json.loads(plan_to_json(p)), sort_keys=True, indent=2, ensure_ascii=False)

    assert p == plan_from_json(old + "\n")
