//! The daemon's log as an administrator reads it from a file: plain text,
//! no terminal colour codes.

use tcd_tests::daemon::Daemon;

#[test]
fn a_log_written_to_a_file_has_no_colour_codes() {
    let mut d = Daemon::start();
    // Something worth a line beyond start-up: a request that fails.
    let _ = d.tcctl(&["dismount", "/nothing/mounted/here"], "");
    d.stop();
    let log = std::fs::read_to_string(d.path("tcd.log")).expect("daemon log");
    assert!(log.contains("INFO"), "the log has lines: {log}");
    assert!(
        !log.contains('\u{1b}'),
        "terminal escape codes in a log file: {:?}",
        log.lines().find(|l| l.contains('\u{1b}'))
    );
}
