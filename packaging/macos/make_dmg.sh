#!/bin/sh
# Trove: pack dist/Trove.app (made by PyInstaller through packaging/build.py on macOS) into a
# compressed disk image with an /Applications link to drag it onto.
#   packaging/macos/make_dmg.sh dist/Trove.app dist/Trove-0.1.0-macos-arm64.dmg
# Signing: set TROVE_CODESIGN_IDENTITY (a "Developer ID Application: ..." identity) to sign
# the app before packing; notarise the .dmg afterwards with `xcrun notarytool submit`.
set -eu
app=${1:?usage: make_dmg.sh PATH/Trove.app OUTPUT.dmg}
dmg=${2:?usage: make_dmg.sh PATH/Trove.app OUTPUT.dmg}
[ -d "$app" ] || { echo "no app bundle at $app" >&2; exit 1; }

if [ -n "${TROVE_CODESIGN_IDENTITY:-}" ]; then
    codesign --force --deep --options runtime --timestamp \
        --sign "$TROVE_CODESIGN_IDENTITY" "$app"
    codesign --verify --strict --verbose=2 "$app"
fi

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
# ditto keeps symlinks, extended attributes and code signatures intact.
ditto "$app" "$staging/Trove.app"
ln -s /Applications "$staging/Applications"
rm -f "$dmg"
hdiutil create -volname Trove -srcfolder "$staging" -fs HFS+ -format UDZO \
    -imagekey zlib-level=9 -ov "$dmg"
hdiutil verify "$dmg"
echo "wrote $dmg"
