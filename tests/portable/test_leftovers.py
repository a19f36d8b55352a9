"""What a killed export or import leaves is cleaned up, and a live one's work never is."""

from __future__ import annotations

from pathlib import Path

from app.knowledge.data_layout import DataLayout
from app.knowledge.portable import staging

DEAD_OWNER = "999999999:1.000"  # no such pid


def test_only_the_leftovers_of_dead_processes_are_removed(tmp_path: Path) -> None:
    layout = DataLayout(tmp_path / "home")
    layout.bases_dir.mkdir(parents=True)
    live = staging.make_staging(layout, "import")
    dead = staging.make_staging(layout, "export")
    (dead / staging.OWNER_FILE).write_text(DEAD_OWNER)
    half = layout.base_dir("half00000000000")
    staging.mark_importing(half).write_text(DEAD_OWNER)
    done = layout.base_dir("done00000000000")
    staging.mark_importing(done).write_text(DEAD_OWNER)
    busy = layout.base_dir("busy00000000000")
    staging.mark_importing(busy)  # this (live) process is importing it

    found = {(left.kind, left.path) for left in staging.find_leftovers(layout)}
    assert found == {("staging", dead), ("import", half), ("import", done)}

    said = staging.clean_leftovers(layout, known_bases={"done00000000000"})
    assert len(said) == 3
    assert live.is_dir() and busy.is_dir(), "a live process's work is untouched"
    assert not dead.exists() and not half.exists()
    # An import whose catalog rows were written keeps its base; only the marker goes.
    assert done.is_dir() and not staging.import_marker(done).exists()
    assert staging.find_leftovers(layout) == []
