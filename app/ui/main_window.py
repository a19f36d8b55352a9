"""The main window: knowledge bases on the left; the selected base's items, search and
settings on the right; menus, toolbar, status bar and notifications around them."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QByteArray, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolBar,
    QWidget,
)

from app import __version__
from app.agent.client_config import client_config_json
from app.knowledge.types import Base, ItemStatus
from app.ui import i18n
from app.ui.ask.ask_view import AskView
from app.ui.bases.base_list import BasesPanel
from app.ui.context import UiContext
from app.ui.empty_state import EmptyState
from app.ui.icons import app_icon
from app.ui.items.items_panel import ItemsPanel
from app.ui.mcp_dialog import McpDialog
from app.ui.models.download_strip import DownloadStrip
from app.ui.models.models_dialog import ModelsDialog
from app.ui.progress import ProgressWatcher, WorkStatus
from app.ui.providers.providers_dialog import ProvidersDialog
from app.ui.questions import ask_yes_no
from app.ui.search.search_view import SearchView
from app.ui.settings.new_base_dialog import NewBaseDialog
from app.ui.settings.rag_panel import RagSettingsPanel
from app.ui.toast import ToastArea

BUSY_DELAY_MS = 400
PAGE_EMPTY = 0
PAGE_BASE = 1


class MainWindow(QMainWindow):
    # the person picked another interface language (applies after a restart)
    languageChosen = Signal(str)

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle(self.tr("Trove"))
        self.setWindowIcon(app_icon())
        self.ctx = ctx
        # Tests answer the quit and restart questions without a modal box.
        self.confirm_quit: Callable[[int], bool] = self._confirm_quit
        self.confirm_quit_downloads: Callable[[int], bool] = self._confirm_quit_downloads
        self.ask_restart: Callable[[], bool] = self._ask_restart
        # the window closed to restart Trove (the launcher starts it again)
        self.restart_requested = False
        self.bases = BasesPanel(ctx, self)
        self.items = ItemsPanel(ctx, self)
        self.search = SearchView(ctx, self)
        self.search.hidden_items = self.items.deletions.hidden
        self.ask = AskView(ctx, self)
        self.rag = RagSettingsPanel(ctx, self)
        self.empty = EmptyState(self)
        self.toasts: ToastArea
        self._build_central()
        self._build_actions()
        self._build_menus()
        self._build_toolbar()
        self._build_status_bar()
        self._connect_signals()
        self._restore_layout()

    # -- public --------------------------------------------------------------------------

    def start(self) -> None:
        """Load the bases (off the GUI thread) once the window exists."""
        self.bases.reload()
        self.ask.reload_models()

    def current_base(self) -> Base | None:
        return self.bases.selected_base()

    def open_new_base_dialog(self) -> NewBaseDialog:
        dialog = NewBaseDialog(self.ctx, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.baseCreated.connect(self._on_base_created)
        dialog.open()
        return dialog

    def open_providers_dialog(self) -> ProvidersDialog:
        dialog = ProvidersDialog(self.ctx, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.providersChanged.connect(self.rag.reload_models)
        dialog.providersChanged.connect(self.ask.reload_models)
        dialog.open()
        return dialog

    def open_models_dialog(self) -> ModelsDialog:
        dialog = ModelsDialog(self.ctx, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def open_mcp_dialog(self) -> McpDialog:
        home = self.ctx.service.layout.home
        dialog = McpDialog(client_config_json(home), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    # -- building ------------------------------------------------------------------------

    def _build_central(self) -> None:
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("baseTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.items, self.tr("Content"))
        settings_scroll = QScrollArea(self)
        settings_scroll.setObjectName("settingsScroll")
        settings_scroll.setWidgetResizable(True)
        settings_scroll.setWidget(self.rag)
        self.tabs.addTab(settings_scroll, self.tr("Settings"))
        self.right = QSplitter(Qt.Orientation.Vertical, self)
        self.right.setObjectName("contentSplitter")
        # Search and Ask side by side in one area: both start from the selected base.
        self.query_tabs = QTabWidget(self)
        self.query_tabs.setObjectName("queryTabs")
        self.query_tabs.setDocumentMode(True)
        self.query_tabs.addTab(self.search, self.tr("Search"))
        self.query_tabs.addTab(self.ask, self.tr("Ask"))
        self.right.addWidget(self.tabs)
        self.right.addWidget(self.query_tabs)
        self.right.setStretchFactor(0, 3)
        self.right.setStretchFactor(1, 2)
        self.pages = QStackedWidget(self)
        self.pages.setObjectName("pages")
        self.pages.addWidget(self.empty)
        self.pages.addWidget(self.right)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.bases)
        self.splitter.addWidget(self.pages)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([220, 980])
        self.setCentralWidget(self.splitter)
        # Over the splitter, not in it: a splitter makes every child widget a pane.
        self.toasts = ToastArea(self, self.splitter)

    def _build_actions(self) -> None:
        self.providers_action = QAction(self.tr("Model providers…"), self)
        self.providers_action.setObjectName("providersAction")
        self.models_action = QAction(self.tr("Models…"), self)
        self.models_action.setObjectName("modelsAction")
        self.mcp_action = QAction(self.tr("Connect AI agents…"), self)
        self.mcp_action.setObjectName("mcpAction")
        self.find_action = QAction(self.tr("Search"), self)
        self.find_action.setObjectName("findAction")
        self.find_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Find))
        self.quit_action = QAction(self.tr("Quit"), self)
        self.quit_action.setObjectName("quitAction")
        self.quit_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Quit))
        self.about_action = QAction(self.tr("About Trove"), self)
        self.about_action.setObjectName("aboutAction")
        self.language_group = QActionGroup(self)
        chosen = str(self.ctx.settings.value(i18n.SETTING, "") or "")
        for code, label in (
            ("", self.tr("System language")),
            ("en", "English"),
            ("zh_CN", "简体中文"),
        ):
            act = QAction(label, self.language_group)
            act.setCheckable(True)
            act.setChecked(code == chosen)
            act.setData(code)
        self.addActions([self.find_action, self.quit_action])

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu(self.tr("&File"))
        file_menu.addAction(self.bases.new_action)
        file_menu.addAction(self.bases.import_action)
        file_menu.addAction(self.bases.attach_action)
        file_menu.addAction(self.bases.export_action)
        file_menu.addSeparator()
        file_menu.addActions(self.items.add_actions)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = bar.addMenu(self.tr("&Edit"))
        edit_menu.addAction(self.items.undo_delete_action)
        edit_menu.addSeparator()
        edit_menu.addAction(self.find_action)
        edit_menu.addSeparator()
        edit_menu.addActions(self.items.item_actions)
        edit_menu.addSeparator()
        edit_menu.addAction(self.bases.rename_action)
        edit_menu.addAction(self.bases.detach_action)
        edit_menu.addAction(self.bases.delete_action)
        settings_menu = bar.addMenu(self.tr("&Settings"))
        settings_menu.addAction(self.providers_action)
        settings_menu.addAction(self.models_action)
        settings_menu.addAction(self.mcp_action)
        language_menu = settings_menu.addMenu(self.tr("Language"))
        language_menu.addActions(self.language_group.actions())
        help_menu = bar.addMenu(self.tr("&Help"))
        help_menu.addAction(self.about_action)

    def _build_toolbar(self) -> None:
        toolbar = QToolBar(self.tr("Main toolbar"), self)
        toolbar.setObjectName("mainToolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.addAction(self.bases.new_action)
        toolbar.addSeparator()
        style = self.style()
        icons = {
            self.items.add_files_action: style.StandardPixmap.SP_FileIcon,
            self.items.add_folder_action: style.StandardPixmap.SP_DirIcon,
            self.items.add_url_action: style.StandardPixmap.SP_DriveNetIcon,
            self.items.add_sitemap_action: style.StandardPixmap.SP_FileDialogListView,
            self.items.add_note_action: style.StandardPixmap.SP_FileDialogContentsView,
            self.items.reindex_action: style.StandardPixmap.SP_BrowserReload,
            self.items.delete_action: style.StandardPixmap.SP_TrashIcon,
            self.providers_action: style.StandardPixmap.SP_ComputerIcon,
        }
        for act, pixmap in icons.items():
            act.setIcon(style.standardIcon(pixmap))
        toolbar.addActions(self.items.add_actions)
        toolbar.addSeparator()
        toolbar.addAction(self.items.reindex_action)
        toolbar.addAction(self.items.delete_action)
        toolbar.addSeparator()
        toolbar.addAction(self.providers_action)
        self.addToolBar(toolbar)

    def _build_status_bar(self) -> None:
        # Shown only when a background call takes a moment, so quick ones never flicker.
        self.busy = QProgressBar(self)
        self.busy.setObjectName("busyIndicator")
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(BUSY_DELAY_MS)
        self.statusBar().addPermanentWidget(self.busy)
        self.counts_label = QLabel(self)
        self.counts_label.setObjectName("itemCounts")
        self.statusBar().addWidget(self.counts_label, 1)
        # What indexing really does, in this base and all bases, whoever runs it.
        self.work = WorkStatus(self)
        self.queue_label = self.work.label
        self.statusBar().addPermanentWidget(self.work)
        # A model download goes on after its dialog closes: it shows here until it ends.
        self.download_strip = DownloadStrip(self.ctx.downloads, self, auto=True, compact=True)
        self.statusBar().addPermanentWidget(self.download_strip)
        self.progress = ProgressWatcher(self.ctx, self.items.model, self.items.feed, self)

    def _connect_signals(self) -> None:
        self.bases.baseSelected.connect(self._on_base_selected)
        self.bases.baseUpdated.connect(self._on_base_updated)
        self.bases.newBaseRequested.connect(self.open_new_base_dialog)
        self.bases.baseDeleted.connect(self.items.deletions.forget_base)
        self.bases.model.modelReset.connect(self._on_bases_reset)
        self.items.baseRestored.connect(self._on_base_restored)
        self.items.transferRequested.connect(self._on_transfer_requested)
        self.bases.itemsTransferred.connect(self._on_items_transferred)
        self.bases.modelNeeded.connect(self._on_model_needed)
        self.items.feed.refreshed.connect(self._update_counts)
        self.rag.baseUpdated.connect(self._on_settings_saved)
        self.empty.createRequested.connect(self.open_new_base_dialog)
        self.empty.providersRequested.connect(self.open_providers_dialog)
        self.empty.sourcesDropped.connect(self._on_sources_dropped_on_welcome)
        self.providers_action.triggered.connect(self.open_providers_dialog)
        self.models_action.triggered.connect(self.open_models_dialog)
        self.mcp_action.triggered.connect(self.open_mcp_dialog)
        self.find_action.triggered.connect(self._on_find)
        self.quit_action.triggered.connect(self.close)
        self.about_action.triggered.connect(self._on_about)
        self.language_group.triggered.connect(self._on_language_chosen)
        self.ctx.notifier.posted.connect(self.toasts.show_notice)
        self.ctx.notifier.withdrawn.connect(self.toasts.withdraw)
        self.progress.changed.connect(self.work.show_report)
        self.ctx.tasks.failed.connect(self._on_background_failed)
        self.ctx.tasks.activeChanged.connect(self._on_tasks_active)
        self._busy_timer.timeout.connect(self.busy.show)

    # -- slots ---------------------------------------------------------------------------

    @Slot(object)
    def _on_base_selected(self, base: Base | None) -> None:
        self.items.set_base(base)
        self.search.set_base(base)
        self.ask.set_base(base)
        self.rag.set_base(base)
        self._update_counts()
        title = self.tr("Trove") if base is None else self.tr("{0} — Trove").format(base.name)
        self.setWindowTitle(title)

    @Slot(object)
    def _on_base_updated(self, base: Base) -> None:
        self.items.set_base(base)
        self.search.set_base(base)
        self.ask.set_base(base)
        if not self.rag.is_dirty():
            self.rag.set_base(base)
        self.setWindowTitle(self.tr("{0} — Trove").format(base.name))

    @Slot()
    def _on_bases_reset(self) -> None:
        has_bases = self.bases.model.rowCount() > 0
        self.pages.setCurrentIndex(PAGE_BASE if has_bases else PAGE_EMPTY)

    @Slot(object)
    def _on_base_created(self, base: Base) -> None:
        self.bases.reload(select=base.id)

    @Slot(list, list)
    def _on_sources_dropped_on_welcome(self, paths: list[str], urls: list[str]) -> None:
        """No base yet: create one, then add what was dropped to it."""
        dialog = self.open_new_base_dialog()
        dialog.baseCreated.connect(lambda base: self._add_dropped(base, paths, urls))

    def _add_dropped(self, base: Base, paths: list[str], urls: list[str]) -> None:
        if paths:
            self.items.adder.add_paths(base.id, paths)
        if urls:
            self.items.adder.add_urls(base.id, urls)

    @Slot(str)
    def _on_base_restored(self, base_id: str) -> None:
        self.bases.reload(select=base_id)

    @Slot(list, bool)
    def _on_transfer_requested(self, item_ids: list[str], move: bool) -> None:
        base = self.current_base()
        if base is not None:
            self.bases.transfer_items(base.id, item_ids, move=move)

    @Slot(object)
    def _on_items_transferred(self, _report: object) -> None:
        # A move marks the originals deleting; the copies show when their base is opened.
        self.items.feed.reload_soon()

    @Slot(str)
    def _on_model_needed(self, base_id: str) -> None:
        """Show the imported base's settings, where a model is chosen (restore path)."""
        self.bases.select(base_id)
        self.tabs.setCurrentIndex(1)

    @Slot(object)
    def _on_settings_saved(self, base: Base) -> None:
        self.ctx.executor.schedule()
        self.bases.reload(select=base.id)

    @Slot()
    def _on_find(self) -> None:
        if self.current_base() is not None:
            self.query_tabs.setCurrentWidget(self.search)
            self.search.focus_query()

    @Slot(bool)
    def _on_tasks_active(self, active: bool) -> None:
        if active:
            self._busy_timer.start()
        else:
            self._busy_timer.stop()
            self.busy.hide()

    @Slot(object)
    def _on_background_failed(self, exc: BaseException) -> None:
        self.ctx.notifier.failure(exc)

    @Slot(QAction)
    def _on_language_chosen(self, action: QAction) -> None:
        code = str(action.data() or "")
        self.ctx.settings.setValue(i18n.SETTING, code)
        self.ctx.settings.sync()
        self.languageChosen.emit(code)
        if self.ask_restart():
            self.restart_requested = True
            if not self.close():
                self.restart_requested = False
            return
        self.ctx.notifier.notify(
            self.tr("Language saved"), self.tr("Restart Trove to use the new language.")
        )

    def _ask_restart(self) -> bool:
        box = QMessageBox(self)
        box.setObjectName("restartBox")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(self.tr("Language"))
        box.setText(self.tr("Trove shows the new language after a restart. Restart now?"))
        now = box.addButton(self.tr("Restart now"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(self.tr("Later"), QMessageBox.ButtonRole.RejectRole)
        box.exec()
        return box.clickedButton() is now

    @Slot()
    def _on_about(self) -> None:
        QMessageBox.about(
            self,
            self.tr("About Trove"),
            self.tr(
                "<b>Trove {0}</b><br>Knowledge bases on your own computer: full-text and "
                "semantic search over your files, web pages and notes."
            ).format(__version__),
        )

    @Slot()
    def _update_counts(self) -> None:
        if self.current_base() is None:
            self.counts_label.clear()
            return
        counts = self.items.model.status_counts()
        total = sum(counts.values())
        self.counts_label.setText(
            self.tr("{0} documents · {1} completed · {2} in progress · {3} failed").format(
                total,
                counts[ItemStatus.COMPLETED],
                counts[ItemStatus.PREPARING] + counts[ItemStatus.PROCESSING],
                counts[ItemStatus.FAILED],
            )
        )

    # -- window state --------------------------------------------------------------------

    def _restore_layout(self) -> None:
        settings = self.ctx.settings
        geometry = settings.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 800)
        for splitter in (self.splitter, self.right):
            state = settings.value(f"window/{splitter.objectName()}")
            if isinstance(state, QByteArray) and not state.isEmpty():
                splitter.restoreState(state)

    def close_without_asking(self) -> None:
        """Quit as the close button does, but nobody is asked: the session is ending."""
        self.confirm_quit = lambda _running: True
        self.confirm_quit_downloads = lambda _count: True
        self.close()

    def save_layout(self) -> None:
        settings = self.ctx.settings
        settings.setValue("window/geometry", self.saveGeometry())
        for splitter in (self.splitter, self.right):
            settings.setValue(f"window/{splitter.objectName()}", splitter.saveState())
        settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        # Only this process's own jobs stop with the window; another Trove's go on.
        running = self.ctx.executor.running_count
        if running and not self.confirm_quit(running):
            event.ignore()
            return
        downloads = len(self.ctx.downloads.downloads())
        if downloads and not self.confirm_quit_downloads(downloads):
            event.ignore()
            return
        # Stopped, not lost: the parts stay and the next download resumes from them.
        self.ctx.downloads.shutdown()
        self.items.flush_deletions()
        self.save_layout()
        super().closeEvent(event)

    def _confirm_quit(self, running: int) -> bool:
        return ask_yes_no(
            self,
            self.tr("Quit Trove"),
            self.tr(
                "%n item(s) are being indexed right now. Quit anyway? They stop and go back "
                "to the queue with the items still waiting, and are indexed the next time "
                "Trove runs; nothing already embedded is paid for again.",
                "",
                running,
            ),
        )

    def _confirm_quit_downloads(self, count: int) -> bool:
        return ask_yes_no(
            self,
            self.tr("Quit Trove"),
            self.tr(
                "%n model download(s) are running. Quit anyway? What was downloaded is kept, "
                "and the next download of the model resumes from it.",
                "",
                count,
            ),
        )
