"""Shared fixtures for the workload tests: one cache of the tiny synthetic model, arms loaded once."""

import json
import shutil

import pytest

from measure.gpu.workload import Workload


@pytest.fixture(scope="session")
def synthetic_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("synthetic-cache")


@pytest.fixture(scope="session")
def eager_workload(synthetic_cache):
    return Workload("synthetic:tiny-llama", backend="eager", device="cpu", cache_dir=synthetic_cache)


@pytest.fixture(scope="session")
def eager_arms(eager_workload):
    return {p: eager_workload.load(p) for p in ("FP16", "NF4", "INT8")}


@pytest.fixture(scope="session")
def static_arms(synthetic_cache):
    wl = Workload("synthetic:tiny-llama", backend="static", device="cpu", cache_dir=synthetic_cache)
    return {p: wl.load(p) for p in ("FP16", "NF4", "INT8")}


@pytest.fixture(scope="session")
def tiny_model_dir(eager_workload):
    """The materialised tiny-llama directory (random-init FP16 safetensors + config)."""
    from pathlib import Path

    return Path(eager_workload.source())


@pytest.fixture(scope="session")
def copy_model():
    return _copy_model


def _copy_model(src, dst, **config_overrides):
    """Copy a saved model directory, editing config.json and generation_config.json fields."""
    shutil.copytree(src, dst)
    for name in ("config.json", "generation_config.json"):
        path = dst / name
        if path.exists():
            data = json.loads(path.read_text())
            data.update({k: v for k, v in config_overrides.items() if k in data or name == "config.json"})
            path.write_text(json.dumps(data))
    return dst
