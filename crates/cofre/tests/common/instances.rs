//! Servers a test starts, stops and restarts on its own: a PostgreSQL
//! cluster in a data directory of its own and a `redis-server`, each on a
//! free port, so restarting them never touches the machine's shared
//! instances that other tests use at the same time. Dropped, they stop.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether a test that needs `what` must run (`CI=true`) or may be skipped
/// with a notice.
fn missing<T>(what: &str) -> Option<T> {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true but {what} is not installed: the repo's scripts install it");
    }
    eprintln!("SKIPPED: {what} is not installed");
    None
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A PostgreSQL cluster of the test's own.
pub struct OwnPostgres {
    bin: PathBuf,
    data: PathBuf,
    _dir: tempfile::TempDir,
    pub port: u16,
}

impl OwnPostgres {
    /// `initdb` and start a cluster (trust authentication, user postgres),
    /// or `None` (skipped) where PostgreSQL's programs are not installed.
    pub fn start() -> Option<OwnPostgres> {
        let Some(bin) = postgres_bin() else {
            return missing("PostgreSQL (initdb, pg_ctl)");
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        // initdb refuses to run as root: the cluster belongs to postgres.
        if is_root() {
            run_ok(Command::new("chown").args(["postgres", path(dir.path())]));
        }
        let postgres = OwnPostgres {
            bin,
            data,
            _dir: dir,
            port: free_port(),
        };
        postgres.pg(&[
            "initdb",
            "-A",
            "trust",
            "-U",
            "postgres",
            "-D",
            path(&postgres.data),
        ]);
        postgres.ctl("start");
        Some(postgres)
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops the server at once (open sessions are cut, as in a crash of
    /// the connection or a failover).
    pub fn stop(&self) {
        self.pg(&["pg_ctl", "-D", path(&self.data), "-m", "fast", "-w", "stop"]);
    }

    pub fn start_again(&self) {
        self.ctl("start");
    }

    fn ctl(&self, action: &str) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=100",
            self.port,
            path(&self.data)
        );
        let log = self.data.join("server.log");
        self.pg(&[
            "pg_ctl",
            "-D",
            path(&self.data),
            "-o",
            &options,
            "-l",
            path(&log),
            "-w",
            action,
        ]);
    }

    /// Runs one of PostgreSQL's programs and checks it succeeded.
    fn pg(&self, args: &[&str]) {
        run_ok(&mut self.command(args));
    }

    /// One of PostgreSQL's programs, run as postgres when we are root.
    fn command(&self, args: &[&str]) -> Command {
        let program = self.bin.join(args[0]);
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        command.args(&args[1..]).current_dir("/");
        command
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = self
            .command(&["pg_ctl", "-D", path(&self.data), "-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The folder of `initdb` and `pg_ctl`: Debian keeps them out of PATH.
fn postgres_bin() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").is_file() && bin.join("pg_ctl").is_file())
        .collect();
    found.sort();
    found.pop().or_else(|| {
        let output = Command::new("sh")
            .args(["-c", "command -v initdb"])
            .output()
            .ok()?;
        let initdb = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        initdb.parent().map(Path::to_path_buf)
    })
}

/// A `redis-server` of the test's own, keeping nothing on disk.
pub struct OwnRedis {
    child: Option<Child>,
    pub port: u16,
}

impl OwnRedis {
    /// `None` (skipped) where `redis-server` is not installed.
    pub fn start() -> Option<OwnRedis> {
        let installed = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            return missing("redis-server");
        }
        let mut redis = OwnRedis {
            child: None,
            port: free_port(),
        };
        redis.start_again();
        Some(redis)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn start_again(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server (SIGKILL): its counters are gone, as after a crash.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn run_ok(command: &mut Command) {
    let output = command.output().expect("run a server program");
    assert!(
        output.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
