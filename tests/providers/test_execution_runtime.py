"""A local model on an accelerator, wired through the real runtime (local_runtime.OnnxModel)
with a tiny real ONNX graph: onnxruntime here offers only the CPU, so the accelerator is a
fake session around a CPU one that can refuse to build, be timed faster, or fail mid-run.
The vectors must always be the CPU's, and every failure must end on the CPU silently.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.providers import execution, local_runtime
from app.providers.execution import CPU, CUDA, Placement
from app.providers.interfaces import ProviderError
from tests.tiny_models import write_embedding_model

pytestmark = pytest.mark.skipif(
    bool(local_runtime.missing_runtime()),
    reason="the optional `local` extra (onnxruntime, tokenizers) is not installed",
)

TEXTS = ["Tomatoes need full sun and water in summer.", "Prune roses in late winter.", "sun"]


class FakeAccelerator:
    """What an accelerator's session would be: the CPU's answers, maybe a failure."""

    def __init__(self, inner: Any, accel: Accel) -> None:
        self.inner = inner
        self.accel = accel

    def get_inputs(self) -> Any:
        return self.inner.get_inputs()

    def get_outputs(self) -> Any:
        return self.inner.get_outputs()

    def run(self, names: Sequence[str], feeds: dict[str, Any]) -> Any:
        self.accel.runs += 1
        if self.accel.fail_after is not None and self.accel.runs > self.accel.fail_after:
            raise RuntimeError("device removed")
        return self.inner.run(names, feeds)


class Accel:
    """The fake accelerator's behaviour and what happened to it."""

    def __init__(self) -> None:
        self.builds = 0
        self.build_fails = False
        self.fail_after: int | None = None
        self.runs = 0
        self.timed: list[str] = []


@dataclass
class Tiny:
    folder: Path
    dims: int
    cpu_vectors: Any  # its vectors of TEXTS on a plain CPU session, before any fake


@pytest.fixture
def tiny(tmp_path: Path) -> Tiny:
    folder = tmp_path / "tiny"
    manifest = write_embedding_model(folder)
    assert manifest.dimensions is not None
    plain = local_runtime.BiEncoder(
        folder / "model.onnx",
        folder / "tokenizer.json",
        max_tokens=128,
        dimensions=manifest.dimensions,
    )
    return Tiny(folder, manifest.dimensions, plain.embed(TEXTS))


@pytest.fixture
def accel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tiny: Tiny) -> Iterator[Accel]:
    state = Accel()
    real_open = local_runtime.open_session
    real_probe = execution.probe_seconds

    def open_session(model_file: Path, threads: int | None = None, providers: Any = (CPU,)) -> Any:
        session = real_open(model_file, threads, (CPU,))
        if next(iter(providers)) != CUDA:
            return session
        state.builds += 1
        if state.build_fails:
            raise ProviderError("model_not_available", "CUDA: no device")
        return FakeAccelerator(session, state)

    def probe_seconds(session: Any, probe: Any, runs: int = 3, clock: Any = None) -> float:
        real_probe(session, probe, runs=1)  # the probe really runs on the session
        fake = isinstance(session, FakeAccelerator)
        state.timed.append(CUDA if fake else CPU)
        return 0.1 if fake else 1.0  # the accelerator is 10x faster

    monkeypatch.setattr(local_runtime, "open_session", open_session)
    monkeypatch.setattr(local_runtime, "available_providers", lambda: [CUDA, CPU])
    monkeypatch.setattr(execution, "probe_seconds", probe_seconds)
    execution.remember_in(tmp_path / "home" / execution.PLACEMENT_FILE)
    yield state
    execution.remember_in(None)
    execution._placements.clear()


def load(tiny: Tiny) -> local_runtime.BiEncoder:
    return local_runtime.BiEncoder(
        tiny.folder / "model.onnx",
        tiny.folder / "tokenizer.json",
        max_tokens=128,
        dimensions=tiny.dims,
        name="local:tiny",
    )


def remembered(tmp_path: Path) -> Placement | None:
    memory = execution.PlacementMemory(tmp_path / "home" / execution.PLACEMENT_FILE)
    return memory.recall_any("local:tiny")


def test_a_faster_accelerator_runs_the_model_and_is_remembered(
    accel: Accel, tiny: Tiny, tmp_path: Path
) -> None:
    model = load(tiny)
    assert model.placement.provider == CUDA
    assert sorted(accel.timed) == [CPU, CUDA]
    np.testing.assert_allclose(model.embed(TEXTS), tiny.cpu_vectors, atol=1e-6)
    assert isinstance(model.session, FakeAccelerator)
    assert remembered(tmp_path) == model.placement
    assert execution.describe_expected("local:tiny", [CUDA, CPU], 2) == "CUDA (10.0x the CPU)"
    # The next start uses what was measured, without measuring again.
    accel.timed.clear()
    again = load(tiny)
    assert again.placement.provider == CUDA and accel.timed == []


def test_a_remembered_cpu_choice_skips_the_accelerator(
    accel: Accel, tiny: Tiny, tmp_path: Path
) -> None:
    model = load(tiny)
    memory = execution.memory()
    assert memory is not None
    key = local_runtime.placement_key(model.model_file, [CUDA, CPU])
    memory.remember("local:tiny", key, Placement(CPU, 2, tried=CUDA, speedup=0.5))
    accel.builds = 0
    accel.timed.clear()
    again = load(tiny)
    assert again.placement.provider == CPU and again.placement.speedup == 0.5
    assert accel.builds == 0 and accel.timed == []


def test_an_accelerator_that_cannot_build_leaves_the_cpu_silently(
    accel: Accel, tiny: Tiny, tmp_path: Path
) -> None:
    accel.build_fails = True
    model = load(tiny)
    assert model.placement.provider == CPU
    assert model.placement.failed is not None and "no device" in model.placement.failed
    np.testing.assert_allclose(model.embed(TEXTS), tiny.cpu_vectors, atol=1e-6)
    recalled = remembered(tmp_path)
    assert recalled is not None and recalled.provider == CPU


def test_an_accelerator_failing_mid_run_hands_over_to_the_cpu(
    accel: Accel, tiny: Tiny, tmp_path: Path
) -> None:
    model = load(tiny)
    assert model.placement.provider == CUDA
    accel.fail_after = accel.runs  # every pass from now on fails on the device
    vectors = model.embed(TEXTS)  # no error reaches the caller
    np.testing.assert_allclose(vectors, tiny.cpu_vectors, atol=1e-6)
    assert model.placement.provider == CPU
    assert model.placement.tried == CUDA and model.placement.failed is not None
    assert not isinstance(model.session, FakeAccelerator)
    recalled = remembered(tmp_path)
    assert recalled is not None and recalled.provider == CPU  # the next start stays there
    assert execution.loaded_placement("local:tiny") == model.placement


def test_without_an_accelerator_nothing_is_measured_or_written(
    monkeypatch: pytest.MonkeyPatch, tiny: Tiny, tmp_path: Path
) -> None:
    monkeypatch.setattr(local_runtime, "available_providers", lambda: [CPU])
    execution.remember_in(tmp_path / "home" / execution.PLACEMENT_FILE)
    try:
        model = load(tiny)
        assert model.placement == Placement(CPU, local_runtime.physical_cores())
        assert not (tmp_path / "home" / execution.PLACEMENT_FILE).exists()
    finally:
        execution.remember_in(None)
        execution._placements.clear()
