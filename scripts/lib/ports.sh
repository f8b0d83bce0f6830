# Sourced by the scripts that start servers on loopback.

# free_ports N: N distinct ports on 127.0.0.1 that nothing answers a
# connection on, one per line; fails when 200 tries do not find them.
free_ports() {
    local want="$1" found=() candidate
    for _ in $(seq 200); do
        candidate=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null &&
            [[ " ${found[*]} " != *" $candidate "* ]]; then
            found+=("$candidate")
            [ "${#found[@]}" -lt "$want" ] || break
        fi
    done
    [ "${#found[@]}" -eq "$want" ] || return 1
    printf '%s\n' "${found[@]}"
}
