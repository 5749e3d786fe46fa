//! Translatable strings: gettext, domain `tcd-gtk`, through the C
//! library's own functions (English is the text itself). The template
//! translators start from, `client/gtk/po/tcd-gtk.pot`, is made from the
//! calls of [`tr`], [`trf`], [`trn`] and [`mark`] (and of the `ui`
//! builders that pass their text to [`tr`]) by `client/gtk/po/update-pot`.

use std::ffi::{CStr, CString};
use std::fmt::Display;

const DOMAIN: &CStr = c"tcd-gtk";

/// Where the catalogs are unless `$TCD_GTK_LOCALEDIR` names another
/// folder (the end-to-end test's catalog).
const LOCALE_DIR: &CStr = c"/usr/share/locale";

unsafe extern "C" {
    fn gettext(msgid: *const libc::c_char) -> *mut libc::c_char;
    fn ngettext(
        msgid: *const libc::c_char,
        plural: *const libc::c_char,
        n: libc::c_ulong,
    ) -> *mut libc::c_char;
    fn textdomain(domain: *const libc::c_char) -> *mut libc::c_char;
    fn bindtextdomain(domain: *const libc::c_char, dir: *const libc::c_char) -> *mut libc::c_char;
    fn bind_textdomain_codeset(
        domain: *const libc::c_char,
        codeset: *const libc::c_char,
    ) -> *mut libc::c_char;
}

/// Chooses the catalogs: the user's locale (`$LANGUAGE` too, unless the
/// locale is plain `C`), in `/usr/share/locale` or `$TCD_GTK_LOCALEDIR`.
pub fn init() {
    let dir = std::env::var_os("TCD_GTK_LOCALEDIR")
        .filter(|d| !d.is_empty())
        .and_then(|d| CString::new(std::os::unix::ffi::OsStrExt::as_bytes(d.as_os_str())).ok())
        .unwrap_or_else(|| LOCALE_DIR.to_owned());
    // SAFETY: setlocale, textdomain and bindtextdomain read the
    // NUL-terminated strings they are given, which outlive the calls; they
    // run before any other thread exists.
    unsafe {
        libc::setlocale(libc::LC_ALL, c"".as_ptr());
        bindtextdomain(DOMAIN.as_ptr(), dir.as_ptr());
        bind_textdomain_codeset(DOMAIN.as_ptr(), c"UTF-8".as_ptr());
        textdomain(DOMAIN.as_ptr());
    }
}

/// Copies what gettext returned, or `fallback` when it returned nothing.
///
/// # Safety
/// `out` is null or a NUL-terminated string that stays valid during the
/// call (gettext's answers stay mapped).
unsafe fn owned(out: *const libc::c_char, fallback: &str) -> String {
    if out.is_null() {
        return fallback.to_owned();
    }
    // SAFETY: as the caller promises, a NUL-terminated string.
    unsafe { CStr::from_ptr(out) }
        .to_string_lossy()
        .into_owned()
}

/// `text` in the user's language.
pub fn tr(text: &str) -> String {
    let Ok(id) = CString::new(text) else {
        return text.to_owned();
    };
    // SAFETY: gettext reads the NUL-terminated id and returns either it or
    // a string of the loaded catalog, which stays mapped; it is copied at
    // once.
    unsafe { owned(gettext(id.as_ptr()), text) }
}

/// `text` in the user's language with `{0}`, `{1}`… replaced by `args`
/// (a translation may put them in another order).
pub fn trf(text: &str, args: &[&dyn Display]) -> String {
    fill(&tr(text), args)
}

/// `one` or `many` (for `n`, in the user's language: some have more than
/// two forms), with `{0}` replaced by `n`.
pub fn trn(one: &str, many: &str, n: u64) -> String {
    let english = if n == 1 { one } else { many };
    let (Ok(id), Ok(plural)) = (CString::new(one), CString::new(many)) else {
        return fill(english, &[&n]);
    };
    let count = libc::c_ulong::try_from(n).unwrap_or(libc::c_ulong::MAX);
    // SAFETY: ngettext reads the two NUL-terminated ids and returns one of
    // them or a string of the loaded catalog; it is copied at once.
    let text = unsafe { owned(ngettext(id.as_ptr(), plural.as_ptr(), count), english) };
    fill(&text, &[&n])
}

/// Marks `text` for the template where it is not translated at once (a
/// table's headings): [`tr`] translates it where it is shown.
pub const fn mark(text: &'static str) -> &'static str {
    text
}

/// `text` with each `{N}` replaced by `args[N]`; other braces kept.
fn fill(text: &str, args: &[&dyn Display]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let arg = after.find('}').and_then(|close| {
            let i: usize = after[..close].parse().ok()?;
            Some((close, args.get(i)?))
        });
        match arg {
            Some((close, a)) => {
                out.push_str(&a.to_string());
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::fill;

    #[test]
    fn placeholders_are_filled_in_any_order() {
        assert_eq!(fill("Mount {0}", &[&"/v"]), "Mount /v");
        assert_eq!(fill("{1} auf {0}", &[&"a", &2]), "2 auf a");
        assert_eq!(fill("{0} {0}", &[&1]), "1 1");
    }

    #[test]
    fn other_braces_stay() {
        assert_eq!(fill("{x} {} {3} {", &[&1]), "{x} {} {3} {");
        assert_eq!(fill("no braces", &[]), "no braces");
    }
}
