#!/usr/bin/env python3
"""Checks the house rules a reviewer should not have to: which folder may include which, file size,
and that nothing cites material users do not have.

Usage: scripts/check-layout.py [REPO_ROOT]   exit 0 = clean, 1 = violations (listed).

Rules (docs/architecture.md draws them):
- A library folder includes only the folders below it. `policy/` is pure: from common/ it takes
  only status.h. imagery/testing/ (test-data generators) is not used by production code.
- No non-test source file over 600 lines.
- No file cites the shared reference notes (not in the repository; users do not have them).
"""
import os
import re
import subprocess
import sys

# Folder -> folders its sources may include (besides itself).
ALLOWED = {
    "common": set(),
    "redis": {"common"},
    "celery": {"common"},
    "policy": {"common"},
    "scaler": {"common", "redis", "celery", "policy"},
    "imagery": {"common"},
    "worker": {"common", "redis", "celery", "imagery"},
    "sim": {"common", "redis", "celery", "policy"},
}
POLICY_COMMON_HEADERS = {"common/status.h"}
TEST_FOLDERS = {"tests", "bench", "fuzz", "gpu-check"}
SOURCE_EXTENSIONS = (".h", ".cpp", ".cu", ".cuh")
# Folders of non-test sources whose size is limited (tests, benches and fuzz harnesses are not).
SIZED_FOLDERS = tuple(ALLOWED) + ("proto", "gpu-check", "scripts", "docker", "manifests")
MAX_LINES = 600
# A section sign after one of the notes' names, or alone in brackets: a citation of those notes.
NOTES_CITATION = re.compile(r"(?:(?:keda|celery-redis|scaling|imagery)\.md\s*§|\(§\d)")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def tracked_files(root):
    """git's list of the tree; outside a checkout (a source tarball), every file but build dirs."""
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True)
    if out.returncode == 0:
        return [f for f in out.stdout.decode().split("\0") if f]
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))]
        rel = os.path.relpath(dirpath, root)
        files += [os.path.normpath(os.path.join(rel, f)) for f in filenames]
    return files


def is_test_data_user(path):
    """imagery/testing itself and the tools that generate or score test data (warmpool-synth,
    warmpool-quality) may use the generators."""
    return path.startswith("imagery/testing/") or "/tools/" in path


def include_violations(path, text):
    folder = path.split("/", 1)[0]
    if folder not in ALLOWED:
        return []
    errors = []
    for header in INCLUDE.findall(text):
        target = header.split("/", 1)[0]
        if target in TEST_FOLDERS:
            errors.append(f"{path}: includes {header}: production code does not use test code")
            continue
        if "/" not in header or target not in ALLOWED or target == folder:
            if header.startswith("imagery/testing/") and not is_test_data_user(path):
                errors.append(f"{path}: includes {header}: test-data code stays out of production")
            continue
        if target not in ALLOWED[folder]:
            errors.append(f"{path}: includes {header}: {folder}/ may not depend on {target}/")
        elif folder == "policy" and header not in POLICY_COMMON_HEADERS:
            errors.append(f"{path}: includes {header}: policy/ takes only common/status.h")
        elif header.startswith("imagery/testing/") and not is_test_data_user(path):
            errors.append(f"{path}: includes {header}: test-data code stays out of production")
    return errors


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    errors = []
    for path in tracked_files(root):
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        try:
            with open(full, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        if path.endswith(SOURCE_EXTENSIONS):
            errors += include_violations(path, text)
        if path.startswith(SIZED_FOLDERS) and "/testing/" not in path:
            lines = text.count("\n")
            if lines > MAX_LINES:
                errors.append(f"{path}: {lines} lines (limit {MAX_LINES}): split it by job")
        if "shared/" + "reference" in text or NOTES_CITATION.search(text):
            errors.append(f"{path}: cites the shared reference notes, which users do not have")
    for e in errors:
        print(e)
    print(f"check-layout: {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
