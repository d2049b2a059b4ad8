#!/usr/bin/env bash
# Renders a workbook the way a person would see it printed: LibreOffice (headless) converts it
# to PDF, pdftoppm turns each page into a PNG. A check by eye that the Summary, its chart and the
# tables look right; not part of npm test (LibreOffice is not an npm package).
#
#   apt-get install -y --no-install-recommends libreoffice-calc-nogui poppler-utils   (once)
#   scripts/render-workbook.sh out/pnl-2026-10.xlsx [OUT_DIR] [DPI]
set -euo pipefail
workbook=${1:?usage: scripts/render-workbook.sh WORKBOOK.xlsx [OUT_DIR] [DPI]}
out=${2:-$(dirname "$workbook")/rendered}
dpi=${3:-80}
for tool in soffice pdftoppm; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed" >&2; echo "  fix: apt-get install -y --no-install-recommends libreoffice-calc-nogui poppler-utils" >&2; exit 2; }
done
mkdir -p "$out"
name=$(basename "$workbook" .xlsx)
# A profile of its own, so a LibreOffice already open for the user does not take the job.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
soffice -env:UserInstallation=file://"$profile" --headless --convert-to pdf --outdir "$out" "$workbook" >/dev/null 2>&1
pdftoppm -r "$dpi" -png "$out/$name.pdf" "$out/$name"
ls "$out/$name"*.png
