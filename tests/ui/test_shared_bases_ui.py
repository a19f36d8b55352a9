"""Shared bases on a PostgreSQL server, through the window's own widgets: the New-base
dialog's choice of where the index lives, the Attach dialog, the base list's badge, Detach
and a Delete that says it removes the base for everyone. Against the real test server
(tests/postgres/server.py) and an unreachable address on the loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import psycopg
import pytest
from PySide6.QtCore import QCoreApplication, QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QRadioButton
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.knowledge.pipeline.store.pg.schema import schema_name
from app.knowledge.server_index import address, secret_id
from app.knowledge.service import KnowledgeService
from app.knowledge.types import Base, IndexBackend
from app.ui import i18n
from app.ui.bases.attach_dialog import AttachBaseDialog
from app.ui.bases.base_list import BasesPanel, local_icon, server_icon
from app.ui.context import UiContext
from app.ui.settings.new_base_dialog import NewBaseDialog
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.providers.conftest import MemoryKeyring

SIGNAL_MS = 20_000  # a server call: connect, create the schema
UNREACHABLE = "postgresql://u:p@127.0.0.1:9/db?connect_timeout=2"


@pytest.fixture
def memory_keychain() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    memory = MemoryKeyring()
    keyring.set_keyring(memory)
    yield memory
    keyring.set_keyring(previous)


@pytest.fixture
def chinese(qapp: QApplication) -> Iterator[None]:
    translators = i18n.install_translators(qapp, "zh_CN")
    yield
    i18n.remove_translators(qapp, translators)


@pytest.fixture
def dialog(qtbot: QtBot, ui_ctx: UiContext) -> NewBaseDialog:
    with qtbot.waitSignal(ui_ctx.tasks.idle, timeout=SIGNAL_MS):
        dlg = NewBaseDialog(ui_ctx)
    qtbot.addWidget(dlg)
    dlg.show()
    QTest.keyClicks(dlg.name_edit, "Team notes")
    dlg.form.embedding_picker.set_current_model(None)  # full text: no model to probe
    return dlg


@pytest.fixture
def other_desktop(tmp_path: Path, pg_dsn: str) -> Iterator[KnowledgeService]:
    """A second Trove home using the same server; the bases it made are deleted after."""
    service = KnowledgeService(tmp_path / "other-home", models=FakeModels())
    yield service
    for base in service.list_bases():
        service.delete_base(base.id)
    service.close()


def _server_bases(service: KnowledgeService) -> Iterator[None]:
    yield
    for base in service.list_bases():
        if base.backend is IndexBackend.POSTGRES:
            service.delete_base(base.id)


@pytest.fixture
def clean_server(ui_ctx: UiContext) -> Iterator[None]:
    """Server bases this test made in the window's home are deleted from the server after."""
    yield from _server_bases(ui_ctx.service)


def click_choice(button: QRadioButton) -> None:
    """Click a radio button on its indicator (its middle may be empty room past the text)."""
    QTest.mouseClick(
        button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
        QPoint(8, button.height() // 2),
    )  # fmt: skip


def _schema_exists(dsn: str, base_id: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema_name(base_id),)
        )
        return found.fetchone() is not None


def _panel(qtbot: QtBot, ctx: UiContext) -> BasesPanel:
    panel = BasesPanel(ctx)
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.waitSignal(ctx.tasks.idle, timeout=SIGNAL_MS):
        panel.reload()
    return panel


# -- the New-base dialog -------------------------------------------------------------------


def test_the_server_fields_show_only_for_a_server(dialog: NewBaseDialog) -> None:
    server = dialog.server
    assert dialog.local_choice.isChecked() and not server.isVisibleTo(dialog)
    assert dialog.create_button.isEnabled()

    click_choice(dialog.server_choice)
    assert dialog.on_server() and server.isVisibleTo(dialog)
    assert server.address_edit.placeholderText() == "postgresql://user@host:5432/database"
    assert server.password_edit.echoMode() is QLineEdit.EchoMode.Password
    assert not dialog.create_button.isEnabled()  # a server needs its address
    QTest.keyClicks(server.address_edit, "postgresql://me@db.example:5432/team")
    assert dialog.create_button.isEnabled()

    click_choice(dialog.local_choice)
    assert not dialog.on_server() and not server.isVisibleTo(dialog)
    assert dialog.create_button.isEnabled()


def test_an_address_that_is_no_connection_string_is_refused_in_the_dialog(
    qtbot: QtBot, ui_ctx: UiContext, dialog: NewBaseDialog
) -> None:
    pytest.importorskip("psycopg")
    click_choice(dialog.server_choice)
    QTest.keyClicks(dialog.server.address_edit, "db.example 5432")
    dialog.accept()
    assert not dialog.is_busy() and dialog.error_label.isVisible()
    assert "not a PostgreSQL server address" in dialog.error_label.text()
    assert ui_ctx.service.list_bases() == []


