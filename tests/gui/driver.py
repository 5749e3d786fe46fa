#!/usr/bin/python3
"""Drives the real tcd-gtk through AT-SPI (pyatspi), as a user would with
the keyboard and a screen reader: controls are found by role and
accessible name, buttons pressed by their action, passwords typed as key
events. Runs under xvfb-run with its own session bus.

A line protocol with the test that runs it: the driver prints
`STEP name [detail]` and, for steps the test checks, waits for a line on
standard input before it goes on. Screenshots go to SHOTS/NAME.png.

usage: driver.py APP SHOTS SCENARIO [ARGS...]
"""

import faulthandler
import os
import socket
import subprocess
import sys
import time

import pyatspi

APP, SHOTS, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
ARGS = sys.argv[4:]
TIMEOUT = 120
# A call into the application that never returns ends the run with a trace.
faulthandler.dump_traceback_later(300, exit=True)


def step(name, detail="", wait=False):
    print(f"STEP {name} {detail}".rstrip(), flush=True)
    if wait:
        line = sys.stdin.readline()
        if line.strip() != "go":
            sys.exit(f"the test said {line!r} after {name}")


def shot(name):
    # The frame is drawn a moment after the last change.
    time.sleep(1.0)
    path = os.path.join(SHOTS, name + ".png")
    subprocess.run(["import", "-window", "root", path], check=True)
    # The screen is larger than the windows: only what is drawn is kept.
    subprocess.run(["convert", path, "-trim", "+repage", path], check=True)


def until(what, probe, timeout=TIMEOUT):
    end = time.time() + timeout
    while time.time() < end:
        try:
            found = probe()
        except Exception:  # the tree changes under us: look again
            found = None
        if found:
            return found
        time.sleep(0.3)
    dump(app_node())
    sys.exit(f"timed out waiting for {what}")


def app_node():
    desktop = pyatspi.Registry.getDesktop(0)
    for a in desktop:
        if a is not None and a.name == "tcd-gtk":
            return a
    return None


def walk(node):
    yield node
    for child in node:
        if child is not None:
            yield from walk(child)


def dump(node, depth=0):
    if node is None:
        return
    try:
        print("  " * depth, node.getRoleName(), repr(node.name), file=sys.stderr)
        for c in node:
            dump(c, depth + 1)
    except Exception:
        pass


def clean(name):
    """GTK 4.8 says a button's name twice ("Mount Mount"): once."""
    half = len(name) // 2
    if len(name) % 2 == 1 and name[half] == " " and name[:half] == name[half + 1 :]:
        return name[:half]
    return name


def find(role, name, within=None, exact=False):
    """The first control of `role` whose accessible name is (or starts
    with) `name`, waiting for it to appear."""

    def probe():
        root = within or app_node()
        for n in walk(root):
            if n.getRoleName() != role:
                continue
            got = clean(n.name)
            if (got == name) if exact else got.startswith(name):
                return n
        return None

    return until(f"{role} {name!r}", probe)


def window(title):
    return find("frame", title)


def dialog(title):
    return find("dialog", title)


def gone(node_probe, what):
    until(what, lambda: not node_probe())


def press(button):
    action = button.queryAction()
    for i in range(action.nActions):
        if action.getName(i) in ("click", "activate", "press", "toggle"):
            action.doAction(i)
            return
    sys.exit(f"{button.name!r} has no action to press")


