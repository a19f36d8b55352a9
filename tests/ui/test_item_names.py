"""The item tree names items by their file names, sorts them naturally, filters on name and
title, keeps a folder's subfolders and says each file's format."""

from __future__ import annotations

import dataclasses
from collections import Counter, deque
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.knowledge.types import Item, ItemStatus, ItemType
from app.ui.context import UiContext
from app.ui.items.item_model import Column, ItemTreeModel, Role
from app.ui.items.item_names import natural_key
from app.ui.items.items_panel import ItemsPanel
from app.ui.items.status_delegate import _counts
from tests.conftest import write_files

ROOT = "/data/docs"


def item(
    item_id: str,
    source: str,
    *,
    kind: ItemType = ItemType.FILE,
    parent: str | None = None,
    **changes: object,
) -> Item:
    """A catalog record as the engine makes it: a file's title starts as its file name."""
    title = Path(source).name if kind in (ItemType.FILE, ItemType.DIRECTORY) else source
    record = Item(
        id=item_id,
        base_id="b",
        parent_id=parent,
        type=kind,
        source=source,
        title=title,
        relative_path=None,
        status=ItemStatus.PROCESSING,
        phase=None,
        progress=None,
        error_code=None,
        error_message=None,
        chunk_count=0,
        size=10,
        content_hash=None,
        created_at=1.0,
        updated_at=1.0,
    )
    return dataclasses.replace(record, **changes)  # type: ignore[arg-type]


def completed(record: Item, title: str, chunks: int = 2) -> Item:
    """What the catalog says once the file is indexed: the title the reader found inside."""
    return dataclasses.replace(
        record, status=ItemStatus.COMPLETED, title=title, chunk_count=chunks, updated_at=2.0
    )


Index = QModelIndex | QPersistentModelIndex


def names(model: QAbstractItemModel, parent: Index | None = None) -> list[str]:
    parent = parent if parent is not None else QModelIndex()
    return [str(model.index(r, 0, parent).data()) for r in range(model.rowCount(parent))]


def child(model: QAbstractItemModel, parent: Index, name: str) -> QModelIndex:
    for r in range(model.rowCount(parent)):
        index = model.index(r, 0, parent)
        if index.data() == name:
            return index
    raise AssertionError(f"{name!r} not under {parent.data()!r}: {names(model, parent)}")


def cell(model: QAbstractItemModel, index: Index, column: Column, role: int) -> object:
    return model.index(index.row(), column, index.parent()).data(role)


@pytest.fixture
def panel(qtbot: QtBot, ui_ctx: UiContext) -> Iterator[ItemsPanel]:
    """The real panel (proxy, filter box, view) fed by hand: no base, so no catalog reads."""
    widget = ItemsPanel(ui_ctx)
    qtbot.addWidget(widget)
    widget.show()
    yield widget


# -- names -------------------------------------------------------------------------------------


def test_files_keep_their_names_when_indexing_finds_a_title(qtmodeltester: ModelTester) -> None:
    model = ItemTreeModel()
    qtmodeltester.check(model)
    doc = item("d", f"{ROOT}/doc-030.md")
    pdf = item("p", f"{ROOT}/scan.pdf")
    model.apply_items([doc, pdf])
    assert names(model) == ["doc-030.md", "scan.pdf"]

    # The readers' titles ("Document 30", a PDF's first sentence) do not rename the rows.
    sentence = "This report was prepared for the annual meeting of the board"
    model.apply_items([completed(doc, "Document 30"), completed(pdf, sentence)])
    assert names(model) == ["doc-030.md", "scan.pdf"]
    tip = str(model.data(model.index_of("d"), Qt.ItemDataRole.ToolTipRole))
    assert "Document 30" in tip and f"{ROOT}/doc-030.md" in tip
    assert sentence in str(model.data(model.index_of("p"), Qt.ItemDataRole.ToolTipRole))
    qtmodeltester.check(model)


