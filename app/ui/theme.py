"""The window's own colours (status badges, score kinds, muted text, notification borders),
picked for the palette they are painted on, light or dark, and checked for contrast.

Each colour has a light-palette and a dark-palette design value; `theme_for(palette)` then
nudges it until it reaches its WCAG contrast ratio on that palette's backgrounds (4.5:1 for
text, 3:1 for shapes), so a system palette nobody designed for stays readable too. Results
are cached per palette, and a palette or colour-scheme change gives a new palette key, so
widgets that ask while painting follow the change at their next repaint.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from app.knowledge.types import ItemStatus

TEXT_CONTRAST = 4.5
SHAPE_CONTRAST = 3.0

# A badge's body and its "done" share are its colour laid thinly over the row.
FILL_ALPHA = {False: 0.16, True: 0.18}  # by dark
BAR_ALPHA = {False: 0.34, True: 0.36}

_STATUS = {
    # status: (light, dark)
    ItemStatus.PREPARING: ("#5b6576", "#aab4c4"),
    ItemStatus.PROCESSING: ("#1f5fc9", "#7eaaff"),
    ItemStatus.COMPLETED: ("#1d7a45", "#5fcf8e"),
    ItemStatus.FAILED: ("#c0352d", "#ff8078"),
    ItemStatus.DELETING: ("#a2520c", "#f2a85e"),
}
_SCORES = {"relevance": ("#2e7d32", "#81c995"), "ranking": ("#1565c0", "#8ab4f8")}
_NOTICES = {
    "info": ("#2f6fdb", "#7eaaff"),
    "warning": ("#b4610f", "#f2a85e"),
    "error": ("#c0352d", "#ff8078"),
}

# Words in a colour of their own: errors, confirmations, notes and headings in labels.
_MESSAGES = {
    "error": ("#c62828", "#ff8a80"),
    "ok": ("#1b7f3b", "#81c995"),
    "info": ("#1a3e72", "#8ab4f8"),
    "heading": ("#2f6fdb", "#8ab4f8"),
}
# How strongly a message's colour tints the background of a box that holds it.
TINT_ALPHA = {False: 0.10, True: 0.22}

_DARK_PALETTE = {
    QPalette.ColorRole.Window: "#2b2b2b",
    QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#1e1e1e",
    QPalette.ColorRole.AlternateBase: "#262626",
    QPalette.ColorRole.ToolTipBase: "#3a3a3a",
    QPalette.ColorRole.ToolTipText: "#e6e6e6",
    QPalette.ColorRole.PlaceholderText: "#9a9a9a",
    QPalette.ColorRole.Text: "#e6e6e6",
    QPalette.ColorRole.Button: "#353535",
    QPalette.ColorRole.ButtonText: "#e6e6e6",
    QPalette.ColorRole.BrightText: "#ff8078",
    QPalette.ColorRole.Light: "#505050",
    QPalette.ColorRole.Midlight: "#404040",
    QPalette.ColorRole.Mid: "#303030",
    QPalette.ColorRole.Dark: "#1a1a1a",
    QPalette.ColorRole.Shadow: "#000000",
    QPalette.ColorRole.Highlight: "#2f65ca",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.Link: "#8ab4f8",
    QPalette.ColorRole.LinkVisited: "#c58af9",
}
_DARK_DISABLED = "#7f7f7f"


# -- contrast arithmetic ---------------------------------------------------------------------


def luminance(colour: QColor) -> float:
    """WCAG relative luminance (sRGB, alpha ignored)."""

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * linear(colour.redF())
        + 0.7152 * linear(colour.greenF())
        + 0.0722 * linear(colour.blueF())
    )


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio, 1 (same) to 21 (black on white)."""
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def blend(colour: QColor, alpha: float, background: QColor) -> QColor:
    """`colour` laid over `background` with `alpha` (0..1): what the eye sees."""
    return QColor.fromRgbF(
        colour.redF() * alpha + background.redF() * (1 - alpha),
        colour.greenF() * alpha + background.greenF() * (1 - alpha),
        colour.blueF() * alpha + background.blueF() * (1 - alpha),
    )


