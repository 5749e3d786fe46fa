//! Keyfiles on PKCS #11 security tokens, as TrueCrypt 7 and VeraCrypt keep
//! them: data objects whose label is the keyfile's name and whose value is
//! its content, named `token://slot/N/file/NAME`. The client reads them
//! with the user's PIN and hands the daemon their contents like any other
//! keyfile's; the daemon never talks to a token.

use crate::bus::{Failure, exit};
use cryptoki::context::{CInitializeArgs, CInitializeFlags, Pkcs11};
use cryptoki::object::{Attribute, AttributeType, ObjectClass, ObjectHandle};
use cryptoki::session::{Session, UserType};
use cryptoki::slot::Slot;
use cryptoki::types::AuthPin;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use zeroize::Zeroizing;

/// How a token keyfile is named on the command line.
pub const SCHEME: &str = "token://";

/// `--token-lib`, and how to ask the daemon for the policy's library,
/// set once by `main`.
static LIBRARY: OnceLock<Option<PathBuf>> = OnceLock::new();
type PolicyLibrary = Box<dyn Fn() -> Option<PathBuf> + Send + Sync>;
static POLICY_LIBRARY: OnceLock<PolicyLibrary> = OnceLock::new();

pub fn configure(
    library: Option<PathBuf>,
    policy: impl Fn() -> Option<PathBuf> + Send + Sync + 'static,
) {
    let _ = LIBRARY.set(library);
    let _ = POLICY_LIBRARY.set(Box::new(policy));
}

/// The policy's `token_library`, asked of the daemon at `at` (none when it
/// cannot be reached: the next choice then applies).
pub fn policy_library(at: crate::bus::Where<'_>) -> Option<PathBuf> {
    crate::bus::Client::connect(at)
        .and_then(|c| c.policy())
        .ok()?
        .token_library()
        .map(PathBuf::from)
}

/// The PINs typed in this run, by slot: one login per token per command,
/// as VeraCrypt does, however many of its keyfiles are named. Wiped on
/// exit (and when a login with one fails).
static PINS: Mutex<Option<HashMap<u64, Zeroizing<String>>>> = Mutex::new(None);

/// A keyfile on a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenKeyfile {
    pub slot: u64,
    pub name: String,
}

impl TokenKeyfile {
    /// `token://slot/N/file/NAME`; `None` for anything else.
    pub fn parse(s: &str) -> Option<Result<TokenKeyfile, Failure>> {
        let rest = s.strip_prefix(SCHEME)?;
        let bad = || Failure {
            code: exit::USAGE,
            message: format!("{s}: a token keyfile is named token://slot/N/file/NAME"),
        };
        let parsed = rest
            .strip_prefix("slot/")
            .and_then(|r| r.split_once("/file/"))
            .and_then(|(slot, name)| Some((slot.parse().ok()?, name)))
            .filter(|(_, name)| !name.is_empty())
            .map(|(slot, name)| TokenKeyfile {
                slot,
                name: name.to_owned(),
            });
        Some(parsed.ok_or_else(bad))
    }
}

impl std::fmt::Display for TokenKeyfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{SCHEME}slot/{}/file/{}", self.slot, self.name)
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> Failure {
    Failure {
        code: exit::FAILED,
        message: format!("{what}: {e}"),
    }
}

/// The PKCS #11 library: the user's (`--token-lib`, `$TCD_PKCS11_MODULE`),
/// the policy's `token_library`, p11-kit's proxy (which reaches every token
/// the system has configured).
fn library() -> Result<PathBuf, Failure> {
    let given = LIBRARY.get().cloned().flatten();
    let env = std::env::var_os("TCD_PKCS11_MODULE").filter(|v| !v.is_empty());
    let user = given.or(env.map(PathBuf::from));
    if let Some(lib) = user {
        return Ok(lib);
    }
    let policy = match POLICY_LIBRARY.get() {
        Some(ask) => ask(),
        None => policy_library(crate::bus::Where::Default),
    };
    let proxy = [
        "/usr/lib/x86_64-linux-gnu/p11-kit-proxy.so",
        "/usr/lib/p11-kit-proxy.so",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists());
    policy.or(proxy).ok_or_else(|| {
        Failure::invalid(
            "no PKCS #11 library: name your token's with --token-lib (or $TCD_PKCS11_MODULE, \
             or the policy's token_library)"
                .into(),
        )
    })
}

/// The loaded library, initialised.
pub fn open() -> Result<Pkcs11, Failure> {
    let lib = library()?;
    if !lib.exists() {
        return Err(Failure::not_found(format!(
            "{}: no such PKCS #11 library",
            lib.display()
        )));
    }
    let p = Pkcs11::new(&lib).map_err(|e| failed(&format!("{}", lib.display()), e))?;
    p.initialize(CInitializeArgs::new(CInitializeFlags::OS_LOCKING_OK))
        .map_err(|e| failed(&format!("{}", lib.display()), e))?;
    Ok(p)
}

/// The slot numbered `id` that holds a token.
pub fn slot(p: &Pkcs11, id: u64) -> Result<Slot, Failure> {
    slots(p)?
        .into_iter()
        .find(|s| s.id() == id)
        .ok_or_else(|| Failure::not_found(format!("no token in slot {id}")))
}

pub fn slots(p: &Pkcs11) -> Result<Vec<Slot>, Failure> {
    p.get_slots_with_initialized_token()
        .map_err(|e| failed("cannot list the tokens", e))
}

