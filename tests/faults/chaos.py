"""The faults, on one thread so that they never overlap: worker SIGKILLs and SIGTERMs at seeded
random moments, their restarts, and Redis restarts. A SIGKILL records kombu's `unacked` hash
just before and just after the kill (the victim cannot ack once dead, so `after` holds all it
had), and, for warmpool workers, the victim's own in-flight set."""
import json
import random
import threading
import time

import redis


def unacked_ids(r):
    """kombu's `unacked` hash as {delivery tag: task id}."""
    out = {}
    for tag, value in r.hgetall("unacked").items():
        try:
            envelope = json.loads(value)[0]
            out[tag.decode()] = envelope["headers"]["id"]
        except (ValueError, KeyError, IndexError, TypeError):
            out[tag.decode()] = "?"
    return out


class Chaos(threading.Thread):
    def __init__(self, cfg, slots, redis_server, redis_lock, log):
        super().__init__(daemon=True)
        self.cfg = cfg
        self.slots = slots
        self.redis_server = redis_server
        self.redis_lock = redis_lock  # held by the sender for each send, by us across an outage
        self.log = log
        self.rng = random.Random(cfg.seed)
        self.r = redis.Redis(host="127.0.0.1", port=redis_server.port, socket_timeout=2)
        self.kills = []     # SIGKILL records (dicts)
        self.terms = []     # SIGTERM records
        self.outages = []   # Redis restart records
        self.pending = []   # (due, slot, new_hostname, why)
        self.crashes = []   # workers that exited without being signalled
        self.error = None

    def run(self):
        try:
            self._run()
        except Exception as e:  # surfaced by the driver as an infrastructure failure
            self.error = repr(e)
            self.log("chaos_error", error=self.error)

    def _run(self):
        cfg, rng = self.cfg, self.rng
        t0 = time.monotonic()
        end = t0 + cfg.chaos_seconds
        redis_due = [t0 + f * cfg.chaos_seconds for f in (0.3, 0.65)]
        late_due = t0 + 0.45 * cfg.chaos_seconds  # one pod that comes back after the timeout
        next_fault = t0 + rng.uniform(1.0, 2.5)
        while time.monotonic() < end or self.pending:
            now = time.monotonic()
            self._note_crashes()
            self._restart_due(now)
            if redis_due and now >= redis_due[0]:
                redis_due.pop(0)
                # A quick restart, then a slower one (a pod rescheduled: seconds, not ms).
                self._restart_redis(rng.uniform(1.5, 2.5) if redis_due else rng.uniform(3.5, 5.0))
            elif late_due and now >= late_due and now < end:
                slot = self._pick_up_slot()
                if slot is not None:
                    late_due = None
                    self._sigkill(slot, cfg.visibility_timeout + 2.0, new_hostname=False,
                                  why="late return, same hostname (StatefulSet pod)")
            elif now >= next_fault and now < end:
                slot = self._pick_up_slot()
                if slot is not None:
                    delay = rng.uniform(0.2, 2.5)
                    new_hostname = rng.random() < 0.5
                    if rng.random() < 0.6:
                        self._sigkill(slot, delay, new_hostname, why="random")
                    else:
                        self._sigterm(slot, delay, new_hostname)
                next_fault = time.monotonic() + rng.uniform(1.2, 3.0)
            time.sleep(0.02)

    def _note_crashes(self):
        """A worker that exited without our signal is a finding; it is started again."""
        waiting = {p[1] for p in self.pending}
        for slot in self.slots:
            if slot.proc is not None and not slot.up and slot not in waiting:
                self.crashes.append({"slot": slot.index, "hostname": slot.hostname,
                                     "exit_code": slot.proc.returncode, "log": slot.log_path})
                self.log("worker_exited_unasked", slot=slot.index, hostname=slot.hostname,
                         exit_code=slot.proc.returncode)
                slot.start(new_hostname=False)

    def _pick_up_slot(self):
        waiting = {p[1] for p in self.pending}
        up = [s for s in self.slots if s.up and s not in waiting]
        return self.rng.choice(up) if up else None

    def _restart_due(self, now):
        for item in sorted(self.pending, key=lambda p: p[0]):
            due, slot, new_hostname, why = item
            if due <= now:
                self.pending.remove(item)
                slot.start(new_hostname)
                self.log("worker_start", slot=slot.index, hostname=slot.hostname,
                         new_hostname=new_hostname, why=why)

    def _sigkill(self, slot, restart_in, new_hostname, why):
        before = unacked_ids(self.r)
        t = time.monotonic()
        slot.kill()
        after = unacked_ids(self.r)
        own = set()
        if self.cfg.workers == "warmpool":
            tags = {m.decode() for m in self.r.smembers("warmpool.inflight." + slot.hostname)}
            own = {after[t_] for t_ in tags if t_ in after}
        record = {"t": t, "at": round(t - self.log.t0, 3), "slot": slot.index,
                  "hostname": slot.hostname, "why": why,
                  "in_flight": sorted(set(before.values()) | set(after.values())),
                  "victim_held": sorted(own)}
        self.kills.append(record)
        self.log("sigkill", slot=slot.index, hostname=slot.hostname, why=why,
                 unacked_before=len(before), unacked_after=len(after), victim_held=len(own),
                 restart_in=round(restart_in, 3), new_hostname=new_hostname)
        self.pending.append((time.monotonic() + restart_in, slot, new_hostname, "after SIGKILL"))

    def _sigterm(self, slot, restart_in, new_hostname):
        t = time.monotonic()
        clean = slot.terminate(timeout=self.cfg.grace_seconds + 10)
        with open(slot.log_path, errors="replace") as f:
            was_ready = '"worker_ready"' in f.read()
        record = {"t": t, "slot": slot.index, "hostname": slot.hostname,
                  "exit_s": round(time.monotonic() - t, 3), "clean": clean,
                  "exit_code": slot.proc.returncode, "was_ready": was_ready}
        self.terms.append(record)
        if not clean:  # it had to be SIGKILLed: its duplicates are then allowed as for a kill
            self.kills.append({"t": t, "at": round(t - self.log.t0, 3), "slot": slot.index,
                               "hostname": slot.hostname,
                               "why": "SIGTERM timed out", "in_flight":
                               sorted(set(unacked_ids(self.r).values())), "victim_held": []})
        self.log("sigterm", **{k: v for k, v in record.items() if k != "t"}, restart_in=round(restart_in, 3),
                 new_hostname=new_hostname)
        self.pending.append((time.monotonic() + restart_in, slot, new_hostname, "after SIGTERM"))

    def _restart_redis(self, down_s):
        with self.redis_lock:
            t_stop, t_dead = self.redis_server.stop()
            time.sleep(down_s)
            t_spawn = time.monotonic()
            t_ready = self.redis_server.start()
        record = {"t_stop": t_stop, "t_dead": t_dead, "t_spawn": t_spawn, "t_ready": t_ready}
        self.outages.append(record)
        self.log("redis_restart", down_s=round(t_spawn - t_dead, 3),
                 shutdown_s=round(t_dead - t_stop, 3), load_s=round(t_ready - t_spawn, 3))
