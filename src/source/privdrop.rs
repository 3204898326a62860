//! Giving up root once a capture device is open, as tcpdump's `-Z USER` does: a live capture
//! parses packets that anyone on the wire can forge, so it should not do that as root.
//!
//! The capture paths (`capture IFACE`, the verbs sniffer, `top`) follow the same three steps:
//!
//! 1. [`Plan::resolve`] before anything is opened: who to become. `-Z USER` names the user
//!    (`-Z root` keeps root); without it, a run as root becomes the user behind `sudo`
//!    (`SUDO_USER`) or else `nobody`. A name that is not a user is an error before the device
//!    is touched. A run that is not root has nothing to give up.
//! 2. Open the device and the `-w` savefile as root, then [`Plan::hand_over`] the savefile (and
//!    [`Plan::hand_over_dir`] an output folder) to that user, so its files belong to them.
//! 3. [`Plan::drop_now`]: `setgroups(0)` (no supplementary groups), `setgid(pw_gid)`,
//!    `setuid(pw_uid)`, in that order (the group calls need root, so they come first), then
//!    checked: real, effective and saved IDs are the user's, no supplementary group is left, and
//!    `setuid(0)` fails (no way back). When not root, any capabilities the process holds (a
//!    binary given `cap_net_raw,cap_net_admin` with setcap) are cleared instead.
//!
//! Sources: tcpdump's `droproot()` (tcpdump.c: `initgroups`/`setgid`/`setuid` after
//! `pcap_activate`), setuid(2), setgroups(2), capabilities(7), getpwnam_r(3).

use std::ffi::{CStr, CString};
use std::path::Path;

/// Why the privileges could not be given up (or the user to give them to found).
#[derive(Debug, thiserror::Error)]
pub enum PrivDropError {
    /// `-Z USER` names no user of this system (a usage error: exit status 2).
    #[error("-Z {0}: no such user")]
    NoSuchUser(String),
    /// Running as root without `-Z`, the default user (`SUDO_USER`'s, else `nobody`) is not a
    /// user of this system.
    #[error("cannot drop root after opening the device: {0}")]
    NoDefaultUser(String),
    /// A system call failed: its name and the OS error.
    #[error("dropping root: {call} failed: {err}")]
    Call {
        /// The call (`setgroups`, `setgid`, `setuid`, `chown PATH`, …).
        call: String,
        /// The OS error.
        err: std::io::Error,
    },
    /// The calls succeeded but the process still holds what they should have removed.
    #[error("dropping root to {user}: {what}")]
    NotDropped {
        /// The user name.
        user: String,
        /// What was found.
        what: String,
    },
}

impl PrivDropError {
    fn call(call: impl Into<String>) -> PrivDropError {
        PrivDropError::Call {
            call: call.into(),
            err: std::io::Error::last_os_error(),
        }
    }
}

/// A user of this system, from the password database (`getpwnam_r(3)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// The login name.
    pub name: String,
    /// User ID (`pw_uid`).
    pub uid: u32,
    /// Primary group ID (`pw_gid`).
    pub gid: u32,
}

/// Look `name` up in the password database; `Ok(None)` when there is no such user.
///
/// # Errors
/// The lookup itself failed (`getpwnam_r`'s error number).
pub fn lookup(name: &str) -> std::io::Result<Option<Account>> {
    let Ok(cname) = CString::new(name) else {
        return Ok(None);
    };
    let mut buf = vec![0u8; 4096];
    loop {
        // SAFETY: zeroed passwd is a valid out-parameter; buf is valid for its length and
        // outlives every use of the pointers getpwnam_r stores in `pw`.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = unsafe {
            libc::getpwnam_r(
                cname.as_ptr(),
                &mut pw,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut found,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        // ENOENT, ESRCH, EBADF, EPERM: "the name was not found" (getpwnam_r(3) NOTES).
        if found.is_null() {
            return match rc {
                0 | libc::ENOENT | libc::ESRCH | libc::EBADF | libc::EPERM => Ok(None),
                e => Err(std::io::Error::from_raw_os_error(e)),
            };
        }
        // SAFETY: on success pw_name points to a NUL-terminated string inside buf.
        let name = unsafe { CStr::from_ptr(pw.pw_name) }
            .to_string_lossy()
            .into_owned();
        return Ok(Some(Account {
            name,
            uid: pw.pw_uid,
            gid: pw.pw_gid,
        }));
    }
}

/// Who a capture runs as once its device is open (`-Z USER`, tcpdump's flag).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Stay as we are: `-Z root`, or not running as root (then only capabilities are cleared).
    Keep,
    /// Become this user.
    Become(Account),
}

