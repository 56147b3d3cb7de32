//! The commit and branch a checkout is on, read from its git directory's
//! files: a `git rev-parse` process is a fork and an exec of a core's
//! time before the first case, on every run. What these files leave unsettled (a
//! reference table, a symbolic reference to another, a repository named
//! by `GIT_DIR`) is answered by `None`, and left to git itself.

use std::path::{Path, PathBuf};

/// Where a checkout's HEAD points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub commit: String,
    /// The branch checked out; `None` with a detached HEAD.
    pub branch: Option<String>,
}

/// The HEAD of the checkout that holds `dir`, where its files settle it.
pub(crate) fn read(dir: &Path) -> Option<Head> {
    // git finds its repository from these as well as from the folder.
    const SET_ELSEWHERE: [&str; 3] = ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"];
    if SET_ELSEWHERE.iter().any(|v| std::env::var_os(v).is_some()) {
        return None;
    }
    let git_dir = find_git_dir(dir)?;
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(relative) => git_dir.join(relative.trim()),
        Err(_) => git_dir.clone(),
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(reference) = head.strip_prefix("ref: ") else {
        return object_name(head).map(|commit| Head {
            commit,
            branch: None,
        });
    };
    let branch = reference.strip_prefix("refs/heads/")?;
    Some(Head {
        commit: resolve(&common, reference)?,
        branch: Some(branch.to_owned()),
    })
}

/// The git directory of the checkout holding `dir`: the first `.git`
/// folder above it, or the one a `.git` file (a linked worktree, a
/// submodule) names.
fn find_git_dir(dir: &Path) -> Option<PathBuf> {
    // The folders above it as git walks them: those of the physical path.
    let dir = std::fs::canonicalize(dir).ok()?;
    dir.ancestors().find_map(|folder| {
        let dot_git = folder.join(".git");
        if dot_git.is_dir() {
            return Some(dot_git);
        }
        let named = std::fs::read_to_string(&dot_git).ok()?;
        Some(folder.join(named.trim().strip_prefix("gitdir: ")?))
    })
}

/// The commit `reference` names: its loose file, else its line in
/// `packed-refs`.
fn resolve(common: &Path, reference: &str) -> Option<String> {
    if let Ok(loose) = std::fs::read_to_string(common.join(reference)) {
        return object_name(loose.trim());
    }
    let packed = std::fs::read_to_string(common.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| match line.split_once(' ') {
        Some((name, named)) if named == reference => object_name(name),
        _ => None,
    })
}

/// `text` if it is an object name: 40 hex digits (SHA-1) or 64 (SHA-256).
fn object_name(text: &str) -> Option<String> {
    let hex = text.bytes().all(|b| b.is_ascii_hexdigit());
    (hex && matches!(text.len(), 40 | 64)).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=nnbench",
                "-c",
                "user.email=nnbench@example.com",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// The layouts a checkout has are settled by its files alone, as git
    /// would answer: no `git rev-parse` is needed for them.
    #[test]
    fn the_files_settle_a_branch_packed_or_loose_a_detached_head_and_a_worktree() {
        let root = std::env::temp_dir().join(format!("nnbench-git-head-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let repo = root.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "--quiet", "--initial-branch", "main"]);
        assert_eq!(read(&repo), None, "an unborn branch names no commit");
        for text in ["one", "two"] {
            std::fs::write(repo.join("file.txt"), text).unwrap();
            git(&repo, &["add", "file.txt"]);
            git(&repo, &["commit", "--quiet", "-m", text]);
        }
        let head = git(&repo, &["rev-parse", "HEAD"]);
        let on_main = Head {
            commit: head.clone(),
            branch: Some("main".into()),
        };
        assert_eq!(read(&repo), Some(on_main.clone()));
        git(&repo, &["pack-refs", "--all"]);
        assert_eq!(read(&repo), Some(on_main));
        let linked = root.join("linked");
        let linked_text = linked.to_str().expect("a UTF-8 path");
        git(
            &repo,
            &[
                "worktree",
                "add",
                "--quiet",
                "-b",
                "side",
                linked_text,
                "HEAD~1",
            ],
        );
        let side = Head {
            commit: git(&linked, &["rev-parse", "HEAD"]),
            branch: Some("side".into()),
        };
        assert_ne!(side.commit, head);
        assert_eq!(read(&linked), Some(side));
        git(&repo, &["checkout", "--quiet", "--detach", "HEAD~1"]);
        let first = git(&repo, &["rev-parse", "HEAD"]);
        assert_eq!(
            read(&repo),
            Some(Head {
                commit: first,
                branch: None
            })
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_object_name_is_forty_or_sixty_four_hex_digits() {
        let sha1 = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(object_name(sha1).as_deref(), Some(sha1));
        assert_eq!(
            object_name(&sha1.repeat(2)[..64]).as_deref(),
            Some(&sha1.repeat(2)[..64])
        );
        assert_eq!(object_name(&sha1[..39]), None);
        assert_eq!(object_name("ref: refs/heads/main"), None);
        assert_eq!(object_name(&sha1.replace('a', "g")), None);
    }
}
