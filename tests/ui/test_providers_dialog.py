"""The Providers dialog, driven offscreen against a real service and the fake provider API on
127.0.0.1, with its network probes running on a qasync event loop. Keys go to an in-memory
keychain, never the real one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import keyring
import pytest
import qasync
import shiboken6
from keyring.backends import fail
from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QLabel,
    QLineEdit,
    QMessageBox,
)
from pytestqt.qtbot import QtBot

from app.ui import theme
from app.ui.context import UiContext
from app.ui.providers import ProvidersDialog
from app.ui.providers.provider_form import ProviderForm, suggest_id
from app.ui.providers.providers_model import ModelChoicesModel, ProviderEntry, ProvidersModel
from tests.httpserver import Request, Response
from tests.providers.conftest import KEY, MemoryKeyring
from tests.providers.fake_api import MODELS, FakeApi, Fault

SIGNAL_MS = 5000
WRONG_KEY = "sk-wrong-0d9c8b7a6f5e4d3c2b1a"


# -- fixtures -----------------------------------------------------------------------------


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[qasync.QEventLoop]:
    """A qasync loop over pytest-qt's QApplication, as the launcher runs the window.

    qtbot drives Qt's event loop here (waitSignal/waitUntil), not `loop.run_*`, so the loop is
    marked as asyncio's running loop by hand, as run_forever would; coroutines scheduled on
    it run whenever Qt processes events. (qasync's `already_running=True` would do the same,
    but its stop() calls QApplication.exit(), after which every later QEventLoop.exec() in
    the session returns at once.) Teardown cancels what is left and closes the loop."""
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    asyncio.events._set_running_loop(loop)
    yield loop
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    deadline = time.monotonic() + 5
    while not all(task.done() for task in pending) and time.monotonic() < deadline:
        QCoreApplication.processEvents()
    asyncio.events._set_running_loop(None)
    loop.close()
    asyncio.set_event_loop(None)
    # close() leaves qasync's Qt timers registered (they are killed as they fire, and anyio
    # leaves some due in up to a minute). If Python's garbage collector freed the timer
    # object later on another thread, Qt could not unregister them and a later timer event
    # would reach freed memory: delete it now, on the GUI thread.
    shiboken6.delete(loop._timer)


@pytest.fixture(autouse=True)
def keychain(monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    """Every test gets an in-memory keychain; the real one is never reached."""
    monkeypatch.delenv("TROVE_KEY_VENDOR", raising=False)
    previous = keyring.get_keyring()
    memory = MemoryKeyring()
    keyring.set_keyring(memory)
    yield memory
    keyring.set_keyring(previous)


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi(api_key=KEY) as server:
        yield server


def open_dialog(qtbot: QtBot, ctx: UiContext) -> ProvidersDialog:
    dialog = ProvidersDialog(ctx)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.refreshed, timeout=SIGNAL_MS):
        dialog.show()
    return dialog


def saved_vendor(ctx: UiContext, api: FakeApi, key: str | None = KEY) -> None:
    ctx.service.save_provider(
        "vendor",
        "openai",
        base_url=api.base_url,
        display_name="Vendor",
        models=["embed-small"],
        key=key,
    )


def list_labels(dialog: ProvidersDialog) -> list[str]:
    model = dialog.model
    return [model.data(model.index(r)) for r in range(model.rowCount())]


def model_names(form: ProviderForm) -> list[str]:
    return form.models.names()


def visible_texts(dialog: ProvidersDialog) -> list[str]:
    """Everything the dialog shows as text: labels, buttons, unmasked fields, list rows."""
    texts = [dialog.windowTitle()]
    for label in dialog.findChildren(QLabel):
        texts += [label.text(), label.toolTip()]
    for button in dialog.findChildren(QAbstractButton):
        texts += [button.text(), button.toolTip()]
    for edit in dialog.findChildren(QLineEdit):
        texts.append(edit.placeholderText())
        if edit.echoMode() == QLineEdit.EchoMode.Normal:
            texts.append(edit.text())
    for view in dialog.findChildren(QAbstractItemView):
        model = view.model()
        for row in range(model.rowCount()):
            index = model.index(row, 0)
            for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                value = model.data(index, role)
                if isinstance(value, str):
                    texts.append(value)
    return texts


def probe(qtbot: QtBot, form: ProviderForm, button: QAbstractButton) -> bool:
    with qtbot.waitSignal(form.probeFinished, timeout=SIGNAL_MS) as finished:
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    return bool(finished.args[0])


# -- adding, fetching, saving -------------------------------------------------------------


def test_add_provider_through_the_widgets(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi, keychain: MemoryKeyring
) -> None:
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    assert dialog.objectName() == "providersDialog"
    assert list_labels(dialog) == ["Built-in (offline)"]  # nothing configured: a new form
    assert form.entry is None

    QTest.keyClicks(form.name_edit, "My Vendor")
    assert form.id_edit.text() == "my-vendor"  # suggested from the name
    form.id_edit.clear()
    QTest.keyClicks(form.id_edit, "vendor")
    QTest.keyClicks(form.url_edit, api.base_url)
    QTest.keyClicks(form.key_edit, KEY)
    assert form.key_edit.echoMode() == QLineEdit.EchoMode.Password

    assert probe(qtbot, form, form.fetch_button)
    assert model_names(form) == ["embed-large", "embed-small"]
    assert form.models.checked() == []  # fetched models wait to be chosen
    assert form.message.property("level") == "ok"
    assert form.message.text().startswith("Found 2 model(s)")
    assert api.requests(MODELS)[0].headers["authorization"] == f"Bearer {KEY}"

    # Choose one model with the keyboard, as a person would.
    form.models_view.setFocus()
    form.models_view.setCurrentIndex(form.models.index(1))
    QTest.keyClick(form.models_view, Qt.Key.Key_Space)
    assert form.models.checked() == ["embed-small"]

    with qtbot.waitSignals([dialog.providersChanged, dialog.refreshed], timeout=SIGNAL_MS):
        QTest.mouseClick(form.save_button, Qt.MouseButton.LeftButton)

    assert list_labels(dialog) == ["My Vendor", "Built-in (offline)"]
    [saved] = [p for p in ui_ctx.service.list_providers() if p.id == "vendor"]
    assert (saved.kind, saved.base_url, saved.models) == ("openai", api.base_url, ["embed-small"])
    assert keychain.store == {("Trove", "vendor"): KEY}
    assert form.entry is not None and form.entry.id == "vendor"  # now editing what was saved
    assert form.key_edit.text() == ""
    assert form.id_edit.isReadOnly()
    assert form.message.text() == "Saved"
    assert not any(KEY in text for text in visible_texts(dialog))


def test_editing_keeps_the_stored_key_and_never_shows_it(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi, keychain: MemoryKeyring
) -> None:
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    assert form.entry is not None and form.entry.id == "vendor"  # the first one is selected
    assert form.key_edit.text() == ""
    qtbot.waitUntil(lambda: "keychain" in form.key_edit.placeholderText())
    assert form.name_edit.text() == "Vendor"
    assert form.models.checked() == ["embed-small"]

    # The empty field means "use the stored key": the probe succeeds with it.
    assert probe(qtbot, form, form.test_button)
    assert form.message.property("level") == "ok"
    assert "8-dimensional" in form.message.text()

    form.name_edit.clear()
    QTest.keyClicks(form.name_edit, "Renamed")
    with qtbot.waitSignal(dialog.providersChanged, timeout=SIGNAL_MS):
        QTest.mouseClick(form.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Renamed" in list_labels(dialog), timeout=SIGNAL_MS)
    assert keychain.store == {("Trove", "vendor"): KEY}  # an empty field kept the key
    assert not any(KEY in text for text in visible_texts(dialog))


# -- connection test ----------------------------------------------------------------------


def test_connection_success_is_green(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    assert probe(qtbot, form, form.test_button)
    assert form.message.property("level") == "ok"
    assert theme.message_colour("ok").name() in form.message.styleSheet()
    assert form.message.text().startswith("Connection works")
    assert "embed-small" in form.message.text()


def test_rejected_key_is_a_red_auth_error_without_the_key(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    QTest.keyClicks(form.key_edit, WRONG_KEY)
    assert not probe(qtbot, form, form.test_button)
    assert form.message.property("level") == "error"
    assert theme.message_colour("error").name() in form.message.styleSheet()
    headline, detail = form.message.text().split("\n", 1)
    assert headline == "The provider refused the API key"
    assert "401" in detail
    # The fake server echoes the key it was sent; neither key may reach the dialog.
    texts = visible_texts(dialog)
    assert not any(WRONG_KEY in text or KEY in text for text in texts)
    assert form.test_button.isEnabled() and form.fetch_button.isEnabled()


def test_unreachable_server_is_an_inline_error(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop
) -> None:
    with FakeApi() as gone:
        url = gone.base_url
    ui_ctx.service.save_provider("vendor", "openai", base_url=url, models=["m"])
    dialog = open_dialog(qtbot, ui_ctx)
    with qtbot.waitSignal(dialog.form.probeFinished, timeout=10_000) as finished:
        QTest.mouseClick(dialog.form.test_button, Qt.MouseButton.LeftButton)
    assert finished.args == [False]
    assert dialog.form.message.property("level") == "error"
    headline, detail = dialog.form.message.text().split("\n", 1)
    assert headline == "The connection test failed"
    assert detail.startswith("Nothing answered at 127.0.0.1:")


def test_provider_without_a_model_list_suggests_typing_names(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    api.server.route(MODELS, Response.json({"error": {"message": "no such route"}}, status=404))
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    assert not probe(qtbot, form, form.fetch_button)
    assert form.message.text().startswith("Could not fetch the model list\n")
    QTest.keyClicks(form.new_model_edit, "typed-model")
    QTest.keyClick(form.new_model_edit, Qt.Key.Key_Return)
    assert dialog.isVisible()  # Enter added the model; it did not press a dialog button
    assert form.models.checked() == ["embed-small", "typed-model"]
    assert probe(qtbot, form, form.test_button)  # the typed model is selected and tested
    assert "typed-model" in form.message.text()


def test_a_disabled_provider_stays_disabled(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    ui_ctx.service.save_provider("vendor", "openai", base_url=api.base_url, enabled=False)
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    assert list_labels(dialog)[0] == "vendor (off)"
    assert not form.enabled_check.isChecked()
    QTest.keyClicks(form.name_edit, "Vendor")
    with qtbot.waitSignal(dialog.refreshed, timeout=SIGNAL_MS):
        QTest.mouseClick(form.save_button, Qt.MouseButton.LeftButton)
    [vendor] = [p for p in ui_ctx.service.list_providers() if p.id == "vendor"]
    assert (vendor.display_name, vendor.enabled) == ("Vendor", False)


def test_bad_base_url_is_refused_inline_without_a_request(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    QTest.keyClicks(form.name_edit, "vendor")
    QTest.keyClicks(form.url_edit, "ftp://" + api.base_url.removeprefix("http://"))
    QTest.mouseClick(form.fetch_button, Qt.MouseButton.LeftButton)
    assert form.message.property("level") == "error"
    assert "http://" in form.message.text()
    assert not form.probing
    QTest.mouseClick(form.save_button, Qt.MouseButton.LeftButton)
    assert form.message.property("level") == "error"
    assert api.server.requests() == []
    assert [p.id for p in ui_ctx.service.list_providers()] == ["local"]


def test_new_provider_cannot_take_an_existing_id(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    QTest.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    form = dialog.form
    assert form.entry is None and form.name_edit.text() == ""
    QTest.keyClicks(form.name_edit, "Vendor")
    QTest.keyClicks(form.url_edit, "http://127.0.0.1:9")
    QTest.mouseClick(form.save_button, Qt.MouseButton.LeftButton)
    assert form.message.text() == "Another provider already has this ID."
    [vendor] = [p for p in ui_ctx.service.list_providers() if p.id == "vendor"]
    assert vendor.base_url == api.base_url  # untouched


# -- the GUI stays responsive; probes supersede and cancel --------------------------------


def test_gui_thread_keeps_running_during_a_slow_probe(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    def slow_models(_request: Request) -> Response:
        time.sleep(1.0)
        return Response.json({"data": [{"id": "slow-model"}]})

    api.server.route(MODELS, slow_models)
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start()
    with qtbot.waitSignal(form.probeFinished, timeout=SIGNAL_MS):
        QTest.mouseClick(form.fetch_button, Qt.MouseButton.LeftButton)
        started = time.monotonic()
        assert not form.fetch_button.isEnabled()
        assert not form.test_button.isEnabled()
    elapsed = time.monotonic() - started
    timer.stop()
    assert elapsed >= 0.9
    # A blocked GUI thread would tick at most once or twice in that second.
    assert len([t for t in ticks if t >= started]) >= 15
    assert "slow-model" in model_names(form)
    assert form.fetch_button.isEnabled() and form.test_button.isEnabled()


def test_a_newer_probe_supersedes_the_running_one(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    api.fail(MODELS, Fault.slow())  # the first request hangs until the server closes
    outcomes: list[bool] = []
    form.probeFinished.connect(outcomes.append)
    QTest.mouseClick(form.fetch_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: api.hits(MODELS) == 1, timeout=SIGNAL_MS)
    assert form.probing
    with qtbot.waitSignal(form.probeFinished, timeout=SIGNAL_MS):
        form.test_connection()
    assert outcomes == [True]
    assert form.message.text().startswith("Connection works")
    qtbot.wait(50)
    assert outcomes == [True]  # the superseded fetch never reported
    assert model_names(form) == ["embed-small"]


def test_editing_the_address_cancels_a_running_probe(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    api.fail(MODELS, Fault.slow())
    QTest.mouseClick(form.fetch_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: api.hits(MODELS) == 1, timeout=SIGNAL_MS)
    QTest.keyClicks(form.url_edit, "/v1")
    assert not form.probing
    assert form.fetch_button.isEnabled()
    assert probe(qtbot, form, form.fetch_button)  # the new address is probed afresh


def test_closing_the_dialog_cancels_running_probes(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    api.fail(MODELS, Fault.slow())
    outcomes: list[bool] = []
    dialog.form.probeFinished.connect(outcomes.append)
    QTest.mouseClick(dialog.form.fetch_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: api.hits(MODELS) == 1, timeout=SIGNAL_MS)
    tasks = [t for t in asyncio.all_tasks(qloop) if not t.done()]
    assert tasks
    dialog.close()
    assert not dialog.form.probing
    qtbot.waitUntil(lambda: all(t.done() for t in tasks), timeout=SIGNAL_MS)
    assert all(t.cancelled() for t in tasks)
    assert outcomes == []


def test_without_an_event_loop_the_probe_explains_itself(
    qtbot: QtBot, ui_ctx: UiContext, api: FakeApi
) -> None:
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    assert not probe(qtbot, dialog.form, dialog.form.fetch_button)
    assert dialog.form.message.text().startswith("Network checks are unavailable")
    assert api.server.requests() == []


# -- removing, the built-in model ---------------------------------------------------------


def test_remove_asks_first(
    qtbot: QtBot,
    ui_ctx: UiContext,
    qloop: qasync.QEventLoop,
    api: FakeApi,
    keychain: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    assert dialog.remove_button.isEnabled()
    questions: list[str] = []

    def answer(reply: QMessageBox.StandardButton) -> Callable[..., QMessageBox.StandardButton]:
        def question(
            _parent: object, _title: str, text: str, *args: object
        ) -> QMessageBox.StandardButton:
            questions.append(text)
            return reply

        return question

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.No))
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0)  # the form's keychain check
    QTest.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    assert len(questions) == 1 and "Vendor" in questions[0]
    assert ui_ctx.tasks.pending == 0
    assert "Vendor" in list_labels(dialog)

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Yes))
    with qtbot.waitSignals([dialog.providersChanged, dialog.refreshed], timeout=SIGNAL_MS):
        QTest.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    assert list_labels(dialog) == ["Built-in (offline)"]
    assert [p.id for p in ui_ctx.service.list_providers()] == ["local"]
    assert keychain.store == {}
    assert dialog.form.entry is None
    assert not dialog.remove_button.isEnabled()


def test_builtin_model_is_read_only(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    saved_vendor(ui_ctx, api)
    dialog = open_dialog(qtbot, ui_ctx)
    builtin_row = list_labels(dialog).index("Built-in (offline)")
    dialog.list_view.setCurrentIndex(dialog.model.index(builtin_row))
    form = dialog.form
    assert form.entry is not None and form.entry.builtin
    assert form.builtin_note.isVisibleTo(dialog)
    for widget in (form.name_edit, form.url_edit, form.key_edit, form.kind_combo):
        assert not widget.isEnabled()
    for button in (form.fetch_button, form.test_button, form.save_button, dialog.remove_button):
        assert not button.isEnabled()
    assert form.models.names() == ["all-MiniLM-L6-v2"]
    assert not form.models.flags(form.models.index(0)) & Qt.ItemFlag.ItemIsUserCheckable


def test_keychain_refusal_keeps_the_settings_and_says_so(
    qtbot: QtBot, ui_ctx: UiContext, qloop: qasync.QEventLoop, api: FakeApi
) -> None:
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    dialog = open_dialog(qtbot, ui_ctx)
    form = dialog.form
    QTest.keyClicks(form.name_edit, "Vendor")
    QTest.keyClicks(form.url_edit, api.base_url)
    QTest.keyClicks(form.key_edit, KEY)
    with qtbot.waitSignal(dialog.providersChanged, timeout=SIGNAL_MS):
        QTest.mouseClick(form.save_button, Qt.MouseButton.LeftButton)
    assert form.message.property("level") == "error"
    assert "TROVE_KEY_VENDOR" in form.message.text()
    qtbot.waitUntil(lambda: "Vendor" in list_labels(dialog), timeout=SIGNAL_MS)
    assert not any(KEY in text for text in visible_texts(dialog))


# -- models -------------------------------------------------------------------------------


def test_providers_model_is_a_valid_model(qtmodeltester: Any) -> None:
    model = ProvidersModel()
    model.set_entries(
        [
            ProviderEntry("vendor", "openai", "Vendor", "http://127.0.0.1:9", ("m",)),
            ProviderEntry("local", "local", "Built-in (offline)", "", ("all-MiniLM-L6-v2",)),
        ]
    )
    qtmodeltester.check(model)
    assert model.row_of("local") == 1
    assert model.data(model.index(1), Qt.ItemDataRole.ToolTipRole)


def test_model_choices_model_is_a_valid_model(qtmodeltester: Any) -> None:
    model = ModelChoicesModel()
    model.set_models(["a", "b", "a", " "])
    assert model.names() == ["a", "b"]
    assert model.merge(["b", "c"]) == 1
    assert model.add("d") == 3
    assert model.add("c") == 2  # typing a listed name checks it
    qtmodeltester.check(model)
    assert model.checked() == ["a", "b", "c", "d"]
    assert model.setData(model.index(0), Qt.CheckState.Unchecked, Qt.ItemDataRole.CheckStateRole)
    assert model.checked() == ["b", "c", "d"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [("SiliconFlow", "siliconflow"), (" My  Vendor ", "my-vendor"), ("a:b", "a-b")],
)
def test_suggested_ids_are_valid(name: str, expected: str) -> None:
    assert suggest_id(name) == expected
