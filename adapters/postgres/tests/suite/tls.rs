//! The queue over TLS, against a PostgreSQL server of this machine's installation that the
//! test starts itself (its own data directory and port, `ssl = on`) with a certificate it
//! makes (a CA of its own and a server certificate for `localhost`): `sslmode=require`
//! connects, `verify-full` with the CA file connects and one with another CA is refused,
//! a server that requires TLS refuses a plain connection, and a password comes from
//! `PGPASSFILE` — never from the URL — and is never in an error.

use std::path::{Path, PathBuf};
use std::process::Command;

use forge_adapter_postgres::PgQueue;

/// The PostgreSQL server programs of this machine (`/usr/lib/postgresql/<v>/bin`).
fn pg_bin() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect(
            "PostgreSQL's server programs under /usr/lib/postgresql (the machine runs PostgreSQL)",
        )
        .map(|e| e.unwrap().path().join("bin"))
        .filter(|p| p.join("initdb").is_file())
        .collect();
    versions.sort();
    versions
        .pop()
        .expect("an initdb under /usr/lib/postgresql/*/bin")
}

fn is_root() -> bool {
    nix_uid() == 0
}

fn nix_uid() -> u32 {
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| std::os::unix::fs::MetadataExt::uid(&m))
}

/// `program args…` as the server's user: `postgres` when the test runs as root (PostgreSQL
/// refuses to run as root), else the test's own.
fn as_server_user(program: &Path, args: &[&str]) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program).args(args);
        c
    } else {
        let mut c = Command::new(program);
        c.args(args);
        c
    }
}

fn run(mut c: Command) {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA and a certificate for `localhost` signed by it, as PEM: (ca, cert, key).
fn certificates() -> (String, String, String) {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "forge test CA");
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let cert = params.signed_by(&key, &issuer).unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

/// A running server; stopped (immediately) when dropped.
struct Server {
    _dir: tempfile::TempDir,
    data: PathBuf,
    port: u16,
    ca: PathBuf,
    other_ca: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let data = self.data.display().to_string();
        let _ = as_server_user(
            &pg_bin().join("pg_ctl"),
            &["-D", &data, "-m", "immediate", "stop"],
        )
        .output();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_tls_server() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let certs = dir.path().join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    let (ca, cert, key) = certificates();
    let (other_ca, _, _) = certificates();
    std::fs::write(certs.join("ca.pem"), &ca).unwrap();
    std::fs::write(certs.join("other-ca.pem"), &other_ca).unwrap();
    std::fs::write(certs.join("server.crt"), cert).unwrap();
    std::fs::write(certs.join("server.key"), key).unwrap();
    std::fs::set_permissions(
        certs.join("server.key"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    if is_root() {
        // The server's user owns its directory, key included, and can reach it.
        run({
            let mut c = Command::new("chown");
            c.args(["-R", "postgres:postgres"]).arg(dir.path());
            c
        });
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
    }
    let data_s = data.display().to_string();
    let pwfile = dir.path().join("pw");
    std::fs::write(&pwfile, "t0p-secret-pw\n").unwrap();
    if is_root() {
        run({
            let mut c = Command::new("chown");
            c.arg("postgres:postgres").arg(&pwfile);
            c
        });
    }
    run(as_server_user(
        &pg_bin().join("initdb"),
        &[
            "-D",
            &data_s,
            "-U",
            "forge",
            "--pwfile",
            &pwfile.display().to_string(),
            "-A",
            "scram-sha-256",
        ],
    ));
    // TLS only: a plain connection has no line to match.
    std::fs::write(
        data.join("pg_hba.conf"),
        "hostssl all all 127.0.0.1/32 scram-sha-256\nhostssl all all ::1/128 scram-sha-256\n",
    )
    .unwrap();
    let port = free_port();
    let options = format!(
        "-p {port} -k {} -c listen_addresses=localhost -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
        dir.path().display(),
        certs.join("server.crt").display(),
        certs.join("server.key").display(),
    );
    run(as_server_user(
        &pg_bin().join("pg_ctl"),
        &[
            "-D",
            &data_s,
            "-w",
            "-o",
            &options,
            "-l",
            &dir.path().join("log").display().to_string(),
            "start",
        ],
    ));
    Server {
        data,
        port,
        ca: certs.join("ca.pem"),
        other_ca: certs.join("other-ca.pem"),
        _dir: dir,
    }
}

#[tokio::test]
async fn tls_modes_and_a_password_from_the_password_file() {
    let server = start_tls_server();
    let dir = tempfile::tempdir().unwrap();
    let passfile = dir.path().join("pgpass");
    std::fs::write(
        &passfile,
        format!("localhost:{}:*:forge:t0p-secret-pw\n", server.port),
    )
    .unwrap();
    std::fs::set_permissions(
        &passfile,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let passfile_s = passfile.display().to_string();
    let env = move |name: &str| (name == "PGPASSFILE").then(|| passfile_s.clone());
    let base = format!("postgres://forge@localhost:{}/postgres", server.port);

    // require: encrypted, identity not checked.
    PgQueue::connect_with(&format!("{base}?sslmode=require"), &env)
        .await
        .unwrap();
    // verify-full with the server's CA.
    let verified = format!(
        "{base}?sslmode=verify-full&sslrootcert={}",
        server.ca.display()
    );
    PgQueue::connect_with(&verified, &env).await.unwrap();

    // Refused: another CA, no TLS at all, a wrong password; the error never shows one.
    let wrong_ca = format!(
        "{base}?sslmode=verify-full&sslrootcert={}",
        server.other_ca.display()
    );
    let err = PgQueue::connect_with(&wrong_ca, &env)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    let err = PgQueue::connect_with(&base, &env)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("no pg_hba.conf entry") || err.contains("SSL"),
        "{err}"
    );
    let with_wrong = format!(
        "postgres://forge:wr0ng-pw@localhost:{}/postgres?sslmode=require",
        server.port
    );
    let err = PgQueue::connect_with(&with_wrong, &env)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(
        !err.contains("wr0ng-pw") && !err.contains("t0p-secret-pw"),
        "{err}"
    );
}
