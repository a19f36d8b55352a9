"""Where a local ONNX model runs: the CPU, or an accelerator onnxruntime offers here.

onnxruntime builds for some machines carry a faster execution provider: CUDA (an NVIDIA GPU
with the `onnxruntime-gpu` build), DirectML (Windows, `onnxruntime-directml`), CoreML (the
macOS wheels). Whether one is faster for a given model is not known in advance: a small int8
model can run slower on a GPU than on the CPU (copies, kernels the provider lacks fall back
to the CPU piece by piece), so an accelerator is used only when it measurably beats the CPU
on the model itself:

- `accelerators(available)` lists the ones present, in preference order;
- `decide(...)` times a probe on the CPU and on the accelerator (a session that fails to
  build or to run counts as "not faster") and keeps the accelerator only when it is
  MIN_SPEEDUP times faster;
- `PlacementMemory` keeps that choice per model in a small JSON file in the data folder, so
  the measurement runs once per model, onnxruntime version and set of providers.

Nothing here imports onnxruntime: the caller passes what it needs (the available providers,
a session builder, a probe), so the choice is tested with fakes (no GPU on the test
machines; see README "Performance" for what is untested on real hardware).
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"
DIRECTML = "DmlExecutionProvider"
COREML = "CoreMLExecutionProvider"
# A machine with several prefers the dedicated GPU runtime, then the OS's GPU layer.
ACCELERATORS = (CUDA, DIRECTML, COREML)
LABELS = {CPU: "CPU", CUDA: "CUDA", DIRECTML: "DirectML", COREML: "CoreML"}
# An accelerator must beat the CPU by this much to be kept: a tie is not worth a second
# device's memory, its start-up and its rarer failure modes.
MIN_SPEEDUP = 1.2
PROBE_RUNS = 3
PLACEMENT_FILE = "execution-providers.json"


def accelerators(available: Sequence[str]) -> list[str]:
    """The accelerators present among onnxruntime's available providers, best first."""
    return [name for name in ACCELERATORS if name in available]


def label(provider: str) -> str:
    return LABELS.get(provider, provider.removesuffix("ExecutionProvider"))


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a model runs and why: the provider, the CPU threads, and what was measured."""

    provider: str = CPU
    threads: int = 1
    tried: str | None = None  # the accelerator measured against the CPU, if any
    speedup: float | None = None  # CPU seconds / accelerator seconds on the probe
    failed: str | None = None  # why the accelerator could not be used, if it failed

    @property
    def on_cpu(self) -> bool:
        return self.provider == CPU

    @property
    def device(self) -> str:
        """ "CPU", "CUDA", "DirectML", "CoreML"."""
        return label(self.provider)

    @property
    def tried_device(self) -> str | None:
        return label(self.tried) if self.tried is not None else None

    def describe(self) -> str:
        """ "CPU (2 threads)", "CUDA (1.9x the CPU)", "CPU (2 threads; CoreML 0.6x)"."""
        cpu = f"CPU ({self.threads} thread{'s' if self.threads != 1 else ''})"
        if self.provider != CPU:
            measured = f" ({self.speedup:.1f}x the CPU)" if self.speedup else ""
            return f"{label(self.provider)}{measured}"
        if self.tried is None:
            return cpu
        if self.failed is not None:
            return f"{cpu[:-1]}; {label(self.tried)} failed)"
        if self.speedup is not None:
            return f"{cpu[:-1]}; {label(self.tried)} {self.speedup:.1f}x)"
        return cpu


def providers_for(placement: Placement) -> list[str]:
    """The provider list a session is built with: the CPU always last, so nodes an
    accelerator cannot run still run."""
    if placement.provider == CPU:
        return [CPU]
    return [placement.provider, CPU]


Session = Any
Builder = Callable[[list[str]], Session]  # providers -> a session; raises when it cannot
Probe = Callable[[Session], None]  # one timed forward pass; raises when it cannot
Clock = Callable[[], float]


def probe_seconds(
    session: Session, probe: Probe, runs: int = PROBE_RUNS, clock: Clock = time.perf_counter
) -> float:
    """The median time of `runs` probes after one untimed warm-up (an accelerator compiles
    its graph on the first run)."""
    probe(session)
    times = []
    for _ in range(runs):
        start = clock()
        probe(session)
        times.append(clock() - start)
    return statistics.median(times)


def decide(
    accelerator: str,
    threads: int,
    cpu_session: Session,
    build: Builder,
    probe: Probe,
    *,
    min_speedup: float = MIN_SPEEDUP,
    clock: Clock = time.perf_counter,
) -> tuple[Placement, Session | None]:
    """Measure `accelerator` against the CPU session on the probe.

    Returns the placement and, when the accelerator won, its session (else None: keep the
    CPU one). Any failure to build or run the accelerator means the CPU, silently for the
    person (the log says why)."""
    try:
        accel_session = build(providers_for(Placement(accelerator, threads)))
        accel_s = probe_seconds(accel_session, probe, clock=clock)
    except Exception as exc:  # onnxruntime raises its own types, drivers anything at all
        log.info("%s cannot run this model (%s); the CPU runs it", label(accelerator), exc)
        reason = f"{type(exc).__name__}: {exc}"[:200]
        return Placement(CPU, threads, tried=accelerator, failed=reason), None
    cpu_s = probe_seconds(cpu_session, probe, clock=clock)
    speedup = cpu_s / accel_s if accel_s > 0 else float("inf")
    if speedup >= min_speedup:
        return Placement(accelerator, threads, accelerator, round(speedup, 2)), accel_session
    return Placement(CPU, threads, accelerator, round(speedup, 2)), None


class PlacementMemory:
    """Each model's measured placement, in a JSON file in the data folder.

    A record holds the key it was measured under (onnxruntime's version, the providers
    present, the model file's size and time): when any of them changes it is measured again.
    An unreadable file is ignored (and rewritten); a file that cannot be written only costs
    a measurement at the next start.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def recall(self, model: str, key: str) -> Placement | None:
        record = self._read().get(model)
        if not isinstance(record, dict) or record.get("key") != key:
            return None
        return _placement(record.get("placement"))

    def remember(self, model: str, key: str, placement: Placement) -> None:
        with self._lock:
            records = self._read()
            records[model] = {"key": key, "placement": asdict(placement)}
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name + ".")
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(records, fh, indent=1, sort_keys=True)
                os.replace(tmp, self.path)
            except OSError as exc:
                log.info("cannot keep the execution provider choice in %s: %s", self.path, exc)

    def recall_any(self, model: str) -> Placement | None:
        """The placement last measured for `model`, whatever it was measured under (for
        listings: a stale record is measured again when the model loads)."""
        record = self._read().get(model)
        if not isinstance(record, dict):
            return None
        return _placement(record.get("placement"))

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


