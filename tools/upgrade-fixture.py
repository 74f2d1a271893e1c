"""Record the containers an earlier podsync makes for a pod file, as the engine then
lists them: the upgrade fixtures of tests/data/upgrade/ (issue 27).

    git archive v0.1.0 | tar -x -C /tmp/podsync-0.1.0
    cd /tmp/podsync-0.1.0 && python /path/to/tools/upgrade-fixture.py \
        /path/to/tests/data/upgrade/web-0.1.0.yaml > web-0.1.0-engine.json

Run from the root of the earlier version's tree: it imports that version's podsync and
its planner-test engine model (tests/engine_model.py). The pod is planned and applied
until it creates and stops nothing more, every init container exiting 0 once it runs
(the files of its content volumes are not written: that version's engine model has no
volume files); the output is each container's name, image, labels, state and exit code.
"""

import json
import sys

from podsync import load_pods
from podsync._plan import plan
from tests.engine_model import EngineModel

NOW = 1_000_000.0

pods = load_pods([sys.argv[1]])
model = EngineModel(image_tags={"busybox:latest", "registry.k8s.io/pause:3.10"})
done = set()
for step in range(10):
    p = plan(pods, model.observed, images=model.images, now=NOW + step, volumes=model.observed_volumes)
    for pod in p.pods:
        for action in pod.actions:
            if type(action).__name__ in ("Create", "Kill", "Remove", "CreateVolume", "Wait"):
                model._apply(action, NOW + step)
    for c in model.observed:
        init = "io.podsync.container.init-index" in c.labels
        sidecar = c.labels.get("io.podsync.container.restart-policy") == "Always"
        if init and not sidecar and c.running and c.id not in done:
            model.exit(c.id, 0, NOW + step)
            done.add(c.id)
    if not any(type(a).__name__ in ("Create", "Kill") for pod in p.pods for a in pod.actions):
        break
else:
    raise SystemExit("the pod did not become steady")
containers = [
    {
        "name": c.name,
        "image": c.image,
        "labels": dict(sorted(c.labels.items())),
        "running": c.running,
        "exit_code": c.exit_code,
    }
    for c in sorted(model.observed, key=lambda c: c.name)
]
json.dump({"recorded_by": "podsync 0.1.0", "containers": containers}, sys.stdout, indent=1)
print()
