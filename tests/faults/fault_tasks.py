"""The fault suite's Celery app (Debian's Celery 5.2.6): the client that sends the tasks, and the
Python worker of `fault_driver.py --workers python` (`python3 -m celery -A fault_tasks worker`).

faults.work(seconds) is the same task as warmpool-faults-worker's (tests/faults/faults_tasks.cpp):
it appends one line per execution to $FAULTS_EXEC_LOG before it sleeps, and returns `seconds`.
The worker settings are Celery's documented at-least-once configuration (acks_late,
reject_on_worker_lost, prefetch 1), so the comparison is with Celery at its safest.
"""
import os
import time

from celery import Celery

_broker = os.environ.get("FAULTS_BROKER", "redis://127.0.0.1:6379/0")
app = Celery("fault_tasks", broker=_broker, backend=_broker)
app.conf.broker_transport_options = {
    "visibility_timeout": float(os.environ.get("FAULTS_VISIBILITY", "10")),
}
app.conf.task_acks_late = True
app.conf.task_reject_on_worker_lost = True
app.conf.worker_prefetch_multiplier = 1
app.conf.result_expires = 86400


def _record_execution(task_id, hostname):
    line = "%s %s %d %.6f\n" % (task_id, hostname, os.getpid(), time.time())
    fd = os.open(os.environ["FAULTS_EXEC_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())  # one write on O_APPEND: survives a SIGKILL right after
    finally:
        os.close(fd)


@app.task(name="faults.work", bind=True)
def work(self, seconds):
    _record_execution(self.request.id, self.request.hostname)
    time.sleep(seconds)
    return seconds
