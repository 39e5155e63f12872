//! Builds in the description of every paper folder of the repository's `experiments/` (its
//! `README.md`), so that `smpsched list` and `smpsched explain PAPER` can describe the papers
//! when run outside the repository. The folders are the list: nothing else names the papers.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // The manifest's folder as cargo gives it to this run, not as it was when the script was
    // compiled: a build script compiled in one checkout is reused by another sharing the target
    // folder (CI's fresh clone and the working copy), and would otherwise read the first one's
    // experiments, gone with it, and build in no paper at all.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join("../../experiments");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut papers = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let readme = entry.path().join("README.md");
            if !readme.is_file() {
                // Named only when it exists: cargo reruns a build script for a path that does not
                // exist every time, which would rebuild the lab (and the binary) on every build. A
                // folder's README added later changes the folder, which is watched above.
                continue;
            }
            println!("cargo:rerun-if-changed={}", readme.display());
            let id = entry.file_name().to_string_lossy().to_string();
            if holds_a_reproduction(&entry.path()) {
                papers.push((id, readme));
            }
        }
    }
    papers.sort();
    let mut out = String::from(
        "/// The paper folders of `experiments/` when the lab was built: (folder, README.md).\n\
         pub const BUILT_IN: &[(&str, &str)] = &[\n",
    );
    for (id, readme) in papers {
        let path = readme.canonicalize().unwrap_or(readme);
        let _ = writeln!(
            out,
            "    ({id:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");
    let target =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("papers.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}

/// Whether `folder` holds an experiment file with a `[reproduce]` section (what makes it a
/// paper's folder).
fn holds_a_reproduction(folder: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return false;
    };
    entries.flatten().any(|e| {
        e.path().extension().is_some_and(|x| x == "toml")
            && std::fs::read_to_string(e.path())
                .is_ok_and(|t| t.lines().any(|l| l.trim() == "[reproduce]"))
    })
}
