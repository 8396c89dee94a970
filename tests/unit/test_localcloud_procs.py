"""localcloud.procs: telling a started process that runs from one that is gone, by its PID file."""
import os
import subprocess
import sys

from localcloud import procs


def test_the_session_of_a_process_is_read_from_the_right_field():
    """A process in the middle of its exec has an empty command line: ``alive`` then takes it as ours only if it
    leads its own session. That field was read one column off (the terminal's), so a daemon exec-ing right then was
    taken for dead: the Kubernetes cluster's supervisor started a second kube-apiserver beside the first (CI)."""
    assert procs._session(os.getpid()) == os.getsid(0)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        assert procs._session(child.pid) == child.pid
    finally:
        child.kill()
        child.wait()


def test_exited_is_true_only_once_the_recorded_process_is_gone(tmp_path):
    pidfile = tmp_path / "p.pid"
    assert procs.exited(pidfile)                     # nothing recorded
    pid = procs.start("sleeper", [sys.executable, "-c", "import time; time.sleep(30)"], pidfile, tmp_path / "log")
    assert not procs.exited(pidfile)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    assert procs.exited(pidfile)


def test_a_running_service_counts_as_reconfigured_only_when_a_file_it_reads_changed(tmp_path):
    """`lab/localcloud/up` on a running cloud restarts a service whose configuration a newer checkout changed (issue 52:
    every service's `service_type`, without which access rules refused what they allow) and no other: configs writes
    a file only when its text changes, and a service reads the files its command line names and those they name."""
    import time

    from localcloud import configs, services
    from localcloud.settings import Paths

    p = Paths(tmp_path)
    p.makedirs()
    configs._write(p.conf("paste.ini"), "[pipeline:main]\n")
    configs._write(p.conf("svc.conf"), f"[DEFAULT]\napi_paste_config = {p.conf('paste.ini')}\n")
    svc = services.Service("svc", ["/usr/bin/svc", "--config-file", str(p.conf("svc.conf"))], "svc")
    assert services.config_files(svc, p) == {p.conf("svc.conf"), p.conf("paste.ini")}
    started = time.time() + 0.01
    time.sleep(0.05)
    configs._write(p.conf("svc.conf"), f"[DEFAULT]\napi_paste_config = {p.conf('paste.ini')}\n")   # same text
    configs._write(p.conf("paste.ini"), "[pipeline:main]\n")
    assert services.changed_since(svc, p, started) == set()
    configs._write(p.conf("paste.ini"), "[pipeline:main]\npipeline = authtoken\n")
    assert services.changed_since(svc, p, started) == {"paste.ini"}
