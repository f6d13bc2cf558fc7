"""benchmarks.campaign_unpack: a device call's tars, as the campaign packs them, land in the folder of the
manifest that names each cell; a tar that would overwrite or escape is refused before anything is written."""

import io
import json
import tarfile

import pytest

from benchmarks.campaign import CampaignHooks
from benchmarks.campaign_unpack import main, unpack


def _manifest(root, name, ids):
    folder = root / name
    folder.mkdir()
    cells = [{"id": i, "synthetic": "tinyllama-1.1b", "protocol": "p", "seed": 0, "need_s": 1} for i in ids]
    body = {"common_args": [], "protocols": {"p": []}, "cells": cells}
    (folder / "campaign.json").write_text(json.dumps(body))
    return folder / "campaign.json"


def _packed(tmp_path, out, name, files):
    """A cell folder packed by the campaign's own hooks (FAKE GPU seam: the card is never asked)."""
    work = tmp_path / "work" / name
    work.mkdir(parents=True)
    for fname, text in files.items():
        (work / fname).write_text(text)
    CampaignHooks(out, card=lambda: (132, "9.0"))._pack(work, name)


def test_each_cell_goes_to_its_manifest_and_the_call_log_beside_the_first(tmp_path):
    first = _manifest(tmp_path, "campaign", ["a1", "a2"])
    then = _manifest(tmp_path, "batch", ["b1"])
    out = tmp_path / "out"
    _packed(tmp_path, out, "a1", {"energy.json": "{}", "log.txt": "a1"})
    _packed(tmp_path, out, "b1", {"energy.json": "{}"})
    _packed(tmp_path, out, "a2.incomplete", {"log.txt": "cut short"})
    (out / "log-call21.txt").write_text("call log")
    done = unpack(out, [first, then])
    assert sorted(name for name, _ in done) == ["a1.tar", "a2.incomplete.tar", "b1.tar", "log-call21.txt"]
    assert (tmp_path / "campaign" / "a1" / "log.txt").read_text() == "a1"
    assert (tmp_path / "batch" / "b1" / "energy.json").is_file()
    assert (tmp_path / "campaign" / "a2.incomplete" / "log.txt").read_text() == "cut short"
    assert (tmp_path / "campaign" / "log-call21.txt").read_text() == "call log"


def test_a_measured_cell_is_never_overwritten_and_nothing_is_written(tmp_path, capsys):
    first = _manifest(tmp_path, "campaign", ["a1", "a2"])
    (tmp_path / "campaign" / "a2").mkdir()
    (tmp_path / "campaign" / "a2" / "energy.json").write_text("committed")
    out = tmp_path / "out"
    _packed(tmp_path, out, "a1", {"energy.json": "{}"})
    _packed(tmp_path, out, "a2", {"energy.json": "new"})
    assert main([str(out), str(first)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert (tmp_path / "campaign" / "a2" / "energy.json").read_text() == "committed"
    assert not (tmp_path / "campaign" / "a1").exists()  # checked first, so a1 was not written either


@pytest.mark.parametrize("member, why", [("../evil.txt", "outside"), ("a1/../../evil.txt", "outside"),
                                         ("other/x.txt", "outside")])
def test_a_member_outside_the_cell_folder_is_refused(tmp_path, capsys, member, why):
    first = _manifest(tmp_path, "campaign", ["a1"])
    out = tmp_path / "out"
    out.mkdir()
    with tarfile.open(out / "a1.tar", "w") as tf:
        data = b"x"
        info = tarfile.TarInfo(member)
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    assert main([str(out), str(first)]) == 2
    assert why in capsys.readouterr().err
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "campaign" / "a1").exists()


def test_a_link_and_an_unknown_cell_are_refused(tmp_path, capsys):
    first = _manifest(tmp_path, "campaign", ["a1"])
    out = tmp_path / "out"
    out.mkdir()
    with tarfile.open(out / "a1.tar", "w") as tf:
        info = tarfile.TarInfo("a1/link")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(info)
    assert main([str(out), str(first)]) == 2
    assert "not a plain file" in capsys.readouterr().err
    (out / "a1.tar").unlink()
    _packed(tmp_path, out, "zz", {"energy.json": "{}"})
    assert main([str(out), str(first)]) == 2
    assert "no manifest names a cell 'zz'" in capsys.readouterr().err
