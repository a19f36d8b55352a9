"""Colours that read on light and dark palettes (app/ui/theme.py): WCAG contrast of every
badge, score, muted and notification colour, light/dark detection, and repainting when the
palette or the system's colour scheme changes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QEvent, QModelIndex, QObject, QRectF, Qt
from PySide6.QtGui import QColor, QPalette, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget
from pytestqt.qtbot import QtBot

from app.knowledge.types import Item, ItemStatus, ItemType
from app.main import wants_gui
from app.ui import launcher, theme
from app.ui.items.item_model import Column, ItemTreeModel
from app.ui.items.item_view import ItemTreeView
from app.ui.items.status_delegate import StatusDelegate
from app.ui.notifications import Level, Notice
from app.ui.search.result_delegate import ResultDelegate
from app.ui.search.results_model import ResultRole
from app.ui.toast import Toast


def palette(window: str, base: str, alternate: str, text: str, placeholder: str) -> QPalette:
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: window,
        QPalette.ColorRole.Base: base,
        QPalette.ColorRole.AlternateBase: alternate,
        QPalette.ColorRole.Text: text,
        QPalette.ColorRole.WindowText: text,
        QPalette.ColorRole.PlaceholderText: placeholder,
    }
    for role, value in roles.items():
        pal.setColor(role, QColor(value))
    return pal


def fusion_light() -> QPalette:
    style = QStyleFactory.create("Fusion")
    assert style is not None
    return style.standardPalette()


# (name, palette maker, dark?)
PALETTES = [
    ("fusion light", fusion_light, False),
    ("trove --dark", theme.dark_palette, True),
    ("breeze light", lambda: palette("#eff0f1", "#ffffff", "#f7f7f7", "#232629", "#8a8e92"), False),
    ("breeze dark", lambda: palette("#2a2e32", "#1b1e20", "#232629", "#fcfcfc", "#6e7175"), True),
    ("macos dark", lambda: palette("#323232", "#1e1e1e", "#2a2a2a", "#dfdfdf", "#5b5b5b"), True),
    ("windows dark", lambda: palette("#202020", "#2b2b2b", "#323232", "#ffffff", "#7a7a7a"), True),
    ("tinted rows", lambda: palette("#f0f0f0", "#fafafa", "#dde6f3", "#101010", "#b0b0b0"), False),
]


def rows(pal: QPalette) -> list[QColor]:
    return [pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.AlternateBase)]


@pytest.fixture
def restore_palette(qapp: QApplication) -> Iterator[None]:
    original = QPalette(qapp.palette())
    yield
    qapp.setPalette(original)


def test_contrast_arithmetic() -> None:
    black, white = QColor("#000000"), QColor("#ffffff")
    assert theme.contrast(black, white) == pytest.approx(21.0)
    assert theme.contrast(white, white) == pytest.approx(1.0)
    assert theme.contrast(QColor("#777777"), white) == pytest.approx(4.48, abs=0.01)
    assert theme.blend(black, 0.25, white).name() == "#bfbfbf"
    nudged = theme.readable(QColor("#999999"), [white], 4.5)
    assert theme.contrast(nudged, white) >= 4.5 and nudged.lightnessF() < 0.6


@pytest.mark.parametrize(("name", "make", "dark"), PALETTES, ids=[p[0] for p in PALETTES])
def test_every_colour_reads_on_the_palette(name: str, make: object, dark: bool) -> None:
    assert callable(make)
    pal: QPalette = make()
    colours = theme.theme_for(pal)
    assert colours.dark is dark and theme.is_dark(pal) is dark
    grounds = rows(pal)
    for status in ItemStatus:
        badge = colours.badges[status]
        for ground in grounds:
            # The badge's outline against the row, its text on its body and on its done share.
            assert theme.contrast(badge.stroke, ground) >= 3.0, (status, ground.name())
            for layer in (badge.fill, badge.bar):
                body = theme.blend(badge.stroke, layer.alphaF(), ground)
                assert theme.contrast(badge.text, body) >= 4.5, (status, layer.alphaF())
    for kind in ("relevance", "ranking"):
        for ground in grounds:
            assert theme.contrast(theme.score_colour(kind, pal), ground) >= 4.5, kind
    for ground in grounds:
        assert theme.contrast(theme.muted_text(pal), ground) >= 4.5
    window = pal.color(QPalette.ColorRole.Window)
    for level, accent in colours.notices.items():
        for ground in (grounds[0], window):
            assert theme.contrast(accent, ground) >= 3.0, level


def test_the_designed_colours_stay_when_they_already_read() -> None:
    light, dark = theme.theme_for(fusion_light()), theme.theme_for(theme.dark_palette())
    assert light.badges[ItemStatus.FAILED].stroke.name() == "#c0352d"
    assert dark.badges[ItemStatus.FAILED].stroke.name() == "#ff8078"
    # Dark-palette colours are lighter than the light-palette ones, hue for hue.
    for status in ItemStatus:
        assert dark.badges[status].stroke.lightnessF() > light.badges[status].stroke.lightnessF()


def test_a_mid_grey_palette_follows_the_system_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    grey = palette("#7a7a7a", "#858585", "#808080", "#000000", "#303030")
    monkeypatch.setattr(theme, "color_scheme", lambda: None)
    assert not theme.is_dark(grey)  # no scheme: by lightness (just above the middle)
    monkeypatch.setattr(theme, "color_scheme", lambda: "dark")
    assert theme.is_dark(grey)
    # A plainly light palette is painted light whatever the scheme says.
    assert not theme.is_dark(fusion_light())


# -- repainting ------------------------------------------------------------------------------


class PaintCounter(QObject):
    def __init__(self, watched: QWidget) -> None:
        super().__init__(watched)
        self.paints = 0
        watched.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.paints += 1
        return False


def completed_item() -> Item:
    return Item(
        id="doc",
        base_id="b",
        parent_id=None,
        type=ItemType.FILE,
        source="/docs/a.txt",
        title="a.txt",
        relative_path="a.txt",
        status=ItemStatus.COMPLETED,
        phase=None,
        progress=None,
        error_code=None,
        error_message=None,
        chunk_count=1,
        size=10,
        content_hash=None,
        created_at=0.0,
        updated_at=0.0,
    )


def badge_body(view: ItemTreeView, model: ItemTreeModel) -> QColor:
    """The colour inside the first row's badge, left of its text, as painted."""
    rect = QRectF(view.visualRect(model.index(0, Column.STATUS))).adjusted(4, 3, -4, -3)
    image = view.viewport().grab().toImage()
    return image.pixelColor(int(rect.left()) + 4, int(rect.center().y()))


