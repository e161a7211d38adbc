//! `tracer fork --sandbox`: a throwaway copy of the working folder for the forked run, so what
//! the host's own tools do again lands there: a git worktree of HEAD with the uncommitted changes
//! applied where the folder is in a repository, a copy otherwise.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// The sandbox made for one fork; it is left in place for the user to look at.
#[derive(Debug)]
pub struct Sandbox {
    /// Where the forked command runs (the working folder's place in the copy).
    pub folder: PathBuf,
    /// How it was made, in words, and how to remove it.
    pub words: String,
}

/// A throwaway copy of `cwd`, under a new folder in the temp dir.
pub fn make(cwd: &Path) -> anyhow::Result<Sandbox> {
    let root = tempfile::Builder::new()
        .prefix("tracer-fork-")
        .tempdir()
        .context("a folder for the sandbox")?
        .keep();
    match git_top(cwd) {
        Some(top) => worktree(cwd, &top, &root),
        None => copy(cwd, &root),
    }
}

fn git_top(cwd: &Path) -> Option<PathBuf> {
    let out = Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(["rev-parse", "--show-toplevel"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let top = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !top.trim().is_empty()).then(|| PathBuf::from(top.trim()))
}

fn worktree(cwd: &Path, top: &Path, root: &Path) -> anyhow::Result<Sandbox> {
    let tree = root.join("worktree");
    let made = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["worktree", "add", "--detach", "--quiet"])
        .arg(&tree)
        .arg("HEAD")
        .status()
        .context("running git worktree add")?;
    if !made.success() {
        bail!("git worktree add {} failed ({made})", tree.display());
    }
    // The uncommitted changes to tracked files come along; untracked files do not.
    let diff = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["diff", "HEAD", "--binary"])
        .output()
        .context("running git diff")?;
    if !diff.stdout.is_empty() {
        let mut apply = Command::new("git")
            .arg("-C")
            .arg(&tree)
            .args(["apply", "--whitespace=nowarn", "-"])
            .stdin(Stdio::piped())
            .spawn()
            .context("running git apply")?;
        if let Some(mut stdin) = apply.stdin.take() {
            std::io::Write::write_all(&mut stdin, &diff.stdout)?;
        }
        if !apply.wait()?.success() {
            bail!(
                "the uncommitted changes did not apply to the worktree {}",
                tree.display()
            );
        }
    }
    let inside = cwd.strip_prefix(top).unwrap_or(Path::new(""));
    Ok(Sandbox {
        folder: tree.join(inside),
        words: format!(
            "a git worktree of HEAD with the uncommitted changes, untracked files left out: {} \
             (remove it with git -C {} worktree remove --force {})",
            tree.display(),
            top.display(),
            tree.display()
        ),
    })
}

fn copy(cwd: &Path, root: &Path) -> anyhow::Result<Sandbox> {
    let folder = root.join(cwd.file_name().unwrap_or_else(|| "folder".as_ref()));
    let copied = Command::new("cp")
        .arg("-a")
        .arg(cwd)
        .arg(&folder)
        .status()
        .context("running cp -a")?;
    if !copied.success() {
        bail!(
            "copying {} to {} failed ({copied})",
            cwd.display(),
            folder.display()
        );
    }
    Ok(Sandbox {
        words: format!("a copy of {}: {}", cwd.display(), folder.display()),
        folder,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_outside_git_is_copied_and_the_original_is_left_alone() {
        let dir = tempfile::tempdir().expect("dir");
        let work = dir.path().join("work");
        std::fs::create_dir_all(work.join("sub")).expect("mkdir");
        std::fs::write(work.join("sub/a.txt"), "one").expect("write");
        let sandbox = make(&work).expect("sandbox");
        assert_ne!(sandbox.folder, work);
        assert_eq!(
            std::fs::read_to_string(sandbox.folder.join("sub/a.txt")).expect("read"),
            "one"
        );
        std::fs::write(sandbox.folder.join("sub/a.txt"), "two").expect("write");
        assert_eq!(
            std::fs::read_to_string(work.join("sub/a.txt")).expect("read"),
            "one"
        );
        let _ = std::fs::remove_dir_all(sandbox.folder.parent().expect("root"));
    }

    #[test]
    fn a_folder_in_a_repository_gets_a_worktree_with_its_uncommitted_changes() {
        let dir = tempfile::tempdir().expect("dir");
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("src")).expect("mkdir");
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .status()
                .expect("git");
            assert!(ok.success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(repo.join("src/f.txt"), "committed").expect("write");
        git(&["add", "."]);
        git(&["commit", "-qm", "one"]);
        std::fs::write(repo.join("src/f.txt"), "changed").expect("write");
        let sandbox = make(&repo.join("src")).expect("sandbox");
        assert!(
            sandbox.folder.ends_with("worktree/src"),
            "{}",
            sandbox.folder.display()
        );
        assert_eq!(
            std::fs::read_to_string(sandbox.folder.join("f.txt")).expect("read"),
            "changed"
        );
        assert!(sandbox.words.contains("worktree remove"));
    }
}
