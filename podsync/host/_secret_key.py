"""This host's key for the digests of Secret values (``podsync.model._secrets``).

``host_secret_key(root_dir)`` reads ``<root_dir>/secret-digest.key``, 32 random bytes
readable by its owner only (mode 0600), and makes it on first use. It is not a
secret that protects anything else: it only makes the digests that labels and saved
plans hold useless for guessing a Secret's value; removing it makes every digest new
(each container with a Secret value is replaced once).

Contract: the file is written whole or not at all (a temporary file linked into
place: a concurrent podsync reads one key or the other, never a part), never
followed through a symlink, and refused when others may read or write it, when another
user owns it, or when it is not a key.

Layering: host I/O (like ``_files``); the command line passes what it reads to the
loader as data.
"""

from __future__ import annotations

import contextlib
import os
import stat

from podsync.model._secrets import SECRET_KEY_BYTES

# Everything in __all__ gets re-exported as part of the podsync public API.
__all__ = ["host_secret_key"]

#: The key's file name under the root directory (not a pod directory: those are uids).
SECRET_KEY_FILE = "secret-digest.key"


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        # Whoever owns the key file, or may write it, chooses the key: then the digests
        # in labels and saved plans are made under a key they know (a guess of a
        # Secret's value could be tested against them), and a key they swap in replaces
        # every container with a Secret. So it must be the running user's, and only
        # theirs to write.
        if info.st_uid != os.geteuid():
            raise OSError(
                f"{path} is owned by uid {info.st_uid}, not by the user running podsync "
                f"(uid {os.geteuid()}): remove it to make anew, or chown it"
            )
        if info.st_mode & 0o077:
            raise OSError(
                f"{path} may be read by others (mode {stat.S_IMODE(info.st_mode):04o}): "
                "make it 0600"
            )
        data = os.read(fd, SECRET_KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != SECRET_KEY_BYTES:
        raise OSError(f"{path} is not a key of {SECRET_KEY_BYTES} bytes: remove it to make anew")
    return data


def host_secret_key(root_dir: str) -> bytes:
    """The key under ``root_dir``, made (and ``root_dir`` with it) when there is none.

    Raises:
        OSError: it cannot be read or made, or the file there is not a private key.
    """
    path = os.path.join(root_dir, SECRET_KEY_FILE)
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    os.makedirs(root_dir, exist_ok=True)
    fd = -1
    temporary = os.path.join(root_dir, f".{SECRET_KEY_FILE}.{os.getpid()}")
    try:
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
        os.write(fd, os.urandom(SECRET_KEY_BYTES))
        os.fsync(fd)
        os.close(fd)
        fd = -1
        # link, not rename: a key another podsync made meanwhile is kept, and read.
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    return _read(path)
