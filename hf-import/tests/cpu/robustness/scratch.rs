//! Scratch copies of fixture folders: cases (edits of files) applied to them and put back.

use super::*;

// ---------------------------------------------------------------------------------------------
// Scratch copies of fixture folders.

/// A folder under the system's temp dir, removed (with everything in it) when dropped.
pub(super) struct ScratchRoot(pub(super) PathBuf);

impl ScratchRoot {
    pub(super) fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("oxtorch-robustness-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        ScratchRoot(dir)
    }
}

impl Drop for ScratchRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies the folder `from` to `to`, without the golden outputs the sweep never reads.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("expected") || name.starts_with("generate") || name == "chat_expected.json" {
            continue;
        }
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(&name))?;
        } else {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

/// Removes the file or folder at `path`, if any.
fn remove_any(path: &Path) {
    if path.is_dir() {
        let _ = std::fs::remove_dir_all(path);
    } else {
        let _ = std::fs::remove_file(path);
    }
}

/// Writes `bytes` to `path` through a new file renamed over it: a model of an earlier case that
/// still maps the old file (one left running by a hang) keeps its pages instead of having the file
/// cut under it.
fn replace_file(path: &Path, bytes: &[u8]) {
    if path.is_dir() {
        let _ = std::fs::remove_dir_all(path);
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!("{name}.robustness-tmp"));
    std::fs::write(&tmp, bytes).unwrap_or_else(|e| panic!("writing {}: {e}", tmp.display()));
    std::fs::rename(&tmp, path).unwrap_or_else(|e| panic!("renaming over {}: {e}", path.display()));
}

/// One change to a scratch folder (file names relative to it).
pub(super) enum Edit {
    Write(String, Vec<u8>),
    Remove(String),
    MakeDir(String),
}

/// A case: its label, the edits that make it, and what its errors may name besides the usual.
pub(super) struct Case {
    pub(super) label: String,
    pub(super) edits: Vec<Edit>,
    pub(super) anchors: Vec<String>,
}

impl Case {
    pub(super) fn write(
        label: impl Into<String>,
        file: &str,
        bytes: impl Into<Vec<u8>>,
        anchors: &[&str],
    ) -> Self {
        Case::of(label, vec![Edit::Write(file.into(), bytes.into())], anchors)
    }

    pub(super) fn of(label: impl Into<String>, edits: Vec<Edit>, anchors: &[&str]) -> Self {
        Case { label: label.into(), edits, anchors: anchors.iter().map(|a| a.to_string()).collect() }
    }

    pub(super) fn anchors(&self) -> Vec<&str> {
        self.anchors.iter().map(String::as_str).collect()
    }
}

/// A private copy of a folder that cases change and [`Scratch::reset`] puts back.
pub(super) struct Scratch {
    source: PathBuf,
    pub(super) dir: PathBuf,
    touched: BTreeSet<String>,
}

impl Scratch {
    /// A copy of fixture `name` under `root`.
    pub(super) fn fixture(root: &ScratchRoot, name: &str) -> Self {
        Scratch::copy_of(root, name, &fixture(name))
    }

    /// A copy of the folder `source` under `root`, called `label`.
    pub(super) fn copy_of(root: &ScratchRoot, label: &str, source: &Path) -> Self {
        let dir = root.0.join(label.replace('/', "_"));
        copy_dir(source, &dir).unwrap_or_else(|e| panic!("copying {}: {e}", source.display()));
        Scratch { source: source.to_path_buf(), dir, touched: BTreeSet::new() }
    }

    /// The bytes of file `name` as the source folder has it.
    pub(super) fn original(&self, name: &str) -> Vec<u8> {
        let path = self.source.join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    }

    pub(super) fn apply(&mut self, edits: &[Edit]) {
        for edit in edits {
            match edit {
                Edit::Write(name, bytes) => {
                    self.touched.insert(name.clone());
                    replace_file(&self.dir.join(name), bytes);
                }
                Edit::Remove(name) => {
                    self.touched.insert(name.clone());
                    remove_any(&self.dir.join(name));
                }
                Edit::MakeDir(name) => {
                    self.touched.insert(name.clone());
                    let path = self.dir.join(name);
                    remove_any(&path);
                    std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                }
            }
        }
    }

    /// Puts every file a case changed back as the source has it.
    pub(super) fn reset(&mut self) {
        for name in std::mem::take(&mut self.touched) {
            let target = self.dir.join(&name);
            remove_any(&target);
            let from = self.source.join(&name);
            if from.is_file() {
                replace_file(&target, &self.original(&name));
            }
        }
    }
}