def click(node):
    """A click of the pointer on `node` (GTK 4.8's check boxes have no
    AT-SPI action)."""
    box = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    x, y = box.x + min(box.width // 2, 10), box.y + box.height // 2
    pyatspi.Registry.generateMouseEvent(x, y, "abs")
    pyatspi.Registry.generateMouseEvent(x, y, "b1c")
    time.sleep(0.3)


def set_text(entry, text):
    entry.queryEditableText().setTextContents(text)


def type_text(entry, text):
    """Key events, as typed: the pointer clicks into the entry first (no
    window manager runs: the keyboard goes where the pointer is)."""
    box = entry.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    x, y = box.x + box.width // 4, box.y + box.height // 2
    pyatspi.Registry.generateMouseEvent(x, y, "abs")
    pyatspi.Registry.generateMouseEvent(x, y, "b1c")
    time.sleep(0.3)
    for ch in text:
        pyatspi.Registry.generateKeyboardEvent(ord(ch), None, pyatspi.KEY_SYM)
        time.sleep(0.02)


def text_of(node):
    t = node.queryText()
    return t.getText(0, t.characterCount)


def settled_text(node):
    """A label's text once two reads 0.3 s apart agree: the character
    count AT-SPI hands out can still be the old text's for a moment
    ("Creating…" cut "The volume was created." to its length)."""
    first = text_of(node)
    time.sleep(0.3)
    second = text_of(node)
    return second if second == first else None


def set_number(spin, value):
    spin.queryValue().currentValue = float(value)


def display_ready():
    """Whether the X server takes connections: xvfb-run may hand over
    before Xvfb listens."""
    number = os.environ["DISPLAY"].lstrip(":").split(".")[0]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(f"/tmp/.X11-unix/X{number}")
        return True
    except OSError:
        return False
    finally:
        sock.close()


def start_app():
    """Starts the application; again if it could not open the display yet
    (Xvfb may take connections a moment before it lets clients in)."""
    until("the X server", display_ready, timeout=30)
    for _ in range(10):
        proc = subprocess.Popen([APP, "--system"])
        end = time.time() + 30
        while time.time() < end and proc.poll() is None:
            if app_node() is not None:
                window("tcd")
                return proc
            time.sleep(0.3)
        proc.kill()
        proc.wait()
        time.sleep(1)
    sys.exit("the application did not start")


# The Return key's keysym.
RETURN = 0xFF0D

STATUS = []


def status():
    """The main window's status line (found while it is empty)."""
    if not STATUS:
        STATUS.append(find("label", "Status", exact=True))
    return text_of(STATUS[0])


def mount_dialog(volume, mount_point, password, pim):
    set_text(find("text", "Volume"), volume)
    press(find("push button", "Mount…"))
    found = dialog("Mount " + volume)
    type_text(find("password text", "Password", found), password)
    set_number(find("spin button", "PIM", found), pim)
    set_text(find("text", "Mount point", found), mount_point)
    # Found while empty: a label with text is named by its text.
    return found, find("label", "Mount error", found)


def dialog_message(label):
    return until(
        "the dialog's answer",
        lambda: (lambda t: t if t and not t.startswith("Searching") else None)(
            settled_text(label)
        ),
    )


def create(volume, password, pim):
    """The Volume Creation Wizard: a 24 MiB VeraCrypt container, quick
    format, the defaults (AES, SHA-512, FAT) otherwise."""
    press(find("push button", "Create Volume…"))
    found = dialog("Volume Creation Wizard")
    message = find("label", "Creation error", found)
    set_text(find("text", "Volume file", found), volume)
    set_number(find("spin button", "Size in MiB", found), 24)
    type_text(find("password text", "Password", found), password)
    type_text(find("password text", "Confirm password", found), password)
    set_number(find("spin button", "PIM", found), pim)
    click(find("check box", "Quick format", found))
    press(find("push button", "Create", found, exact=True))
    said = until(
        "the wizard's answer",
        lambda: (lambda t: t if t and t != "Creating…" else None)(settled_text(message)),
    )
    shot("wizard")
    step("created", said, wait=True)
    press(find("push button", "Close", found, exact=True))


def scenario_mount(volume, mount_point, password, wrong, pim, backends, new_password,
                   backup, keyfile):
    proc = start_app()
    status()
    shot("main-window")
    create(volume, password, pim)
    found, message = mount_dialog(volume, mount_point, wrong, pim)
    press(find("push button", "Mount", found, exact=True))
    said = dialog_message(message)
    # The search's last progress report stays under the error.
    bar = find("progress bar", "Search progress", found)
    report = until("a progress report", lambda: bar.description
                   if bar.description.startswith("Trying ") else None)
    step("wrong-password", f"{said}|{report}", wait=True)
    shot("mount-error")
    type_text(find("password text", "Password", found), password)
    shot("mount-dialog")
    press(find("push button", "Mount", found, exact=True))
    listed = find("list item", volume)
    step("mounted", listed.description, wait=True)
    shot("main-mounted")
    dismount_first()
    step("dismounted", status(), wait=True)
    volume_tools(password, new_password, pim, backup)
    settings(mount_point)
    # Mounted again: the mount point and the cache from the Preferences;
    # Enter in the Volume field opens the dialog.
    field = find("text", "Volume")
    set_text(field, volume)
    type_text(field, "")
    pyatspi.Registry.generateKeyboardEvent(RETURN, None, pyatspi.KEY_SYM)
    found = dialog("Mount " + volume)
    type_text(find("password text", "Password", found), password)
    set_number(find("spin button", "PIM", found), pim)
    press(find("push button", "Mount", found, exact=True))
    find("list item", volume)
    favorites(volume, password, pim)
    wipe_cache()
    keyfile_generator(keyfile)
    benchmark()
    proc.terminate()
    proc.wait()


def dismount_first():
    volumes = find("list", "Mounted volumes")
    volumes.querySelection().selectChild(0)
    press(find("push button", "Dismount", exact=True))
    until(
        "the list to empty",
        lambda: not any(c.getRoleName() == "list item" for c in volumes),
    )


def dialog_for(volume):
    set_text(find("text", "Volume"), volume)
    press(find("push button", "Mount…"))
    return dialog("Mount " + volume)


def answer(label, busy):
    """A message label's text once it says something other than `busy`."""
    return until(
        "the answer",
        lambda: (lambda t: t if t and t != busy else None)(settled_text(label)),
    )


def tool(found, button, message, password):
    """Types the current password and presses `button` in Volume Tools;
    what the dialog then says."""
    type_text(find("password text", "Current password", found), password)
    press(find("push button", button, found, exact=True))
    return answer(message, "Working…")


def volume_tools(password, new_password, pim, backup):
    press(find("push button", "Volume Tools…"))
    found = dialog("Volume Tools")
    message = find("label", "Volume Tools message", found)
    set_number(find("spin button", "PIM", found), pim)
    # Header Information, in a window of its own.
    type_text(find("password text", "Current password", found), password)
    press(find("push button", "Header Information", found, exact=True))
    info = dialog("Header Information")
    encryption = find("label", "Encryption: ", info).name
    prf = find("label", "PKCS-5 PRF: ", info).name
    shot("header-information")
    step("header-info", f"{encryption}|{prf}", wait=True)
    press(find("push button", "Close", info, exact=True))
    set_text(find("text", "Backup file", found), backup)
    step("backed-up", tool(found, "Back Up Header", message, password), wait=True)
    type_text(find("password text", "New password", found), new_password)
    type_text(find("password text", "Confirm new password", found), new_password)
    set_number(find("spin button", "New PIM", found), pim)
    shot("volume-tools")
    said = tool(found, "Change Password", message, password)
    step("changed", said, wait=True)
    # The backup holds the old header: the old password opens it again.
    step("restored", tool(found, "Restore Header", message, password), wait=True)
    press(find("push button", "Close", found, exact=True))


def settings(mount_point):
    """Preferences: the Mount dialog's defaults; then the Performance
    page."""
    press(find("push button", "Settings…"))
    found = until("the settings window", lambda: find("frame", "Settings"))
    click(find("check box", "Cache passwords in the daemon", found))
    set_text(find("text", "Default mount point", found), mount_point)
    shot("preferences")
    press(named("Performance", found))
    performance(found)
    close_settings(found)


def close_settings(found):
    press(find("push button", "Close", found, exact=True))
    until("the settings window to close", lambda: not any(
        c.name == "Settings" for c in app_node()))


def favorites(volume, password, pim):
    volumes = find("list", "Mounted volumes")
    volumes.querySelection().selectChild(0)
    press(find("push button", "Favorites…"))
    found = dialog("Favorites")
    message = find("label", "Favorites message", found)
    press(find("push button", "Add Mounted Volume", found, exact=True))
    name = os.path.basename(volume)
    find("list item", name, found, exact=True)
    # Organised: its PIM (the volume's), and auto-mount.
    find("list", "Favorite volumes", found).querySelection().selectChild(0)
    set_number(find("spin button", "Favorite PIM", found), pim)
    click(find("check box", "Auto-mount", found))
    press(find("push button", "Save Changes", found, exact=True))
    listed = until("the row saved", lambda: (lambda r: r if "auto-mount" in r.description
                                              else None)(find("list item", name, found, exact=True)))
    step("favorite-added", listed.description, wait=True)
    shot("favorites")
    press(find("push button", "Close", found, exact=True))
    dismount_first()
    press(find("push button", "Favorites…"))
    found = dialog("Favorites")
    message = find("label", "Favorites message", found)
    press(find("push button", "Mount Favorites", found, exact=True))
    asked = dialog("Password for " + name)
    type_text(find("password text", "Favorite password", asked), password)
    press(find("push button", "Mount", asked, exact=True))
    step("favorites-mounted", answer(message, "Mounting…"), wait=True)
    press(find("push button", "Close", found, exact=True))


def wipe_cache():
    press(find("push button", "Settings…"))
    found = until("the settings window", lambda: find("frame", "Settings"))
    message = find("label", "Preferences message", found)
    press(find("push button", "Wipe Cache", found, exact=True))
    step("wiped", answer(message, ""), wait=True)
    close_settings(found)


def keyfile_generator(path):
    press(find("push button", "Keyfile Generator…"))
    found = dialog("Keyfile Generator")
    message = find("label", "Keyfile Generator message", found)
    set_text(find("text", "Folder", found, exact=True), os.path.dirname(path))
    set_text(find("text", "Keyfile name", found), os.path.basename(path))
    set_number(find("spin button", "Number of keyfiles", found), 3)
    set_number(find("spin button", "Keyfile size in bytes", found), 128)
    press(find("push button", "Generate", found, exact=True))
    said = answer(message, "")
    shot("keyfile-generator")
    step("keyfiles", said, wait=True)
    press(find("push button", "Close", found, exact=True))


def scenario_refused():
    """A user polkit refuses policy changes: the Performance page greyed,
    with the reason."""
    proc = start_app()
    press(find("push button", "Settings…"))
    found = until("the settings window", lambda: find("frame", "Settings"))
    press(named("Performance", found))
    why = fact(found, "You may not change these settings:")
    switch = named("Accelerate AES with processor instructions", found)
    sensitive = switch.getState().contains(pyatspi.STATE_SENSITIVE)
    step("refused", f"{sensitive}|{why}", wait=True)
    close_settings(found)
    # The system's favorites: shown, not to be changed.
    press(find("push button", "Favorites…"))
    found = dialog("Favorites")
    message = find("label", "Favorites message", found)
    row = find("list item", "system", found, exact=True).description
    find("list", "Favorite volumes", found).querySelection().selectChild(0)
    said = answer(message, "")
    time.sleep(0.5)
    save = find("push button", "Save Changes", found, exact=True)
    sensitive = save.getState().contains(pyatspi.STATE_SENSITIVE)
    step("system-favorite", f"{sensitive}|{said}|{row}", wait=True)
    proc.terminate()
    proc.wait()


def named(name, within=None):
    """A control of any role but a label's named `name`."""

    def probe():
        for n in walk(within or app_node()):
            if clean(n.name) == name and n.getRoleName() != "label":
                return n
        return None

    return until(repr(name), probe)


def table_cells(table):
    return [text_of(c) for c in table if c.getRoleName() == "label"]


def benchmark():
    press(find("push button", "Benchmark…"))
    found = dialog("Benchmark")
    press(find("push button", "Run Benchmark", found))
    find("push button", "Sort by Mean (MB/s)", found, exact=True)
    progress = find("progress bar", "Benchmark progress", found)
    fraction = progress.queryValue().currentValue
    ciphers = named("Encryption algorithms", found)
    prfs = named("PRFs", found)
    shot("benchmark")
    by_mean = table_cells(ciphers)
    press(find("push button", "Sort by Encryption", found, exact=True))
    time.sleep(0.5)
    by_name = table_cells(named("Encryption algorithms", found))
    step(
        "benchmark",
        f"{fraction}|" + ",".join(by_mean[::5]) + "|" + ",".join(by_name[::5])
        + "|" + ",".join(table_cells(prfs)[::4]),
        wait=True,
    )
    press(find("push button", "Close", found, exact=True))


def fact(within, question):
    """The answer of a row that reads "question answer"."""
    return find("label", question + " ", within).name[len(question) + 1 :]


def performance(found):
    cpu = fact(found, "Processor (CPU) in this computer supports hardware acceleration for AES:")
    accel = fact(found, "Hardware acceleration by the policy in force:")
    allowed = fact(found, "Backends the policy allows:")
    offered = []
    for name in ARGS[5].split(","):
        s = named(name, found).getState()
        offered.append(name if s.contains(pyatspi.STATE_SENSITIVE) else name + " (greyed)")
    shot("performance")
    step("performance", f"{cpu}|{accel}|{allowed}|" + ",".join(offered), wait=True)


def select_device(device):
    """Select Device: the row of `device` chosen; what the volume field
    then says."""
    press(find("push button", "Select Device…"))
    found = dialog("Select Device")
    devices = find("list", "Devices", found)
    find("list item", device, found, exact=True)
    rows = [c for c in devices if c.getRoleName() == "list item"]
    index = [clean(c.name) for c in rows].index(device)
    devices.querySelection().selectChild(index)
    shot("select-device")
    press(find("push button", "Select", found, exact=True))
    until("the dialog to close", lambda: not any(
        c.name == "Select Device" for c in app_node()))
    return text_of(find("text", "Volume"))


def changed_text(label, before, busy):
    """A label's text once it says something other than `before` and
    `busy`."""
    return until(
        "the answer",
        lambda: (lambda t: t if t and t not in (before, busy) else None)(settled_text(label)),
    )


def wizard_on_device(device, password):
    """The wizard over the whole device, after the question whether to
    erase it."""
    press(find("push button", "Create Volume…"))
    found = dialog("Volume Creation Wizard")
    message = find("label", "Creation error", found)
    click(find("check box", "Standard volume on a device", found))
    set_text(find("text", "Volume file or device", found), device)
    type_text(find("password text", "Password", found), password)
    type_text(find("password text", "Confirm password", found), password)
    set_number(find("spin button", "PIM", found), 1)
    press(find("push button", "Create", found, exact=True))
    # AdwMessageDialog names its buttons by their label with the mnemonic.
    press(find("push button", "_Erase"))
    said = changed_text(message, "", "Creating…")
    step("device-created", said, wait=True)
    return found, message, said


def wizard_hidden(found, message, before, outer_password, password):
    """The hidden volume: the outer one opened, the limit read, then 4 MiB
    inside it."""
    click(find("check box", "Hidden volume", found))
    limit = find("label", "Hidden volume size limit", found)
    type_text(find("password text", "Outer volume password", found), outer_password)
    set_number(find("spin button", "Outer volume PIM", found), 1)
    press(find("push button", "Open Outer Volume", found, exact=True))
    said = changed_text(limit, "", "Opening the outer volume…")
    step("outer-opened", said, wait=True)
    set_number(find("spin button", "Size in MiB", found), 4)
    type_text(find("password text", "Password", found), password)
    type_text(find("password text", "Confirm password", found), password)
    shot("wizard-hidden")
    press(find("push button", "Create", found, exact=True))
    step("hidden-created", changed_text(message, before, "Creating…"), wait=True)
    press(find("push button", "Close", found, exact=True))


def protected_mount(device, mount_point, password, hidden_password):
    """The outer volume mounted with its hidden volume protected: first by
    the hidden volume's password with a wrong PIM (refused), then with its
    PIM, 1."""
    found, message = mount_dialog(device, mount_point, password, 1)
    click(find("check box", "Protect a hidden volume", found))
    type_text(find("password text", "Hidden volume password", found), hidden_password)
    set_number(find("spin button", "Hidden volume PIM", found), 2)
    press(find("push button", "Mount", found, exact=True))
    step("protection-refused", dialog_message(message), wait=True)
    type_text(find("password text", "Password", found), password)
    type_text(find("password text", "Hidden volume password", found), hidden_password)
    set_number(find("spin button", "Hidden volume PIM", found), 1)
    press(find("push button", "Mount", found, exact=True))
    listed = find("list item", device, exact=True)
    step("protected-mounted", listed.description, wait=True)
    dismount_first()


def add_keyfile(found, path):
    """Add Files… in the Mount dialog's keyfile list: the path typed into
    the file chooser's location entry, as a keyboard user does."""
    press(find("push button", "Add Files… (Keyfiles)", found, exact=True))
    chooser = until("the file chooser", lambda: next(
        (c for c in app_node() if c.name == "Add Files…"), None))
    # "/" opens the chooser's location entry (the keyboard goes where the
    # pointer is); the rest of the path is then put into it.
    box = chooser.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    pyatspi.Registry.generateMouseEvent(box.x + box.width // 2, box.y + 20, "abs")
    time.sleep(0.3)
    pyatspi.Registry.generateKeyboardEvent(ord("/"), None, pyatspi.KEY_SYM)
    location = until("the location entry", lambda: next(
        (n for n in walk(chooser) if n.getRoleName() == "text" and text_of(n) == "/"), None))
    set_text(location, path)
    time.sleep(0.5)
    # GTK's own dialog names its buttons by their label with the mnemonic.
    press(find("push button", "_Select", chooser))
    keyfiles = find("list", "Keyfiles", found)
    return until("the keyfile listed", lambda: next(
        (text_of(c[0]) for c in keyfiles if c.getRoleName() == "list item"), None))


def favorites_keyring(password, name):
    """Forget Password (a run before may have left one), then Mount
    Favorites with Remember ticked."""
    press(find("push button", "Favorites…"))
    found = dialog("Favorites")
    message = find("label", "Favorites message", found)
    # The user's kernel keyring outlives a run: none kept from one before.
    find("list", "Favorite volumes", found).querySelection().selectChild(0)
    press(find("push button", "Forget Password", found, exact=True))
    before = changed_text(message, "", "")
    click(find("check box", "Remember passwords in the keyring", found))
    press(find("push button", "Mount Favorites", found, exact=True))
    asked = dialog("Password for " + name)
    type_text(find("password text", "Favorite password", asked), password)
    press(find("push button", "Mount", asked, exact=True))
    first = changed_text(message, before, "Mounting…")
    step("remembered", first, wait=True)
    press(find("push button", "Close", found, exact=True))


def scenario_device(device, mount_point, password, hidden_password, kvol, keyfile, kmnt, name):
    proc = start_app()
    status()
    step("device-chosen", select_device(device), wait=True)
    found, message, said = wizard_on_device(device, password)
    wizard_hidden(found, message, said, password, hidden_password)
    found, message = mount_dialog(device, mount_point, hidden_password, 1)
    press(find("push button", "Mount", found, exact=True))
    listed = find("list item", device, exact=True)
    step("hidden-mounted", listed.description, wait=True)
    dismount_first()
    step("hidden-dismounted", status(), wait=True)
    protected_mount(device, mount_point, password, hidden_password)
    found, message = mount_dialog(kvol, kmnt, password, 1)
    step("keyfile-listed", add_keyfile(found, keyfile), wait=True)
    press(find("push button", "Mount", found, exact=True))
    listed = find("list item", kvol, exact=True)
    step("keyfile-mounted", listed.description, wait=True)
    favorites_keyring(password, name)
    proc.terminate()
    proc.wait()


def select_named(list_node, name):
    """Chooses the row of `list_node` named `name`."""
    rows = [c for c in list_node if c.getRoleName() == "list item"]
    index = [clean(c.name) for c in rows].index(name)
    list_node.querySelection().selectChild(index)


def mount_with_backup_header(volume, mount_point, password):
    """The Mount dialog with "Use backup header embedded in volume if
    available" ticked; the dialog and its message label."""
    found, message = mount_dialog(volume, mount_point, password, 1)
    click(find("check box", "Use backup header embedded in volume if available", found))
    press(find("push button", "Mount", found, exact=True))
    return found, message


def favorite_modes(tc, name, password):
    """The mounted TrueCrypt volume added as a favorite (its format kept),
    then organised: read-only and system encryption ticked. Then Forget
    Password on the favorite whose password an earlier program kept."""
    select_named(find("list", "Mounted volumes"), tc)
    press(find("push button", "Favorites…"))
    found = dialog("Favorites")
    message = find("label", "Favorites message", found)
    press(find("push button", "Add Mounted Volume", found, exact=True))
    base = os.path.basename(tc)
    row = until("the TrueCrypt favorite", lambda: (lambda r: r if "TrueCrypt" in r.description
                                                   else None)(find("list item", base, found, exact=True)))
    step("tc-favorite", row.description, wait=True)
    favorites = find("list", "Favorite volumes", found)
    select_named(favorites, base)
    click(find("check box", "System encryption", found))
    press(find("push button", "Save Changes", found, exact=True))
    row = until("the row saved", lambda: (lambda r: r if "system encryption" in r.description
                                          else None)(find("list item", base, found, exact=True)))
    step("tc-favorite-organised", row.description, wait=True)
    kept = find("list item", name, found, exact=True).description
    select_named(favorites, name)
    before = settled_text(message) or ""
    press(find("push button", "Forget Password", found, exact=True))
    said = changed_text(message, before, "")
    row = until("the row read again", lambda: (lambda r: r if "keyring" not in r.description
                                               else None)(find("list item", name, found, exact=True)))
    step("forgotten", f"{kept}|{said}|{row.description}", wait=True)
    press(find("push button", "Close", found, exact=True))


def convert(tc, password, new_password):
    """Volume Tools: the TrueCrypt volume's password changed, converted to
    the VeraCrypt format with PIM 1."""
    press(find("push button", "Volume Tools…"))
    found = dialog("Volume Tools")
    message = find("label", "Volume Tools message", found)
    set_text(find("text", "Volume", found), tc)
    click(find("check box", "TrueCrypt mode", found))
    type_text(find("password text", "New password", found), new_password)
    type_text(find("password text", "Confirm new password", found), new_password)
    set_number(find("spin button", "New PIM", found), 1)
    click(find("check box", "Convert to the VeraCrypt format", found))
    step("converted", tool(found, "Change Password", message, password), wait=True)
    press(find("push button", "Close", found, exact=True))


def scenario_modes(bak, prim, mount_point, password, tc, tc_mount_point, name, new_password):
    proc = start_app()
    status()
    # The backup header damaged: with the option, only it is tried.
    found, message = mount_with_backup_header(bak, mount_point, password)
    step("backup-refused", dialog_message(message), wait=True)
    press(find("push button", "Cancel", found, exact=True))
    # The primary header damaged: the backup opens it.
    found, message = mount_with_backup_header(prim, mount_point, password)
    listed = find("list item", prim, exact=True)
    step("backup-mounted", listed.description, wait=True)
    dismount_first()
    found, message = mount_dialog(tc, tc_mount_point, password, 0)
    click(find("check box", "TrueCrypt mode", found))
    press(find("push button", "Mount", found, exact=True))
    listed = find("list item", tc, exact=True)
    step("tc-mounted", listed.description, wait=True)
    favorite_modes(tc, name, password)
    dismount_first()
    convert(tc, password, new_password)
    proc.terminate()
    proc.wait()


def scenario_remember(name, password):
    """A favorite's password kept in the keyring, for a later run."""
    proc = start_app()
    favorites_keyring(password, name)
    proc.terminate()
    proc.wait()


def scenario_translated(volume):
    """The application in German, from the catalog the test made: the
    names and texts of the main window and the Mount dialog as
    translated."""
    proc = start_app()
    status()
    press(find("push button", "Aushängen", exact=True))
    said = until("the status line", status)
    set_text(find("text", "Volume"), volume)
    mount = find("push button", "Einhängen…", exact=True)
    press(mount)
    found = dialog(f"{volume} einhängen")
    # GTK 4.8 names a field by its name and its label's text.
    entry = find("password text", "Passwort", found)
    step("translated", f"{clean(mount.name)}|{found.name}|{entry.name}|{said}", wait=True)
    proc.terminate()
    proc.wait()


SCENARIOS = {"mount": scenario_mount, "refused": scenario_refused, "device": scenario_device,
             "modes": scenario_modes, "remember": scenario_remember,
             "translated": scenario_translated}

SCENARIOS[SCENARIO](*ARGS)
step("done")
