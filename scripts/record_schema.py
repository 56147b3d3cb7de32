#!/usr/bin/env python3
"""Writes api/record.schema.json, the JSON Schema of the run record (schema 2),
from the record's Rust types in nnbench-core/src/record/.

    scripts/record_schema.py           writes it
    scripts/record_schema.py --check   fails where it differs from the types

Each struct that derives Serialize becomes a definition; a field is
required unless serde may leave it out (`skip_serializing_if`), and is
never null: schema 2 leaves out what it did not measure. Unit enums become
their snake_case names. Objects admit fields they do not list, so that a
record written by a later nnbench stays valid against this schema.
"""

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "nnbench-core/src/record"
OUT = ROOT / "api/record.schema.json"

# Written through a module of their own (`with = ...`), or defined
# outside the record's files.
EXTERNAL = {
    "Direction": {"enum": ["higher", "lower"]},
}
COUNTERS = "MemoCounters"
RESOLVES = ["hits", "misses", "disk_hits", "computes"]


def snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def items(text):
    """(kind, name, attrs, body) of each top-level struct and enum, where
    attrs are the lines of attributes above it."""
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        m = re.match(r"^\s*pub (struct|enum) (\w+)\s*\{", line)
        if not m:
            continue
        attrs = []
        j = i - 1
        while j >= 0 and (lines[j].strip().startswith("#[") or lines[j].strip().startswith("///")):
            attrs.append(lines[j].strip())
            j -= 1
        indent = len(line) - len(line.lstrip())
        body = []
        for rest in lines[i + 1:]:
            if rest.startswith(" " * indent + "}"):
                break
            body.append(rest)
        found.append((m.group(1), m.group(2), " ".join(attrs), body))
    return found


def fields(body):
    """(name, type, serde attrs) of a struct body's public fields."""
    out = []
    pending = ""
    for line in body:
        s = line.strip()
        if s.startswith("#[serde("):
            pending += s
        elif s.startswith("$("):
            # The counters' macro: every field a skippable u64.
            out.append(("$counters", "u64", 'skip_serializing_if'))
        else:
            m = re.match(r"pub (\w+): (.+),$", s)
            if m:
                out.append((m.group(1), m.group(2), pending))
                pending = ""
            elif s and not s.startswith("///") and not s.startswith("#["):
                pending = ""
    return out


def variants(body):
    out = []
    rename = None
    for line in body:
        s = line.strip()
        m = re.match(r'#\[serde\(rename = "([^"]+)"\)\]', s)
        if m:
            rename = m.group(1)
            continue
        m = re.match(r"^(\w+),?$", s)
        if m:
            out.append(rename or snake(m.group(1)))
            rename = None
    return out


def type_schema(ty):
    ty = ty.strip()
    for prefix in ("std::collections::", "std::path::", "super::", "crate::record::"):
        ty = ty.replace(prefix, "")
    m = re.match(r"^Option<(.+)>$", ty)
    if m:
        return type_schema(m.group(1))
    # A box is written as what it holds.
    m = re.match(r"^Box<(.+)>$", ty)
    if m:
        return type_schema(m.group(1))
    m = re.match(r"^Vec<(.+)>$", ty)
    if m:
        return {"type": "array", "items": type_schema(m.group(1))}
    # A case's parameters: names with their descriptions, any JSON.
    if ty == "ParamMap":
        return {"type": "object"}
    m = re.match(r"^(?:Map|BTreeMap)<String, ?(.+)>$", ty)
    if m:
        inner = m.group(1)
        return {"type": "object"} if inner in ("Json", "Value") else {"type": "object", "additionalProperties": type_schema(inner)}
    m = re.match(r"^\[(\w+); (\d+)\]$", ty)
    if m:
        n = int(m.group(2))
        return {"type": "array", "items": type_schema(m.group(1)), "minItems": n, "maxItems": n}
    if ty in ("u64", "u32", "usize", "u16", "u8"):
        return {"type": "integer", "minimum": 0}
    if ty in ("i64", "i32"):
        return {"type": "integer"}
    if ty in ("f64", "f32"):
        return {"type": "number"}
    if ty == "bool":
        return {"type": "boolean"}
    if ty in ("String", "PathBuf"):
        return {"type": "string"}
    if ty in ("Json", "Value"):
        return {}
    return {"$ref": f"#/$defs/{ty}"}


def main():
    defs = dict(EXTERNAL)
    structs = {}
    for path in sorted(RECORD.glob("*.rs")):
        for kind, name, attrs, body in items(path.read_text()):
            if "Serialize" not in attrs and name != COUNTERS:
                continue
            if kind == "enum":
                defs[name] = {"enum": variants(body)}
            else:
                structs[name] = fields(body)
    for name, fs in structs.items():
        props, required = {}, []
        for field, ty, serde in fs:
            if field == "$counters":
                continue
            if "flatten" in serde:
                flat = RESOLVES if "resolves" in serde else [f for f, _, _ in structs[COUNTERS] if f != "$counters"]
                for counter in flat:
                    props[counter] = {"type": "integer", "minimum": 0}
                if "resolves" not in serde:
                    for counter in counter_names():
                        props[counter] = {"type": "integer", "minimum": 0}
                continue
            m = re.search(r'rename = "([^"]+)"', serde)
            key = m.group(1) if m else field
            props[key] = type_schema(ty)
            if "skip_serializing_if" not in serde:
                required.append(key)
        if name == COUNTERS:
            props = {c: {"type": "integer", "minimum": 0} for c in counter_names()}
        schema = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        defs[name] = schema
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/nnbench-rs/nnbench/api/record.schema.json",
        "title": "nnbench run record, schema 2",
        "description": "What a bench run measured (target/nnbench/<bench>/latest.json, --out FILE.json). Written by scripts/record_schema.py from nnbench-core/src/record/.",
        "$ref": "#/$defs/RunRecord",
        "$defs": dict(sorted(defs.items())),
    }
    text = json.dumps(schema, indent=2) + "\n"
    if sys.argv[1:] == ["--check"]:
        if OUT.read_text() != text:
            sys.exit("record_schema.py: api/record.schema.json differs from the record's types: run scripts/record_schema.py")
    else:
        OUT.write_text(text)


def counter_names():
    text = (RECORD / "memo.rs").read_text()
    m = re.search(r"counters!\s*\{(.*?)\}", text, re.S)
    if not m:
        sys.exit("record_schema.py: the memo counters' macro call is not where it was")
    names = []
    for line in m.group(1).split("\n"):
        s = line.strip().rstrip(",")
        if re.match(r"^\w+$", s):
            names.append(s)
    return names


if __name__ == "__main__":
    main()
