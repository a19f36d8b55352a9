"""Interface language: Trove's catalogs from i18n/ plus Qt's own for standard dialogs.

The language follows the system locale unless the person picked one in the settings
("language": "", "en" or "zh_CN")."""

from __future__ import annotations

import logging

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QSettings, QTranslator

from app.resources import i18n_dir

log = logging.getLogger(__name__)

LANGUAGES = ("en", "zh_CN")
SETTING = "language"


def choose_language(explicit: str | None, settings: QSettings) -> str:
    """The language to show: the command line's, the saved choice, then the system's."""
    wanted = explicit or str(settings.value(SETTING, "") or "")
    if wanted in LANGUAGES:
        return wanted
    system = QLocale.system().name()  # e.g. "zh_CN", "zh_TW", "en_US"
    return "zh_CN" if system.startswith("zh") else "en"


def install_translators(app: QCoreApplication, language: str) -> list[QTranslator]:
    """Load the catalogs for `language`; returns them (they must outlive the application)."""
    QLocale.setDefault(QLocale(language))
    installed: list[QTranslator] = []
    # English needs its catalog too: it holds the plural forms ("1 result", "2 results").
    ours = QTranslator(app)
    if ours.load(f"trove_{language}", str(i18n_dir())):
        app.installTranslator(ours)
        installed.append(ours)
    else:
        log.warning("no translation catalog for %s in %s", language, i18n_dir())
    if language == "en":
        return installed
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    qt = QTranslator(app)
    if qt.load(f"qtbase_{language}", qt_dir):
        app.installTranslator(qt)
        installed.append(qt)
    return installed


def remove_translators(app: QCoreApplication, translators: list[QTranslator]) -> None:
    for translator in translators:
        app.removeTranslator(translator)
