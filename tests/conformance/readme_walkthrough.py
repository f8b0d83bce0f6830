"""Runs the README's walk-through, then the guide's pages in their order
(`PAGES`), against one fresh server, so neither can rot: every ```sh
block, top to bottom, in one shell, except the blocks right after a
`<!-- walkthrough: skip (reason) -->` line. Later pages use what earlier
blocks made (the key, accounts), as a reader going through them would.

Run by scripts/readme-walkthrough, which builds the binary and sets
COFRE_BIN. What differs from a reader at a terminal, and nothing else:
- the server is `$COFRE_BIN serve` (the debug build) in a fresh folder, on a
  free port, with the clock pinned to the README's day (COFRE_NOW), and
  `cargo run --release -- ARGS` runs `$COFRE_BIN ARGS`;
- `localhost:8080` and `127.0.0.1:8080` in curl's arguments become that port;
- the line `export KEY=cofre_…` gets the key the first start printed;
- curl fails on an HTTP error status (`--fail-with-body`), and a block fails
  when a command fails or an exported variable ends up empty or `null`.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

PAGES = [
    "README.md",
    "docs/README.md",
    "docs/guide/using-the-api.md",
    "docs/guide/concepts.md",
    "docs/guide/accounts.md",
    "docs/guide/categories-and-tags.md",
    "docs/guide/transactions.md",
    "docs/guide/recurrences-and-installments.md",
    "docs/guide/cards.md",
    "docs/guide/overview.md",
    "docs/guide/budgets.md",
    "docs/guide/reports.md",
    "docs/guide/transfers.md",
    "docs/guide/bulk-edits.md",
    "docs/guide/duplicates.md",
    "docs/guide/receipts.md",
    "docs/guide/importing.md",
    "docs/guide/exporting.md",
    "docs/guide/configuration.md",
    "docs/guide/databases.md",
    "docs/guide/fleet.md",
    "docs/guide/backups.md",
    "docs/guide/upgrading.md",
    "docs/guide/service.md",
    "docs/guide/reverse-proxy.md",
    "docs/guide/limits.md",
    "docs/guide/read-cache.md",
    "docs/guide/metrics.md",
]
SKIP = re.compile(r"<!--\s*walkthrough:\s*skip\s*\((.+)\)\s*-->")
KEY_LINE = re.compile(r"^export KEY=cofre_….*$", re.M)
README_DAY = "2026-11-24T15:00:00Z"

PRELUDE = r"""
set -euo pipefail
cargo() {
    if [ "${1:-}" = run ] && [ "${2:-}" = --release ] && [ "${3:-}" = -- ]; then
        shift 3
        "$COFRE_BIN" "$@"
    else
        command cargo "$@"
    fi
}
curl() {
    local args=() arg
    for arg in "$@"; do
        arg="${arg//localhost:8080/localhost:$WALK_PORT}"
        args+=("${arg//127.0.0.1:8080/127.0.0.1:$WALK_PORT}")
    done
    command curl --fail-with-body --silent --show-error "${args[@]}" || {
        echo "walkthrough: curl $* failed" >&2
        touch "$WALK_FAILED"
        return 22
    }
}
walk_check() {
    local block="$1"; shift
    if [ -e "$WALK_FAILED" ]; then
        echo "walkthrough: block $block: a request failed" >&2
        exit 1
    fi
    local name
    for name in "$@"; do
        if [ -z "${!name:-}" ] || [ "${!name}" = null ]; then
            echo "walkthrough: block $block left \$$name empty" >&2
            exit 1
        fi
    done
}
"""


def blocks(text):
    """(line, code) of every ```sh block not marked to skip, and the
    skipped ones with their reasons."""
    lines = text.split("\n")
    run, skipped = [], []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start = i + 1
            end = lines.index("```", start)
            code = "\n".join(lines[start:end])
            previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            reason = SKIP.search(previous)
            (skipped if reason else run).append((start, reason.group(1) if reason else code))
            i = end
        i += 1
    return run, skipped


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    root = os.getcwd()
    binary = os.environ["COFRE_BIN"]
    run, skipped = [], []
    for page in PAGES:
        with open(page, encoding="utf-8") as f:
            ran, left = blocks(f.read())
        run += [(f"{page}:{line}", code) for line, code in ran]
        skipped += [(f"{page}:{line}", reason) for line, reason in left]
    for where, reason in skipped:
        print(f"walkthrough: skips the block at {where}: {reason}")
    work = tempfile.mkdtemp(prefix="cofre-readme-")
    shutil.copytree(os.path.join(root, "docs", "examples"), os.path.join(work, "docs", "examples"))
    port = free_port()
    env = dict(os.environ, COFRE_BIND=f"127.0.0.1:{port}", COFRE_NOW=README_DAY, COFRE_LOG_FORMAT="text")
    for name in ("COFRE_DATABASE_URL", "COFRE_RECEIPTS_DIR", "COFRE_PUBLIC_URL"):
        env.pop(name, None)
    log = open(os.path.join(work, "server.log"), "w+")
    server = subprocess.Popen([binary, "serve"], cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        key = None
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1)
                log.seek(0)
                found = re.search(r"cofre_[0-9a-f]{32}_[0-9a-f]{64}", log.read())
                key = found and found.group(0)
                if key:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        if not key:
            log.seek(0)
            sys.exit(f"walkthrough: the server printed no first-start key:\n{log.read()}")
        script = [PRELUDE]
        for number, (line, code) in enumerate(run, 1):
            code, replaced = KEY_LINE.subn(f"export KEY={key}", code)
            exported = re.findall(r"^export ([A-Z_]+)=", code, re.M)
            script.append(f'echo "walkthrough: block {number}, {line}" >&2')
            script.append(code)
            script.append(f"walk_check {number} {' '.join(exported)}")
        script.append('echo "walkthrough: every block ran" >&2')
        shell_env = dict(env, WALK_PORT=str(port), WALK_FAILED=os.path.join(work, "failed"), COFRE_BIN=binary)
        done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=shell_env)
        if done.returncode != 0:
            log.seek(0)
            print(f"walkthrough: FAILED (server log follows)\n{log.read()[-4000:]}", file=sys.stderr)
            sys.exit(1)
        print(f"walkthrough: {len(run)} blocks ran, {len(skipped)} skipped")
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