/// Which user name a run asks for, before the lookup: `-Z USER` if given, else (as root)
/// `SUDO_USER` when set and not empty, else `nobody`; `None` when not running as root without
/// `-Z`, or when the name is `root`.
pub fn wanted_user(z: Option<&str>, as_root: bool, sudo_user: Option<&str>) -> Option<String> {
    let name = match z {
        Some(u) => u.to_string(),
        None if !as_root => return None,
        None => sudo_user
            .filter(|s| !s.is_empty())
            .unwrap_or("nobody")
            .to_string(),
    };
    (name != "root").then_some(name)
}

impl Plan {
    /// Decide who to become, before the device is opened. `z` is `-Z USER`.
    ///
    /// # Errors
    /// [`PrivDropError::NoSuchUser`] when `-Z` names no user (whether root or not: a misspelt
    /// name is refused either way); [`PrivDropError::NoDefaultUser`] when, as root without
    /// `-Z`, `SUDO_USER`'s user or `nobody` does not exist.
    pub fn resolve(z: Option<&str>) -> Result<Plan, PrivDropError> {
        // SAFETY: geteuid has no preconditions.
        let as_root = unsafe { libc::geteuid() } == 0;
        let sudo = std::env::var("SUDO_USER").ok();
        let Some(name) = wanted_user(z, as_root, sudo.as_deref()) else {
            return Ok(Plan::Keep);
        };
        let account = lookup(&name).map_err(|err| PrivDropError::Call {
            call: format!("looking up user {name}"),
            err,
        })?;
        let account = match (account, z) {
            (Some(a), _) => a,
            (None, Some(_)) => return Err(PrivDropError::NoSuchUser(name)),
            (None, None) => {
                return Err(PrivDropError::NoDefaultUser(format!(
                    "no user '{name}' on this system; give -Z USER (or -Z root to keep root)"
                )));
            }
        };
        if !as_root || account.uid == 0 {
            // Not root: there is no other user to become (as tcpdump, -Z is then ignored).
            return Ok(Plan::Keep);
        }
        Ok(Plan::Become(account))
    }

    /// The user the process will run as, if it changes.
    pub fn account(&self) -> Option<&Account> {
        match self {
            Plan::Keep => None,
            Plan::Become(a) => Some(a),
        }
    }

    /// Give the file at `path` (created by this process as root) to the user to become, so it
    /// belongs to them (chown(2); the link is followed, as the file was opened through it).
    ///
    /// # Errors
    /// chown(2)'s error, naming the path.
    pub fn hand_over(&self, path: &Path) -> Result<(), PrivDropError> {
        let Some(a) = self.account() else {
            return Ok(());
        };
        std::os::unix::fs::chown(path, Some(a.uid), Some(a.gid)).map_err(|err| {
            PrivDropError::Call {
                call: format!("chown {}", path.display()),
                err,
            }
        })
    }