def test_pages_notes_and_folders_are_named_as_people_know_them() -> None:
    model = ItemTreeModel()
    page = item("u", "https://example.com/otters", kind=ItemType.URL)
    note = item("n", "The text of the note", kind=ItemType.NOTE, title="Kitchen ideas")
    folder = item("f", f"{ROOT}/reports", kind=ItemType.DIRECTORY)
    model.apply_items([page, note, folder])
    assert model.data(model.index_of("u")) == "https://example.com/otters"
    assert model.data(model.index_of("n")) == "Kitchen ideas"
    assert model.data(model.index_of("f")) == "reports"
    # A page is called by its title once it is read; a note's tooltip shows its text.
    model.apply_items([completed(page, "All about otters"), note, folder])
    assert model.data(model.index_of("u")) == "All about otters"
    assert "https://example.com/otters" in str(
        model.data(model.index_of("u"), Qt.ItemDataRole.ToolTipRole)
    )
    assert "The text of the note" in str(
        model.data(model.index_of("n"), Qt.ItemDataRole.ToolTipRole)
    )


# -- natural sort ------------------------------------------------------------------------------


def test_natural_key_orders_numbers_by_value_and_ignores_case() -> None:
    words = ["doc-10", "Doc-9", "doc-89", "doc-100", "doc-1", "doc-009a", "DOC-2", "doc-"]
    assert sorted(words, key=natural_key) == [
        "doc-",
        "doc-1",
        "DOC-2",
        "Doc-9",
        "doc-009a",
        "doc-10",
        "doc-89",
        "doc-100",
    ]
    # Equal numbers written differently still get one fixed order.
    assert natural_key("doc-030") != natural_key("doc-30")


def test_names_sort_naturally_and_stay_put_while_items_complete(
    panel: ItemsPanel, qtmodeltester: ModelTester
) -> None:
    files = [item(f"id{n}", f"{ROOT}/doc-{n}.md") for n in (89, 9, 10, 1, 100)]
    files.append(item("upper", f"{ROOT}/Doc-2.md"))
    files.append(item("dir", f"{ROOT}/zebra", kind=ItemType.DIRECTORY))
    panel.model.apply_items(files)
    expected = ["zebra", "doc-1.md", "Doc-2.md", "doc-9.md", "doc-10.md", "doc-89.md", "doc-100.md"]
    assert names(panel.proxy) == expected  # folders first, then files in natural order

    # Completing in any order, with titles that would sort otherwise, moves nothing.
    for n, record in enumerate(files):
        files[n] = completed(record, f"Document {len(files) - n}")
        panel.model.apply_items(files)
        assert names(panel.proxy) == expected
    panel.view.sortByColumn(Column.NAME, Qt.SortOrder.DescendingOrder)
    assert names(panel.proxy) == expected[::-1]
    qtmodeltester.check(panel.proxy)


# -- filter ------------------------------------------------------------------------------------


def test_the_filter_matches_names_and_titles(qtbot: QtBot, panel: ItemsPanel) -> None:
    doc = item("d", f"{ROOT}/doc-030.md")
    other = item("o", f"{ROOT}/kelp.txt")
    page = item("u", "https://example.com/a", kind=ItemType.URL)
    panel.model.apply_items([completed(doc, "Document 30"), other, completed(page, "Sea otters")])
    box = panel.findChild(QLineEdit, "itemFilter")
    assert box is not None

    def shown(text: str) -> list[str]:
        box.clear()
        qtbot.keyClicks(box, text)
        return names(panel.proxy)

    assert shown("doc-030") == ["doc-030.md"]  # the file name
    assert shown("document 30") == ["doc-030.md"]  # the title found inside
    assert shown("OTTERS") == ["Sea otters"]
    assert shown("nothing like it") == []
    assert shown("") == ["doc-030.md", "kelp.txt", "Sea otters"]


def test_the_filter_finds_files_deep_in_folders(
    qtbot: QtBot, panel: ItemsPanel, qtmodeltester: ModelTester
) -> None:
    root = item("r", ROOT, kind=ItemType.DIRECTORY)
    deep = item("c", f"{ROOT}/a/b/needle.md", parent="r")
    near = item("x", f"{ROOT}/a/hay.md", parent="r")
    panel.model.apply_items([root, deep, near])
    box = panel.findChild(QLineEdit, "itemFilter")
    assert box is not None
    qtbot.keyClicks(box, "needle")
    proxy = panel.proxy
    qtmodeltester.check(proxy)
    top = child(proxy, QModelIndex(), "docs")
    a = child(proxy, top, "a")
    assert names(proxy, a) == ["b"]  # hay.md is filtered out
    assert names(proxy, child(proxy, a, "b")) == ["needle.md"]
    # A folder that matches shows what is inside it.
    box.clear()
    qtbot.keyClicks(box, "a")
    assert sorted(names(proxy, child(proxy, child(proxy, QModelIndex(), "docs"), "a"))) == [
        "b",
        "hay.md",
    ]


