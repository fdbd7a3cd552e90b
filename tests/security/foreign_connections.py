#!/usr/bin/env python3
"""Security of a run: private files, loopback listeners, foreign connections.

  foreign_connections.py --vcx-run PATH --vcx-trace PATH --mpiexec PATH --program PATH [-n N]

Runs PROGRAM (hold_until_go) natively, then under vcx-run with a private
TMPDIR. While the program holds in MPI, the test
  1. checks the session directory is 0700 and everything in it private to
     the user, and that no shared-memory name appeared in /dev/shm;
  2. checks that the tools' TCP listeners (published in the session's
     "peers") are bound to loopback (a one-node run);
  3. attacks each tool: on every TCP listener and every Unix socket of the
     session it connects and sends garbage, a hello with the right magic and
     a wrong token, and keeps one silent connection open to the end; the
     tool must close the first two;
then lets the program go on. The run must end with status 0, the same
output as the native run, a trace with every rank's calls, and the tools
must say that they refused connections.
"""
import argparse
import glob
import os
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time

HELLO_MAGIC = 0x31304F4C4C454856  # the tool-to-tool hello ("VHELLO01")
ATTACH_MAGIC = 0x3130484354415856  # the application attach hello ("VXATCH01")


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def wait_for(cond, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    fail(f"timed out waiting for {what}")


def tool_pids(session: str):
    pids = []
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(f"{d}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"vcx-toolproc") and session.encode() in argv:
            pids.append(int(d[6:]))
    return pids


def listening_tcp(pids):
    """(address, port) of every listening TCP socket of the processes."""
    inodes = set()
    for pid in pids:
        for fd in glob.glob(f"/proc/{pid}/fd/*"):
            try:
                link = os.readlink(fd)
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    found = []
    for table, family in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 6)):
        try:
            with open(table) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            local, state, inode = parts[1], parts[3], parts[9]
            if state != "0A" or inode not in inodes:
                continue
            addr_hex, port_hex = local.split(":")
            if family == 4:
                addr = socket.inet_ntop(socket.AF_INET, bytes.fromhex(addr_hex)[::-1])
            else:
                addr = addr_hex
            found.append((addr, int(port_hex, 16)))
    return found


