#!/bin/sh
# Trove: remove what install.sh added (menu entry, icons, the `trove` link). Your knowledge
# bases stay where they are (TROVE_HOME, default ~/.local/share/Trove); delete that folder
# yourself to remove them too. Then delete this folder.
set -eu
if [ -n "${PREFIX:-}" ]; then
    data="$PREFIX/share"
    bin="$PREFIX/bin"
else
    data=${XDG_DATA_HOME:-$HOME/.local/share}
    bin="$HOME/.local/bin"
fi
rm -f "$data/applications/trove.desktop"
rm -f "$data"/icons/hicolor/*/apps/trove.png "$data"/icons/hicolor/*/apps/trove.svg
if [ -L "$bin/trove" ]; then rm -f "$bin/trove"; fi
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$data/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$data/icons/hicolor" || true
echo "Trove's menu entry, icons and command removed."
