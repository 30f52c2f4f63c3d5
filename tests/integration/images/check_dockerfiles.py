#!/usr/bin/python3
"""Cheap CI check of docker/*.Dockerfile (the full build + run is scripts/image-check.sh).

For each image it parses the Dockerfile and checks that
  - the build stage installs its toolchain with scripts/install-deps.sh, as CI does,
  - its CMake configure command configures this source tree (run here, into a scratch dir, with
    CUDA off): every -D flag is used by the project and every component switched off (WARMPOOL_BUILD_<X>=OFF) is not configured,
  - it builds the entrypoint's target and installs it with `cmake --install --component`, and the
    project's install rule for that component puts the binary exactly at the ENTRYPOINT path,
  - the runtime stage runs as 65532:65532 and carries the OCI labels, with the project's version.
Usage: check_dockerfiles.py SOURCE_DIR SCRATCH_DIR
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

IMAGES = {  # Dockerfile -> (target, install component)
    "scaler.Dockerfile": ("warmpool-scaler", "scaler"),
    "worker.Dockerfile": ("warmpool-worker", "worker"),
}
OCI_LABELS = ("source", "version", "revision", "licenses")
RUNTIME_USER = "65532:65532"


def instructions(path):
    """(KEYWORD, text) per instruction, continuation lines joined, comments dropped."""
    out, pending = [], ""
    with open(path, encoding="utf-8") as f:
        for line in f:
            stripped = line.strip()
            if not pending and (not stripped or stripped.startswith("#")):
                continue
            if pending and stripped.startswith("#"):
                continue
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            full = pending + stripped
            pending = ""
            keyword, _, rest = full.partition(" ")
            out.append((keyword.upper(), rest.strip()))
    return out


def stages(instrs):
    """{stage name: [instructions]} in order; ARGs before the first FROM under '' ."""
    result, name = {"": []}, ""
    for keyword, rest in instrs:
        if keyword == "FROM":
            m = re.match(r"(\S+)(?:\s+AS\s+(\S+))?", rest, re.IGNORECASE)
            name = m.group(2) or m.group(1)
            result[name] = []
        result[name].append((keyword, rest))
    return result


def arg_defaults(instrs):
    values = {}
    for keyword, rest in instrs:
        if keyword == "ARG" and "=" in rest:
            key, _, value = rest.partition("=")
            values[key] = value.strip('"')
    return values


def project_version(source):
    with open(os.path.join(source, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(warmpool VERSION ([0-9.]+)", f.read()).group(1)


def check_image(source, scratch, dockerfile, target, component):
    errors = []
    st = stages(instructions(os.path.join(source, "docker", dockerfile)))
    build, runtime = st.get("build"), st.get("runtime")
    if build is None or runtime is None:
        return [f"{dockerfile}: needs stages 'build' and 'runtime', has {list(st)}"]
    runs = [rest for keyword, rest in build if keyword == "RUN"]
    if not any(re.match(r"(\S*/)?scripts/install-deps\.sh(\s|$)", r) for r in runs):
        errors.append(f"{dockerfile}: the build stage does not run scripts/install-deps.sh")

    steps = [s.strip() for r in runs for s in r.split("&&")]
    configure = next((s for s in steps if s.startswith("cmake -S . -B ")), None)
    build_cmd = next((s for s in steps if s.startswith("cmake --build ")), None)
    install_cmd = next((s for s in steps if re.match(r"(DESTDIR=\S+ )?cmake --install ", s)), None)
    if not (configure and build_cmd and install_cmd):
        return errors + [f"{dockerfile}: want cmake -S . -B, cmake --build and cmake --install "
                         f"steps, found {configure!r}, {build_cmd!r}, {install_cmd!r}"]
    build_args = shlex.split(build_cmd)
    if build_args[build_args.index("--target") + 1] != target:
        errors.append(f"{dockerfile}: `{build_cmd}` does not build {target}")
    install_args = shlex.split(install_cmd)
    destdir = install_args[0].partition("=")[2] if install_args[0].startswith("DESTDIR=") else ""
    if install_args[install_args.index("--component") + 1] != component:
        errors.append(f"{dockerfile}: `{install_cmd}` does not install component {component}")

    # Configure this tree with the Dockerfile's flags (CUDA off: no nvcc needed for the check).
    args = shlex.split(configure)
    binary_dir = os.path.join(scratch, dockerfile)
    shutil.rmtree(binary_dir, ignore_errors=True)
    args = [a.replace("${WARMPOOL_ENABLE_CUDA}", "OFF") for a in args]
    args[args.index("-S") + 1] = source
    args[args.index("-B") + 1] = binary_dir
    flags = dict(a[2:].partition("=")[::2] for a in args if a.startswith("-D"))
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        return errors + [f"{dockerfile}: `{configure}` failed here:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"]
    if "Manually-specified variables were not used" in done.stderr:
        errors.append(f"{dockerfile}: the project ignores some of its -D flags:\n{done.stderr}")
    component_dirs = {"SCALER": ["scaler"], "WORKER": ["worker", "imagery"], "SIM": ["sim"]}
    for name, dirs in component_dirs.items():
        if flags.get(f"WARMPOOL_BUILD_{name}", "ON").upper() != "OFF":
            continue
        for skipped in dirs:
            if os.path.isdir(os.path.join(binary_dir, skipped)):
                errors.append(f"{dockerfile}: {skipped}/ is configured although WARMPOOL_BUILD_{name}=OFF")

    # Where the install rule puts the target, for this component only.
    prefix = flags.get("CMAKE_INSTALL_PREFIX", "/usr/local")
    installed = []
    for dirpath, _, files in os.walk(binary_dir):
        if "cmake_install.cmake" in files:
            with open(os.path.join(dirpath, "cmake_install.cmake"), encoding="utf-8") as f:
                text = f.read()
            for block in re.findall(r'if\(CMAKE_INSTALL_COMPONENT STREQUAL "%s".*?\nendif\(\)' % component,
                                    text, re.DOTALL):
                for dest, files_ in re.findall(r'file\(INSTALL DESTINATION "([^"]+)" TYPE EXECUTABLE FILES ([^)]+)\)', block):
                    for f_ in re.findall(r'"([^"]+)"', files_):
                        installed.append(dest.replace("${CMAKE_INSTALL_PREFIX}", prefix) + "/" + os.path.basename(f_))
    entry = [rest for keyword, rest in runtime if keyword == "ENTRYPOINT"]
    entrypoint = json.loads(entry[-1])[0] if entry else None
    if entrypoint is None:
        errors.append(f"{dockerfile}: the runtime stage has no ENTRYPOINT")
    elif entrypoint not in installed:
        errors.append(f"{dockerfile}: ENTRYPOINT {entrypoint} is not what `cmake --install --component "
                      f"{component}` installs ({installed or 'nothing'})")
    copies = [rest for keyword, rest in runtime if keyword == "COPY" and rest.startswith("--from=build ")]
    if entrypoint and f"--from=build {destdir}{entrypoint} {entrypoint}" not in copies:
        errors.append(f"{dockerfile}: the runtime stage does not COPY {destdir}{entrypoint} from the "
                      f"build stage to {entrypoint} (COPYs: {copies})")

    users = [rest for keyword, rest in runtime if keyword == "USER"]
    if not users or users[-1] != RUNTIME_USER:
        errors.append(f"{dockerfile}: the runtime stage's USER is {users[-1] if users else 'unset (root)'}, "
                      f"want {RUNTIME_USER}")
    labels = " ".join(rest for keyword, rest in runtime if keyword == "LABEL")
    for label in OCI_LABELS:
        if f"org.opencontainers.image.{label}=" not in labels:
            errors.append(f"{dockerfile}: no org.opencontainers.image.{label} label")
    version = arg_defaults(runtime).get("VERSION")
    if version != project_version(source):
        errors.append(f"{dockerfile}: ARG VERSION={version}, the project is {project_version(source)}")
    if not errors:
        print(f"{dockerfile}: install-deps.sh, `{' '.join(shlex.split(configure))}` configures, {target} -> {entrypoint} "
              f"(component {component}), USER {RUNTIME_USER}, OCI labels, version {version}")
    return errors


def main():
    source, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    errors = []
    for dockerfile, (target, component) in IMAGES.items():
        errors += check_image(source, scratch, dockerfile, target, component)
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