def _placement(fields: object) -> Placement | None:
    """A Placement from its JSON record; None for a record this version cannot read."""
    if not isinstance(fields, dict):
        return None
    try:
        placement = Placement(**fields)
    except TypeError:
        return None
    if not isinstance(placement.provider, str) or not isinstance(placement.threads, int):
        return None
    return placement


_memory: PlacementMemory | None = None
_placements: dict[str, Placement] = {}
_state_lock = threading.Lock()


def remember_in(path: Path | None) -> None:
    """Where choices are kept (the service sets its data folder's file); None keeps none."""
    global _memory
    with _state_lock:
        _memory = PlacementMemory(path) if path is not None else None


def memory() -> PlacementMemory | None:
    return _memory


def record_loaded(model: str, placement: Placement) -> None:
    """What a model loaded in this process runs on (for the model list)."""
    with _state_lock:
        _placements[model] = placement


def loaded_placement(model: str) -> Placement | None:
    return _placements.get(model)


@dataclass(frozen=True, slots=True)
class RunsOn:
    """What a listing says of a model: its placement, and an accelerator present here but
    not measured yet (it will be when the model is first loaded)."""

    placement: Placement
    pending: str | None = None

    @property
    def pending_device(self) -> str | None:
        return label(self.pending) if self.pending is not None else None

    def describe(self) -> str:
        text = self.placement.describe()
        if self.pending is not None:
            return f"{text}; {label(self.pending)} is measured at first use"
        return text


def expected_placement(model: str, available: Sequence[str], threads: int) -> RunsOn:
    """Where `model` runs or would run, without loading it: as loaded in this process, else
    as measured before, else the CPU (an accelerator present is measured at first use)."""
    loaded = loaded_placement(model)
    if loaded is not None:
        return RunsOn(loaded)
    found = accelerators(available)
    kept = _memory
    remembered = kept.recall_any(model) if found and kept is not None else None
    if remembered is not None:
        return RunsOn(remembered)
    return RunsOn(Placement(CPU, threads), found[0] if found else None)


def describe_expected(model: str, available: Sequence[str], threads: int) -> str:
    return expected_placement(model, available, threads).describe()