/// A session on `slot`, logged in as the user with the PIN given or asked.
pub fn session(p: &Pkcs11, slot: Slot, write: bool) -> Result<Session, Failure> {
    let label = p
        .get_token_info(slot)
        .map(|i| i.label().trim().to_owned())
        .unwrap_or_default();
    let s = if write {
        p.open_rw_session(slot)
    } else {
        p.open_ro_session(slot)
    }
    .map_err(|e| failed(&format!("token {label}"), e))?;
    // A PIN typed wrong is asked again, as VeraCrypt does, while the token
    // allows more tries; one from $TCD_TOKEN_PIN is not.
    for tries_left in (0..3).rev() {
        let pin = cached_pin(slot.id(), &label)?;
        let wrong = match s.login(UserType::User, Some(&AuthPin::from(pin.to_string()))) {
            Ok(()) => return Ok(s),
            Err(cryptoki::error::Error::Pkcs11(cryptoki::error::RvError::PinIncorrect, _)) => {
                forget_pin(slot.id());
                Failure {
                    code: exit::WRONG_PASSWORD,
                    message: format!("token {label}: wrong PIN"),
                }
            }
            Err(e) => {
                forget_pin(slot.id());
                return Err(failed(&format!("token {label}: cannot log in"), e));
            }
        };
        let info = p.get_token_info(slot).ok();
        let locked = info.as_ref().is_some_and(|i| i.user_pin_locked());
        if tries_left == 0 || locked || pin_from_env() || !has_terminal() {
            return Err(wrong);
        }
        let last = info.is_some_and(|i| i.user_pin_final_try());
        eprintln!(
            "{}{}",
            wrong.message,
            if last {
                "; the token locks at the next wrong one"
            } else {
                ""
            }
        );
    }
    Err(Failure {
        code: exit::WRONG_PASSWORD,
        message: format!("token {label}: wrong PIN"),
    })
}

fn pin_from_env() -> bool {
    std::env::var_os("TCD_TOKEN_PIN").is_some_and(|p| !p.is_empty())
}

fn has_terminal() -> bool {
    std::fs::File::open("/dev/tty").is_ok()
}

/// The PIN of the token in `slot`: the one typed before in this run, else
/// asked (and kept for the rest of the run).
fn cached_pin(slot: u64, label: &str) -> Result<Zeroizing<String>, Failure> {
    let mut pins = PINS.lock().unwrap_or_else(|e| e.into_inner());
    let pins = pins.get_or_insert_with(HashMap::new);
    if let Some(p) = pins.get(&slot) {
        return Ok(p.clone());
    }
    let p = pin(label)?;
    pins.insert(slot, p.clone());
    Ok(p)
}

fn forget_pin(slot: u64) {
    if let Some(pins) = PINS.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        pins.remove(&slot);
    }
}

/// Wipes the PINs kept for the run (`main` calls it before it exits).
pub fn forget_pins() {
    *PINS.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// The user PIN: `$TCD_TOKEN_PIN` (which only the user and root can
/// read, unlike a command line), else asked on the terminal.
fn pin(label: &str) -> Result<Zeroizing<String>, Failure> {
    if let Some(pin) = std::env::var_os("TCD_TOKEN_PIN").filter(|p| !p.is_empty()) {
        return Ok(Zeroizing::new(pin.to_string_lossy().into_owned()));
    }
    if !has_terminal() {
        return Err(Failure {
            code: exit::USAGE,
            message: "a token PIN is needed and there is no terminal to ask on: \
                      set $TCD_TOKEN_PIN"
                .into(),
        });
    }
    rpassword::prompt_password(format!("PIN for token {label}: "))
        .map(Zeroizing::new)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::Interrupted => Failure {
                code: exit::INTERRUPTED,
                message: "no PIN given (interrupted)".into(),
            },
            _ => Failure::invalid(format!("cannot read the PIN: {e}")),
        })
}

/// The keyfiles (data objects) on the token of `session`, by name.
pub fn keyfiles(session: &Session) -> Result<Vec<(String, ObjectHandle)>, Failure> {
    let found = session
        .find_objects(&[Attribute::Class(ObjectClass::DATA)])
        .map_err(|e| failed("cannot list the token's objects", e))?;
    let mut named = Vec::new();
    for o in found {
        let attrs = session
            .get_attributes(o, &[AttributeType::Label])
            .map_err(|e| failed("cannot read an object's label", e))?;
        if let Some(Attribute::Label(l)) = attrs.into_iter().next() {
            named.push((String::from_utf8_lossy(&l).into_owned(), o));
        }
    }
    named.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(named)
}

/// Reads a token keyfile's content (at most `max` bytes count).
pub fn read(k: &TokenKeyfile, max: usize) -> Result<Zeroizing<Vec<u8>>, Failure> {
    let p = open()?;
    let s = session(&p, slot(&p, k.slot)?, false)?;
    let (_, handle) = keyfiles(&s)?
        .into_iter()
        .find(|(n, _)| *n == k.name)
        .ok_or_else(|| Failure::not_found(format!("{k}: no such keyfile on the token")))?;
    let attrs = s
        .get_attributes(handle, &[AttributeType::Value])
        .map_err(|e| failed(&format!("{k}"), e))?;
    match attrs.into_iter().next() {
        Some(Attribute::Value(mut v)) => {
            v.truncate(max);
            Ok(Zeroizing::new(v))
        }
        _ => Err(failed(&format!("{k}"), "the token gives no content")),
    }
}
