"""Clean-up of what a candidate left: any tree it can build within its limits, never following a link."""

import os
import time

from .layout import SCRUB_DIRS, WORK_ROOT


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path, deadline) -> bool:
    """Remove `path` and everything under it, without recursion (a candidate can nest directories far
    deeper than Python's stack or PATH_MAX) and without following symbolic links: one directory
    descriptor at a time, by name relative to it. Returns True when `path` is gone; False when it could
    not be removed by `deadline` (the container is then replaced)."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return True
    except OSError:  # not a directory (or a link to one): the entry itself goes
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError:
            return False
        return True
    names = []  # the directories we are inside, below `path`
    try:
        while True:
            if time.monotonic() > deadline:
                return False
            sub = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        try:
                            os.unlink(entry.name, dir_fd=fd)
                            continue
                        except FileNotFoundError:
                            continue
                        except IsADirectoryError:
                            pass
                    sub = entry.name
                    break
            if sub is not None:
                child = os.open(sub, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
                names.append(sub)
                continue
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            os.rmdir(names.pop(), dir_fd=fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def scrub(deadline):
    """Remove everything candidates could have left in writable places. Returns (paths found, all gone)."""
    found = 0
    gone = True
    for top in SCRUB_DIRS:
        try:
            entries = os.listdir(top)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(top, name)
            if path == WORK_ROOT:
                continue
            found += 1
            gone = remove_tree(path, deadline) and gone
    return found, gone
