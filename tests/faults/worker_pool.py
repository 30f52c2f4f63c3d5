"""The workers under test: three slots (one with -c 4), each a process group the driver can
SIGKILL (the whole group, as a pod kill) or SIGTERM (the main process, as a pod stop), then
start again under the same hostname (a StatefulSet pod) or a new one (a Deployment pod)."""
import os
import signal
import subprocess
import time

QUEUE = "faults"


class WorkerSlot:
    def __init__(self, index, concurrency, cfg):
        self.index = index
        self.concurrency = concurrency
        self.cfg = cfg
        self.generation = 0
        self.hostname = None
        self.hostnames = []  # every hostname this slot used
        self.proc = None

    @property
    def up(self):
        return self.proc is not None and self.proc.poll() is None

    def command(self):
        cfg = self.cfg
        if cfg.workers == "warmpool":
            return [cfg.worker_bin, "--broker", cfg.broker, "-Q", QUEUE,
                    "-c", str(self.concurrency), "-n", self.hostname,
                    "--visibility-timeout", str(cfg.visibility_timeout),
                    "--grace-seconds", str(cfg.grace_seconds),
                    "--data-root", cfg.data_dir, "--log-format", "json"]
        return ["/usr/bin/python3", "-m", "celery", "-A", "fault_tasks", "worker", "-Q", QUEUE,
                "-c", str(self.concurrency), "-n", self.hostname, "-P", "prefork",
                "--without-gossip", "--without-mingle", "-l", "info"]

    def start(self, new_hostname):
        if new_hostname or self.hostname is None:
            self.generation += 1
            self.hostname = "faults-w%d-g%d@localhost" % (self.index, self.generation)
            self.hostnames.append(self.hostname)
        log_path = os.path.join(self.cfg.workdir, "worker-%d-%d-%d.log" % (
            self.index, self.generation, int(time.monotonic() * 1000)))
        env = dict(os.environ, FAULTS_BROKER=self.cfg.broker,
                   FAULTS_EXEC_LOG=self.cfg.exec_log,
                   FAULTS_VISIBILITY=str(self.cfg.visibility_timeout),
                   PYTHONPATH=os.path.dirname(os.path.abspath(__file__)))
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                         env=env, start_new_session=True)
        self.log_path = log_path

    def kill(self):
        """SIGKILL to the whole process group; returns once the main process is reaped."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self._reap_group()

    def terminate(self, timeout):
        """SIGTERM to the main process (warm shutdown). Returns True when it exited in time;
        False when it had to be SIGKILLed."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
            self._reap_group()
            return True
        except subprocess.TimeoutExpired:
            self.kill()
            return False

    def _reap_group(self):
        # Python prefork children may outlive their parent for a moment; wait for the group.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.02)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
