#!/usr/bin/env python3
"""The public API of a crate as one sorted line per item, from rustdoc's JSON.

    public_api.py FACADE.json [DEPENDENCY.json ...]

Starts at FACADE's root module and follows its re-exports into the
dependencies' JSON (the crates they name), listing each public item by the
path a user writes: modules, structs with their public fields, enums with
their variants, traits, functions and methods with their signatures,
constants, type aliases and macros, and the attributes that matter to a
user (`#[non_exhaustive]`, `#[must_use]`). Trait implementations are left
out: the derives and blanket impls would drown the rest. Items marked
`#[doc(hidden)]` are not API.
"""

import json
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    name = doc["index"][str(doc["root"])]["name"]
    return name, doc


class Crates:
    def __init__(self, docs):
        self.docs = dict(docs)

    def item(self, crate, ident):
        return self.docs[crate]["index"].get(str(ident))

    def resolve(self, source):
        """The (crate, item) a `use` names by its path, or None outside the
        crates given (the standard library, say)."""
        parts = source.split("::")
        crate = parts[0]
        if crate not in self.docs:
            return None
        doc = self.docs[crate]
        at = doc["index"][str(doc["root"])]
        for part in parts[1:]:
            found = self.child(crate, at, part)
            if found is None:
                return None
            crate, at = found
        return crate, at

    def child(self, crate, module, name):
        for ident in module["inner"]["module"]["items"]:
            item = self.item(crate, ident)
            if item is None:
                continue
            if "use" in item["inner"]:
                use = item["inner"]["use"]
                if use["name"] == name and not use["is_glob"]:
                    return self.follow(crate, use)
            elif item["name"] == name:
                return crate, item
        return None

    def follow(self, crate, use):
        local = self.item(crate, use["id"]) if use["id"] is not None else None
        if local is not None and "use" not in local["inner"]:
            return crate, local
        return self.resolve(use["source"])


def hidden(item):
    return any("doc(hidden)" in str(a).replace(" ", "") for a in item["attrs"])


def attrs(item):
    said = []
    for attr in item["attrs"]:
        text = attr if isinstance(attr, str) else json.dumps(attr)
        if "non_exhaustive" in text:
            said.append("#[non_exhaustive]")
        elif "must_use" in text:
            said.append("#[must_use]")
    return (" " + " ".join(said)) if said else ""


def ty(t):
    if t is None:
        return "()"
    kind, v = next(iter(t.items()))
    if kind == "resolved_path":
        return v["path"].split("::")[-1] + args(v.get("args"))
    if kind == "primitive" or kind == "generic":
        return v
    if kind == "borrowed_ref":
        life = (v["lifetime"] + " ") if v.get("lifetime") else ""
        return "&" + life + ("mut " if v["is_mutable"] else "") + ty(v["type"])
    if kind == "tuple":
        return "(" + ", ".join(ty(x) for x in v) + ")"
    if kind == "slice":
        return "[" + ty(v) + "]"
    if kind == "array":
        return "[" + ty(v["type"]) + "; " + v["len"] + "]"
    if kind == "impl_trait":
        return "impl " + " + ".join(bound(b) for b in v)
    if kind == "dyn_trait":
        return "dyn " + " + ".join(
            p["trait"]["path"].split("::")[-1] + args(p["trait"].get("args")) for p in v["traits"]
        )
    if kind == "raw_pointer":
        return ("*mut " if v["is_mutable"] else "*const ") + ty(v["type"])
    if kind == "qualified_path":
        return ty(v["self_type"]) + "::" + v["name"]
    if kind == "function_pointer":
        return "fn(" + ", ".join(ty(i[1]) for i in v["sig"]["inputs"]) + ") -> " + ty(v["sig"]["output"])
    return kind


def args(a):
    if not a:
        return ""
    if "angle_bracketed" in a:
        parts = []
        for arg in a["angle_bracketed"]["args"]:
            if "type" in arg:
                parts.append(ty(arg["type"]))
            elif "lifetime" in arg:
                parts.append(arg["lifetime"])
            elif "const" in arg:
                parts.append(str(arg["const"].get("expr", "_")))
        for c in a["angle_bracketed"].get("constraints", []):
            binding = c.get("binding", {})
            if "equality" in binding and "type" in binding["equality"]:
                parts.append(c["name"] + " = " + ty(binding["equality"]["type"]))
        return "<" + ", ".join(parts) + ">" if parts else ""
    if "parenthesized" in a:
        p = a["parenthesized"]
        return "(" + ", ".join(ty(i) for i in p["inputs"]) + ")" + (" -> " + ty(p["output"]) if p.get("output") else "")
    return ""


def bound(b):
    if "trait_bound" in b:
        t = b["trait_bound"]["trait"]
        return t["path"].split("::")[-1] + args(t.get("args"))
    if "outlives" in b:
        return b["outlives"]
    return "?"


def signature(name, f):
    sig = f["sig"]
    head = f["header"]
    words = ("const " if head["is_const"] else "") + ("async " if head["is_async"] else "") + ("unsafe " if head["is_unsafe"] else "")
    generics = [
        p["name"]
        for p in f["generics"]["params"]
        if not p["kind"].get("type", {}).get("is_synthetic", False) and "lifetime" not in p["kind"]
    ]
    gen = "<" + ", ".join(generics) + ">" if generics else ""
    inputs = []
    for arg_name, arg_ty in sig["inputs"]:
        if arg_name == "self":
            inputs.append({"generic": "self"} == arg_ty and "self" or ty(arg_ty).replace("Self", "self"))
        else:
            inputs.append(arg_name + ": " + ty(arg_ty))
    out = "" if sig["output"] is None else " -> " + ty(sig["output"])
    return f"{words}fn {name}{gen}({', '.join(inputs)}){out}"


