"""Checks of the TLS and ScaledJob variants of the manifests (overlays/tls, overlays/scaledjob),
called by check_manifests.py on every rendered overlay. Each check names the KEDA or Kubernetes
behaviour it guards."""
import re


def _find(docs, kind, name=None):
    return [d for d in docs if d.get("kind") == kind
            and (name is None or d.get("metadata", {}).get("name") == name)]


def _containers(obj_spec):
    return (obj_spec.get("template", {}).get("spec", {}).get("containers", []) or [])


def _flag(args, flag, default=None):
    value = default
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(flag + "="):
            value = a.split("=", 1)[1]
    return value


def _port(container, port):
    if isinstance(port, int) or (isinstance(port, str) and port.isdigit()):
        return int(port)
    for p in container.get("ports", []) or []:
        if p.get("name") == port:
            return p.get("containerPort")
    return None


def probe_port(scaler_container, listen_port):
    """The port kubelet's gRPC probes must call: the plaintext --health-listen when set."""
    health = _flag([str(a) for a in scaler_container.get("args", []) or []], "--health-listen", "off")
    if health in (None, "off", ""):
        return listen_port
    return int(str(health).rsplit(":", 1)[1])


def _certificate_for_secret(docs, secret_name):
    for c in _find(docs, "Certificate"):
        if c.get("spec", {}).get("secretName") == secret_name:
            return c
    return None


def _mounted_secret(pod_spec, container, path):
    """(secret name, volumeMount) of the Secret volume `path` lies in, or (None, None)."""
    volumes = {v.get("name"): v for v in pod_spec.get("volumes", []) or []}
    for m in container.get("volumeMounts", []) or []:
        mount = m.get("mountPath", "").rstrip("/")
        if path.startswith(mount + "/"):
            secret = (volumes.get(m.get("name")) or {}).get("secret")
            return (secret.get("secretName") if secret else None), m
    return None, None


