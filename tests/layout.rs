//! The book's Layout page says on which floor each of the library's
//! top-level modules stands; this checks that it does: every module is on
//! the page, every import between them (a `crate::` path in code, not in a
//! comment or a unit test) reaches the importer's own floor or a lower one,
//! and no imports go around in a loop.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `module -> floor`, from the page's `floor N: a b c` lines.
fn floors() -> BTreeMap<String, usize> {
    let page = std::fs::read_to_string(Path::new(ROOT).join("docs/src/layout.md"))
        .expect("docs/src/layout.md");
    let mut floors = BTreeMap::new();
    for line in page.lines() {
        let Some((floor, modules)) = line
            .strip_prefix("floor ")
            .and_then(|rest| rest.split_once(':'))
        else {
            continue;
        };
        let floor: usize = floor.trim().parse().expect("a floor's number");
        for module in modules.split_whitespace() {
            assert!(
                floors.insert(module.to_owned(), floor).is_none(),
                "{module} is on two floors"
            );
        }
    }
    floors
}

/// The library's top-level modules and their files.
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let src = Path::new(ROOT).join("nnbench-core/src");
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(&src).expect("nnbench-core/src").flatten() {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            let mut pending = vec![path];
            while let Some(dir) = pending.pop() {
                for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                    let path = entry.path();
                    if path.is_dir() {
                        pending.push(path);
                    } else if path.extension().is_some_and(|e| e == "rs") {
                        files.push(path);
                    }
                }
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        } else {
            continue;
        }
        modules.insert(name, files);
    }
    modules
}

/// The top-level modules `file` names in `crate::` paths, with the line of
/// each first mention: comments and `#[cfg(test)] mod tests` left out, and
/// the files of unit tests (`tests.rs`) too.
fn imports(file: &Path, known: &BTreeMap<String, Vec<PathBuf>>) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    if file.file_stem().is_some_and(|s| s == "tests") {
        return found;
    }
    let text = std::fs::read_to_string(file).unwrap();
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    for (number, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        let mut names: Vec<String> = Vec::new();
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or("");
                names.extend(
                    group
                        .split(',')
                        .map(|n| n.trim().split("::").next().unwrap_or("").trim().to_owned()),
                );
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                names.push(name);
            }
        }
        for name in names {
            if known.contains_key(&name) {
                found.entry(name).or_insert(number + 1);
            }
        }
    }
    found
}

#[test]
fn every_import_reaches_the_same_floor_or_a_lower_one() {
    let floors = floors();
    let modules = modules();
    let listed: BTreeSet<&String> = floors.keys().collect();
    let present: BTreeSet<&String> = modules.keys().collect();
    assert_eq!(
        listed, present,
        "the Layout page's floors and nnbench-core/src's modules differ"
    );
    let mut edges: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut upward = Vec::new();
    for (module, files) in &modules {
        for file in files {
            for (target, line) in imports(file, &modules) {
                if target == *module {
                    continue;
                }
                if floors[&target] > floors[module] {
                    upward.push(format!(
                        "{}:{line}: {module} (floor {}) imports {target} (floor {})",
                        file.strip_prefix(ROOT).unwrap_or(file).display(),
                        floors[module],
                        floors[&target]
                    ));
                }
                edges.entry(module).or_default().insert(target);
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that go up:\n{}",
        upward.join("\n")
    );

    // Within a floor, imports must not go around in a loop either.
    fn reaches(
        from: &str,
        to: &str,
        edges: &BTreeMap<&str, BTreeSet<String>>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        edges
            .get(from)
            .into_iter()
            .flatten()
            .any(|next| next == to || (seen.insert(next.clone()) && reaches(next, to, edges, seen)))
    }
    for (module, targets) in &edges {
        for target in targets {
            assert!(
                !reaches(target, module, &edges, &mut BTreeSet::new()),
                "{module} and {target} import each other, around a loop"
            );
        }
    }
}

#[test]
fn the_check_sees_imports_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sample.rs");
    std::fs::write(
        &file,
        "use crate::record::Figure;\n// crate::runner in a comment\nuse crate::{memo, settings::Settings};\nfn f() { crate::paths::target_dir(); }\n#[cfg(test)]\nmod tests {\n    use crate::registry;\n}\n",
    )
    .unwrap();
    let known: BTreeMap<String, Vec<PathBuf>> =
        ["record", "runner", "memo", "settings", "paths", "registry"]
            .into_iter()
            .map(|m| (m.to_owned(), Vec::new()))
            .collect();
    let found: Vec<String> = imports(&file, &known).into_keys().collect();
    assert_eq!(found, ["memo", "paths", "record", "settings"]);
}