def walk(crates, crate, item, path, lines, seen):
    key = (crate, item["id"], path)
    if key in seen or hidden(item):
        return
    seen.add(key)
    kind, inner = next(iter(item["inner"].items()))
    if kind == "module":
        lines.append(f"pub mod {path}")
        for ident in inner["items"]:
            child = crates.item(crate, ident)
            if child is None or hidden(child):
                continue
            if "use" in child["inner"]:
                use = child["inner"]["use"]
                target = crates.follow(crate, use)
                if target is None:
                    lines.append(f"pub use {path}::{use['name']} = {use['source']}")
                    continue
                tc, ti = target
                if use["is_glob"] and "module" in ti["inner"]:
                    for g in ti["inner"]["module"]["items"]:
                        gi = crates.item(tc, g)
                        if gi is not None and gi.get("name"):
                            walk(crates, tc, gi, f"{path}::{gi['name']}", lines, seen)
                else:
                    walk(crates, tc, ti, f"{path}::{use['name']}", lines, seen)
            elif child.get("name") and child["visibility"] == "public":
                walk(crates, crate, child, f"{path}::{child['name']}", lines, seen)
    elif kind == "struct":
        lines.append(f"pub struct {path}{generic_names(inner)}{attrs(item)}")
        k = inner["kind"]
        if "plain" in k:
            for f in k["plain"]["fields"]:
                field = crates.item(crate, f)
                if field and field["visibility"] == "public" and not hidden(field):
                    lines.append(f"pub field {path}::{field['name']}: {ty(field['inner']['struct_field'])}")
        elif "tuple" in k:
            fields = [crates.item(crate, f) for f in k["tuple"] if f is not None]
            if any(f and f["visibility"] == "public" for f in fields):
                lines.append(f"pub struct {path}(" + ", ".join(ty(f["inner"]["struct_field"]) for f in fields if f) + ")")
        methods(crates, crate, inner["impls"], path, lines)
    elif kind == "enum":
        lines.append(f"pub enum {path}{generic_names(inner)}{attrs(item)}")
        for v in inner["variants"]:
            variant = crates.item(crate, v)
            if variant and not hidden(variant):
                vk = variant["inner"]["variant"]["kind"]
                shape = ""
                if isinstance(vk, dict) and "tuple" in vk:
                    shape = "(" + ", ".join(ty(crates.item(crate, f)["inner"]["struct_field"]) for f in vk["tuple"] if f is not None) + ")"
                elif isinstance(vk, dict) and "struct" in vk:
                    shape = " { " + ", ".join(
                        crates.item(crate, f)["name"] + ": " + ty(crates.item(crate, f)["inner"]["struct_field"]) for f in vk["struct"]["fields"]
                    ) + " }"
                lines.append(f"pub variant {path}::{variant['name']}{shape}{attrs(variant)}")
        methods(crates, crate, inner["impls"], path, lines)
    elif kind == "trait":
        lines.append(f"pub trait {path}{generic_names(inner)}")
        for t in inner["items"]:
            ti = crates.item(crate, t)
            if ti is None or hidden(ti):
                continue
            tk, tv = next(iter(ti["inner"].items()))
            if tk == "function":
                lines.append(f"pub trait {signature(path + '::' + ti['name'], tv)}")
            else:
                lines.append(f"pub trait {tk} {path}::{ti['name']}")
    elif kind == "function":
        lines.append(f"pub {signature(path, inner)}{attrs(item)}")
    elif kind == "constant":
        lines.append(f"pub const {path}: {ty(inner['type'])}")
    elif kind == "static":
        lines.append(f"pub static {path}: {ty(inner['type'])}")
    elif kind == "type_alias":
        lines.append(f"pub type {path}{generic_names(inner)} = {ty(inner['type'])}")
    elif kind in ("macro", "proc_macro"):
        lines.append(f"pub macro {path}")
    else:
        lines.append(f"pub {kind} {path}")


def generic_names(inner):
    names = [p["name"] for p in inner.get("generics", {}).get("params", []) if not p["kind"].get("type", {}).get("is_synthetic", False)]
    return "<" + ", ".join(names) + ">" if names else ""


def methods(crates, crate, impls, path, lines):
    for i in impls:
        imp = crates.item(crate, i)
        if imp is None or "impl" not in imp["inner"]:
            continue
        body = imp["inner"]["impl"]
        if body["trait"] is not None or body.get("is_synthetic") or body.get("blanket_impl"):
            continue
        for m in body["items"]:
            mi = crates.item(crate, m)
            if mi is None or mi["visibility"] != "public" or hidden(mi):
                continue
            mk, mv = next(iter(mi["inner"].items()))
            if mk == "function":
                lines.append(f"pub {signature(path + '::' + mi['name'], mv)}{attrs(mi)}")
            elif mk == "assoc_const":
                lines.append(f"pub const {path}::{mi['name']}")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: public_api.py FACADE.json [DEPENDENCY.json ...]")
    docs = [load(p) for p in sys.argv[1:]]
    crates = Crates(docs)
    name, doc = docs[0]
    lines = []
    walk(crates, name, doc["index"][str(doc["root"])], name, lines, set())
    for line in sorted(set(lines)):
        print(line)


if __name__ == "__main__":
    main()