def readable(colour: QColor, backgrounds: Iterable[QColor], ratio: float) -> QColor:
    """`colour`, or the nearest shade of it (same hue, lighter on dark backgrounds, darker on
    light ones) that reaches `ratio` against every background."""
    grounds = list(backgrounds)
    if all(contrast(colour, g) >= ratio for g in grounds):
        return QColor(colour)
    lighter = sum(luminance(g) for g in grounds) / len(grounds) < 0.18
    hue, saturation, lightness = colour.hslHueF(), colour.hslSaturationF(), colour.lightnessF()
    step = 0.02 if lighter else -0.02
    while 0.0 < lightness < 1.0:
        lightness = min(1.0, max(0.0, lightness + step))
        shade = QColor.fromHslF(max(hue, 0.0), saturation, lightness)
        if all(contrast(shade, g) >= ratio for g in grounds):
            return shade
    return QColor(Qt.GlobalColor.white if lighter else Qt.GlobalColor.black)


# -- light or dark -----------------------------------------------------------------------------


def color_scheme() -> str | None:
    """The system's colour scheme, "dark" or "light" (Qt >= 6.5); None when unknown."""
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None) if hints is not None else None
    if scheme is None:
        return None
    value = scheme()
    if value == Qt.ColorScheme.Dark:
        return "dark"
    if value == Qt.ColorScheme.Light:
        return "light"
    return None


def is_dark(palette: QPalette) -> bool:
    """Whether colours are painted on dark backgrounds.

    Contrast is measured against the palette in use, so its lightness decides whenever it is
    plainly light or dark (a style may ignore the system scheme, `--dark` forces a palette);
    for a mid-grey palette the system's colour scheme decides, and without one the palette
    still does."""
    lightness = (
        palette.color(QPalette.ColorRole.Window).lightnessF()
        + palette.color(QPalette.ColorRole.Base).lightnessF()
    ) / 2
    if 0.35 <= lightness <= 0.65:
        scheme = color_scheme()
        if scheme is not None:
            return scheme == "dark"
    return lightness < 0.5


# -- the colours -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Badge:
    stroke: QColor  # the outline: >= 3:1 on the row
    fill: QColor  # the body, translucent
    bar: QColor  # the done share of a running item, translucent
    text: QColor  # >= 4.5:1 on the body and on the done share, on plain and alternate rows


@dataclass(frozen=True, slots=True)
class Theme:
    dark: bool
    badges: dict[ItemStatus, Badge]
    scores: dict[str, QColor]
    muted: QColor
    notices: dict[str, QColor]


def _rows(palette: QPalette) -> list[QColor]:
    """The backgrounds a view's rows have: plain and alternate."""
    return [
        palette.color(QPalette.ColorRole.Base),
        palette.color(QPalette.ColorRole.AlternateBase),
    ]


def _badge(design: QColor, palette: QPalette, dark: bool) -> Badge:
    rows = _rows(palette)
    stroke = readable(design, rows, SHAPE_CONTRAST)
    fill = QColor(stroke)
    fill.setAlphaF(FILL_ALPHA[dark])
    bar = QColor(stroke)
    bar.setAlphaF(BAR_ALPHA[dark])
    grounds = [blend(stroke, a, row) for row in rows for a in (FILL_ALPHA[dark], BAR_ALPHA[dark])]
    # Text a shade further from the background than the outline, so it reads as a label.
    start = stroke.lighter(135) if dark else stroke.darker(125)
    return Badge(stroke=stroke, fill=fill, bar=bar, text=readable(start, grounds, TEXT_CONTRAST))


def _muted(palette: QPalette) -> QColor:
    base = palette.color(QPalette.ColorRole.Base)
    placeholder = palette.color(QPalette.ColorRole.PlaceholderText)
    seen = blend(placeholder, placeholder.alphaF(), base)
    return readable(seen, _rows(palette), TEXT_CONTRAST)


def _build(palette: QPalette) -> Theme:
    dark = is_dark(palette)
    pick = 1 if dark else 0
    rows = _rows(palette)
    window = palette.color(QPalette.ColorRole.Window)
    return Theme(
        dark=dark,
        badges={s: _badge(QColor(v[pick]), palette, dark) for s, v in _STATUS.items()},
        scores={k: readable(QColor(v[pick]), rows, TEXT_CONTRAST) for k, v in _SCORES.items()},
        muted=_muted(palette),
        notices={
            k: readable(QColor(v[pick]), [rows[0], window], SHAPE_CONTRAST)
            for k, v in _NOTICES.items()
        },
    )


