//! The 8x8 handwritten digits (1,797 images, as scikit-learn's `load_digits`), read from the copy
//! that ships inside scikit-learn's PyPI wheel. The first run fetches the wheel with pip (no
//! dependencies, nothing installed) into `~/.cache/oxtorch/digits/` and extracts the CSV there;
//! the data is never committed.

use std::path::PathBuf;
use std::process::Command;

use oxtorch as torch;
use torch::{DType, Error, Result, Tensor};

fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("oxtorch").join("digits")
}

/// The path of `digits.csv`, fetching it on first use.
fn csv_path() -> Result<PathBuf> {
    let dir = cache_dir();
    let csv = dir.join("digits.csv");
    if csv.exists() {
        return Ok(csv);
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::msg(format!("cannot create {}: {e}", dir.display())))?;
    eprintln!("fetching the digits data from scikit-learn's wheel (pip download, once) ...");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let status = Command::new(&python)
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d"])
        .arg(&dir)
        .arg("scikit-learn")
        .status()
        .map_err(|e| Error::msg(format!("cannot run {python} -m pip: {e}")))?;
    if !status.success() {
        return Err(Error::msg("pip download scikit-learn failed; set PYTHON to a Python with pip"));
    }
    let extract = r#"
import glob, gzip, sys, zipfile
d = sys.argv[1]
wheel = sorted(glob.glob(d + "/scikit_learn-*.whl"))[-1]
with zipfile.ZipFile(wheel) as z:
    data = gzip.decompress(z.read("sklearn/datasets/data/digits.csv.gz"))
open(d + "/digits.csv", "wb").write(data)
"#;
    let status = Command::new(&python)
        .args(["-c", extract])
        .arg(&dir)
        .status()
        .map_err(|e| Error::msg(format!("cannot run {python}: {e}")))?;
    if !status.success() || !csv.exists() {
        return Err(Error::msg("could not extract digits.csv from the scikit-learn wheel"));
    }
    Ok(csv)
}

/// Images `[N, 64]` scaled to [0, 1] (f32) and labels `[N]` (i64).
pub fn load() -> Result<(Tensor, Tensor)> {
    let path = csv_path()?;
    let text = std::fs::read_to_string(&path).map_err(|e| Error::msg(format!("{}: {e}", path.display())))?;
    let (mut pixels, mut labels) = (Vec::new(), Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let vals: Vec<f32> = line
            .split(',')
            .map(|v| {
                v.trim().parse::<f32>().map_err(|_| Error::msg(format!("bad value '{v}' in digits.csv")))
            })
            .collect::<Result<_>>()?;
        if vals.len() != 65 {
            return Err(Error::msg(format!("digits.csv: expected 65 columns, got {}", vals.len())));
        }
        pixels.extend(vals[..64].iter().map(|v| v / 16.0));
        labels.push(vals[64] as i64);
    }
    let n = labels.len();
    Ok((Tensor::from_vec(pixels, [n, 64])?, Tensor::from_vec(labels, [n])?.to_dtype(DType::I64)?))
}
