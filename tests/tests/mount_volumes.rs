//! The user-space data path with real parts: a volume served through FUSE,
//! a loop device on it, and a real filesystem mounted from that. Needs
//! root, /dev/fuse, `losetup`, `blkid`, `mkfs.ext4`; CI runs as root and
//! installs them.

use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tcd::engine::{Chain, Engine};
use tcd::mount::mountpoint::{self, Options};
use tcd::mount::{BlockExport, FuseLoop, Serving, Transport, detect_filesystem};
use tcd::volume::create::{self, CreateOptions};
use tcd::volume::kdf::{Format, Prf};
use tcd::volume::opened::OpenVolume;
use tcd::volume::unlock::{Credentials, SearchOptions, Target};
use tcd_tests::creds;
use tcd_tests::{blkid_uuid, engine, require_root_and_fuse, require_tool, tcrypt_images};

const SERVING: Serving = Serving {
    threads: 2,
    transport: Transport::Auto,
};

fn serve(
    e: &Engine,
    host: File,
    c: Credentials<'_>,
    opts: &SearchOptions,
    read_only: bool,
    runtime: &Path,
    name: &str,
) -> Box<FuseLoop> {
    let v = OpenVolume::open(
        e,
        host,
        c,
        Target::Any,
        opts,
        &AtomicBool::new(false),
        read_only,
    )
    .expect("volume opens");
    Box::new(
        FuseLoop::start(Arc::new(v), &runtime.join(name), SERVING, false)
            .expect("FUSE and loop device"),
    )
}

#[test]
fn real_volumes_show_their_filesystem_through_fuse_and_a_loop_device() {
    require_root_and_fuse();
    let e = engine(&["aesni", "soft"]);
    let runtime = tempfile::tempdir().expect("runtime dir");
    let mut opts = SearchOptions::new();
    opts.prf = Some(Prf::Sha512);
    for (image, password, uuid) in [
        ("tc_5-sha512-xts-aes", &b"aaaaaaaaaaaa"[..], "DEAD-BABE"),
        (
            "tc_5-sha512-xts-serpent-twofish-aes-hidden",
            b"bbbbbbbbbbbb",
            "CAFE-BABE",
        ),
        (
            "vc_1-sha512-xts-aes-twofish-serpent",
            b"aaaaaaaaaaaa",
            "DEAD-BABE",
        ),
    ] {
        let host = File::open(tcrypt_images().join(image)).expect("image");
        let export = serve(
            &e,
            host,
            creds(password),
            &opts,
            true,
            runtime.path(),
            image,
        );
        assert_eq!(blkid_uuid(export.device()), uuid, "{image}");
        assert_eq!(
            detect_filesystem(export.device())
                .expect("blkid")
                .as_deref(),
            Some("vfat"),
            "{image}"
        );
        export.close().expect("close");
        assert!(!runtime.path().join(image).exists(), "FUSE folder removed");
    }
}

fn sha(path: &Path) -> Vec<u8> {
    Sha256::digest(std::fs::read(path).expect("read file")).to_vec()
}

fn mkfs_ext4(device: &Path) {
    let st = Command::new(require_tool("mkfs.ext4", "package e2fsprogs"))
        .args(["-q", "-F"])
        .arg(device)
        .status()
        .expect("mkfs.ext4");
    assert!(st.success(), "mkfs.ext4");
}

