//! The control socket end to end: requests and answers, bad requests,
//! one instance per path, and who may connect.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use control::protocol::MAX_LINE;
use control::{client, ControlServer, Handler, Request, Response};

/// Answers `stats` with a number, refuses `route_del`, records the rest.
#[derive(Default)]
struct Mock(Mutex<Vec<Request>>);

impl Handler for Mock {
    fn handle(&self, request: Request) -> Result<serde_json::Value, String> {
        match request {
            Request::Stats => Ok(serde_json::json!({"forwarded": 42})),
            Request::RouteDel { prefix } => Err(format!("no route {prefix}")),
            other => {
                self.0.lock().unwrap().push(other);
                Ok(serde_json::Value::Null)
            }
        }
    }
}

fn start(dir: &Path) -> (ControlServer, Arc<Mock>) {
    let mock = Arc::new(Mock::default());
    let s = ControlServer::start(&dir.join("run/ctl.sock"), None, mock.clone()).unwrap();
    (s, mock)
}

#[test]
fn requests_are_answered_and_bad_ones_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (server, mock) = start(dir.path());
    let path = server.path().to_path_buf();
    assert_eq!(
        client::request(&path, Request::Stats).unwrap(),
        Response::Ok {
            data: serde_json::json!({"forwarded": 42})
        }
    );
    assert_eq!(
        client::request(
            &path,
            Request::RouteDel {
                prefix: "10.0.0.0/8".into()
            }
        )
        .unwrap(),
        Response::error("no route 10.0.0.0/8")
    );
    // Several requests on one connection, a bad one in between.
    let mut s = UnixStream::connect(&path).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut answer = |line: &str| {
        s.write_all(line.as_bytes()).unwrap();
        let mut a = String::new();
        r.read_line(&mut a).unwrap();
        serde_json::from_str::<Response>(&a).unwrap()
    };
    assert!(matches!(
        answer("{\"version\":1,\"op\":\"reload\"}\n"),
        Response::Ok { .. }
    ));
    assert!(matches!(
        answer("{\"version\":1,\"op\":\"route_add\",\"prefix\":\"x\"}\n"),
        Response::Error { message } if message.contains("missing field `via`")
    ));
    assert!(matches!(
        answer("{\"version\":1,\"op\":\"port_show\"}\n"),
        Response::Ok { .. }
    ));
    assert_eq!(
        *mock.0.lock().unwrap(),
        [Request::Reload, Request::PortShow]
    );
    // An endless line is refused and the connection closed.
    let mut s = UnixStream::connect(&path).unwrap();
    s.write_all(&vec![b'x'; MAX_LINE + 10]).unwrap();
    let mut a = String::new();
    BufReader::new(&s).read_line(&mut a).unwrap();
    assert!(a.contains("longer than"), "{a}");
    drop(server);
    assert!(!path.exists(), "the socket is removed at shutdown");
}

#[test]
fn a_path_held_by_a_live_router_is_refused_a_stale_one_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (first, _) = start(dir.path());
    let err = ControlServer::start(first.path(), None, Arc::new(Mock::default()))
        .err()
        .unwrap();
    assert!(
        format!("{err:#}").contains("held by a running softrouter"),
        "{err:#}"
    );
    // A socket file left by a killed router (nobody listens). Bound and
    // never listened on: a listener, even one closed at once, could live
    // on for a moment in a child another test forks meanwhile, and take
    // the connection.
    let stale = dir.path().join("stale.sock");
    bind_without_listening(&stale);
    assert!(stale.exists());
    let s = ControlServer::start(&stale, None, Arc::new(Mock::default())).unwrap();
    assert!(client::request(s.path(), Request::Stats).is_ok());
}

/// The child side of the permission test: connect and exit 0 if allowed,
/// 13 (EACCES) if refused.
#[test]
fn probe_child() {
    let Ok(path) = std::env::var("SR_CTL_PROBE") else {
        return;
    };
    match UnixStream::connect(&path) {
        Ok(_) => std::process::exit(0),
        Err(e) => std::process::exit(e.raw_os_error().unwrap_or(1)),
    }
}

/// Run `probe_child` as `uid`/`gid` (std drops the supplementary groups
/// when it changes the user): the exit code.
fn probe_as(path: &Path, uid: u32, gid: u32) -> i32 {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "probe_child", "-q"])
        .env("SR_CTL_PROBE", path)
        .uid(uid)
        .gid(gid)
        .status()
        .unwrap()
        .code()
        .unwrap_or(-1)
}

#[test]
fn only_root_and_the_configured_group_may_connect() {
    // SAFETY: no arguments.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("only_root_and_the_configured_group_may_connect: skipped (needs root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Others must be able to reach the directory to be refused by the
    // socket's own mode, not by the directory's.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (nobody, group) = (65534, 4242);
    let path = dir.path().join("ctl.sock");
    let s = ControlServer::start(&path, Some(group), Arc::new(Mock::default())).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o660);
    assert_eq!(
        probe_as(&path, nobody, nobody),
        libc::EACCES,
        "another user"
    );
    assert_eq!(probe_as(&path, nobody, group), 0, "a member of the group");
    assert_eq!(probe_as(&path, 0, 0), 0, "root");
    drop(s);
}

/// Creates the socket file `path` as a killed process leaves it: a bound
/// UNIX stream socket that nobody listens on.
fn bind_without_listening(path: &std::path::Path) {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: plain socket/bind/close on a zeroed sockaddr_un whose path
    // fits (checked).
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let mut addr: libc::sockaddr_un = std::mem::zeroed();
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let bytes = path.as_os_str().as_bytes();
        assert!(bytes.len() < addr.sun_path.len());
        for (d, s) in addr.sun_path.iter_mut().zip(bytes) {
            *d = *s as libc::c_char;
        }
        let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        assert_eq!(
            libc::bind(fd, (&addr as *const libc::sockaddr_un).cast(), len),
            0
        );
        libc::close(fd);
    }
}
