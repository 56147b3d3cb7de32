//! The git state a run records: the commit, branch and dirtiness that git
//! itself reports, for the layouts a checkout can have.

mod support;

use std::path::Path;

use support::git;

/// A recorded git state: commit, branch, dirty.
type Git = (String, Option<String>, bool);

/// The git state a run from `dir` records.
fn recorded(dir: &Path) -> Option<Git> {
    nnbench::Runner::new()
        .filter("git_context: no such case")
        .repo_dir(dir)
        .quiet(true)
        .run()
        .expect("runs")
        .context
        .git
        .map(|g| (g.commit, g.branch, g.dirty))
}

/// A repository of two commits on `main`.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = dir.path();
    git(repo, &["init", "--quiet", "--initial-branch", "main"]);
    for text in ["one", "two"] {
        std::fs::write(repo.join("file.txt"), text).expect("writes");
        git(repo, &["add", "file.txt"]);
        git(repo, &["commit", "--quiet", "-m", text]);
    }
    dir
}

/// What git says `dir`'s checkout is on.
fn said_by_git(dir: &Path) -> (String, String) {
    let said = git(dir, &["rev-parse", "HEAD", "--abbrev-ref", "HEAD"]);
    let mut lines = said.lines().map(str::to_owned);
    (lines.next().expect("commit"), lines.next().expect("branch"))
}

fn on_branch(dir: &Path) -> Git {
    let (commit, branch) = said_by_git(dir);
    (commit, Some(branch), false)
}

#[test]
fn a_branch_is_recorded_as_git_reports_it_from_loose_or_packed_references() {
    let repo = repository();
    assert_eq!(recorded(repo.path()), Some(on_branch(repo.path())));
    git(repo.path(), &["pack-refs", "--all"]);
    assert!(!repo.path().join(".git/refs/heads/main").exists());
    assert_eq!(recorded(repo.path()), Some(on_branch(repo.path())));
    // From a folder inside the checkout as well.
    let inner = repo.path().join("inner");
    std::fs::create_dir(&inner).expect("creates");
    assert_eq!(recorded(&inner), Some(on_branch(repo.path())));
}

#[test]
fn a_detached_head_has_a_commit_and_no_branch() {
    let repo = repository();
    git(repo.path(), &["checkout", "--quiet", "--detach", "HEAD~1"]);
    let (commit, branch) = said_by_git(repo.path());
    assert_eq!(branch, "HEAD");
    let expected = (commit, None, false);
    assert_eq!(recorded(repo.path()), Some(expected));
}

#[test]
fn a_linked_worktree_records_its_own_branch_and_commit() {
    let repo = repository();
    let tree = tempfile::tempdir().expect("temp dir");
    let path = tree.path().join("linked");
    let path_text = path.to_str().expect("a UTF-8 path");
    git(
        repo.path(),
        &[
            "worktree", "add", "--quiet", "-b", "side", path_text, "HEAD~1",
        ],
    );
    let recorded = recorded(&path).expect("a git state");
    assert_eq!(recorded, on_branch(&path));
    assert_eq!(recorded.1.as_deref(), Some("side"));
    assert_ne!(recorded.0, on_branch(repo.path()).0);
}

#[test]
fn a_change_to_a_tracked_file_is_dirty_and_an_untracked_one_is_not() {
    let repo = repository();
    std::fs::write(repo.path().join("new.txt"), "untracked").expect("writes");
    assert_eq!(recorded(repo.path()).map(|g| g.2), Some(false));
    std::fs::write(repo.path().join("file.txt"), "changed").expect("writes");
    assert_eq!(recorded(repo.path()).map(|g| g.2), Some(true));
}

#[test]
fn a_branch_without_commits_or_a_folder_outside_git_records_none() {
    let empty = tempfile::tempdir().expect("temp dir");
    git(
        empty.path(),
        &["init", "--quiet", "--initial-branch", "main"],
    );
    assert_eq!(recorded(empty.path()), None);
    let outside = tempfile::tempdir().expect("temp dir");
    // Unless the temp folder itself lies in a checkout, as git would say.
    let git_says = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(outside.path())
        .output()
        .expect("git runs");
    if !git_says.status.success() {
        assert_eq!(recorded(outside.path()), None);
    }
}

#[test]
fn a_run_leaves_a_stale_index_as_it_found_it() {
    let repo = repository();
    let index = repo.path().join(".git/index");
    // The file's times move on, its content does not: `git status` would
    // refresh the index's copy of them and write it back, under its lock.
    let file = std::fs::File::options()
        .write(true)
        .open(repo.path().join("file.txt"))
        .expect("opens");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    file.set_modified(later).expect("sets the time");
    drop(file);
    let before = std::fs::read(&index).expect("reads the index");
    assert_eq!(recorded(repo.path()), Some(on_branch(repo.path())));
    assert_eq!(std::fs::read(&index).expect("reads the index"), before);
    // git's own status writes it, which is what the run must not do.
    git(repo.path(), &["status", "--porcelain"]);
    assert_ne!(std::fs::read(&index).expect("reads the index"), before);
}