#[test]
fn an_ext4_volume_keeps_its_files_across_mounts() {
    require_root_and_fuse();
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("ext4.tc");
    let host = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .expect("host");
    host.set_len(64 << 20).expect("size");
    let c = Credentials {
        password: b"ext4 inside",
        keyfiles: &[],
        pim: 1,
    };
    let copts = CreateOptions {
        chain: Chain::by_name("Serpent-Twofish-AES").expect("chain"),
        ..CreateOptions::new()
    };
    create::create(
        &e,
        &host,
        c,
        &copts,
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
    .expect("create");
    let mut opts = SearchOptions::new();
    opts.format = Some(Format::VeraCrypt);
    opts.prf = Some(Prf::Sha512);

    let runtime = dir.path().join("run");
    std::fs::create_dir(&runtime).expect("mkdir");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");

    let export = serve(&e, host, c, &opts, false, &runtime, "v1");
    mkfs_ext4(export.device());
    assert_eq!(
        detect_filesystem(export.device())
            .expect("blkid")
            .as_deref(),
        Some("ext4")
    );
    let target = mountpoint::check(&mnt, false).expect("mount point");
    let mo = Options {
        fs_type: "ext4".into(),
        read_only: false,
        owner: None,
        discard: false,
        fs: Default::default(),
    };
    mountpoint::mount(export.device(), &target, &mo).expect("mount ext4");
    let mut sums: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut seed = 1u64;
    for i in 0..8 {
        let p = mnt.join(format!("file{i}"));
        let mut data = vec![0u8; (1 << 20) * (i + 1) + 123];
        for b in data.iter_mut() {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *b = (seed >> 33) as u8;
        }
        let mut f = File::create(&p).expect("create file");
        f.write_all(&data).expect("write");
        f.sync_all().expect("fsync");
        sums.push((p, Sha256::digest(&data).to_vec()));
    }
    // A busy filesystem is not unmounted.
    let busy = File::open(&sums[0].0).expect("hold a file open");
    assert!(matches!(
        mountpoint::unmount(&mnt, false),
        Err(tcd::Error::Busy(_))
    ));
    drop(busy);
    mountpoint::unmount(&mnt, false).expect("unmount");
    export.close().expect("close");

    // Everything is in the host file: mount it again and compare.
    let host = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .expect("host");
    let export = serve(&e, host, c, &opts, true, &runtime, "v2");
    let st = Command::new(require_tool("fsck.ext4", "package e2fsprogs"))
        .args(["-n", "-f"])
        .arg(export.device())
        .status()
        .expect("fsck");
    assert!(st.success(), "fsck is clean");
    let target = mountpoint::check(&mnt, false).expect("mount point");
    mountpoint::mount(
        export.device(),
        &target,
        &Options {
            read_only: true,
            ..mo
        },
    )
    .expect("mount again");
    for (p, sum) in &sums {
        assert_eq!(&sha(p), sum, "{}", p.display());
    }
    mountpoint::unmount(&mnt, false).expect("unmount");
    export.close().expect("close");
}

#[test]
fn writes_into_a_protected_hidden_volume_fail_at_the_block_device() {
    require_root_and_fuse();
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("hidden.tc");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes-hidden"), &path).expect("copy");
    let mut opts = SearchOptions::new();
    opts.format = Some(Format::TrueCrypt);
    opts.prf = Some(Prf::Sha512);
    let rw = || {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .expect("host")
    };
    let h = OpenVolume::open(
        &e,
        rw(),
        creds(b"bbbbbbbbbbbb"),
        Target::Hidden,
        &opts,
        &AtomicBool::new(false),
        true,
    )
    .expect("hidden");
    let hidden_start = h.info().data_offset;
    drop(h);
    let v = OpenVolume::open_protected(
        &e,
        rw(),
        creds(b"aaaaaaaaaaaa"),
        creds(b"bbbbbbbbbbbb"),
        &opts,
        &AtomicBool::new(false),
        false,
    )
    .expect("outer, protected");
    let into = hidden_start - v.info().data_offset;
    let runtime = dir.path().join("run");
    std::fs::create_dir(&runtime).expect("mkdir");
    let export =
        Box::new(FuseLoop::start(Arc::new(v), &runtime.join("p"), SERVING, false).expect("export"));
    let dev = OpenOptions::new()
        .write(true)
        .custom_flags_direct()
        .open(export.device())
        .expect("open device");
    let block = AlignedBlock::new();
    assert!(
        dev.write_at(block.bytes(), 4096).is_ok(),
        "outside the hidden volume"
    );
    let r = dev.write_at(block.bytes(), into);
    assert!(r.is_err(), "a write into the hidden volume fails: {r:?}");
    drop(dev);
    export.close().expect("close");
    let h = OpenVolume::open(
        &e,
        rw(),
        creds(b"bbbbbbbbbbbb"),
        Target::Hidden,
        &opts,
        &AtomicBool::new(false),
        true,
    )
    .expect("hidden still opens");
    let mut s = vec![0u8; 512];
    h.read_at(&mut s, 0).expect("read");
    assert_eq!(tcd_tests::fat_serial(&s), Some(0xCAFE_BABE));
}

/// O_DIRECT, so a write reaches the volume (and fails) at once instead of
/// sitting in the page cache.
trait DirectExt {
    fn custom_flags_direct(&mut self) -> &mut Self;
}
impl DirectExt for OpenOptions {
    fn custom_flags_direct(&mut self) -> &mut Self {
        std::os::unix::fs::OpenOptionsExt::custom_flags(self, 0o40000)
    }
}

/// 4 KiB, 4 KiB-aligned, as O_DIRECT wants.
struct AlignedBlock(Box<[u8]>, usize);
impl AlignedBlock {
    fn new() -> Self {
        let b = vec![0x5au8; 8192].into_boxed_slice();
        let off = (4096 - (b.as_ptr() as usize % 4096)) % 4096;
        AlignedBlock(b, off)
    }
    fn bytes(&self) -> &[u8] {
        &self.0[self.1..self.1 + 4096]
    }
}
