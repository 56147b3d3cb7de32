#!/usr/bin/env python3
"""Finds performance figures typed by hand where users read them.

A figure (a number with a unit of time, size, rate or ratio: `3 us`, `12%`,
`1.3x`, `8 MiB`) belongs on the book's page of measured figures, where a
bench printed it with its stamp. Anywhere else a user reads, it is allowed
only as
  - a default (the line says "default"),
  - an example's input (inside `code`, a fenced block, or a flag's value),
  - a limit or setting the text defines (a line naming "limit", "at most",
    "at least", "within", "target", "budget", "threshold", "e.g." and the
    like: what is asked, not what was measured),
  - or beside a link to the figures page (`figures.md`, "measured
    figures").
Read: README.md, the book (docs/src, less the sections the figure benches
write), the CHANGELOG's section of the version to release, the attributes' docs
(src/docs), and the doc comments (`///`, `//!`) of the crates' sources.
`--help` texts are doc comments or strings in settings/ and the tool's
main.rs, and are read as such.

  scripts/figure_lint.py            lists each figure found, exits 1 if any
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

UNIT = r"(?:µs|us|ns|ms|s|sec|seconds?|minutes?|%|B|KB|KiB|kB|MB|MiB|GB|GiB|TB|TiB|req/s|/s)"
# A ratio (`1.3x`), not a dimension (`8000 × 8000`).
RATIO = r"|(?:x|×)(?!\s?\d)"
FIGURE = re.compile(r"(?<![\w.$/-])(\d+(?:[.,]\d+)?)\s?(?:" + UNIT + RATIO + r")(?![\w/])")
ALLOWED = re.compile(
    r"default|limit|at most|at least|within|target|budget|threshold|e\.g\.|such as|"
    r"for example|figures\.md|measured figures|scripts/figures\.sh|--\w[\w-]*|"
    r"e\.g|than \d|over \d|under \d|up to|more than|less than|goal|tolerat|allow|"
    r"cap|must|keeps? .* within|bounded|unless|gated|every|slack|example|instance|"
    r"simulat|say,|suppose|a case that|whose|if a|where a|a server of|a service|"
    r"interval|\bset\b|asks?\b|given|`?benches/|cgroup|grid|\bmodels?\b|datasets?|"
    r"\barray|\binputs?\b|payload|trials|a server|late\b",
    re.IGNORECASE,
)
CODE_SPAN = re.compile(r"`[^`]*`")


def prose_lines(path, lines, in_comment=None):
    """(number, text) of the lines outside fenced blocks and outside the
    sections a figure bench writes; in Rust files, of the doc comments
    only."""
    fenced = False
    generated = False
    for number, line in enumerate(lines, 1):
        if line.startswith("<!-- figures "):
            generated = True
        if line.startswith("<!-- end figures "):
            generated = False
            continue
        if generated:
            continue
        text = line
        if in_comment is not None:
            stripped = line.strip()
            match = re.match(r"(///|//!)\s?(.*)", stripped)
            if not match:
                fenced = False if not stripped.startswith("//") else fenced
                continue
            text = match.group(2)
        if text.strip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or text.lstrip().startswith("#") and in_comment is not None:
            continue
        yield number, text


def release_section(lines):
    """The CHANGELOG's lines of its newest version, the one to release."""
    seen = 0
    for number, line in enumerate(lines, 1):
        if line.startswith("## "):
            seen += 1
            continue
        if seen == 1:
            yield number, line


# A statistical method's level (a 95% interval, a 99% bound) is a setting,
# not a measurement.
LEVEL = re.compile(r"\d+% (?:interval|upper|lower|bound|confidence|Wilcoxon|one)")


def allowed():
    """The figures `scripts/figure_lint.allow` lets stand, by file: facts
    of the machine or of a format that no bench measures."""
    kept = {}
    for line in (ROOT / "scripts/figure_lint.allow").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        path, figure, _why = (part.strip() for part in line.split("|", 2))
        kept.setdefault(path, set()).add(figure)
    return kept


# A limit written as `--fail-on` takes it (`time=10%`, `rss=5%+16MiB`) is
# an input.
SPEC = re.compile(r"\b[\w.]+=[^\s,;)]+")


def figures_in(text):
    plain = SPEC.sub("", LEVEL.sub("", CODE_SPAN.sub("", text)))
    if ALLOWED.search(text):
        return []
    return [m.group(0) for m in FIGURE.finditer(plain)]


def files():
    yield ROOT / "README.md", "md"
    for page in sorted((ROOT / "docs/src").glob("*.md")):
        yield page, "md"
    for page in sorted((ROOT / "src/docs").glob("*.md")):
        yield page, "md"
    yield ROOT / "CHANGELOG.md", "changelog"
    for crate in ("src", "nnbench-core/src", "nnbench-cli/src", "nnbench-macros/src", "nnbench-vocab/src"):
        for source in sorted((ROOT / crate).rglob("*.rs")):
            yield source, "rs"


def main():
    kept = allowed()
    found = []
    for path, kind in files():
        lines = path.read_text(encoding="utf-8").splitlines()
        if kind == "changelog":
            chosen = release_section(lines)
        elif kind == "rs":
            chosen = prose_lines(path, lines, in_comment=True)
        else:
            chosen = prose_lines(path, lines)
        for number, text in chosen:
            for figure in figures_in(text):
                if figure in kept.get(str(path.relative_to(ROOT)), ()):
                    continue
                found.append(f"{path.relative_to(ROOT)}:{number}: {figure}: {text.strip()}")
    for line in found:
        print(line)
    if found:
        print(
            f"figure_lint: {len(found)} figures typed by hand; a figure is printed by a bench on "
            "the figures page (docs/src/figures.md), or the text says it is a default, a limit "
            "or an example's input",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
