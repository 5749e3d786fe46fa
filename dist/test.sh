#!/usr/bin/env bash
# The whole test suite, in one command, on a Debian machine with Rust: as
# root it installs the system packages the tests need (those missing) and
# cargo-deb, then builds the workspace and the Debian package (the tests
# load the backend libraries the build makes and install the package),
# then runs every test. The tests fail, never skip, without what they need.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

# What the tests run, and why:
packages=(
    binutils                      # objdump: the soft backend has no AES instructions
    gcc libc6-dev                 # the C backend fixture
    tar xz-utils                  # the real-volume corpus
    openssl                       # the benchmark's reference figure
    tcplay cryptsetup-bin         # third-party TrueCrypt implementations as oracles
    mount                         # losetup: loop devices
    bsdutils                      # script: a terminal for tcplay's prompts
    e2fsprogs                     # ext4 inside volumes; chattr
    xfsprogs                      # XFS volumes whose log a read-only mount replays
    btrfs-progs                   # btrfs: mkfs.btrfs, btrfs check, and growth in expand
    dosfstools exfatprogs         # FAT and exFAT (mkfs, fsck)
    fusefat exfat-fuse            # their FUSE drivers (a kernel without vfat or exfat)
    ntfs-3g                       # NTFS: mkfs.ntfs for new volumes, the FUSE driver without ntfs3
    squashfs-tools                # a filesystem outside the mount allow-list
    dbus polkitd                  # a private system bus and the authority on it
    systemd                       # systemd-analyze checks the shipped units
    desktop-file-utils shared-mime-info python3   # desktop files, MIME types, Nautilus extension
    python3-jeepney               # the README's desktop example's D-Bus library
    keyutils                      # keyctl: remembered passwords in the kernel keyring
    gnome-keyring libsecret-tools # a Secret Service on a private session bus
    fdisk                         # sfdisk: a GPT partition for the hot-plug test
    softhsm2                      # a PKCS #11 token for token keyfiles
    libgtk-4-dev libadwaita-1-dev # tcd-gtk builds against GTK 4.8 and libadwaita 1.2
    xvfb xauth                    # tcd-gtk runs under xvfb-run in its end-to-end test
    at-spi2-core python3-pyatspi  # the AT-SPI bus and the driver that uses it
    imagemagick                   # import: the screenshots in docs/screenshots/
    appstream                     # appstreamcli validates tcd-gtk's metainfo
    gettext                       # msginit, msgfmt: tcd-gtk's template and a catalog made from it
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "dist/test.sh: missing packages: ${missing[*]} (run as root to install them)" >&2
        exit 1
    fi
    echo "dist/test.sh: installing ${missing[*]}"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
# cargo-deb builds the Debian package the tests install.
command -v cargo-deb >/dev/null || cargo install --locked cargo-deb

cargo build --workspace --all-targets
./dist/deb/build.sh
cargo test --workspace
