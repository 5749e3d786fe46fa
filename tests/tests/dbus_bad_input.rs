//! Bad D-Bus input gets a named error and leaves the daemon serving: wrong
//! argument types, huge strings, too many keyfiles, options of the wrong
//! type, and descriptors that are not a container (a directory, a pipe, a
//! character device). Sent with a raw D-Bus client, since tcctl never
//! sends such things. Needs root and /dev/fuse (the daemon's own needs).

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use tcd_tests::daemon::Daemon;
use zbus::zvariant::{Fd, Value};

fn connect(d: &Daemon) -> zbus::blocking::Connection {
    let stream = UnixStream::connect(d.socket()).expect("connect");
    zbus::blocking::connection::Builder::async_io_unix_stream(stream)
        .p2p()
        .build()
        .expect("p2p connection")
}

/// The error name and message of a call that must fail.
fn error_of<B>(conn: &zbus::blocking::Connection, method: &str, body: &B) -> (String, String)
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
{
    match conn.call_method(
        None::<&str>,
        "/org/tcd/Tcd1",
        Some("org.tcd.Manager1"),
        method,
        body,
    ) {
        Err(zbus::Error::MethodError(name, detail, _)) => {
            (name.to_string(), detail.unwrap_or_default())
        }
        Err(other) => panic!("{method}: not a D-Bus error: {other}"),
        Ok(_) => panic!("{method} should have failed"),
    }
}

/// The error of a `Mount` with a password of "password".
fn mount_error(
    conn: &zbus::blocking::Connection,
    fd: std::os::fd::BorrowedFd<'_>,
    host_name: &str,
    keyfiles: &[Vec<u8>],
    options: &HashMap<&str, Value>,
) -> (String, String) {
    error_of(
        conn,
        "Mount",
        &(
            Fd::from(fd),
            host_name,
            b"password".to_vec(),
            keyfiles,
            options,
        ),
    )
}

