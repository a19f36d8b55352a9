#!/bin/sh
# Trove: add the launcher to the desktop menu for this user, and put `trove` on the PATH.
# Run it from the unpacked folder: ./install.sh   (PREFIX=/usr/local sudo ./install.sh for
# every user). Nothing is written inside this folder; ./uninstall.sh undoes it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${PREFIX:-}" ]; then
    data="$PREFIX/share"
    bin="$PREFIX/bin"
else
    data=${XDG_DATA_HOME:-$HOME/.local/share}
    bin="$HOME/.local/bin"
fi

mkdir -p "$data/applications" "$bin"
sed -e '/^#/d' -e "s|^Exec=.*|Exec=\"$here/Trove\"|" -e "s|^TryExec=.*|TryExec=$here/Trove|" \
    "$here/share/applications/trove.desktop" > "$data/applications/trove.desktop"
chmod 644 "$data/applications/trove.desktop"

for icon in "$here"/share/icons/hicolor/*/apps/trove.*; do
    size_dir=$(basename "$(dirname "$(dirname "$icon")")")
    mkdir -p "$data/icons/hicolor/$size_dir/apps"
    cp "$icon" "$data/icons/hicolor/$size_dir/apps/"
done

ln -sf "$here/Trove" "$bin/trove"

command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$data/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$data/icons/hicolor" || true
echo "Trove installed: menu entry $data/applications/trove.desktop, command $bin/trove"