    /// Create the folder `dir` (and its missing parents) if it does not exist yet, and give
    /// the folders created to the user to become, so that they can write into it after the
    /// drop. A folder that existed is left as it is.
    ///
    /// # Errors
    /// mkdir(2) or chown(2)'s error, naming the folder.
    pub fn hand_over_dir(&self, dir: &Path) -> Result<(), PrivDropError> {
        let mut missing = Vec::new();
        let mut p = Some(dir);
        while let Some(d) = p.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            missing.push(d);
            p = d.parent();
        }
        for d in missing.into_iter().rev() {
            std::fs::create_dir(d).map_err(|err| PrivDropError::Call {
                call: format!("mkdir {}", d.display()),
                err,
            })?;
            self.hand_over(d)?;
        }
        Ok(())
    }

    /// Give up root now (the device and the files it writes are open): no supplementary
    /// groups, the user's group, the user's ID, then check that none of root's is left and
    /// that `setuid(0)` fails. [`Plan::Keep`] as root changes nothing; not as root, the
    /// process's capabilities are cleared.
    ///
    /// Every thread of the process changes: glibc's set*id wrappers apply to all of them.
    ///
    /// # Errors
    /// A call failed, or the check found a privilege left ([`PrivDropError::NotDropped`]).
    pub fn drop_now(&self) -> Result<(), PrivDropError> {
        match self {
            // SAFETY: geteuid has no preconditions.
            Plan::Keep if unsafe { libc::geteuid() } == 0 => Ok(()),
            Plan::Keep => clear_capabilities(),
            Plan::Become(a) => {
                become_user(a)?;
                check_dropped(a)
            }
        }
    }
}

/// setgroups, setgid, setuid in that order.
fn become_user(a: &Account) -> Result<(), PrivDropError> {
    // SAFETY: plain system calls; setgroups with size 0 reads no list.
    unsafe {
        if libc::setgroups(0, std::ptr::null()) != 0 {
            return Err(PrivDropError::call("setgroups"));
        }
        if libc::setgid(a.gid) != 0 {
            return Err(PrivDropError::call(format!("setgid {}", a.gid)));
        }
        if libc::setuid(a.uid) != 0 {
            return Err(PrivDropError::call(format!("setuid {}", a.uid)));
        }
    }
    Ok(())
}

/// Real, effective and saved user and group IDs are `a`'s, no supplementary groups are left,
/// and neither `setuid(0)` nor (when the user's group is not 0) `setgid(0)` works any more.
fn check_dropped(a: &Account) -> Result<(), PrivDropError> {
    let fail = |what: String| PrivDropError::NotDropped {
        user: a.name.clone(),
        what,
    };
    let (mut r, mut e, mut s) = (0, 0, 0);
    let (mut gr, mut ge, mut gs) = (0, 0, 0);
    // SAFETY: valid out-pointers; getgroups(0, NULL) only counts.
    let (uids, gids, groups) = unsafe {
        (
            libc::getresuid(&mut r, &mut e, &mut s),
            libc::getresgid(&mut gr, &mut ge, &mut gs),
            libc::getgroups(0, std::ptr::null_mut()),
        )
    };
    if uids != 0 || [r, e, s] != [a.uid; 3] {
        return Err(fail(format!("user IDs are {r}/{e}/{s}, not {}", a.uid)));
    }
    if gids != 0 || [gr, ge, gs] != [a.gid; 3] {
        return Err(fail(format!("group IDs are {gr}/{ge}/{gs}, not {}", a.gid)));
    }
    if groups != 0 {
        return Err(fail(format!("{groups} supplementary groups left")));
    }
    // No way back: root's IDs cannot be taken again (unless they are the user's own: a
    // primary group 0 stays). SAFETY: plain system calls; each is expected to fail with EPERM.
    if a.uid != 0 && unsafe { libc::setuid(0) } == 0 {
        return Err(fail("setuid(0) still succeeds".into()));
    }
    if a.gid != 0 && unsafe { libc::setgid(0) } == 0 {
        return Err(fail("setgid(0) still succeeds".into()));
    }
    Ok(())
}

