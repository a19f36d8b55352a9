"""`trove` / `python -m app`: window or CLI, the screenshot mode and the self-test."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage

from app import __version__
from app.knowledge.service import open_service
from app.knowledge.types import ErrorCode, TroveError
from app.main import main, wants_gui
from app.ui.errors import headline
from tests.reliability import permissions

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("args", "gui"),
    [
        ([], True),
        (["--lang", "zh_CN"], True),
        (["--screenshot", "x.png", "--lang=en"], True),
        (["--self-test", "--home", "/tmp/h"], True),
        (["search", "kb", "q"], False),
        (["--home", "/tmp/h", "base", "list"], False),
        (["--help"], False),
    ],
)
def test_window_or_cli(args: list[str], gui: bool) -> None:
    assert wants_gui(args) is gui


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"trove {__version__}"


def _run(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TROVE_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_screenshot_renders_the_demo_window(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    done = _run(["--screenshot", str(shot), "--lang", "zh_CN"], tmp_path / "home")
    assert done.returncode == 0, done.stderr
    image = QImage(str(shot))
    assert not image.isNull()
    assert (image.width(), image.height()) == (1280, 820)


def test_self_test_opens_searches_and_cleans_up(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = _run(["--self-test"], home)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["selfTest"] == "ok"
    assert report["results"] >= 1
    assert report["windowShownMs"] > 0
    listing = _run_cli(["base", "list", "--json"], home)
    assert json.loads(listing) == []


def _run_cli(args: list[str], home: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env={**os.environ, "TROVE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.mark.skipif(
    not permissions.can_enforce(), reason="file permissions cannot be enforced here"
)
def test_read_only_data_folder_is_reported_not_crashed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o500)
    try:
        with permissions.enforced(), pytest.raises(TroveError) as raised:
            open_service(home)
    finally:
        home.chmod(0o700)
    assert raised.value.code is ErrorCode.STORAGE_READ_ONLY
    assert headline(raised.value.code) == "The data folder is read-only"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="only Linux needs DISPLAY")
def test_without_a_display_the_window_explains_instead_of_aborting(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    done = subprocess.run(
        [sys.executable, "-m", "app"],
        cwd=ROOT,
        env={**env, "TROVE_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "no display" in done.stderr and "trove --help" in done.stderr


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM installed (Linux's /proc status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_closes_the_window_as_its_close_button_would(tmp_path: Path) -> None:
    # A logout sends SIGTERM: the window quits cleanly (layout saved, workers stopped)
    # instead of dying as from SIGKILL.
    home = tmp_path / "home"
    env = {**os.environ, "TROVE_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    window = subprocess.Popen(
        [sys.executable, "-m", "app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not _catches_sigterm(window.pid):
            assert window.poll() is None, window.communicate()[1]
            assert time.monotonic() < deadline, "the window never started listening"
            time.sleep(0.05)
        window.send_signal(signal.SIGTERM)
        _, stderr = window.communicate(timeout=60)
    finally:
        if window.poll() is None:
            window.kill()
            window.communicate()
    assert window.returncode == 0, stderr
    assert "Traceback" not in stderr and "leaked semaphore" not in stderr, stderr
    saved = QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat)
    assert saved.value("window/geometry") is not None
