# Sourced by the benchmark scripts: one server at a time in the background.
# The caller sets `server_pid` when it starts one (empty when none runs),
# `base` (its http://host:port), `work` (its logs go to $work/server.log)
# and defines `say`; READY_TRIES is how many tenths of a second
# `wait_ready` waits (100 unless set: a server under valgrind needs more).

# stop_server: asks the running server to stop, and kills it after 10 s.
stop_server() {
    [ -n "$server_pid" ] || return 0
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

# wait_ready WHAT PROBE: until the server just started answers PROBE;
# stops, with the end of its log, if it exits or never does.
wait_ready() {
    local what="$1" probe="$2"
    for _ in $(seq "${READY_TRIES:-100}"); do
        if [ "$(curl -sS -o /dev/null -w '%{http_code}' "$base$probe" 2>/dev/null)" != "000" ]; then
            return 0
        fi
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    say "$what did not become ready; its log:"
    tail -n 20 "$work/server.log" >&2
    exit 1
}
