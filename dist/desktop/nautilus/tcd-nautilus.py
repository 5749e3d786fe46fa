"""Nautilus context-menu items that mount and dismount TrueCrypt and VeraCrypt
volumes through tcctl. Nautilus has no .desktop service menus; this is a
nautilus-python extension (Nautilus 43 and later, API 4.0).

tcctl asks for the password in a dialog and reports the outcome as a desktop
notification, so nothing here reads or shows a password.
"""

import subprocess
import threading

import gi

gi.require_version("Nautilus", "4.0")
from gi.repository import GObject, Nautilus  # noqa: E402

VOLUME_TYPES = ("application/x-truecrypt-volume", "application/x-veracrypt-volume")


def run_tcctl(verb, paths):
    for path in paths:
        # An argument list, no shell: a file name is never parsed.
        child = subprocess.Popen(
            ["tcctl", verb, "--notify", path],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        # Reaped off the main loop, so Nautilus keeps no zombie.
        threading.Thread(target=child.wait, daemon=True).start()


class TcdMenuProvider(GObject.GObject, Nautilus.MenuProvider):
    def get_file_items(self, files):
        paths = []
        for info in files:
            if not any(info.is_mime_type(t) for t in VOLUME_TYPES):
                return []
            # Only local files: the daemon is handed an open descriptor.
            path = info.get_location().get_path()
            if path is None:
                return []
            paths.append(path)
        if not paths:
            return []
        items = []
        for verb, label in (("mount", "Mount"), ("dismount", "Dismount")):
            item = Nautilus.MenuItem(
                name="TcdMenuProvider::" + verb,
                label=label,
                tip=label + " the encrypted volume with tcd",
                icon="drive-harddisk-encrypted",
            )
            item.connect("activate", lambda _item, v=verb: run_tcctl(v, paths))
            items.append(item)
        return items