# -- folder structure --------------------------------------------------------------------------


def test_folders_keep_their_subfolders(qtmodeltester: ModelTester) -> None:
    model = ItemTreeModel()
    qtmodeltester.check(model)
    root = item("r", ROOT, kind=ItemType.DIRECTORY, status=ItemStatus.PROCESSING, size=None)
    c = item("c", f"{ROOT}/a/b/c.md", parent="r", size=100)
    x = item("x", f"{ROOT}/a/x.md", parent="r", size=20)
    top = item("t", f"{ROOT}/top.md", parent="r", size=3)
    model.apply_items([root, c, x, top])
    qtmodeltester.check(model)

    docs = model.index_of("r")
    assert names(model, docs) == ["a", "top.md"]
    a = child(model, docs, "a")
    assert names(model, a) == ["b", "x.md"]
    b = child(model, a, "b")
    assert names(model, b) == ["c.md"]
    assert model.item_at(a) is None and model.is_folder_row(a)
    assert {i.id for i in model.items_under(a)} == {"c", "x"}
    assert cell(model, a, Column.TYPE, Qt.ItemDataRole.DisplayRole) == "Folder"

    # Folder rows add up their files like folder items do.
    model.apply_items([root, completed(c, "C", chunks=4), x, top])
    assert _counts(cell(model, a, Column.STATUS, Role.AGGREGATE)) == Counter(
        {ItemStatus.COMPLETED: 1, ItemStatus.PROCESSING: 1}
    )
    assert cell(model, a, Column.STATUS, Role.STATUS) == "processing"
    assert cell(model, b, Column.STATUS, Role.STATUS) == "completed"
    assert cell(model, a, Column.CHUNKS, Role.SORT) == 4
    assert cell(model, a, Column.SIZE, Role.SORT) == 120
    # The folder item counts every file below it, not its rows.
    assert _counts(cell(model, docs, Column.STATUS, Role.AGGREGATE)) == Counter(
        {ItemStatus.COMPLETED: 1, ItemStatus.PROCESSING: 2}
    )
    failed = dataclasses.replace(x, status=ItemStatus.FAILED, error_code="READ_FAILED")
    model.apply_items([root, completed(c, "C", chunks=4), failed, top])
    assert cell(model, a, Column.STATUS, Role.STATUS) == "completed"
    assert _counts(cell(model, a, Column.STATUS, Role.AGGREGATE)) == Counter(
        {ItemStatus.COMPLETED: 1, ItemStatus.FAILED: 1}
    )
    qtmodeltester.check(model)

    assert cell(model, a, Column.UPDATED, Role.SORT) == 2.0  # c.md, the newest file

    # A folder left empty goes, and the sums above it lose what it held.
    model.apply_items([root, failed, top])
    assert names(model, model.index_of("r")) == ["a", "top.md"]
    a = child(model, model.index_of("r"), "a")
    assert names(model, a) == ["x.md"]
    assert (cell(model, a, Column.CHUNKS, Role.SORT), cell(model, a, Column.SIZE, Role.SORT)) == (
        0,
        20,
    )
    assert cell(model, a, Column.UPDATED, Role.SORT) == 1.0
    assert cell(model, a, Column.STATUS, Role.STATUS) == "failed"
    assert _counts(cell(model, model.index_of("r"), Column.STATUS, Role.AGGREGATE)) == Counter(
        {ItemStatus.FAILED: 1, ItemStatus.PROCESSING: 1}
    )
    qtmodeltester.check(model)
    # The folder item going takes every row with it.
    model.apply_items([])
    assert model.rowCount() == 0
    qtmodeltester.check(model)


def test_a_folder_added_in_slices_builds_its_rows_once(qtmodeltester: ModelTester) -> None:
    model = ItemTreeModel()
    root = item("r", ROOT, kind=ItemType.DIRECTORY)
    files = [item(f"f{n:02d}", f"{ROOT}/part{n % 3}/f{n:02d}.md", parent="r") for n in range(30)]
    _, pending = model.apply_items([root, *files], max_rows=7)
    while pending:
        model.show_pending(pending, 7)
        qtmodeltester.check(model)
    docs = model.index_of("r")
    assert names(model, docs) == ["part0", "part1", "part2"]
    assert sum(model.rowCount(child(model, docs, f"part{n}")) for n in range(3)) == 30