def check_tls(where, docs, so, trigger, scaler, fail):
    """enableTLS in the ScaledObject <-> --tls-* on the scaler, and everything they need."""
    md = trigger.get("metadata") or {}
    sc = _containers(scaler["spec"])[0]
    args = [str(a) for a in sc.get("args", []) or []]
    tls_on = str(md.get("enableTLS", "false")).lower() == "true"
    cert, key, ca = (_flag(args, f) for f in ("--tls-cert", "--tls-key", "--tls-client-ca"))
    if tls_on != bool(cert):
        fail(where, f"enableTLS={md.get('enableTLS')!r} but the scaler --tls-cert={cert!r}: KEDA "
                    "and the scaler must agree, else every call fails (\"first record does not "
                    "look like a TLS handshake\")")
        return
    if not tls_on:
        return
    if not key:
        fail(where, "--tls-cert without --tls-key")
    if not ca:
        fail(where, "TLS without --tls-client-ca: anyone who reaches the port may call the scaler; "
                    "require KEDA's client certificate (mTLS)")
    health = _flag(args, "--health-listen", "off")
    if health in (None, "off"):
        fail(where, "TLS on --listen but no --health-listen: kubelet's gRPC probes have no TLS")
    elif str(health).startswith("127.") or str(health).startswith("localhost"):
        fail(where, f"--health-listen {health}: kubelet probes the pod IP, not loopback")
    for probe in ("livenessProbe", "readinessProbe"):
        g = (sc.get(probe) or {}).get("grpc") or {}
        if health not in (None, "off") and _port(sc, g.get("port")) != int(str(health).rsplit(":", 1)[1]):
            fail(where, f"{probe} calls port {g.get('port')}, not the plaintext --health-listen "
                        f"{health}: kubelet's gRPC probe cannot do TLS")
    # The files come from a cert-manager Secret mounted as a folder (no subPath: the kubelet then
    # never updates it, and rotation never reaches the scaler).
    pod = scaler["spec"]["template"]["spec"]
    server_secret = None
    for flag, path in (("--tls-cert", cert), ("--tls-key", key), ("--tls-client-ca", ca)):
        if not path:
            continue
        secret, mount = _mounted_secret(pod, sc, path)
        if not secret:
            fail(where, f"{flag} {path} is not in a mounted Secret volume")
        elif mount.get("subPath"):
            fail(where, f"{flag} {path}: Secret mounted with subPath, which is never updated")
        else:
            server_secret = server_secret or secret
    server_cert = _certificate_for_secret(docs, server_secret) if server_secret else None
    if server_secret and not server_cert:
        fail(where, f"no cert-manager Certificate writes Secret {server_secret}")
    host = str(md.get("scalerAddress", "")).rsplit(":", 1)[0]
    if server_cert and host not in (server_cert["spec"].get("dnsNames") or []):
        fail(where, f"Certificate/{server_cert['metadata']['name']} dnsNames "
                    f"{server_cert['spec'].get('dnsNames')} lack {host!r}, the name KEDA dials "
                    "and verifies")
    # KEDA's side: TriggerAuthentication with caCert, tlsClientCert, tlsClientKey.
    ref = (trigger.get("authenticationRef") or {}).get("name")
    auths = _find(docs, "TriggerAuthentication", ref) if ref else []
    if not auths:
        fail(where, f"enableTLS without a TriggerAuthentication (authenticationRef={ref!r})")
        return
    params = {p.get("parameter"): p for p in auths[0].get("spec", {}).get("secretTargetRef", [])}
    for p in ("caCert", "tlsClientCert", "tlsClientKey"):
        if p not in params:
            fail(where, f"TriggerAuthentication/{ref} lacks {p} (KEDA external scaler TLS "
                        "parameters: caCert, tlsClientCert, tlsClientKey)")
    client_secret = (params.get("tlsClientCert") or {}).get("name")
    client_cert = _certificate_for_secret(docs, client_secret) if client_secret else None
    if client_secret and not client_cert:
        fail(where, f"no cert-manager Certificate writes KEDA's client Secret {client_secret}")
    for c, usage in ((server_cert, "server auth"), (client_cert, "client auth")):
        if c and usage not in (c["spec"].get("usages") or []):
            fail(where, f"Certificate/{c['metadata']['name']} lacks usage {usage!r}")
    if server_cert and client_cert and (server_cert["spec"].get("issuerRef", {}).get("name") !=
                                        client_cert["spec"].get("issuerRef", {}).get("name")):
        fail(where, "server and client certificates come from different issuers: the scaler's "
                    "--tls-client-ca (its Secret's ca.crt) would not verify KEDA's certificate")
    for svc in _find(docs, "Service", host.split(".")[0]):
        for p in svc["spec"].get("ports", []):
            if p.get("appProtocol") == "kubernetes.io/h2c":
                fail(where, f"Service/{svc['metadata']['name']} port {p.get('name')} says h2c "
                            "(plaintext) but serves TLS")


