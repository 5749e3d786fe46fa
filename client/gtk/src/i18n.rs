//! Translatable strings: gettext, domain `tcd-gtk`, through the C
//! library's own functions (English is the text itself).

use std::ffi::{CStr, CString};

const DOMAIN: &CStr = c"tcd-gtk";

unsafe extern "C" {
    fn gettext(msgid: *const libc::c_char) -> *mut libc::c_char;
    fn textdomain(domain: *const libc::c_char) -> *mut libc::c_char;
    fn bindtextdomain(domain: *const libc::c_char, dir: *const libc::c_char) -> *mut libc::c_char;
    fn bind_textdomain_codeset(
        domain: *const libc::c_char,
        codeset: *const libc::c_char,
    ) -> *mut libc::c_char;
}

/// Chooses the catalogs: the user's locale, `/usr/share/locale`.
pub fn init() {
    // SAFETY: setlocale, textdomain and bindtextdomain read the
    // NUL-terminated strings they are given, which outlive the calls; they
    // run before any other thread exists.
    unsafe {
        libc::setlocale(libc::LC_ALL, c"".as_ptr());
        bindtextdomain(DOMAIN.as_ptr(), c"/usr/share/locale".as_ptr());
        bind_textdomain_codeset(DOMAIN.as_ptr(), c"UTF-8".as_ptr());
        textdomain(DOMAIN.as_ptr());
    }
}

/// `text` in the user's language.
pub fn tr(text: &str) -> String {
    let Ok(id) = CString::new(text) else {
        return text.to_owned();
    };
    // SAFETY: gettext reads the NUL-terminated id and returns either it or
    // a string of the loaded catalog, which stays mapped; it is copied at
    // once.
    unsafe {
        let out = gettext(id.as_ptr());
        if out.is_null() {
            return text.to_owned();
        }
        CStr::from_ptr(out).to_string_lossy().into_owned()
    }
}
