#!/usr/bin/env bash
# Screenshots a page of the documentation site (exledger docs) the way a person sees it, with
# headless Chromium: for the README picture, and a check by eye that the lineage graph and the
# tables look right. Not part of npm test (Chromium is not an npm package).
#
#   apt-get install -y --no-install-recommends chromium        (once)
#   npx exledger docs --out docs-site
#   scripts/screenshot-docs.sh [PAGE] [OUT.png] [WIDTHxHEIGHT]
#     PAGE     default docs-site/index.html (e.g. docs-site/models/marts.fees_monthly.html)
#     OUT.png  default docs/docs-site.png
#     size     default 1400x1100
set -euo pipefail
page=${1:-docs-site/index.html}
out=${2:-docs/docs-site.png}
size=${3:-1400x1100}
[ -f "$page" ] || { echo "error: $page: no such page" >&2; echo "  fix: run npx exledger docs first (or name the page)" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "error: chromium is not installed" >&2; echo "  fix: apt-get install -y --no-install-recommends chromium" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
# A profile of its own, so a browser already open for the user does not take the job.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
  --window-size="${size/x/,}" --screenshot="$(realpath -m "$out")" "file://$(realpath "$page")" >/dev/null 2>&1
echo "$out"
