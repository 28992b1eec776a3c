#!/bin/sh
# What the counters cost: instructions per request under valgrind's callgrind,
# counters compiled in (the normal build) and out (-DHD_NO_COUNTERS=ON),
# on N keep-alive requests for a small static file served by `httpd -X`.
#
#   perf/counter_cost.sh [-n requests] [-w workdir] [-k]
#
# Each build is run twice, with 1,000 and 1,000 + N requests; the difference
# of the two totals divided by N is the cost of a request, with start-up and
# shut-down cancelled out. Prints both figures and the difference in percent,
# and exits 1 if the counters cost 1% or more. -k keeps the work directory.
# Needs cmake, a C compiler, valgrind and python3 (setup.sh installs them).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
n=10000
base=1000
work=""
keep=0
while getopts "n:w:k" opt; do
    case $opt in
    n) n=$OPTARG ;;
    w) work=$OPTARG ;;
    k) keep=1 ;;
    *) echo "usage: $0 [-n requests] [-w workdir] [-k]" >&2; exit 2 ;;
    esac
done
for tool in cmake valgrind python3; do
    command -v "$tool" >/dev/null ||
        { echo "counter_cost: $tool is missing (run ./setup.sh)" >&2; exit 2; }
done
[ -n "$work" ] || work=$(mktemp -d /tmp/counter-cost.XXXXXX)
mkdir -p "$work"
server_pid=""
cleanup() {
    [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
    [ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT INT TERM

build() { # dir, extra cmake args
    dir=$1
    shift
    cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
    cmake --build "$dir" -j "$(nproc)" --target httpd >/dev/null
}
echo "counter_cost: building with and without counters in $work"
build "$work/on" -DHD_NO_COUNTERS=OFF
build "$work/off" -DHD_NO_COUNTERS=ON

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
mkdir -p "$work/root/htdocs" "$work/root/logs"
printf '<!DOCTYPE html>\n<html><head><title>cost</title></head><body>%s</body></html>\n' \
    '<p>What do the counters cost?</p>' \
    >"$work/root/htdocs/index.html"
cat >"$work/root/httpd.conf" <<EOF
ServerRoot "$work/root"
LoadModule mpm_prefork_module modules/mod_mpm_prefork.so
LoadModule status_module modules/mod_status.so
Listen 127.0.0.1:$port
ServerName cost.local
DocumentRoot "$work/root/htdocs"
TypesConfig "$root/conf/mime.types"
ErrorLog "$work/root/logs/error_log"
PidFile "$work/root/logs/httpd.pid"
LogFormat "%h %l %u %t \"%r\" %>s %b" common
CustomLog "$work/root/logs/access_log" common
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 30
<Location "/server-status">
    SetHandler server-status
</Location>
EOF

# Sends $1 requests on one kept-alive connection, each answer read whole.
client() {
    python3 - "$port" "$1" <<'EOF'
import socket, sys, time
port, count = int(sys.argv[1]), int(sys.argv[2])
deadline = time.monotonic() + 120
while True:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=60)
        break
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.2)
req = b"GET /index.html HTTP/1.1\r\nHost: cost.local\r\n\r\n"
buf = b""
for _ in range(count):
    s.sendall(req)
    while True:
        head_end = buf.find(b"\r\n\r\n")
        if head_end >= 0:
            head = buf[:head_end].decode("latin-1").lower()
            length = int(head.split("content-length:")[1].split("\r\n")[0])
            if len(buf) >= head_end + 4 + length:
                assert head.startswith("http/1.1 200"), head
                buf = buf[head_end + 4 + length:]
                break
        data = s.recv(65536)
        if not data:
            raise SystemExit("connection closed")
        buf += data
s.close()
EOF
}

# Total instructions of one server life serving $2 requests, build $1.
run() {
    out="$work/callgrind.$1.$2"
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$work/$1/httpd" -d "$work/root" -f "$work/root/httpd.conf" -X \
        >/dev/null 2>"$work/valgrind.$1.$2.log" &
    server_pid=$!
    client "$2"
    kill -TERM "$server_pid"
    wait "$server_pid" || true
    server_pid=""
    sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out"
}

for build in on off; do
    small=$(run "$build" "$base")
    large=$(run "$build" $((base + n)))
    eval "per_$build=\$(python3 -c \"print(($large - $small) / $n)\")"
    echo "counter_cost: counters $build: $small instructions for $base requests," \
        "$large for $((base + n))"
done
python3 - "$per_on" "$per_off" "$n" <<'EOF'
import sys
on, off, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
pct = 100.0 * (on - off) / off
print("instructions per request (%d keep-alive requests, callgrind):" % n)
print("  counters compiled in : %10.1f" % on)
print("  counters compiled out: %10.1f" % off)
print("  difference           : %+10.1f (%+.2f%%)" % (on - off, pct))
sys.exit(0 if pct < 1.0 else 1)
EOF