def test_a_base_created_on_the_server_keeps_its_index_there(
    qtbot: QtBot,
    ui_ctx: UiContext,
    dialog: NewBaseDialog,
    pg_dsn: str,
    memory_keychain: MemoryKeyring,
    clean_server: None,
) -> None:
    click_choice(dialog.server_choice)
    QTest.keyClicks(dialog.server.address_edit, pg_dsn)
    QTest.keyClicks(dialog.server.password_edit, "pw123")
    with qtbot.waitSignal(dialog.baseCreated, timeout=SIGNAL_MS) as created:
        QTest.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
        assert dialog.is_busy() and "Connecting to the server" in dialog.busy_label.text()

    base = created.args[0]
    assert isinstance(base, Base) and not dialog.isVisible()
    stored = ui_ctx.service.get_base(base.id)
    assert stored.backend is IndexBackend.POSTGRES
    assert stored.dsn is not None and "pw123" not in stored.dsn
    assert address(stored.dsn) == address(pg_dsn)
    # The password went to the keychain only, and the window let go of it.
    assert memory_keychain.get_password("Trove", secret_id(base.id)) == "pw123"
    assert dialog.server.password_edit.text() == ""
    assert _schema_exists(pg_dsn, base.id)


def test_an_unreachable_server_is_said_in_chinese_and_creates_nothing(
    qtbot: QtBot, ui_ctx: UiContext, chinese: None, tmp_path: Path
) -> None:
    with qtbot.waitSignal(ui_ctx.tasks.idle, timeout=SIGNAL_MS):
        dialog = NewBaseDialog(ui_ctx)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.name_edit.setText("团队")  # keyClicks types Latin keys only
    dialog.form.embedding_picker.set_current_model(None)
    click_choice(dialog.server_choice)
    QTest.keyClicks(dialog.server.address_edit, UNREACHABLE)
    with qtbot.waitSignal(dialog.busyChanged, check_params_cb=lambda busy: not busy,
                          timeout=SIGNAL_MS):  # fmt: skip
        QTest.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)

    headline = QCoreApplication.translate("errors", "The PostgreSQL server cannot be used")
    assert headline != "The PostgreSQL server cannot be used"  # translated
    shown = dialog.error_label.text()
    assert dialog.isVisible() and dialog.error_label.isVisible() and headline in shown
    assert "127.0.0.1:9/db" in shown  # the message names the server it tried
    assert "PostgreSQL server" not in shown  # no English sentence in a Chinese window
    assert dialog.created_base is None and ui_ctx.service.list_bases() == []
    assert list((tmp_path / "home").glob("bases/*")) == []
    assert dialog.create_button.isEnabled()  # fix the address and try again


# -- attaching, the list, detaching and deleting ------------------------------------------------


