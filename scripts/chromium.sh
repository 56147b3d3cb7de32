#!/usr/bin/env bash
# A headless Chromium for the report's browser test (tests/report.rs).
# Prints `export NNBENCH_CHROMIUM=PATH` for `eval`: the Chromium on PATH,
# else Debian's `chromium` package, installed with apt-get when this runs
# as root (as CI does; apt keeps the package in its cache). Without one it
# prints nothing and says why on stderr: the test then skips its browser
# part, unless NNBENCH_REQUIRE_BROWSER is set.
set -euo pipefail

for name in chromium chromium-browser google-chrome; do
  if path=$(command -v "$name"); then
    echo "export NNBENCH_CHROMIUM=$path"
    exit 0
  fi
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "chromium.sh: installing Debian's chromium" >&2
  install() { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2; }
  install || { apt-get update >&2 && install; }
  echo "export NNBENCH_CHROMIUM=$(command -v chromium)"
  exit 0
fi
echo "chromium.sh: no Chromium here, and no root to install Debian's" >&2
