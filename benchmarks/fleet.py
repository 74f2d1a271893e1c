"""The pod files of the end-to-end benchmarks: ``make_pod``'s pods as people write them.

Pod ``i`` is the pod ``benchmarks.bench_plan.make_pod(i)`` builds, spelled as a
Kubernetes ``v1`` Pod (quantities, named ports, a liveness probe, a preStop hook on some);
``write_fleet`` writes ``n`` of them into a directory as ``List`` files of
``per_file`` pods each, or into one file. Loading them gives the pods ``make_pod``
gives, but for the source (``file``), which ``check_fleet`` accounts for.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import attrs

from benchmarks.bench_plan import NAMESPACES, make_pod
from podsync import Pod

_MI = 1024 * 1024


def pod_yaml(i: int) -> str:
    """Pod ``i`` as one item of a ``List`` (indented by two spaces, ``- `` first)."""
    host_port = f"\n              hostPort: {10_000 + i}" if i % 3 == 0 else ""
    web_mounts = (
        "\n          volumeMounts:\n            - name: cache"
        "\n              mountPath: /var/cache/nginx"
        if i % 2 == 0
        else ""
    )
    config_volume = (
        f"\n      - name: config\n        hostPath:\n          path: /srv/config/app-{i:05d}"
        if i % 4 == 1
        else ""
    )
    shipper_mounts = (
        "\n          volumeMounts:\n            - name: config"
        "\n              mountPath: /etc/shipper"
        "\n              readOnly: true"
        if i % 4 == 1
        else ""
    )
    pre_stop = (
        "\n          lifecycle:\n            preStop:\n              exec:"
        '\n                command: ["/app/drain", "--timeout", "5"]'
        if i % 5 == 0
        else ""
    )
    termination = "\n          terminationMessagePath: /dev/termination-log" if i % 3 == 1 else ""
    restart = "OnFailure" if i % 7 == 0 else "Always"
    log_level = "debug" if i % 10 == 0 else "info"
    return f"""\
  - apiVersion: v1
    kind: Pod
    metadata:
      name: app-{i:05d}
      namespace: {NAMESPACES[i % len(NAMESPACES)]}
      labels:
        app: demo
        shard: "{i % 16}"
    spec:
      restartPolicy: {restart}
      volumes:
      - name: cache
        emptyDir: {{}}{config_volume}
      containers:
        - name: web
          image: nginx:1.27
          env:
            - name: POD_INDEX
              value: "{i}"
            - name: NGINX_WORKER_PROCESSES
              value: "{1 + i % 4}"
          ports:
            - name: http
              containerPort: 80{host_port}
          resources:
            limits:
              cpu: 250m
              memory: 128Mi{web_mounts}
        - name: log-shipper
          image: busybox:1.36
          command: ["sh", "-c"]
          args: ["tail -F /var/log/app/app-{i:05d}.log"]
          env:
            - name: SHARD
              value: "{i % 16}"
          resources:
            limits:
              cpu: 50m
              memory: 32Mi{shipper_mounts}
        - name: app
          image: registry.example:5000/team/app:2.3
          args: ["--index", "{i}", "--listen", ":8080"]
          workingDir: /app
          env:
            - name: POD_INDEX
              value: "{i}"
            - name: LOG_LEVEL
              value: {log_level}
          ports:
            - name: metrics
              containerPort: 8080
          livenessProbe:
            httpGet:
              path: /healthz
              port: metrics
            initialDelaySeconds: 15{pre_stop}{termination}
          resources:
            limits:
              cpu: 500m
              memory: 256Mi
"""


def list_yaml(indices: Sequence[int]) -> str:
    """A ``kind: List`` of the pods ``indices``."""
    return "apiVersion: v1\nkind: List\nitems:\n" + "".join(pod_yaml(i) for i in indices)


def write_fleet(directory: str, n: int, per_file: int = 1000) -> list[str]:
    """Write pods 0..n-1 into ``directory`` as List files of ``per_file`` pods; the paths."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for start in range(0, n, per_file):
        path = os.path.join(directory, f"pods-{start // per_file:03d}.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(list_yaml(range(start, min(n, start + per_file))))
        paths.append(path)
    return paths


def check_fleet(pods: Sequence[Pod]) -> None:
    """The loaded pods are ``make_pod``'s, but for the source (and the uid it derives)."""
    for i, pod in enumerate(pods):
        expected = make_pod(i)
        loaded = attrs.evolve(pod, source=expected.source, uid=expected.uid)
        assert loaded == expected, f"pod {i} differs:\n{loaded}\n{expected}"
