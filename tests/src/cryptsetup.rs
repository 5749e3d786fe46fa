//! cryptsetup as the oracle: its `tcryptDump` of a volume, and the master
//! key in such a dump.

use crate::require_tool;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// `cryptsetup tcryptDump` of `path` (AES chain, PRF `hash`; with its
/// master key if `master_key`), the password on standard input; fails the
/// test when cryptsetup does.
pub fn tcrypt_dump(path: &Path, password: &[u8], hash: &str, master_key: bool) -> String {
    let tool = require_tool("cryptsetup", "package cryptsetup-bin");
    let mut cmd = Command::new(tool);
    cmd.args([
        "tcryptDump",
        "--batch-mode",
        "--key-file=-",
        "--cipher",
        "aes",
        "--hash",
        hash,
    ]);
    if master_key {
        cmd.arg("--dump-master-key");
    }
    let mut child = cmd
        .arg(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cryptsetup");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(password)
        .expect("password");
    let out = child.wait_with_output().expect("cryptsetup output");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "cryptsetup tcryptDump failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The hex bytes after "MK dump:", over its continuation lines.
pub fn master_key(dump: &str) -> Vec<u8> {
    let start = dump.find("MK dump:").expect("MK dump") + "MK dump:".len();
    dump[start..]
        .split_whitespace()
        .take_while(|w| w.len() == 2 && w.chars().all(|c| c.is_ascii_hexdigit()))
        .map(|w| u8::from_str_radix(w, 16).expect("hex"))
        .collect()
}