def test_selecting_a_folder_row_selects_the_files_in_it(panel: ItemsPanel) -> None:
    root = item("r", ROOT, kind=ItemType.DIRECTORY)
    files = [
        item("c", f"{ROOT}/a/b/c.md", parent="r"),
        item("x", f"{ROOT}/a/x.md", parent="r"),
        item("t", f"{ROOT}/top.md", parent="r"),
    ]
    panel.model.apply_items([root, *files])
    proxy = panel.proxy
    a = child(proxy, child(proxy, QModelIndex(), "docs"), "a")
    panel.view.selectionModel().select(
        a,
        panel.view.selectionModel().SelectionFlag.ClearAndSelect
        | panel.view.selectionModel().SelectionFlag.Rows,
    )
    assert {i.id for i in panel.selected_items()} == {"c", "x"}
    assert panel.single_item() is None  # no one item to open


def test_a_real_folder_shows_its_subfolders(
    qtbot: QtBot, ui_ctx: UiContext, panel: ItemsPanel, tmp_path: Path
) -> None:
    folder = write_files(
        tmp_path / "notes",
        {"a/b/deep.md": "# Deep\n\nfar down", "a/mid.txt": "middle", "top.md": "# Top\n\nup"},
    )
    base = ui_ctx.service.create_base("Folders")
    ui_ctx.service.add(base.id, [folder])
    ui_ctx.service.run_pending_jobs()
    panel.set_base(base)
    qtbot.waitUntil(lambda: len(panel.model.items()) == 4, timeout=10_000)
    proxy = panel.proxy
    notes = child(proxy, QModelIndex(), "notes")
    assert names(proxy, notes) == ["a", "top.md"]
    a = child(proxy, notes, "a")
    assert names(proxy, a) == ["b", "mid.txt"]
    assert names(proxy, child(proxy, a, "b")) == ["deep.md"]
    assert cell(proxy, a, Column.STATUS, Role.STATUS) == "completed"


# -- formats -----------------------------------------------------------------------------------


def test_the_type_column_names_the_format() -> None:
    model = ItemTreeModel()
    expected = {
        "a.md": "Markdown",
        "b.pdf": "PDF",
        "c.docx": "Word",
        "d.pptx": "PowerPoint",
        "e.xlsx": "Excel",
        "f.epub": "EPUB",
        "g.html": "HTML",
        "h.txt": "Text",
        "i.csv": "CSV",
        "j.json": "JSON",
        "k.py": "Python",
        "l.rs": "Rust",
        "m.TS": "TypeScript",
        "n.yaml": "YAML",
        "o.xyz": "XYZ file",
        "noext": "File",
    }
    records = [item(f"f{n}", f"{ROOT}/{name}") for n, name in enumerate(expected)]
    others = {
        "Folder": item("dir", f"{ROOT}/sub", kind=ItemType.DIRECTORY),
        "Web page": item("url", "https://example.com/", kind=ItemType.URL),
        "Sitemap": item("map", "https://example.com/sitemap.xml", kind=ItemType.SITEMAP),
        "Note": item("note", "text", kind=ItemType.NOTE, title="A note"),
    }
    model.apply_items([*records, *others.values()])

    def type_of(item_id: str) -> object:
        return model.data(model.index_of(item_id, Column.TYPE))

    assert {name: type_of(f"f{n}") for n, name in enumerate(expected)} == expected
    assert {label: type_of(record.id) for label, record in others.items()} == {
        label: label for label in others
    }


def test_a_read_that_finishes_after_the_window_went_changes_nothing() -> None:
    """Background reads and progress arrive after the window closed (its model and cells
    deleted): they are dropped, never raising from a slot."""
    import shiboken6

    model = ItemTreeModel()
    folder = item("D", "/src", kind=ItemType.DIRECTORY)
    inside = item("f1", "/src/a/x.md", parent="D")
    model.apply_items([folder, inside])
    shiboken6.delete(model)
    changes, pending = model.apply_items([folder])
    assert (changes, list(pending)) == ([], [])
    assert model.show_pending(deque([inside])) == []
    model.set_progress("f1", "embedding", 50.0)
    model.set_run("D", {"text": "1 of 2", "short": "1/2", "fraction": 0.5})
