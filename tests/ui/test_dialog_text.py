"""Dialogs that read well: the New-base dialog shows its wrapped labels whole (en and zh_CN),
the key field claims a stored key only when the keychain holds one, the model-change question
says what it does and names models as the pickers do, and the welcome page's providers link
acts like a link."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import keyring
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from app.ui import i18n
from app.ui.context import UiContext
from app.ui.empty_state import EmptyState
from app.ui.providers import ProvidersDialog
from app.ui.settings.new_base_dialog import NewBaseDialog
from tests.providers.conftest import KEY, MemoryKeyring
from tests.ui.test_rag_panel import (
    Questions,
    base_with_note,
    choose,
    make_panel,
    providers,  # noqa: F401  (a fixture)
    questions,  # noqa: F401  (a fixture)
)

SIGNAL_MS = 5000


@pytest.fixture(params=["en", "zh_CN"])
def language(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[str]:
    translators = i18n.install_translators(qapp, request.param)
    yield request.param
    i18n.remove_translators(qapp, translators)


@pytest.fixture
def memory_keychain() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    memory = MemoryKeyring()
    keyring.set_keyring(memory)
    yield memory
    keyring.set_keyring(previous)


def clipped_labels(dialog: QWidget) -> list[str]:
    """Visible wrapped labels that are cut off: too short for their text at their width, or
    reaching past the dialog's right edge."""
    clipped = []
    for label in dialog.findChildren(QLabel):
        if not (label.isVisibleTo(dialog) and label.wordWrap() and label.text()):
            continue
        right = label.mapTo(dialog, QPoint(label.width(), 0)).x()
        if label.heightForWidth(label.width()) > label.height() or right > dialog.width():
            clipped.append(label.text())
    return clipped


# -- 3. the New-base dialog's Advanced section ---------------------------------------------


def test_new_base_dialog_shows_its_wrapped_labels_whole(
    language: str,
    qtbot: QtBot,
    providers: UiContext,  # noqa: F811
) -> None:
    dialog = NewBaseDialog(providers)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.modelsLoaded, timeout=SIGNAL_MS):
        dialog.show()
    choose(dialog.form.rerank_picker, "rr:jina-reranker")  # shows the threshold and its hint
    qtbot.waitUntil(dialog.form.threshold_hint.isVisible)
    folded = dialog.height()
    dialog.form.advanced.set_expanded(True)
    qtbot.waitUntil(dialog.form.chunk_note.isVisible)
    qtbot.waitUntil(lambda: clipped_labels(dialog) == [])
    assert dialog.height() > folded  # the dialog grew to its content
    dialog.form.chunk_size.setValue(10)  # the overlap (64) is now too big: an error shows
    qtbot.waitUntil(dialog.form.chunk_error.isVisible)
    qtbot.waitUntil(lambda: clipped_labels(dialog) == [])

    dialog.resize(dialog.minimumWidth(), dialog.height())  # narrowest: the most lines
    qtbot.waitUntil(lambda: clipped_labels(dialog) == [])
    dialog.form.chunk_size.setValue(512)
    opened = dialog.height()
    dialog.form.advanced.set_expanded(False)
    # The room is given back: the dialog is as tall as its content needs, no taller.
    layout = dialog.layout()
    assert layout is not None
    qtbot.waitUntil(lambda: dialog.height() == layout.totalHeightForWidth(dialog.width()) < opened)


# -- 9. the key field ----------------------------------------------------------------------


@pytest.mark.parametrize("stored", [True, False])
def test_key_field_says_stored_only_when_the_keychain_holds_a_key(
    qtbot: QtBot, ui_ctx: UiContext, memory_keychain: MemoryKeyring, stored: bool
) -> None:
    ui_ctx.service.save_provider(
        "vendor", "openai", base_url="http://127.0.0.1:9", models=["m"], key=KEY if stored else None
    )
    assert (("Trove", "vendor") in memory_keychain.store) is stored
    dialog = ProvidersDialog(ui_ctx)
    qtbot.addWidget(dialog)
    form = dialog.form
    with qtbot.waitSignal(form.keyStateKnown, timeout=SIGNAL_MS) as known:
        dialog.show()
    assert known.args == [stored]
    placeholder = form.key_edit.placeholderText()
    assert ("stored in the system keychain" in placeholder) is stored
    assert ("No key stored" in placeholder) is not stored
    assert form.key_edit.text() == ""  # the key itself never comes back


def test_saving_a_key_turns_the_field_to_stored(
    qtbot: QtBot, ui_ctx: UiContext, memory_keychain: MemoryKeyring
) -> None:
    ui_ctx.service.save_provider("vendor", "openai", base_url="http://127.0.0.1:9", models=["m"])
    dialog = ProvidersDialog(ui_ctx)
    qtbot.addWidget(dialog)
    form = dialog.form
    with qtbot.waitSignal(form.keyStateKnown, timeout=SIGNAL_MS):
        dialog.show()
    assert "No key stored" in form.key_edit.placeholderText()
    QTest.keyClicks(form.key_edit, KEY)
    with qtbot.waitSignal(form.keyStateKnown, timeout=SIGNAL_MS) as known:
        QTest.mouseClick(form.save_button, Qt.MouseButton.LeftButton)
    assert known.args == [True]
    assert "stored in the system keychain" in form.key_edit.placeholderText()


# -- 11. the model-change question and the welcome link -------------------------------------


def test_model_change_question_names_models_by_their_labels(
    qtbot: QtBot,
    providers: UiContext,  # noqa: F811
    questions: Callable[[bool], Questions],  # noqa: F811
) -> None:
    base = base_with_note(qtbot, providers, "fake:bow")
    panel = make_panel(qtbot, providers)
    panel.set_base(base)
    asked = questions(False)
    for model in ("fake:rerank", None):
        choose(panel.form.embedding_picker, model)
        QTest.mouseClick(panel.apply_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not panel.is_busy())
    qtbot.waitUntil(lambda: len(asked.asked) == 2)
    (change_title, change), (remove_title, remove) = asked.asked
    assert change_title == "Change the embedding model"
    assert "from bow — Fake AI to rerank — Fake AI" in change
    assert remove_title == "Remove the embedding model"
    assert remove.startswith("Removing bow — Fake AI rebuilds")
    assert "fake:" not in change + remove  # no raw model ids
    picker = panel.form.embedding_picker
    assert picker.label_of(None) == "None (full-text only)"
    assert picker.label_of("local:all-MiniLM-L6-v2") in (
        "Built-in offline model",
        "local:all-MiniLM-L6-v2",  # listed only where the model's files are installed
    )


def test_welcome_providers_link_looks_and_acts_like_a_link(qtbot: QtBot) -> None:
    page = EmptyState()
    qtbot.addWidget(page)
    page.show()
    qtbot.waitExposed(page)
    link = page.findChild(QPushButton, "emptyProvidersButton")
    assert link is not None
    assert link.cursor().shape() == Qt.CursorShape.PointingHandCursor
    assert link.focusPolicy() & Qt.FocusPolicy.TabFocus
    assert "palette(link)" in link.styleSheet() and "underline" in link.styleSheet()
    assert link.palette().color(QPalette.ColorRole.Link).isValid()
    create = page.findChild(QPushButton, "emptyCreateButton")
    assert create is not None
    create.setFocus()
    QTest.keyClick(create, Qt.Key.Key_Tab)
    qtbot.waitUntil(link.hasFocus)
    for key in (Qt.Key.Key_Return, Qt.Key.Key_Space):
        with qtbot.waitSignal(page.providersRequested, timeout=SIGNAL_MS):
            QTest.keyClick(link, key)
