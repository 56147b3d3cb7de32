#!/usr/bin/env bash
# valgrind, whose Callgrind counts instructions (`--instructions`,
# `timing = instructions`, tests/instructions.rs, benches/paired.rs).
# Prints `export NNBENCH_VALGRIND=PATH` for `eval`: the valgrind on PATH,
# else Debian's `valgrind` package, installed with apt-get when this runs
# as root (as CI does; apt keeps the package in its cache). Without one it
# prints nothing and says why on stderr: the tests then skip their
# counting checks, unless NNBENCH_REQUIRE_VALGRIND is set.
set -euo pipefail

if path=$(command -v valgrind); then
  echo "export NNBENCH_VALGRIND=$path"
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "valgrind.sh: installing Debian's valgrind" >&2
  install() { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends valgrind >&2; }
  install || { apt-get update >&2 && install; }
  echo "export NNBENCH_VALGRIND=$(command -v valgrind)"
  exit 0
fi
echo "valgrind.sh: no valgrind here, and no root to install Debian's" >&2
