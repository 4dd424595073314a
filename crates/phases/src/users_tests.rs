use std::io;
use std::os::unix::fs::PermissionsExt;
use std::sync::Mutex;

use kubeadm_effects::report::Severity;
use kubeadm_host::fs::RealFs;

use super::*;

/// Keeps the log lines.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);
impl Reporter for Log {
    fn out(&self, _: &str) {}
    fn err(&self, _: &str) {}
    fn verbosity(&self) -> u8 {
        10
    }
    fn log(&self, _: Severity, level: u8, _: &str, message: &str) {
        self.0.lock().expect("log").push(format!("{level}:{message}"));
    }
}

/// The host's file system, with writes to one path failing.
struct FailingWrite(PathBuf);
impl Fs for FailingWrite {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        RealFs.read(path)
    }
    fn write(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
        if path == self.0 {
            return Err(io::Error::from_raw_os_error(28));
        }
        RealFs.write(path, contents, mode)
    }
    fn exists(&self, path: &Path) -> bool {
        RealFs.exists(path)
    }
    fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()> {
        RealFs.create_dir_all(path, mode)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        RealFs.remove_file(path)
    }
    fn lock(&self, path: &Path) -> io::Result<FileLock> {
        RealFs.lock(path)
    }
}

const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\nsys:x:100:100:::/usr/sbin/nologin\n";
const GROUP: &str = "root:x:0:\nsys:x:100:\n";

fn root() -> (tempfile::TempDir, AccountFiles) {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = AccountFiles::under(dir.path());
    std::fs::create_dir_all(files.passwd.parent().expect("etc")).expect("mkdir");
    std::fs::write(&files.passwd, PASSWD).expect("passwd");
    std::fs::set_permissions(&files.passwd, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::write(&files.group, GROUP).expect("group");
    std::fs::set_permissions(&files.group, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    (dir, files)
}

fn text(p: &Path) -> String {
    std::fs::read_to_string(p).expect("read")
}

#[test]
fn users_are_added_under_the_root_given_and_removed_again() {
    let (_dir, files) = root();
    std::fs::write(&files.login_defs, "SYS_UID_MIN 300\nSYS_GID_MIN 400\n").expect("defs");
    let log = Log::default();
    let ids = add_users_and_groups(&RealFs, &log, &files).expect("added");
    assert_eq!(ids.uid("kubeadm-etcd"), 300);
    assert_eq!(ids.gid("kubeadm-sa-key-readers"), 404);
    assert_eq!(
        text(&files.passwd),
        format!(
            "{PASSWD}kubeadm-etcd:x:300:400:::/bin/false\nkubeadm-kas:x:301:401:::/bin/false\n\
             kubeadm-kcm:x:302:402:::/bin/false\nkubeadm-ks:x:303:403:::/bin/false\n"
        )
    );
    assert!(text(&files.group).ends_with("kubeadm-sa-key-readers:x:404:kubeadm-kas,kubeadm-kcm\n"));
    let mode = std::fs::metadata(&files.passwd)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o644, "the file's mode is kept");
    assert!(
        log.0
            .lock()
            .expect("log")
            .contains(&"5:Adding users: kubeadm-etcd,kubeadm-kas,kubeadm-kcm,kubeadm-ks".to_string())
    );

    // Reused the second time.
    assert_eq!(add_users_and_groups(&RealFs, &log, &files).expect("again"), ids);

    remove_users_and_groups(&RealFs, &log, &files).expect("removed");
    assert_eq!(text(&files.passwd), PASSWD);
    assert_eq!(text(&files.group), GROUP);
}

#[test]
fn a_failed_write_leaves_both_files_as_they_were() {
    let (_dir, files) = root();
    let fs = FailingWrite(files.passwd.clone());
    let err = add_users_and_groups(&fs, &Log::default(), &files).expect_err("passwd unwritable");
    assert_eq!(
        err.to_string(),
        format!("write {}: no space left on device", files.passwd.display())
    );
    assert_eq!(text(&files.passwd), PASSWD);
    assert_eq!(
        text(&files.group),
        GROUP,
        "the group file got its old content back"
    );

    add_users_and_groups(&RealFs, &Log::default(), &files).expect("added");
    let (passwd, group) = (text(&files.passwd), text(&files.group));
    let fs = FailingWrite(files.group.clone());
    remove_users_and_groups(&fs, &Log::default(), &files).expect_err("group unwritable");
    assert_eq!((text(&files.passwd), text(&files.group)), (passwd, group));
}

#[test]
fn refusals_and_missing_files_leave_the_files_alone() {
    let (_dir, files) = root();
    let passwd = format!("{PASSWD}kubeadm-kas:x:150:100:::/bin/false\n");
    std::fs::write(&files.passwd, &passwd).expect("passwd");
    let err = add_users_and_groups(&RealFs, &Log::default(), &files).expect_err("wrong group");
    assert_eq!(
        err.to_string(),
        r#"error validating existing users and groups: user "kubeadm-kas" has GID 100 but the group with that GID is not named "kubeadm-kas""#
    );
    assert_eq!(
        (text(&files.passwd), text(&files.group)),
        (passwd, GROUP.to_string())
    );

    std::fs::remove_file(&files.group).expect("rm");
    let err = add_users_and_groups(&RealFs, &Log::default(), &files).expect_err("no group file");
    assert_eq!(
        err.to_string(),
        format!("open {}: no such file or directory", files.group.display())
    );
}

#[test]
fn ownership_errors_are_upstreams() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("sa.key").display().to_string();
    let change = |mode| OwnershipChange {
        path: missing.clone(),
        uid: 0,
        gid: 7,
        mode,
    };
    assert_eq!(
        apply_ownership(&RealFs, &[change(Some(0o640))]).expect_err("missing"),
        format!(
            "failed to update owner of {missing:?} to uid: 0 and gid: 7: chown {missing}: no such file or directory"
        )
    );
    assert_eq!(
        apply_ownership(&RealFs, &[change(None)]).expect_err("missing"),
        format!(
            "failed to update owner of {missing:?} to uid: 0 and gid: 7: chown {missing}: no such file or directory"
        )
    );
    assert_eq!(file_mode_string(0o640), "-rw-r-----");
    assert_eq!(file_mode_string(0o600), "-rw-------");
}
