#!/usr/bin/env python3
"""A before-jar in a few hundred KB, for A/B runs on a machine whose carry limit holds one jar.

  make  OLD.jar NEW.jar OVERLAY.zip   the entries of OLD that NEW lacks or holds differently, and the
                                      names of NEW's entries OLD lacks (DROP.txt)
  apply OVERLAY.zip NEW.jar OLD.jar   NEW with those entries put back and the others dropped: OLD again

Issue 46's before/after (docs/PERFORMANCE.md) carried benchmarks.jar and an overlay of 36c3d39's jar
made this way (`git worktree add /tmp/base 36c3d39 && (cd /tmp/base && ./run-jmh.sh build)`).
"""
import sys
import zipfile


def make(old_path, new_path, overlay_path):
    old, new = zipfile.ZipFile(old_path), zipfile.ZipFile(new_path)
    old_names, new_names = set(old.namelist()), set(new.namelist())
    with zipfile.ZipFile(overlay_path, "w", zipfile.ZIP_DEFLATED) as z:
        for n in sorted(old_names):
            if n not in new_names or old.read(n) != new.read(n):
                z.writestr(n, old.read(n))
        z.writestr("DROP.txt", "\n".join(sorted(new_names - old_names)))


def apply(overlay_path, new_path, old_path):
    overlay, new = zipfile.ZipFile(overlay_path), zipfile.ZipFile(new_path)
    drop = set(overlay.read("DROP.txt").decode().split("\n"))
    put = {n for n in overlay.namelist() if n != "DROP.txt"}
    with zipfile.ZipFile(old_path, "w", zipfile.ZIP_DEFLATED) as z:
        for n in new.namelist():
            if n not in drop and n not in put:
                z.writestr(new.getinfo(n), new.read(n))
        for n in sorted(put):
            z.writestr(n, overlay.read(n))


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in ("make", "apply"):
        sys.exit(__doc__.strip().splitlines()[2] + "\n" + __doc__.strip().splitlines()[3])
    (make if sys.argv[1] == "make" else apply)(*sys.argv[2:])
