#!/usr/bin/python3
"""A desktop integration of tcd over D-Bus, as small as it gets.

    tcd-desktop.py mount VOLUME [--hash HASH] [--mount-point DIR] < password
    tcd-desktop.py dismount NAME      (container, mount point, device or object)
    tcd-desktop.py watch              (volumes present, then as they come and go)

It talks to the daemon on the system bus ($DBUS_SYSTEM_BUS_ADDRESS if set)
with jeepney (Debian: python3-jeepney), which passes file descriptors and
needs no main loop. The API is in docs/DBUS.md.
"""
import argparse
import os
import sys
from collections import deque

from jeepney import DBusAddress, HeaderFields, MatchRule, message_bus, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse, unwrap_msg

BUS_NAME, MANAGER = "org.tcd.Tcd1", "/org/tcd/Tcd1"
VOLUME = "org.tcd.Volume1"


def call(conn, path, interface, method, signature=None, body=()):
    """Calls a method of the daemon; its reply, or DBusErrorResponse."""
    address = DBusAddress(path, bus_name=BUS_NAME, interface=interface)
    return unwrap_msg(conn.send_and_get_reply(new_method_call(address, method, signature, body)))


def plain(props):
    """{"MountPoint": ("s", "/x")} -> {"MountPoint": "/x"}"""
    return {name: value for name, (_signature, value) in props.items()}


def describe(path, props):
    return f"{path} {props['Host']} on {props['MountPoint'] or '(no filesystem)'}"


def mount(conn, args):
    # The container is opened here, with the user's own rights; the daemon
    # gets the descriptor and the password (bytes), never a path to open.
    host = os.open(args.volume, os.O_RDWR | os.O_CLOEXEC)
    password = sys.stdin.buffer.readline().rstrip(b"\r\n")
    options = {}
    if args.hash:
        options["hash"] = ("s", args.hash)
    if args.mount_point:
        options["mount_point"] = ("s", os.path.abspath(args.mount_point))
    (path,) = call(conn, MANAGER, "org.tcd.Manager1", "Mount", "hsayaaya{sv}",
                   (host, os.path.realpath(args.volume), password, [], options))
    os.close(host)
    print(path)
    (props,) = call(conn, path, "org.freedesktop.DBus.Properties", "GetAll", "s", (VOLUME,))
    print("mounted on", plain(props)["MountPoint"])


def dismount(conn, args):
    name = os.path.realpath(args.name) if os.path.exists(args.name) else args.name
    call(conn, MANAGER, "org.tcd.Manager1", "Dismount", "sb", (name, False))


def watch(conn, _args):
    def say(*words):
        print(*words, flush=True)

    # Collect the daemon's signals from before the first call on, so that
    # nothing between the snapshot and the first event is lost.
    with conn.filter(MatchRule(type="signal", path=MANAGER), queue=deque()) as signals:
        rule = MatchRule(type="signal", sender=BUS_NAME, path=MANAGER)
        unwrap_msg(conn.send_and_get_reply(message_bus.AddMatch(rule)))
        (objects,) = call(conn, MANAGER, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        for path, interfaces in sorted(objects.items()):
            if VOLUME in interfaces:
                say("present", describe(path, plain(interfaces[VOLUME])))
        while True:
            msg = conn.recv_until_filtered(signals)
            member = msg.header.fields.get(HeaderFields.member)
            if member == "InterfacesAdded" and VOLUME in msg.body[1]:
                say("added", describe(msg.body[0], plain(msg.body[1][VOLUME])))
            elif member == "InterfacesRemoved" and VOLUME in msg.body[1]:
                say("removed", msg.body[0])
            elif member == "AutoDismounted":
                _volume, host, _owner, reason, error = msg.body
                if error:
                    say("auto-dismount failed", host, f"({reason}):", error)
                else:
                    say("auto-dismounted", host, f"({reason})")


def main():
    parser = argparse.ArgumentParser(description="Mount and watch tcd volumes over D-Bus.")
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("mount", help="mount VOLUME; the password is read from stdin")
    m.add_argument("volume")
    m.add_argument("--hash", help="the header's hash (faster than trying each)")
    m.add_argument("--mount-point", help="where to mount (default: the daemon's choice)")
    m.set_defaults(run=mount)
    d = commands.add_parser("dismount", help="dismount a volume")
    d.add_argument("name")
    d.set_defaults(run=dismount)
    commands.add_parser("watch", help="print volumes as they come and go").set_defaults(run=watch)
    args = parser.parse_args()
    try:
        with open_dbus_connection(bus="SYSTEM", enable_fds=True) as conn:
            args.run(conn, args)
    except DBusErrorResponse as e:
        print(f"{e.name}: {e.data[0] if e.data else ''}", file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        print(f"tcd-desktop: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
