"""measure.gpu.capture_audit: the operations of a step that stop a CUDA graph from holding it."""

import torch

from measure.gpu.capture_audit import audit


def test_host_reads_and_data_dependent_sizes_are_named():
    t = torch.tensor([1.0, 0.0, 3.0])
    assert audit(lambda: t.nonzero(), cuda=False) == [
        "aten.nonzero: output size depends on the data (nonzero / argwhere)"
    ]
    assert audit(lambda: torch.argwhere(t), cuda=False)[0].startswith("aten.nonzero")
    for read in (lambda: bool(t.any()), lambda: t.sum().item(), lambda: int(t[0])):
        assert audit(read, cuda=False) == [
            "aten._local_scalar_dense: copies a device value to the host (Tensor.item / bool / int)"
        ]


def test_fixed_shape_device_work_is_not_flagged_and_is_unchanged():
    t = torch.arange(6.0).view(2, 3)
    out = {}

    def step():
        out["y"] = (t @ t.t()).softmax(-1).argmax(-1, keepdim=True)
        out["z"] = t.index_fill(-1, torch.tensor([1]), float("-inf"))

    assert audit(step, cuda=False) == []
    assert out["y"].tolist() == [[1], [1]] and out["z"][0, 1] == float("-inf")


def test_each_finding_is_listed_once_in_order():
    t = torch.tensor([1.0, 0.0])

    def step():
        for _ in range(3):
            t.nonzero()
            t.sum().item()

    assert [f.split(":")[0] for f in audit(step, cuda=False)] == ["aten.nonzero", "aten._local_scalar_dense"]
