//! Replacing a user's file without losing it: a temporary file beside the file, then a rename.
//!
//! Three things a plain "write a temporary, rename it over the path" gets wrong, and this does not:
//!
//! - **A symbolic link** (`tuning.json -> /shared/tuning.json`): renaming over the link replaces
//!   the link with a regular file and leaves its target stale. The link is followed, and its
//!   target is what gets replaced; the link stays.
//! - **A read-only file** (mode 444): a rename needs only the directory to be writable, so it would
//!   silently replace a file its owner protected (and root ignores the mode anyway). It is refused.
//! - **The file's mode** (600 for a private result): the new file gets the old one's permissions,
//!   not the umask's.
//!
//! A device or FIFO (`/dev/stdout`) is written directly: renaming over it would replace the node.

use std::io::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically (see the module docs).
pub fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_with(path, "", |tmp| std::fs::write(tmp, bytes))
}

/// Like [`replace`] for a writer that takes a path: `write` creates the temporary file, whose name
/// ends in `suffix` (e.g. `.svg`, for writers that choose a format by the extension).
pub fn replace_with(path: &Path, suffix: &str, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    // Through the name given: /dev/stdout is a link to /proc/self/fd/1, whose own "target" is
    // no path (`pipe:[1234]`), but opening the name reaches the pipe.
    if is_special(path) {
        return write(path);
    }
    let target = replaceable(path)?;
    let existing = std::fs::metadata(&target).ok();
    if existing.as_ref().is_some_and(|m| !m.is_file()) {
        return write(&target);
    }
    let tmp = temp_path(&target, suffix);
    let result = write(&tmp)
        .and_then(|()| match &existing {
            Some(m) => std::fs::set_permissions(&tmp, m.permissions()),
            None => Ok(()),
        })
        .and_then(|()| std::fs::rename(&tmp, &target));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// An existing path that is neither a regular file nor a directory, following every link as
/// an open does: a device, a FIFO, the pipe or terminal behind /dev/stdout.
pub fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Where [`replace`] would write `path` (the end of its links), or why it would refuse: a
/// directory, or a read-only file. The one rule for callers that check before any work (a
/// sweep's result files, every file of an export) and for the write itself.
pub fn replaceable(path: &Path) -> Result<PathBuf> {
    let target = follow_links(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => Err(Error::new(ErrorKind::IsADirectory, "is a directory")),
        Ok(m) if m.is_file() && m.permissions().readonly() => Err(Error::new(ErrorKind::PermissionDenied, "is read-only")),
        _ => Ok(target),
    }
}

/// The path a write to `path` lands on: `path` itself, or the end of its chain of symbolic links
/// (which need not exist yet: a dangling link is written through, as `echo > link` does).
pub fn follow_links(path: &Path) -> Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&current)?;
                current = if to.is_absolute() { to } else { parent(&current).join(to) };
            }
            _ => return Ok(current),
        }
    }
    Err(Error::new(ErrorKind::InvalidInput, "too many levels of symbolic links"))
}

/// The temporary file that [`replace`] writes beside `target` (hidden, named by the process).
pub fn temp_path(target: &Path, suffix: &str) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    parent(target).join(format!(".{name}.{}.tmp{suffix}", std::process::id()))
}

fn parent(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mra-replace-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// /dev/stdout into a pipe: a link to /proc/self/fd/1, itself a link to `pipe:[N]` (no
    /// path); written through the name, as the shell's `>` does.
    #[test]
    fn a_pipe_behind_dev_stdout_is_written_directly() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&writer);
        let path = PathBuf::from(format!("/proc/self/fd/{fd}"));
        assert!(is_special(&path) && follow_links(&path).unwrap().to_string_lossy().contains("pipe:["), "{}", path.display());
        replace(&path, b"through the pipe").unwrap();
        drop(writer);
        let mut got = String::new();
        std::io::Read::read_to_string(&mut reader, &mut got).unwrap();
        assert_eq!(got, "through the pipe");
    }

    #[test]
    fn a_link_keeps_pointing_at_its_target_which_gets_the_new_bytes() {
        let dir = scratch("link");
        std::fs::write(dir.join("real.json"), b"old").unwrap();
        std::os::unix::fs::symlink("real.json", dir.join("link.json")).unwrap();
        replace(&dir.join("link.json"), b"new").unwrap();
        assert!(std::fs::symlink_metadata(dir.join("link.json")).unwrap().file_type().is_symlink(), "the link was replaced");
        assert_eq!(std::fs::read(dir.join("real.json")).unwrap(), b"new");
        // A dangling link is written through, as the shell's `>` does.
        std::os::unix::fs::symlink("sub/absent.json", dir.join("dangling.json")).unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        replace(&dir.join("dangling.json"), b"x").unwrap();
        assert_eq!(std::fs::read(dir.join("sub/absent.json")).unwrap(), b"x");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_read_only_file_is_refused_and_a_private_one_stays_private() {
        let dir = scratch("mode");
        let ro = dir.join("ro.txt");
        std::fs::write(&ro, b"keep").unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = replace(&ro, b"lost").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PermissionDenied);
        assert_eq!(std::fs::read(&ro).unwrap(), b"keep");
        let private = dir.join("private.txt");
        std::fs::write(&private, b"a").unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        replace(&private, b"b").unwrap();
        assert_eq!(std::fs::metadata(&private).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read(&private).unwrap(), b"b");
        // No temporary file left behind by either.
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 2, "{left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