def closed_by_peer(sock: socket.socket, timeout: float = 10.0) -> bool:
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def attack(make_socket, label: str, wrong_hello: bytes, keep: list) -> None:
    # Garbage.
    s = make_socket()
    s.sendall(os.urandom(512))
    if not closed_by_peer(s):
        fail(f"{label}: the tool kept a connection that sent garbage")
    s.close()
    # The right magic with a wrong token.
    s = make_socket()
    s.sendall(wrong_hello)
    if not closed_by_peer(s):
        fail(f"{label}: the tool kept a connection with a wrong token")
    s.close()
    # A silent connection, held to the end of the run.
    keep.append(make_socket())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--vcx-trace", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="vcx-security-") as work:
        go = os.path.join(work, "go")
        open(go, "w").close()
        native = subprocess.run([args.mpiexec, "-n", str(args.n), args.program, go],
                                capture_output=True, text=True, timeout=args.timeout)
        if native.returncode != 0:
            fail(f"native run failed: {native.stderr}")
        os.unlink(go)

        tmp = os.path.join(work, "tmp")
        os.mkdir(tmp)
        trace = os.path.join(work, "trace")
        shm_before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
        env = dict(os.environ, TMPDIR=tmp)
        out_path, err_path = os.path.join(work, "out"), os.path.join(work, "err")
        with open(out_path, "w") as out, open(err_path, "w") as err:
            run = subprocess.Popen([args.vcx_run, "-n", str(args.n), "--trace", trace,
                                    args.program, go], stdout=out, stderr=err, env=env)
        keep = []
        try:
            session = wait_for(lambda: glob.glob(os.path.join(tmp, "vcx-*")), "the session")[0]
            wait_for(lambda: len(glob.glob(os.path.join(session, "tool-*.sock"))) == args.n
                     or len(glob.glob(os.path.join(session, "tool-*"))) >= args.n,
                     "the tools' sockets")
            wait_for(lambda: len(tool_pids(session)) == args.n, "the tool processes")

            # 1. Private files.
            mode = stat.S_IMODE(os.stat(session).st_mode)
            if mode != 0o700:
                fail(f"session directory mode {mode:o}, want 700")
            for name in os.listdir(session):
                st = os.lstat(os.path.join(session, name))
                if stat.S_IMODE(st.st_mode) & 0o077:
                    fail(f"{name} in the session has mode {stat.S_IMODE(st.st_mode):o}")
                if st.st_uid != os.getuid():
                    fail(f"{name} in the session belongs to uid {st.st_uid}")
            shm_new = (set(os.listdir("/dev/shm")) - shm_before) if shm_before is not None else set()
            vcx_shm = [n for n in shm_new if "vcx" in n.lower()]
            if vcx_shm:
                fail(f"shared-memory names in /dev/shm: {vcx_shm}")

            # 2. Loopback listeners: the tools' own, as they publish them in
            # the session ("peers"). The tool job's MPICH has listeners of
            # its own, which are MPICH's business and left alone.
            peers_file = os.path.join(session, "peers")
            wait_for(lambda: os.path.exists(peers_file), "the tools' endpoints")
            with open(peers_file) as f:
                published = [line.strip() for line in f if line.strip()]
            if len(published) != args.n:
                fail(f"{peers_file} lists {len(published)} endpoints, want {args.n}")
            open_ports = listening_tcp(tool_pids(session))
            listeners = []
            for ep in published:
                host, port = ep.rsplit(":", 1)
                if host != "127.0.0.1":
                    fail(f"a tool listens on {ep}, not on loopback")
                if (host, int(port)) not in open_ports:
                    fail(f"no tool process listens on its published endpoint {ep}")
                listeners.append((host, int(port)))

            # 3. Foreign connections.
            wrong_peer = struct.pack("<QII64s", HELLO_MAGIC, 0, 0, b"not-the-token")
            for addr, port in listeners:
                attack(lambda: socket.create_connection((addr, port), timeout=10),
                       f"TCP {addr}:{port}", wrong_peer, keep)
            wrong_app = struct.pack("<QIIIiH6x64s", ATTACH_MAGIC, 1, 0, args.n, os.getpid(), 0,
                                    b"not-the-token")
            for path in glob.glob(os.path.join(session, "tool-*.sock")):
                def unix(path=path):
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect(path)
                    return s
                attack(unix, f"Unix socket {os.path.basename(path)}", wrong_app, keep)
            print(f"attacked {len(listeners)} TCP listener(s) and "
                  f"{len(glob.glob(os.path.join(session, 'tool-*.sock')))} Unix socket(s)")
        finally:
            open(go, "w").close()
        try:
            code = run.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            run.kill()
            fail("the run did not end after the attack")
        for s in keep:
            s.close()
        with open(out_path) as f:
            out = f.read()
        with open(err_path) as f:
            err = f.read()
        if code != 0:
            fail(f"vcx-run ended with {code}:\n{err}")
        if out != native.stdout:
            fail(f"output differs from the native run:\n{out!r}\nvs\n{native.stdout!r}")
        if "refused" not in err:
            fail(f"the tools did not report refusing the foreign connections:\n{err}")
        export = subprocess.run([args.vcx_trace, "export", trace], capture_output=True, text=True,
                                timeout=args.timeout)
        if export.returncode != 0:
            fail(f"vcx-trace export failed: {export.stderr}")
        ranks = {line.split('"rank":')[1].split(",")[0] for line in export.stdout.splitlines()}
        if ranks != {str(r) for r in range(args.n)}:
            fail(f"the trace has calls of ranks {sorted(ranks)} only")
        print("private session, loopback listeners, foreign connections refused; run undisturbed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
