# Sourced by the scripts that start servers on loopback.

# free_ports N: N distinct ports on 127.0.0.1 that nothing answers a
# connection on, one per line; fails when 200 tries do not find them.
# They are drawn below the kernel's range of ephemeral ports (the local
# ports of outgoing connections, net.ipv4.ip_local_port_range): a port
# found free there can be taken by any client's connection before the
# server binds it, which made a conformance run fail with "Address already
# in use".
free_ports() {
    local want="$1" found=() candidate low=32768
    read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
    [ "$low" -gt 11000 ] || low=32768
    for _ in $(seq 200); do
        candidate=$((10000 + RANDOM % (low - 10000)))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null &&
            [[ " ${found[*]} " != *" $candidate "* ]]; then
            found+=("$candidate")
            [ "${#found[@]}" -lt "$want" ] || break
        fi
    done
    [ "${#found[@]}" -eq "$want" ] || return 1
    printf '%s\n' "${found[@]}"
}