def close_to(a: QColor, b: QColor) -> bool:
    return all(abs(x - y) <= 3 for x, y in zip(a.getRgb()[:3], b.getRgb()[:3], strict=True))


def test_a_palette_change_repaints_the_badges_in_the_new_colours(
    qtbot: QtBot, qapp: QApplication, restore_palette: None
) -> None:
    qapp.setPalette(fusion_light())
    model = ItemTreeModel()
    model.apply_items([completed_item()])
    view = ItemTreeView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.setItemDelegateForColumn(Column.STATUS, StatusDelegate(view))
    view.resize(900, 200)
    view.setColumnWidth(Column.STATUS, 190)
    view.show()
    qtbot.waitExposed(view)
    light = theme.theme_for(view.palette()).badges[ItemStatus.COMPLETED]
    base = view.palette().color(QPalette.ColorRole.Base)
    seen = badge_body(view, model)
    assert close_to(seen, theme.blend(light.stroke, light.fill.alphaF(), base)), seen.name()

    counter = PaintCounter(view.viewport())
    qapp.setPalette(theme.dark_palette())
    qtbot.waitUntil(lambda: counter.paints > 0)  # Qt repaints on its own
    dark = theme.theme_for(view.palette()).badges[ItemStatus.COMPLETED]
    base = view.palette().color(QPalette.ColorRole.Base)
    assert base.name() == "#1e1e1e"
    seen = badge_body(view, model)
    assert close_to(seen, theme.blend(dark.stroke, dark.fill.alphaF(), base)), seen.name()
    assert not close_to(dark.stroke, light.stroke)


