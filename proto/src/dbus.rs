//! Rows of the D-Bus API that daemon and clients both spell out, as plain
//! tuples (their D-Bus signatures are in `docs/DBUS.md`).

/// One row of `Backends` (`(sssssbbbbass)`): name, description, version,
/// file, SHA-256, uses processor crypto instructions, available on this
/// processor, allowed by the policy, loaded in the daemon, ciphers, and
/// why it was skipped (empty if it was not).
pub type BackendRow = (
    String,
    String,
    String,
    String,
    String,
    bool,
    bool,
    bool,
    bool,
    Vec<String>,
    String,
);

/// One cipher row of `Benchmark` (`(ssdddb)`): encryption, backends,
/// encrypt, decrypt and mean MB/s, AES on processor instructions.
pub type CipherBenchRow = (String, String, f64, f64, f64, bool);

/// One key-derivation row of `Benchmark` (`(sudd)`): PRF, default
/// iterations, iterations per second on one core, seconds per trial.
pub type KdfBenchRow = (String, u32, f64, f64);

/// The reply of `Policy`: text, file, hardware acceleration, every backend
/// allowed, the allowed names, the order of preference.
pub type PolicyView = (String, String, String, bool, Vec<String>, Vec<String>);
