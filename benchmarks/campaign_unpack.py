"""Bringing one device call's packed cells home: each `<cell>.tar` of its OUT into the folder of the manifest
that names the cell, and its call logs beside the first manifest.

    python -m benchmarks.campaign_unpack FILES_DIR measurements/hopper-campaign/campaign.json \\
        measurements/hopper-batch/campaign.json

A tar holds one folder, `<cell>/` (a finished run) or `<cell>.incomplete/` (a cut-short one, which the
next call runs again). Nothing already in the tree is overwritten: a measured cell is kept as it was
committed, and a second copy of it is an error to look at, not a file to replace. Members outside the
cell's folder, links and devices are refused before anything is written.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tarfile
from pathlib import Path, PurePosixPath

INCOMPLETE = ".incomplete"


class UnpackError(Exception):
    """A tar that cannot be brought home as it is; nothing of it was written."""


def owners(manifests: list[Path]) -> dict[str, Path]:
    """Cell id -> the folder of the manifest that names it (the first, if two do)."""
    found: dict[str, Path] = {}
    for path in manifests:
        for cell in json.loads(path.read_text())["cells"]:
            found.setdefault(cell["id"], path.parent)
    return found


def _checked_members(tf: tarfile.TarFile, top: str, tar_name: str) -> list[tarfile.TarInfo]:
    members = tf.getmembers()
    for m in members:
        parts = PurePosixPath(m.name).parts
        if not parts or parts[0] != top or ".." in parts or PurePosixPath(m.name).is_absolute():
            raise UnpackError(f"{tar_name}: member {m.name!r} lies outside {top}/")
        if not (m.isfile() or m.isdir()):
            raise UnpackError(f"{tar_name}: member {m.name!r} is not a plain file or folder")
    return members


def _target(tar: Path, owner: dict[str, Path]) -> tuple[str, Path]:
    """(top folder name, where it goes) for one cell's tar, after every check; writes nothing."""
    top = tar.name.removesuffix(".tar")
    cell = top.removesuffix(INCOMPLETE)
    folder = owner.get(cell)
    if folder is None:
        raise UnpackError(f"{tar.name}: no manifest names a cell {cell!r}")
    if (folder / top).exists():
        raise UnpackError(f"{tar.name}: {folder / top} exists already; nothing is overwritten")
    with tarfile.open(tar) as tf:
        _checked_members(tf, top, tar.name)
    return top, folder


def unpack(files_dir: Path, manifests: list[Path]) -> list[tuple[str, Path]]:
    """Every tar of FILES_DIR, in name order, then its `log-call*.txt` beside the first manifest. All of
    them are checked before any is written, so a refused call leaves the tree as it was."""
    owner = owners(manifests)
    tars = [(tar, *_target(tar, owner)) for tar in sorted(files_dir.glob("*.tar"))]
    logs = [(log, manifests[0].parent / log.name) for log in sorted(files_dir.glob("log-call*.txt"))]
    for log, dest in logs:
        if dest.exists():
            raise UnpackError(f"{log.name}: {dest} exists already; nothing is overwritten")
    done = []
    for tar, top, folder in tars:
        with tarfile.open(tar) as tf:
            members = _checked_members(tf, top, tar.name)
            extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tf.extractall(folder, members=members, **extra)
        done.append((tar.name, folder / top))
    for log, dest in logs:
        shutil.copyfile(log, dest)
        done.append((log.name, dest))
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files_dir", type=Path, help="the folder a device call's OUT came back to")
    ap.add_argument("manifest", type=Path, nargs="+", help="the manifests the call ran, in the same order")
    a = ap.parse_args(argv)
    try:
        for name, dest in unpack(a.files_dir, a.manifest):
            print(f"{name} -> {dest}")
    except UnpackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
