"""Processes and System V IPC objects of a user id: finding, killing, removing them."""

import ctypes
import os
import signal
import time


def _signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"SIG{num}"


def _uid_pids(uid):
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(entry))
                        break
        except OSError:
            continue
    return pids


def _reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_uid(uid):
    """Kill every process of `uid`, including ones that left their process group (daemons).
    kill(-1) from a child running as `uid` reaches them all at once; when no process can be forked
    (a fork bomb holds every pid), stop them one by one so none can fork again, then kill them."""
    for _ in range(50):
        if not _uid_pids(uid):
            return True
        try:
            pid = os.fork()
        except OSError:
            pid = None
        if pid == 0:
            try:
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)  # every process this uid may signal, i.e. its own
            finally:
                os._exit(0)
        if pid is None:
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                for victim in _uid_pids(uid):
                    try:
                        os.kill(victim, sig)
                    except OSError:
                        pass
        else:
            os.waitpid(pid, 0)
        _reap_all()
        time.sleep(0.002)
    return not _uid_pids(uid)


_IPC_FILES = {}   # kind -> a descriptor of /proc/sysvipc/<kind>, kept open (read with pread, per job)


def _ipc_table(kind):
    fd = _IPC_FILES.get(kind)
    if fd is None:
        fd = _IPC_FILES[kind] = os.open(f"/proc/sysvipc/{kind}", os.O_RDONLY | os.O_CLOEXEC)
    chunks, offset = [], 0
    while True:
        chunk = os.pread(fd, 65536, offset)
        if not chunk:
            return b"".join(chunks).decode("ascii", "replace")
        chunks.append(chunk)
        offset += len(chunk)


def _ipc_ids(uid):
    """SysV IPC objects (shared memory, message queues, semaphore sets) owned by `uid`."""
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            header, *lines = _ipc_table(kind).splitlines()
        except (OSError, ValueError):
            continue
        cols = header.split()
        if "uid" not in cols:
            continue
        id_col, uid_col = 1, cols.index("uid")
        for line in lines:
            fields = line.split()
            if len(fields) > uid_col and int(fields[uid_col]) == uid:
                found.append((kind, int(fields[id_col])))
    return found


def clean_ipc(uid):
    """Remove the SysV IPC objects `uid` left (as that uid: root without CAP_SYS_ADMIN may not).
    Returns True when none remain."""
    left = _ipc_ids(uid)
    if not left:
        return True
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            libc = ctypes.CDLL(None, use_errno=True)
            for kind, ident in left:
                if kind == "shm":
                    libc.shmctl(ident, 0, None)        # IPC_RMID
                elif kind == "msg":
                    libc.msgctl(ident, 0, None)
                else:
                    libc.semctl(ident, 0, 0)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return not _ipc_ids(uid)


def run_delay_s(uid):
    """(the longest any one running task of `uid` waited in a run queue for a CPU, the seconds they all ran
    on one): from the second and first fields of /proc/<pid>/task/<tid>/schedstat, in ns; None where the
    kernel does not keep them (gVisor). A machine's load makes a program's task wait while others run; a
    program's own tasks (a fork bomb's hundreds) make each other wait a little each, which summed would
    look like a long wait and is not the machine's doing."""
    stats = []
    for pid in _uid_pids(uid):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                    fields = f.read(200).split()
                stats.append((int(fields[0]), int(fields[1])))
            except (OSError, IndexError, ValueError):
                continue
    return wait_figures(stats)


def wait_figures(stats):
    """(the longest wait of one task, the run time of all) in seconds, of [(ran ns, waited ns)] per task;
    None for no task."""
    if not stats:
        return None
    return round(max(w for _, w in stats) / 1e9, 3), round(sum(r for r, _ in stats) / 1e9, 3)