def test_a_colour_scheme_change_recolours_and_repaints(
    qtbot: QtBot, qapp: QApplication, restore_palette: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A mid-grey palette is the one case the system's scheme decides.
    grey = palette("#7a7a7a", "#858585", "#808080", "#000000", "#303030")
    qapp.setPalette(grey)
    monkeypatch.setattr(theme, "color_scheme", lambda: "light")
    view = ItemTreeView()
    qtbot.addWidget(view)
    model = ItemTreeModel()
    model.apply_items([completed_item()])
    view.setModel(model)
    view.setItemDelegateForColumn(Column.STATUS, StatusDelegate(view))
    view.show()
    qtbot.waitExposed(view)
    assert not theme.theme_for(view.palette()).dark
    counter = PaintCounter(view.viewport())
    monkeypatch.setattr(theme, "color_scheme", lambda: "dark")
    hints = qapp.styleHints()
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # as the system sends it
    qtbot.waitUntil(lambda: counter.paints > 0)
    assert theme.theme_for(view.palette()).dark


# -- the other painters ----------------------------------------------------------------------


def test_result_scores_use_the_palettes_colours(qapp: QApplication) -> None:
    model = QStandardItemModel()
    cell = QStandardItem()
    for role, value in {
        ResultRole.SCORE_KIND: "relevance",
        ResultRole.RANK: 1,
        ResultRole.SCORE_TEXT: "0.812",
        ResultRole.SCORE_KIND_TEXT: "relevance",
        ResultRole.TITLE: "Paper",
        ResultRole.SNIPPET_HTML: "text",
    }.items():
        cell.setData(value, role)
    model.appendRow(cell)
    index: QModelIndex = model.index(0, 0)
    delegate = ResultDelegate()
    for pal in (fusion_light(), theme.dark_palette()):
        html = delegate.row_html(index, "#777777", palette=pal)
        assert theme.score_colour("relevance", pal).name() in html
    assert theme.score_colour("relevance", fusion_light()) != theme.score_colour(
        "relevance", theme.dark_palette()
    )


def test_toast_borders_follow_the_palette(
    qtbot: QtBot, qapp: QApplication, restore_palette: None
) -> None:
    host = QWidget()
    qtbot.addWidget(host)
    borders = []
    for pal in (fusion_light(), theme.dark_palette()):
        qapp.setPalette(pal)
        toast = Toast(Notice(Level.ERROR, "Failed", "", 0.0), host)
        accent = theme.theme_for(pal).notices["error"].name()
        assert f"border: 1px solid {accent}" in toast.styleSheet()
        borders.append(accent)
    assert borders[0] != borders[1]


def test_dark_can_be_forced_from_the_command_line(
    qapp: QApplication, restore_palette: None
) -> None:
    assert launcher.parse_args(["--dark", "--screenshot", "x.png"]).dark
    assert not launcher.parse_args([]).dark
    assert wants_gui(["--dark", "--screenshot", "x.png"])
    theme.force_dark(qapp)
    assert theme.is_dark(qapp.palette()) and theme.current().dark


@pytest.mark.parametrize(("name", "make", "dark"), PALETTES, ids=[p[0] for p in PALETTES])
def test_message_words_and_boxes_read_on_the_palette(name: str, make: object, dark: bool) -> None:
    """Error and confirmation labels, the failed-base banner and the low-relevance cue: the
    words read at 4.5:1 on the window, on text fields and on the box's own tint."""
    assert callable(make)
    pal: QPalette = make()
    window = pal.color(QPalette.ColorRole.Window)
    for kind in ("error", "ok", "info", "heading"):
        words = theme.message_colour(kind, pal)
        tint = theme.blend(words, theme.TINT_ALPHA[dark], window)
        for ground in (window, pal.color(QPalette.ColorRole.Base), tint):
            assert theme.contrast(words, ground) >= 4.5, (kind, ground.name())
        style = theme.message_box_style(kind, "#box", pal)
        assert tint.name() in style and words.name() in style