/// `_LINUX_CAPABILITY_VERSION_3` (linux/capability.h): two 32-bit words per set.
const CAP_VERSION_3: u32 = 0x2008_0522;

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Not root: clear the effective, permitted and inheritable capabilities and the ambient set
/// (capset(2), PR_CAP_AMBIENT_CLEAR_ALL), so capabilities given to the binary with setcap are
/// not held while packets are parsed. Nothing to do when none are held.
fn clear_capabilities() -> Result<(), PrivDropError> {
    let mut hdr = CapHeader {
        version: CAP_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: header and two data structs, as capget(2) wants for version 3.
    if unsafe { libc::syscall(libc::SYS_capget, &mut hdr, data.as_mut_ptr()) } != 0 {
        return Err(PrivDropError::call("capget"));
    }
    if data.iter().all(|d| d.permitted == 0 && d.inheritable == 0) {
        return Ok(());
    }
    let none = [CapData::default(); 2];
    // SAFETY: as above; an empty set is always allowed.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        if libc::syscall(libc::SYS_capset, &hdr, none.as_ptr()) != 0 {
            return Err(PrivDropError::call("capset"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wanted_user_follows_tcpdump_and_sudo() {
        // -Z wins, as root or not; -Z root keeps root.
        assert_eq!(
            wanted_user(Some("alice"), true, Some("bob")).as_deref(),
            Some("alice")
        );
        assert_eq!(
            wanted_user(Some("alice"), false, None).as_deref(),
            Some("alice")
        );
        assert_eq!(wanted_user(Some("root"), true, Some("bob")), None);
        // As root: the user behind sudo, else nobody.
        assert_eq!(wanted_user(None, true, Some("bob")).as_deref(), Some("bob"));
        assert_eq!(wanted_user(None, true, Some("")).as_deref(), Some("nobody"));
        assert_eq!(wanted_user(None, true, None).as_deref(), Some("nobody"));
        // sudo from root: stays root.
        assert_eq!(wanted_user(None, true, Some("root")), None);
        // Not root, no -Z: nobody to become.
        assert_eq!(wanted_user(None, false, Some("bob")), None);
    }

    #[test]
    fn lookup_finds_root_and_not_a_made_up_name() {
        // Every Unix system's password database has root with uid and gid 0.
        let root = lookup("root").unwrap().expect("root");
        assert_eq!((root.uid, root.gid), (0, 0));
        assert_eq!(lookup("no-such-user-ri-38").unwrap(), None);
        assert_eq!(lookup("nul\0in name").unwrap(), None);
    }

    #[test]
    fn an_unknown_z_user_is_refused_and_root_is_kept() {
        assert!(matches!(
            Plan::resolve(Some("no-such-user-ri-38")),
            Err(PrivDropError::NoSuchUser(n)) if n == "no-such-user-ri-38"
        ));
        assert_eq!(Plan::resolve(Some("root")).unwrap(), Plan::Keep);
    }

    #[test]
    fn hand_over_dir_creates_only_what_is_missing() {
        let t = tempfile::tempdir().unwrap();
        let deep = t.path().join("a/b/c");
        // Keep: the folders are still created (owned by whoever runs the test).
        Plan::Keep.hand_over_dir(&deep).unwrap();
        assert!(deep.is_dir());
        Plan::Keep.hand_over_dir(&deep).unwrap();
    }

    /// As root: the folders created are given to the user (here `nobody`), the one that
    /// existed is not.
    #[test]
    fn hand_over_dir_gives_new_folders_to_the_user() {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let nobody = lookup("nobody").ok().flatten();
        let (true, Some(nobody)) = (root, nobody) else {
            eprintln!("skipped: needs root and a user 'nobody'");
            return;
        };
        let t = tempfile::tempdir().unwrap();
        let plan = Plan::Become(nobody.clone());
        plan.hand_over_dir(&t.path().join("x/y")).unwrap();
        for d in ["x", "x/y"] {
            let m = std::fs::metadata(t.path().join(d)).unwrap();
            assert_eq!((m.uid(), m.gid()), (nobody.uid, nobody.gid), "{d}");
        }
        assert_eq!(std::fs::metadata(t.path()).unwrap().uid(), 0);
        let f = t.path().join("f");
        std::fs::write(&f, b"").unwrap();
        plan.hand_over(&f).unwrap();
        assert_eq!(std::fs::metadata(&f).unwrap().uid(), nobody.uid);
    }
}