def test_attach_pick_from_several_then_detach(
    qtbot: QtBot,
    qtmodeltester: ModelTester,
    ui_ctx: UiContext,
    other_desktop: KnowledgeService,
    pg_dsn: str,
    tmp_path: Path,
    clean_server: None,
) -> None:
    # Another desktop made two bases on the server and filled one.
    # A name may hold commas and brackets: the window lists it as it is.
    first = other_desktop.create_base(
        "Notes, 2026 (draft)", backend=IndexBackend.POSTGRES, dsn=pg_dsn
    )
    second = other_desktop.create_base("Team B", backend=IndexBackend.POSTGRES, dsn=pg_dsn)
    other_desktop.add(second.id, [write_files(tmp_path / "docs", {"a.md": "# Apples\n\nRed."})])
    other_desktop.run_pending_jobs(second.id)

    panel = _panel(qtbot, ui_ctx)
    assert panel.model.rowCount() == 0
    dialog = panel.open_attach_dialog()
    assert isinstance(dialog, AttachBaseDialog) and not dialog.attach_button.isEnabled()
    QTest.keyClicks(dialog.server.address_edit, pg_dsn)
    with qtbot.waitSignal(dialog.busyChanged, check_params_cb=lambda busy: not busy,
                          timeout=SIGNAL_MS):  # fmt: skip
        QTest.mouseClick(dialog.attach_button, Qt.MouseButton.LeftButton)
    # Several on the server: listed to choose from, nothing attached yet.
    assert "several knowledge bases" in dialog.error_label.text()
    offered = [dialog.base_box.itemData(i) for i in range(dialog.base_box.count())]
    assert {first.id, second.id} <= set(offered)
    shown = [dialog.base_box.itemText(i) for i in range(dialog.base_box.count())]
    assert f"Notes, 2026 (draft) (ID {first.id})" in shown
    assert ui_ctx.service.list_bases() == []

    dialog.base_box.setCurrentIndex(offered.index(second.id))
    assert dialog.chosen_id() == second.id
    with qtbot.waitSignal(panel.baseAttached, timeout=SIGNAL_MS) as attached:
        QTest.mouseClick(dialog.attach_button, Qt.MouseButton.LeftButton)
    base = attached.args[0]
    assert (base.id, base.name, base.backend) == (second.id, "Team B", IndexBackend.POSTGRES)
    assert [n.title for n in ui_ctx.notifier.history][-1].startswith("Knowledge base “Team B”")
    qtbot.waitUntil(lambda: panel.selected_base() is not None)
    selected = panel.selected_base()
    assert selected is not None and selected.id == second.id
    assert "Apples" in {i.title for i in ui_ctx.service.list_items(second.id)}

    # The list says where it lives; its menu offers Detach besides Delete.
    index = panel.model.index(panel.model.row_of(second.id))
    assert not index.data(Qt.ItemDataRole.DecorationRole).isNull()
    assert address(pg_dsn) in index.data(Qt.ItemDataRole.ToolTipRole)
    assert panel.detach_action in panel.view.actions() and panel.detach_action.isVisible()
    qtmodeltester.check(panel.model)

    asked: list[str] = []
    panel.confirm_detach = lambda _title, question: asked.append(question) or True
    panel.detach_action.trigger()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0, timeout=SIGNAL_MS)
    assert "stays on the server" in asked[0] and address(pg_dsn) in asked[0]
    # Gone from this desktop only: the other desktop and the server still have it.
    assert ui_ctx.service.list_bases() == []
    assert _schema_exists(pg_dsn, second.id)
    assert "Apples" in {i.title for i in other_desktop.list_items(second.id)}


def test_attach_with_an_unknown_id_says_so(
    qtbot: QtBot, ui_ctx: UiContext, other_desktop: KnowledgeService, pg_dsn: str
) -> None:
    other_desktop.create_base("Team", backend=IndexBackend.POSTGRES, dsn=pg_dsn)
    dialog = AttachBaseDialog(ui_ctx)
    qtbot.addWidget(dialog)
    dialog.show()
    QTest.keyClicks(dialog.server.address_edit, pg_dsn)
    QTest.keyClicks(dialog.base_box.lineEdit(), "ffffffffffffffff")
    with qtbot.waitSignal(dialog.busyChanged, check_params_cb=lambda busy: not busy,
                          timeout=SIGNAL_MS):  # fmt: skip
        QTest.mouseClick(dialog.attach_button, Qt.MouseButton.LeftButton)
    assert "No such knowledge base on this server" in dialog.error_label.text()
    assert dialog.isVisible() and ui_ctx.service.list_bases() == []


def test_local_bases_have_the_local_icon_and_no_detach(qtbot: QtBot, ui_ctx: UiContext) -> None:
    ui_ctx.service.create_base("Mine")
    panel = _panel(qtbot, ui_ctx)
    qtbot.waitUntil(lambda: panel.selected_base() is not None)
    index = panel.model.index(0)
    drawn = index.data(Qt.ItemDataRole.DecorationRole).pixmap(16).toImage()
    assert drawn == local_icon().pixmap(16).toImage() != server_icon().pixmap(16).toImage()
    assert "PostgreSQL" not in index.data(Qt.ItemDataRole.ToolTipRole)
    assert not panel.detach_action.isVisible()


def test_deleting_a_server_base_says_it_goes_for_everyone(
    qtbot: QtBot, ui_ctx: UiContext, pg_dsn: str, clean_server: None
) -> None:
    base = ui_ctx.service.create_base("Shared", backend=IndexBackend.POSTGRES, dsn=pg_dsn)
    panel = _panel(qtbot, ui_ctx)
    qtbot.waitUntil(lambda: panel.selected_base() is not None)
    asked: list[str] = []
    panel.confirm = lambda _title, question: asked.append(question) or False
    panel.delete_action.trigger()
    qtbot.waitUntil(lambda: bool(asked), timeout=SIGNAL_MS)
    question = asked[0]
    assert question.startswith("Delete the shared knowledge base “Shared” for everyone?")
    assert address(pg_dsn) in question and "Detach from this desktop" in question
    assert _schema_exists(pg_dsn, base.id)  # declined: nothing happened

    panel.confirm = lambda _title, _question: True
    panel.delete_action.trigger()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0, timeout=SIGNAL_MS)
    assert not _schema_exists(pg_dsn, base.id)