# By palette key; a colour-scheme change, which can decide for mid-grey palettes without
# changing the palette, clears it (ThemeWatcher).
_cache: dict[int, Theme] = {}


def theme_for(palette: QPalette) -> Theme:
    """The colours for `palette` (cached: delegates ask while painting)."""
    key = palette.cacheKey()
    found = _cache.get(key)
    if found is None:
        watcher()  # from now on a scheme change clears the cache
        if len(_cache) > 32:
            _cache.clear()
        found = _cache[key] = _build(palette)
    return found


def current() -> Theme:
    """The colours for the application's palette."""
    return theme_for(QGuiApplication.palette())


def badge(status: ItemStatus, palette: QPalette) -> Badge:
    return theme_for(palette).badges[status]


def score_colour(kind: str, palette: QPalette) -> QColor:
    """The colour of a search result's score of this kind ("relevance", "ranking")."""
    theme = theme_for(palette)
    return theme.scores.get(kind, theme.muted)


def muted_text(palette: QPalette) -> QColor:
    """Secondary text (a result's source, page) that still reads at 4.5:1."""
    return theme_for(palette).muted


def notice_colour(level: str) -> str:
    """A notification's accent colour ("info", "warning", "error") as #rrggbb."""
    theme = current()
    return theme.notices.get(level, theme.notices["info"]).name()


def message_colour(kind: str, palette: QPalette | None = None) -> QColor:
    """The colour of a label's words of this kind ("error", "ok", "info", "heading"): its
    design value for light or dark, nudged to 4.5:1 on the window and on text fields."""
    palette = palette if palette is not None else QGuiApplication.palette()
    dark = is_dark(palette)
    design = QColor(_MESSAGES.get(kind, _MESSAGES["info"])[1 if dark else 0])
    plain = [palette.color(QPalette.ColorRole.Window), palette.color(QPalette.ColorRole.Base)]
    colour = design
    # Also readable on the tint of its own box (message_box_style); the tint follows the
    # colour, so nudge again until the colour reads on the tint it makes itself.
    for _ in range(4):
        tints = [blend(colour, TINT_ALPHA[dark], g) for g in plain]
        nudged = readable(colour, [*plain, *tints], TEXT_CONTRAST)
        if nudged == colour:
            break
        colour = nudged
    return colour


def message_style(kind: str, palette: QPalette | None = None) -> str:
    """A label's style sheet for words of this kind."""
    return f"color: {message_colour(kind, palette).name()};"


def message_box_style(kind: str, selector: str, palette: QPalette | None = None) -> str:
    """A framed box (banner, notice) of this kind: its colour as words and border, a light
    tint of it as the background, on light and dark palettes alike."""
    palette = palette if palette is not None else QGuiApplication.palette()
    colour = message_colour(kind, palette)
    tint = blend(colour, TINT_ALPHA[is_dark(palette)], palette.color(QPalette.ColorRole.Window))
    return (
        f"{selector} {{ background-color: {tint.name()}; color: {colour.name()};"
        f" border: 1px solid {colour.name()}; border-radius: 4px; padding: 4px 8px; }}"
    )


# -- forcing and following ---------------------------------------------------------------------


def dark_palette() -> QPalette:
    """A dark palette for the Fusion style (`--dark`)."""
    palette = QPalette()
    for role, value in _DARK_PALETTE.items():
        palette.setColor(role, QColor(value))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(_DARK_DISABLED))
    return palette


def force_dark(app: QApplication) -> None:
    """Fusion with a dark palette, whatever the system uses (screenshots, trying it out)."""
    app.setStyle("Fusion")
    app.setPalette(dark_palette())


class ThemeWatcher(QObject):
    """Says when colours may have changed although no widget's palette did: the system's
    colour scheme switched (Qt >= 6.5). Palette changes themselves repaint every widget."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        hints = QGuiApplication.styleHints()
        signal = getattr(hints, "colorSchemeChanged", None) if hints is not None else None
        if signal is not None:
            signal.connect(self._on_scheme_changed)

    @Slot()
    def _on_scheme_changed(self) -> None:
        _cache.clear()
        self.changed.emit()


_watcher: ThemeWatcher | None = None


def watcher() -> ThemeWatcher:
    """The one watcher (created with the application, lives as long as it)."""
    global _watcher
    if _watcher is None:
        _watcher = ThemeWatcher(QGuiApplication.instance())
    return _watcher
