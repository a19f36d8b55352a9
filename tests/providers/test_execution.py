"""Choosing where a local model runs: an accelerator onnxruntime offers is used only when it
builds, runs and is measured faster than the CPU; anything else means the CPU, silently.

No test machine has a GPU, so the accelerators here are fakes: a fake clock times the
probes, and a fake session stands in for an accelerator's. Whether CUDA, DirectML and
CoreML really behave like this is untested on real hardware (docs/benchmarks.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.providers import execution
from app.providers.execution import (
    COREML,
    CPU,
    CUDA,
    DIRECTML,
    Placement,
    PlacementMemory,
    accelerators,
    decide,
    describe_expected,
    expected_placement,
    providers_for,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeSession:
    """A session whose every pass takes `seconds` on the fake clock, or raises."""

    def __init__(self, clock: FakeClock, seconds: float, fails: bool = False) -> None:
        self.clock = clock
        self.seconds = seconds
        self.fails = fails
        self.passes = 0

    def run(self) -> None:
        if self.fails:
            raise RuntimeError("device lost")
        self.passes += 1
        self.clock.now += self.seconds


def probe(session: Any) -> None:
    session.run()


@pytest.fixture(autouse=True)
def no_memory() -> Any:
    execution.remember_in(None)
    execution._placements.clear()
    yield
    execution.remember_in(None)
    execution._placements.clear()


def test_accelerators_are_listed_best_first_and_only_when_present() -> None:
    assert accelerators(["AzureExecutionProvider", CPU]) == []
    assert accelerators([CPU, COREML]) == [COREML]
    assert accelerators([COREML, DIRECTML, CPU, CUDA]) == [CUDA, DIRECTML, COREML]


def test_the_cpu_is_always_last_in_a_session_s_providers() -> None:
    assert providers_for(Placement(CPU, 2)) == [CPU]
    assert providers_for(Placement(DIRECTML, 2)) == [DIRECTML, CPU]


def test_a_measurably_faster_accelerator_is_kept_with_its_session() -> None:
    clock = FakeClock()
    cpu, gpu = FakeSession(clock, 1.0), FakeSession(clock, 0.25)
    built: list[list[str]] = []

    def build(providers: list[str]) -> FakeSession:
        built.append(providers)
        return gpu

    placement, session = decide(CUDA, 2, cpu, build, probe, clock=clock)
    assert session is gpu
    assert placement == Placement(CUDA, 2, tried=CUDA, speedup=4.0)
    assert built == [[CUDA, CPU]]
    # One warm-up and the timed runs on each: the accelerator's graph compile is not timed.
    assert gpu.passes == cpu.passes == execution.PROBE_RUNS + 1
    assert placement.describe() == "CUDA (4.0x the CPU)"


@pytest.mark.parametrize("gpu_seconds", [1.5, 1.0, 0.9])
def test_a_slower_or_barely_faster_accelerator_leaves_the_cpu(gpu_seconds: float) -> None:
    clock = FakeClock()
    cpu, gpu = FakeSession(clock, 1.0), FakeSession(clock, gpu_seconds)
    placement, session = decide(COREML, 2, cpu, lambda _p: gpu, probe, clock=clock)
    assert session is None
    assert placement.provider == CPU
    assert placement.tried == COREML
    assert placement.speedup == pytest.approx(1.0 / gpu_seconds, abs=0.01)
    assert placement.describe().startswith("CPU (2 threads; CoreML ")


def test_an_accelerator_that_cannot_build_falls_back_to_the_cpu() -> None:
    clock = FakeClock()
    cpu = FakeSession(clock, 1.0)

    def build(_providers: list[str]) -> FakeSession:
        raise RuntimeError("no DirectML device")

    placement, session = decide(DIRECTML, 4, cpu, build, probe, clock=clock)
    assert session is None
    assert placement.provider == CPU
    assert placement.failed is not None and "no DirectML device" in placement.failed
    assert placement.describe() == "CPU (4 threads; DirectML failed)"
    assert cpu.passes == 0  # nothing to compare against: the CPU is not even timed


def test_an_accelerator_that_fails_its_probe_falls_back_to_the_cpu() -> None:
    clock = FakeClock()
    cpu, gpu = FakeSession(clock, 1.0), FakeSession(clock, 0.1, fails=True)
    placement, session = decide(CUDA, 1, cpu, lambda _p: gpu, probe, clock=clock)
    assert session is None
    assert placement.provider == CPU and placement.failed is not None
    assert placement.describe() == "CPU (1 thread; CUDA failed)"


def test_a_remembered_placement_is_recalled_only_under_the_same_key(tmp_path: Path) -> None:
    memory = PlacementMemory(tmp_path / "choices.json")
    kept = Placement(COREML, 8, tried=COREML, speedup=2.5)
    memory.remember("local:m", "ort-1.20|cpu,coreml|100|5", kept)
    memory.remember("local:other", "k", Placement(CPU, 8))
    assert memory.recall("local:m", "ort-1.20|cpu,coreml|100|5") == kept
    assert memory.recall("local:m", "ort-1.21|cpu,coreml|100|5") is None  # re-measured
    assert memory.recall("local:missing", "k") is None
    assert memory.recall_any("local:m") == kept
    assert PlacementMemory(tmp_path / "choices.json").recall("local:other", "k") == Placement(
        CPU, 8
    )


@pytest.mark.parametrize(
    "content",
    ["not json", "[1, 2]", '{"local:m": 3}', '{"local:m": {"key": "k", "placement": {"x": 1}}}'],
)
def test_an_unreadable_memory_is_ignored_and_rewritten(tmp_path: Path, content: str) -> None:
    path = tmp_path / "choices.json"
    path.write_text(content, encoding="utf-8")
    memory = PlacementMemory(path)
    assert memory.recall("local:m", "k") is None
    memory.remember("local:m", "k", Placement(CPU, 2))
    assert memory.recall("local:m", "k") == Placement(CPU, 2)
    assert json.loads(path.read_text(encoding="utf-8"))["local:m"]["key"] == "k"


def test_a_memory_that_cannot_be_written_costs_only_a_measurement(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    memory = PlacementMemory(blocker / "choices.json")  # its folder is a file
    memory.remember("local:m", "k", Placement(CPU, 2))
    assert memory.recall("local:m", "k") is None


def test_the_listing_says_the_cpu_where_no_accelerator_is_present(tmp_path: Path) -> None:
    execution.remember_in(tmp_path / "choices.json")
    assert describe_expected("local:m", [CPU], 2) == "CPU (2 threads)"
    assert describe_expected("local:m", ["AzureExecutionProvider", CPU], 1) == "CPU (1 thread)"


def test_the_listing_says_an_accelerator_is_measured_at_first_use(tmp_path: Path) -> None:
    execution.remember_in(tmp_path / "choices.json")
    assert describe_expected("local:m", [CUDA, CPU], 2) == (
        "CPU (2 threads); CUDA is measured at first use"
    )


def test_the_listing_prefers_what_is_loaded_then_what_was_measured(tmp_path: Path) -> None:
    execution.remember_in(tmp_path / "choices.json")
    memory = execution.memory()
    assert memory is not None
    memory.remember("local:m", "k", Placement(CPU, 2, tried=COREML, speedup=0.4))
    assert expected_placement("local:m", [COREML, CPU], 2).placement.speedup == 0.4
    assert describe_expected("local:m", [COREML, CPU], 2) == "CPU (2 threads; CoreML 0.4x)"
    execution.record_loaded("local:m", Placement(COREML, 2, tried=COREML, speedup=1.7))
    assert describe_expected("local:m", [COREML, CPU], 2) == "CoreML (1.7x the CPU)"
