//! The tool's provenance for results files: `git describe` of the tree it
//! was built from (`SOFTROUTER_GIT`, empty outside a git checkout, e.g.
//! from a crate tarball, where the crate version stands alone).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
    let describe = git(&["describe", "--always", "--dirty", "--tags"]).unwrap_or_default();
    println!("cargo:rustc-env=SOFTROUTER_GIT={describe}");
    // Rebuilt when HEAD moves (a commit, a checkout); the git directory of
    // a worktree is not `.git` of the checkout.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/logs/HEAD");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
