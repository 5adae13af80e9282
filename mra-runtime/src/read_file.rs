//! Reading a whole file the user named (the tuning database, a sweep's JSON, a tuned-defaults
//! file, a kernel source, a kernel cache entry): only a regular file, and at most a cap.
//! `std::fs::read` of /dev/zero or /dev/full grows until the process is killed, and of a FIFO
//! waits for a writer forever; these are one line naming the file instead.

use std::io::{Error, ErrorKind, Read, Result};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The most a data file read whole may hold: 256 MiB, hundreds of times the largest tuning
/// database, sweep or code object the tool writes.
pub const MAX_DATA: u64 = 256 << 20;

/// The most a kernel source may hold (`--source`): 16 MiB, a hundred times a generated one.
pub const MAX_SOURCE: u64 = 16 << 20;

/// The bytes of `path`, if it is a regular file of at most `cap` bytes; else an error whose
/// text completes "cannot read FILE: ..." in one line.
pub fn read_bounded(path: &Path, cap: u64) -> Result<Vec<u8>> {
    // O_NONBLOCK: opening a FIFO that has no writer returns at once (it is refused below) instead
    // of waiting; on a regular file the flag changes nothing.
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, format!("it is {}, not a regular file", kind(&meta.file_type()))));
    }
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(meta.len().min(cap) as usize).map_err(|_| Error::new(ErrorKind::OutOfMemory, format!("cannot allocate {} bytes to read it", meta.len())))?;
    // One byte past the cap tells a file that grew past it from one that fits.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(Error::new(ErrorKind::FileTooLarge, format!("it is larger than {} MiB, more than this tool reads", cap >> 20)));
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_bounded_to_string(path: &Path, cap: u64) -> Result<String> {
    String::from_utf8(read_bounded(path, cap)?).map_err(|_| Error::new(ErrorKind::InvalidData, "it is not UTF-8 text"))
}

fn kind(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_fifos_directories_and_what_exceeds_the_cap() {
        let dir = std::env::temp_dir().join(format!("mra-read-bounded-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let start = std::time::Instant::now();
        for (path, says) in [(Path::new("/dev/zero"), "character device"), (Path::new("/dev/full"), "character device"), (&fifo, "FIFO"), (&dir, "directory")] {
            let e = read_bounded(path, MAX_DATA).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("not a regular file") && !e.contains('\n'), "{}: {e}", path.display());
        }
        assert!(start.elapsed().as_secs() < 5, "a FIFO without a writer is refused, not waited on");
        let file = dir.join("f");
        std::fs::write(&file, vec![b'x'; 1000]).unwrap();
        assert_eq!(read_bounded(&file, 1000).unwrap().len(), 1000);
        let e = read_bounded(&file, 999).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::FileTooLarge);
        std::fs::write(&file, b"\xff\xfe").unwrap();
        assert!(read_bounded_to_string(&file, 10).unwrap_err().to_string().contains("not UTF-8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
