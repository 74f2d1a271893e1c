"""The version of podsync installed on this machine, read from its package metadata
(what ``pip`` installed: ``podsync.__version__`` and ``podsync --version``)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["UNKNOWN_VERSION", "package_version"]

#: The version of a source tree that was never installed (no package metadata): a
#: PEP 440 local version that sorts before every release, so that a check such as
#: ``Version(podsync.__version__) >= Version("0.2")`` fails rather than passes.
UNKNOWN_VERSION = "0+unknown"


def package_version(distribution: str = "podsync") -> str:
    """The installed version of ``distribution`` (``importlib.metadata.version``), or
    ``UNKNOWN_VERSION`` when it has no metadata: a checkout run from its own directory
    without ``pip install``. Reads files: called when the version is asked for, not on
    import."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return UNKNOWN_VERSION