#[test]
fn bad_input_gets_named_errors_and_the_daemon_keeps_serving() {
    let d = Daemon::start();
    let conn = connect(&d);
    let no_keyfiles: Vec<Vec<u8>> = Vec::new();
    let options: HashMap<&str, Value> = HashMap::new();
    let invalid = "org.tcd.Error.InvalidArgument";

    // Wrong argument types: refused by the D-Bus layer before any code of
    // ours runs, naming the signature it wanted.
    for (method, msg) in [
        (
            "Mount",
            error_of(&conn, "Mount", &("not a descriptor", 42u32)),
        ),
        ("Dismount", error_of(&conn, "Dismount", &(7u64,))),
    ] {
        let (name, detail) = msg;
        assert!(
            name == "org.freedesktop.zbus.Error"
                || name == "org.freedesktop.DBus.Error.InvalidArgs",
            "{method}: {name}"
        );
        assert!(
            detail.to_lowercase().contains("signature"),
            "{method}: {detail}"
        );
    }

    // Descriptors that are no container.
    let dir = std::fs::File::open(d.dir.path()).expect("open folder");
    let (read_end, _write_end) = UnixStream::pair().expect("socket pair");
    let null = std::fs::File::open("/dev/null").expect("/dev/null");
    let (pipe_r, _pipe_w) = {
        let mut fds = [0i32; 2];
        // SAFETY: pipe(2) fills two descriptors we then own.
        let rc = unsafe { libc::pipe(fds.as_mut_ptr()) };
        assert_eq!(rc, 0, "pipe");
        use std::os::fd::FromRawFd;
        // SAFETY: both descriptors were just made by pipe(2) and are ours.
        unsafe {
            (
                std::fs::File::from_raw_fd(fds[0]),
                std::fs::File::from_raw_fd(fds[1]),
            )
        }
    };
    for (fd, what) in [
        (dir.as_fd(), "a directory"),
        (pipe_r.as_fd(), "a pipe"),
        (read_end.as_fd(), "a socket"),
        (null.as_fd(), "a character device"),
    ] {
        let (name, msg) = mount_error(&conn, fd, "x", &no_keyfiles, &options);
        assert_eq!(name, invalid, "{what}: {msg}");
        assert!(msg.contains(what), "{what}: {msg}");
    }

    // Huge strings, too many keyfiles, options of the wrong type.
    let host = tempfile::NamedTempFile::new().expect("temp file");
    host.as_file().set_len(1 << 20).expect("size");
    let huge = "x".repeat(1 << 20);
    let (name, msg) = error_of(&conn, "Dismount", &(huge.as_str(), false));
    assert_eq!(name, invalid, "{msg}");
    let (name, msg) = mount_error(
        &conn,
        host.as_file().as_fd(),
        huge.as_str(),
        &no_keyfiles,
        &options,
    );
    assert_eq!(name, invalid, "{msg}");
    let many: Vec<Vec<u8>> = (0..300).map(|_| vec![1u8; 16]).collect();
    let (name, msg) = mount_error(&conn, host.as_file().as_fd(), "x", &many, &options);
    assert_eq!(name, invalid, "{msg}");
    // An empty keyfile would add nothing: named by its place, not taken.
    let one_empty = vec![vec![7u8; 16], Vec::new()];
    let (name, msg) = mount_error(&conn, host.as_file().as_fd(), "x", &one_empty, &options);
    assert_eq!(
        (name.as_str(), msg.as_str()),
        (
            invalid,
            "keyfile number 2: empty (a keyfile holds at least one byte)"
        )
    );
    // The same bounds hold for key material carried in options.
    let many_hidden: HashMap<&str, Value> = HashMap::from([
        ("protect_hidden_password", Value::from(b"pw".to_vec())),
        ("protect_hidden_keyfiles", Value::from(many.clone())),
    ]);
    let (name, msg) = mount_error(
        &conn,
        host.as_file().as_fd(),
        "x",
        &no_keyfiles,
        &many_hidden,
    );
    assert_eq!(name, invalid, "hidden keyfiles: {msg}");
    let long_hidden: HashMap<&str, Value> =
        HashMap::from([("protect_hidden_password", Value::from(vec![b'p'; 8192]))]);
    let (name, msg) = mount_error(
        &conn,
        host.as_file().as_fd(),
        "x",
        &no_keyfiles,
        &long_hidden,
    );
    assert_eq!(name, invalid, "hidden password: {msg}");
    let odd: HashMap<&str, Value> = HashMap::from([("pim", Value::from("twelve"))]);
    let (name, msg) = mount_error(&conn, host.as_file().as_fd(), "x", &no_keyfiles, &odd);
    assert_eq!(name, invalid, "{msg}");
    let long_option: HashMap<&str, Value> =
        HashMap::from([("mount_point", Value::from(huge.as_str()))]);
    let (name, msg) = mount_error(
        &conn,
        host.as_file().as_fd(),
        "x",
        &no_keyfiles,
        &long_option,
    );
    assert_eq!(name, invalid, "{msg}");
    // A detached header of a size no header file has; and one given to a
    // call that would write the volume's own headers.
    let tiny: HashMap<&str, Value> =
        HashMap::from([("detached_header", Value::from(vec![0u8; 100]))]);
    let (name, msg) = mount_error(&conn, host.as_file().as_fd(), "x", &no_keyfiles, &tiny);
    assert_eq!(name, invalid, "{msg}");
    assert!(msg.contains("detached_header"), "{msg}");
    let header: HashMap<&str, Value> =
        HashMap::from([("detached_header", Value::from(vec![0u8; 131072]))]);
    let out = tempfile::tempfile().expect("backup file");
    let (name, msg) = error_of(
        &conn,
        "BackupHeaders",
        &(
            Fd::from(host.as_file().as_fd()),
            Fd::from(out.as_fd()),
            b"password".to_vec(),
            &no_keyfiles,
            &header,
        ),
    );
    assert_eq!(name, invalid, "{msg}");
    assert!(msg.contains("only HeaderInfo and Mount"), "{msg}");
    // ChangePassword's two dicts share key names; an error about the new
    // side says so (new_pim), not the PIM that opens the volume.
    let (name, msg) = error_of(
        &conn,
        "ChangePassword",
        &(
            Fd::from(host.as_file().as_fd()),
            b"password".to_vec(),
            &no_keyfiles,
            &options,
            b"new password".to_vec(),
            &no_keyfiles,
            &odd,
        ),
    );
    assert_eq!(name, invalid, "{msg}");
    assert!(msg.starts_with("option new_pim: "), "{msg}");
    // A file that is no volume: the one error for all such cases.
    let (name, _) = mount_error(
        &conn,
        host.as_file().as_fd(),
        "x",
        &no_keyfiles,
        &HashMap::from([("pim", Value::from(1u32)), ("hash", Value::from("sha512"))]),
    );
    assert_eq!(name, "org.tcd.Error.WrongPassword");

    // Still serving, on this connection and a new one.
    drop(conn);
    let list = d.list();
    assert_eq!(list.as_array().map(Vec::len), Some(0));
    let conn = connect(&d);
    let reply = conn
        .call_method(
            None::<&str>,
            "/org/tcd/Tcd1",
            Some("org.tcd.Manager1"),
            "Backends",
            &(),
        )
        .expect("Backends");
    let (_, rows): (bool, Vec<tcd_proto::contract::rows::BackendRow>) =
        reply.body().deserialize().expect("rows");
    assert!(!rows.is_empty());
}
