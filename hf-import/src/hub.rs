//! Where a model lives: a local directory, or a Hugging Face id resolved offline in the local cache.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The hub cache folders searched, in order: `$HF_HUB_CACHE`, `$HF_HOME/hub`,
/// `$XDG_CACHE_HOME/huggingface/hub`, `~/.cache/huggingface/hub`.
pub fn cache_dirs() -> Vec<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let mut dirs = Vec::new();
    if let Some(p) = env("HF_HUB_CACHE") {
        dirs.push(p);
    }
    if let Some(p) = env("HF_HOME") {
        dirs.push(p.join("hub"));
    }
    if let Some(p) = env("XDG_CACHE_HOME") {
        dirs.push(p.join("huggingface").join("hub"));
    }
    if let Some(p) = env("HOME") {
        dirs.push(p.join(".cache").join("huggingface").join("hub"));
    }
    dirs.dedup();
    dirs
}

/// The local folder of `model`: the directory itself when it is one, else the snapshot of the
/// Hugging Face id `org/name` (revision `refs/main`, or the only snapshot) in the first cache of
/// [`cache_dirs`] that holds it. Nothing is downloaded; a model found nowhere gives an error
/// listing every place searched.
pub fn resolve_model(model: &str) -> Result<PathBuf> {
    resolve_in(model, &cache_dirs())
}

/// [`resolve_model`] with an explicit list of hub caches.
pub fn resolve_in(model: &str, caches: &[PathBuf]) -> Result<PathBuf> {
    let local = Path::new(model);
    if local.is_dir() {
        return Ok(local.to_path_buf());
    }
    let mut looked = vec![local.to_path_buf()];
    let (id, revision) = match model.split_once('@') {
        Some((id, rev)) => (id, Some(rev)),
        None => (model, None),
    };
    let repo = format!("models--{}", id.replace('/', "--"));
    for cache in caches {
        let root = cache.join(&repo);
        looked.push(root.clone());
        if let Some(snapshot) = snapshot_of(&root, revision) {
            return Ok(snapshot);
        }
    }
    Err(Error::ModelNotFound { model: model.to_string(), looked })
}

/// The snapshot folder of a cached repo for `revision` (a ref name or a commit; default `main`).
fn snapshot_of(root: &Path, revision: Option<&str>) -> Option<PathBuf> {
    let snapshots = root.join("snapshots");
    let rev = revision.unwrap_or("main");
    let commit = std::fs::read_to_string(root.join("refs").join(rev))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| rev.to_string());
    let dir = snapshots.join(&commit);
    if dir.is_dir() {
        return Some(dir);
    }
    if revision.is_some() {
        return None;
    }
    // No refs/main (a cache copied by hand): accept a single snapshot.
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&snapshots)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    (entries.len() == 1).then(|| entries.remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_refs_main_snapshot_and_reports_where_it_looked() {
        let tmp = std::env::temp_dir().join(format!("oxtorch-hub-{}", std::process::id()));
        let repo = tmp.join("models--org--tiny");
        std::fs::create_dir_all(repo.join("snapshots").join("abc123")).unwrap();
        std::fs::create_dir_all(repo.join("snapshots").join("old")).unwrap();
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs").join("main"), "abc123\n").unwrap();
        let caches = vec![tmp.join("missing-cache"), tmp.clone()];
        let found = resolve_in("org/tiny", &caches).unwrap();
        assert_eq!(found, repo.join("snapshots").join("abc123"));
        assert_eq!(resolve_in("org/tiny@old", &caches).unwrap(), repo.join("snapshots").join("old"));
        let err = resolve_in("org/absent", &caches).unwrap_err().to_string();
        assert!(err.starts_with("model 'org/absent' not found: looked in org/absent, "), "{err}");
        assert!(err.contains("missing-cache/models--org--absent"), "{err}");
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