def check_scaledjob_overlay(name, docs, known_keys, fail):
    """A ScaledJob variant: one Job per task, polled (`external`), worker exits after its task."""
    where = f"overlay {name}"
    sjs = _find(docs, "ScaledJob")
    if len(sjs) != 1:
        fail(where, f"expected 1 ScaledJob, found {len(sjs)}")
        return
    sj = sjs[0]
    spec = sj.get("spec", {})
    sjw = f"{where} ScaledJob/{sj['metadata']['name']}"
    if not sj["metadata"].get("namespace"):
        fail(sjw, "no namespace: the overlay must set `namespace:`")
    if _find(docs, "ScaledObject") or _find(docs, "Deployment", "warmpool-worker"):
        fail(where, "the worker Deployment / ScaledObject are still rendered: two consumers")
    triggers = spec.get("triggers", []) or []
    if [t.get("type") for t in triggers] != ["external"]:
        fail(sjw, f"triggers {[t.get('type') for t in triggers]}: one `external` trigger (KEDA "
                  "ignores push for ScaledJobs, pkg/scaling/scale_handler.go startPushScalers)")
        return
    md = triggers[0].get("metadata") or {}
    for k, v in md.items():
        if not isinstance(v, str):
            fail(sjw, f"metadata.{k}={v!r} is not a string")
        if k not in known_keys and k not in ("scalerAddress", "enableTLS", "unsafeSsl"):
            fail(sjw, f"metadata key {k!r} is not a warmpool-scaler key")
    # The metric must mean "Jobs to run": one per task, no warm floor, keep-alive or budget hold.
    for k, want in (("tasksPerReplica", "1"), ("countInFlight", "true"), ("minWarmReplicas", "0"),
                    ("keepAlive", "0"), ("drainSeconds", "off"), ("releasesPerHour", "off")):
        if str(md.get(k, "")).lower() != want:
            fail(sjw, f"metadata.{k}={md.get(k)!r}, expected {want!r}: the metric must be one Job "
                      "per pending or running task")
    strategy = (spec.get("scalingStrategy") or {}).get("strategy", "default")
    if strategy != "default":
        fail(sjw, f"scalingStrategy {strategy!r}: with countInFlight the metric includes running "
                  "Jobs' tasks, which only `default` (metric - running Jobs) subtracts")
    if (spec.get("rollout") or {}).get("strategy") != "gradual":
        fail(sjw, "rollout.strategy must be gradual: the default deletes running Jobs (GPU tasks) "
                  "when the ScaledJob changes")
    if isinstance(md.get("maxReplicas"), str) and md["maxReplicas"].isdigit():
        if int(md["maxReplicas"]) > spec.get("maxReplicaCount", 100):
            fail(sjw, f"metadata.maxReplicas > maxReplicaCount {spec.get('maxReplicaCount', 100)}")
    addr = str(md.get("scalerAddress", ""))
    m = re.fullmatch(r"([a-z0-9-]+)\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?:(\d+)", addr)
    if not m or not [s for s in _find(docs, "Service", m.group(1))
                     if s["metadata"].get("namespace") == m.group(2)]:
        fail(sjw, f"scalerAddress {addr!r} names no Service <name>.<namespace>.svc in the render")
    job = spec.get("jobTargetRef") or {}
    pod = job.get("template", {}).get("spec", {})
    if pod.get("restartPolicy") not in ("Never", "OnFailure"):
        fail(sjw, "restartPolicy must be Never (a Job pod)")
    if job.get("backoffLimit", 6) != 0:
        fail(sjw, f"backoffLimit {job.get('backoffLimit', 6)}: a failed pod's task is redelivered "
                  "to a new Job; retrying the pod as well runs one task twice")
    c = _containers(job)[0] if _containers(job) else {}
    args = [str(a) for a in c.get("args", []) or []]
    max_tasks = _flag(args, "--max-tasks")
    if not (max_tasks and max_tasks.isdigit() and int(max_tasks) >= 1):
        fail(sjw, "worker lacks --max-tasks N: a Job's pod would never end")
    if _flag(args, "--exit-when-idle") in (None, "0"):
        fail(sjw, "worker lacks --exit-when-idle: a Job that finds its task taken would wait "
                  "forever on a GPU node")
    conc = _flag(args, "-c") or _flag(args, "--concurrency", "1")
    if str(conc) != str(md.get("tasksPerReplica", "1")):
        fail(sjw, f"worker -c {conc} but tasksPerReplica={md.get('tasksPerReplica')}")
    queues = _flag(args, "-Q") or _flag(args, "--queues", "celery")
    if set(queues.split(",")) != set(str(md.get("queues", "celery")).split(",")):
        fail(sjw, f"worker -Q {queues} but the trigger measures queues={md.get('queues')}")
    grace = float(_flag(args, "--grace-seconds", "30"))
    if not pod.get("terminationGracePeriodSeconds", 30) > grace:
        fail(sjw, "terminationGracePeriodSeconds must exceed --grace-seconds")
    if "/" not in c.get("image", ""):
        fail(sjw, f"worker image {c.get('image')!r} has no registry (kustomizeconfig images path?)")
    print(f"checked overlay {name} (ScaledJob)")
