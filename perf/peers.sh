#!/usr/bin/env bash
#
# perf/peers.sh: our server's three MPMs against their peers.
#
# Starts our httpd as prefork, worker and event, Debian's Apache 2.4 with each
# of its three MPMs, and nginx, each on its own loopback port with the same
# settings where they share one (no access log, sendfile on, unlimited
# keep-alive requests, the same MPM sizing for ours and Apache), then runs wrk
# against each in turn, A B C ... A B C ..., on each workload: a 4 KiB file
# and a manual page, with keep-alive and with "Connection: close". Drift in
# the machine's speed spreads over all of them; only ratios measured in one
# run mean anything. Prints rps mean ~ stddev% per server and workload,
# errors, and the ratios ours / Apache (same MPM) and our event / nginx.
#
# Three more figures on request:
#   --costs        what a request costs each server, from the kernel: one
#                  more run per server and workload under perf stat
#                  (raw_syscalls:sys_enter, context-switches, task-clock on
#                  all the server's processes), per request
#   --scaling      our event (and nginx) at wrk -c1000 against -c50, 4 KiB
#                  keep-alive: the ratio of the rps, and socket errors
#   --idle-memory N  N idle keep-alive connections to our event (and nginx):
#                  summed PSS of the server's processes before and after, per
#                  connection, and the time a new client then waits
#                  (perf/idle_memory.py)
#
# It builds nothing: ./setup.sh build makes build/httpd, and ./setup.sh
# installs wrk, curl, apache2 and nginx.
#
# Usage: perf/peers.sh [options]
#   --httpd PATH       our binary (default: build/httpd in the repository)
#   --only LIST        comma-separated servers: ours-prefork, ours-worker,
#                      ours-event, apache-prefork, apache-worker, apache-event,
#                      nginx; "ours" and "apache" stand for their three
#                      (default: all seven)
#   --rows LIST        workloads: 4k-ka, 4k-close, page-ka, page-close, or
#                      "none" (default: all four)
#   --rounds N         rounds of A B C ... per workload (default 3)
#   --duration S       seconds per run (default 5)
#   --warmup S         seconds of warm-up per server and workload (default 2)
#   --connections N    wrk connections (default 50)
#   --threads N        wrk threads (default 1)
#   --prefork S,MIN,MAX,W  prefork sizing, ours and Apache: StartServers,
#                      MinSpareServers, MaxSpareServers, MaxRequestWorkers
#                      (default 64,8,80,150)
#   --threaded S,MIN,MAX,T,W  worker and event sizing, ours and Apache:
#                      StartServers, MinSpareThreads, MaxSpareThreads,
#                      ThreadsPerChild, MaxRequestWorkers (default Debian's
#                      2,25,75,25,150)
#   --scaling          add the -c1000 against -c50 figure
#   --scaling-conns N  the many connections of --scaling (default 1000)
#   --idle-memory N    add the idle-memory figure with N connections (10000)
#   --costs            add syscalls, context switches and CPU per request
#   --json FILE        write every run's figures as JSON
#   --skip-missing     skip a server whose binary is missing instead of failing
#   --keep             keep the temporary directory (configs, error logs, wrk output)
#   -h, --help         this text
#
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

httpd="$repo/build/httpd"
httpd_given=0
only="ours,apache,nginx"
rows_arg="4k-ka,4k-close,page-ka,page-close"
rounds=3
duration=5
warmup=2
connections=50
threads=1
json=""
skip_missing=0
keep=0
scaling=0
scaling_conns=1000
idle_conns=0
costs=0

apache_bin=${APACHE2:-/usr/sbin/apache2}
apache_modules=${APACHE_MODULES:-/usr/lib/apache2/modules}
nginx_bin=${NGINX:-/usr/sbin/nginx}
python=${PYTHON:-python3}

# prefork sizing, the same for ours and Apache: enough processes for 50
# keep-alive connections from the start, and no stopping of idle ones between
# a server's runs (each would be started again, one burst a second, while
# the next run waits)
start_servers=64
min_spare=8
max_spare=80
max_workers=150
# worker and event sizing (Debian's mpm_event.conf), the same for ours and Apache
t_start=2
t_min_spare=25
t_max_spare=75
t_per_child=25
t_max_workers=150

# per-phase settings the templates take (the figures below change them)
keepalive_timeout=5
async_factor=2
nginx_conns=4096

usage() {
    sed -n '/^# Usage:/,/^#   -h/s/^# \{0,1\}//p' "$0"
}

die() {
    echo "peers: $*" >&2
    exit 1
}

is_uint() {
    [[ $1 =~ ^[0-9]+$ ]]
}

while [[ $# -gt 0 ]]; do
    case $1 in
    --httpd) httpd=${2:?--httpd needs a path}; httpd_given=1; shift 2 ;;
    --only) only=${2:?--only needs a list}; shift 2 ;;
    --rows) rows_arg=${2:?--rows needs a list}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --duration) duration=${2:?}; shift 2 ;;
    --warmup) warmup=${2:?}; shift 2 ;;
    --connections) connections=${2:?}; shift 2 ;;
    --threads) threads=${2:?}; shift 2 ;;
    --prefork)
        IFS=, read -r start_servers min_spare max_spare max_workers <<<"${2:?}"
        shift 2
        ;;
    --threaded)
        IFS=, read -r t_start t_min_spare t_max_spare t_per_child t_max_workers <<<"${2:?}"
        shift 2
        ;;
    --scaling) scaling=1; shift ;;
    --scaling-conns) scaling_conns=${2:?}; scaling=1; shift 2 ;;
    --idle-memory) idle_conns=${2:?}; shift 2 ;;
    --json) json=${2:?--json needs a file}; shift 2 ;;
    --skip-missing) skip_missing=1; shift ;;
    --keep) keep=1; shift ;;
    --costs) costs=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
    esac
done

for v in rounds duration warmup connections threads scaling_conns idle_conns; do
    is_uint "${!v}" || die "--${v//_/-} must be a whole number"
done
for v in start_servers min_spare max_spare max_workers; do
    is_uint "${!v:-}" || die "--prefork needs four whole numbers: START,MINSPARE,MAXSPARE,WORKERS"
done
for v in t_start t_min_spare t_max_spare t_per_child t_max_workers; do
    is_uint "${!v:-}" || die "--threaded needs five whole numbers: START,MIN,MAX,THREADS,WORKERS"
done
((max_workers >= 1 && min_spare <= max_spare)) ||
    die "--prefork: MaxRequestWorkers must be at least 1 and MinSpareServers <= MaxSpareServers"
((t_per_child >= 1 && t_max_workers >= t_per_child)) ||
    die "--threaded: ThreadsPerChild must be at least 1 and at most MaxRequestWorkers"
((rounds >= 1 && duration >= 1 && connections >= 1 && threads >= 1)) ||
    die "--rounds, --duration, --connections and --threads must be at least 1"
((threads <= connections)) || die "--threads must not exceed --connections"
[[ $httpd == /* ]] || httpd="$(pwd)/$httpd"

# --- what runs -------------------------------------------------------------

all_servers=(ours-prefork ours-worker ours-event apache-prefork apache-worker apache-event nginx)
servers=()
IFS=, read -r -a wanted <<<"$only"
for s in "${wanted[@]}"; do
    case $s in
    ours) expand=(ours-prefork ours-worker ours-event) ;;
    apache) expand=(apache-prefork apache-worker apache-event) ;;
    ours-prefork | ours-worker | ours-event | apache-prefork | apache-worker | apache-event | nginx)
        expand=("$s")
        ;;
    *) die "--only: unknown server '$s' (use ${all_servers[*]}, ours, apache)" ;;
    esac
    for e in "${expand[@]}"; do
        [[ " ${servers[*]} " == *" $e "* ]] || servers+=("$e")
    done
done
[[ ${#servers[@]} -gt 0 ]] || die "--only: no server given"

rows=()
if [[ $rows_arg != none ]]; then
    IFS=, read -r -a wanted <<<"$rows_arg"
    for r in "${wanted[@]}"; do
        case $r in
        4k-ka | 4k-close | page-ka | page-close) ;;
        *) die "--rows: unknown workload '$r' (use 4k-ka, 4k-close, page-ka, page-close, none)" ;;
        esac
        [[ " ${rows[*]} " == *" $r "* ]] || rows+=("$r")
    done
fi

declare -A row_path=([4k-ka]=/4k.bin [4k-close]=/4k.bin [page-ka]=/manual/logs.html
    [page-close]=/manual/logs.html)
declare -A row_close=([4k-ka]=0 [4k-close]=1 [page-ka]=0 [page-close]=1)
declare -A row_label=([4k-ka]="4 KiB keep-alive" [4k-close]="4 KiB close"
    [page-ka]="page keep-alive" [page-close]="page close")

missing=()
for tool in wrk curl setsid timeout awk; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
((idle_conns == 0)) || command -v "$python" >/dev/null 2>&1 || missing+=("$python")
((costs == 0)) || command -v perf >/dev/null 2>&1 || missing+=(perf)
[[ ${#missing[@]} -eq 0 ]] || die "missing: ${missing[*]} (./setup.sh installs them)"

kind_of() { echo "${1%%-*}"; }
mpm_of() { [[ $1 == *-* ]] && echo "${1#*-}" || echo ""; }

binary_missing() { # server -> prints why it cannot run, or nothing
    local kind mpm m
    kind=$(kind_of "$1")
    mpm=$(mpm_of "$1")
    case $kind in
    ours)
        [[ -x $httpd ]] && return 0
        if ((httpd_given)); then
            echo "$httpd not found or not executable"
        else
            echo "build/httpd not found: run ./setup.sh build"
        fi
        ;;
    apache)
        if [[ ! -x $apache_bin ]]; then
            echo "$apache_bin not found: apt-get install apache2 (or run ./setup.sh)"
            return 0
        fi
        for m in "mpm_$mpm" authz_core mime dir; do
            if [[ ! -f $apache_modules/mod_$m.so ]]; then
                echo "$apache_modules/mod_$m.so not found"
                return 0
            fi
        done
        ;;
    nginx)
        [[ -x $nginx_bin ]] ||
            echo "$nginx_bin not found: apt-get install nginx (or run ./setup.sh)"
        ;;
    esac
    return 0
}

runnable=()
for s in "${servers[@]}"; do
    why=$(binary_missing "$s")
    if [[ -n $why ]]; then
        ((skip_missing)) || die "$why"
        echo "peers: skipping $s: $why" >&2
    else
        runnable+=("$s")
    fi
done
servers=("${runnable[@]}")
[[ ${#servers[@]} -gt 0 ]] || die "nothing to run"

has_server() { [[ " ${servers[*]} " == *" $1 "* ]]; }

label() { # server -> "ours event"
    local s=$1
    echo "${s/-/ }"
}

# --- the temporary tree ----------------------------------------------------

run=$(mktemp -d "${TMPDIR:-/tmp}/peers.XXXXXX")
# Apache's and nginx's children run as www-data when we are root: they must
# be able to read the document root.
chmod 755 "$run"
docroot="$run/htdocs"
mkdir -p "$docroot" "$run/nginx-tmp" "$run/logs"

declare -A pid=() port=()

stop_server() { # name
    local name=$1 p=${pid[$1]:-} i
    [[ -n $p ]] || return 0
    unset "pid[$name]"
    kill -TERM "$p" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$p" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$p" 2>/dev/null; then
        echo "peers: $name (pid $p) did not stop on TERM; killing" >&2
        kill -KILL "$p" 2>/dev/null || true
    fi
    wait "$p" 2>/dev/null || true
    # Each server leads its own session (setsid), so its process group id is
    # its pid: children it left behind are found and ended by that id.
    for ((i = 0; i < 50; i++)); do
        kill -0 -- "-$p" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL -- "-$p" 2>/dev/null || true
}

stop_all() {
    local s
    for s in "${!pid[@]}"; do
        stop_server "$s"
    done
}

cleanup() {
    stop_all
    if ((keep)); then
        echo "peers: kept $run" >&2
    else
        rm -rf "$run"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The same small type map for all, in both formats.
cat >"$run/mime.types" <<'EOF'
text/html                   html htm
text/css                    css
text/plain                  txt conf
application/javascript      js
application/json            json
application/octet-stream    bin
image/png                   png
image/svg+xml               svg
EOF
awk 'BEGIN { print "types {" }
     NF > 1 { printf "    %s", $1; for (i = 2; i <= NF; i++) printf " %s", $i; print ";" }
     END { print "}" }' "$run/mime.types" >"$run/mime-nginx.types"

head -c 4096 /dev/urandom >"$docroot/4k.bin"
printf '<!DOCTYPE html>\n<title>peers</title>\n<p>benchmark document root</p>\n' \
    >"$docroot/index.html"
if [[ -d $repo/htdocs/manual ]]; then
    cp -R "$repo/htdocs/manual" "$docroot/manual"
fi
for r in "${rows[@]}"; do
    [[ -f $docroot${row_path[$r]} ]] || die "$docroot${row_path[$r]} missing (copied from htdocs/)"
done
chmod -R a+rX "$docroot"

if [[ $(id -u) -eq 0 ]]; then
    run_user=www-data
    run_group=www-data
    id "$run_user" >/dev/null 2>&1 ||
        die "running as root needs a user $run_user for Apache's and nginx's children"
else
    run_user=""
    run_group=""
fi

free_port() { # prints a loopback port nothing listens on and we have not used
    local p i used s
    # Below the ephemeral range (32768-60999 by default): a client's socket
    # there would make the server's bind fail.
    for ((i = 0; i < 200; i++)); do
        p=$((20000 + RANDOM % 12000))
        used=0
        for s in "${!port[@]}"; do
            [[ ${port[$s]} == "$p" ]] && used=1
        done
        ((used)) && continue
        if ! (: >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    die "no free port found"
}

render() { # template output name port
    local sed_user=(-e "s|@USER@|$run_user|g" -e "s|@GROUP@|$run_group|g")
    if [[ -z $run_user ]]; then
        sed_user=(-e '/@USER@/d' -e '/@GROUP@/d')
    fi
    sed "${sed_user[@]}" \
        -e "s|@RUN@|$run|g" -e "s|@DOCROOT@|$docroot|g" -e "s|@PORT@|$4|g" \
        -e "s|@NAME@|$3|g" -e "s|@MPM@|$(mpm_of "$3")|g" \
        -e "s|@APACHE_MODULES@|$apache_modules|g" \
        -e "s|@START_SERVERS@|$start_servers|g" -e "s|@MIN_SPARE@|$min_spare|g" \
        -e "s|@MAX_SPARE@|$max_spare|g" -e "s|@MAX_WORKERS@|$max_workers|g" \
        -e "s|@T_START@|$t_start|g" -e "s|@T_MIN_SPARE@|$t_min_spare|g" \
        -e "s|@T_MAX_SPARE@|$t_max_spare|g" -e "s|@T_PER_CHILD@|$t_per_child|g" \
        -e "s|@T_MAX_WORKERS@|$t_max_workers|g" \
        -e "s|@KEEPALIVE_TIMEOUT@|$keepalive_timeout|g" -e "s|@ASYNC_FACTOR@|$async_factor|g" \
        -e "s|@NGINX_CONNS@|$nginx_conns|g" \
        "$1" >"$2"
}

command_of() { # name -> the command line, one word per line
    local name=$1 kind mpm
    kind=$(kind_of "$name")
    mpm=$(mpm_of "$name")
    case $kind in
    ours)
        printf '%s\n' "$httpd" -d "$run" -f "$run/$name.conf" -D FOREGROUND
        case $mpm in
        worker) printf '%s\n' -D MPM_WORKER ;;
        event) printf '%s\n' -D MPM_EVENT ;;
        esac
        ;;
    apache) printf '%s\n' "$apache_bin" -d "$run" -f "$run/$name.conf" -D FOREGROUND ;;
    nginx)
        printf '%s\n' "$nginx_bin" -c "$run/$name.conf" -p "$run/" -e "$run/$name-error.log" \
            -g 'daemon off;'
        ;;
    esac
}

write_conf() { # name
    local name=$1 kind
    kind=$(kind_of "$name")
    [[ -n ${port[$name]:-} ]] || port[$name]=$(free_port)
    mkdir -p "$run/$name-run"
    render "$here/peers/$kind.conf" "$run/$name.conf" "$name" "${port[$name]}"
}

start_server() { # name check-path [attempt]
    local name=$1 check=$2 attempt=${3:-1} p i code cmd=()
    write_conf "$name"
    p=${port[$name]}
    mapfile -t cmd < <(command_of "$name")
    setsid "${cmd[@]}" >"$run/$name.out" 2>&1 </dev/null &
    pid[$name]=$!
    for ((i = 0; i < 150; i++)); do
        if ! kill -0 "${pid[$name]}" 2>/dev/null; then
            wait "${pid[$name]}" 2>/dev/null || true
            unset "pid[$name]"
            if ((attempt < 5)) && cat "$run/$name.out" "$run/$name-error.log" 2>/dev/null |
                grep -qi "in use"; then
                unset "port[$name]" # someone took the port meanwhile: another one
                start_server "$name" "$check" $((attempt + 1))
                return
            fi
            echo "peers: $name exited at start; its output and error log:" >&2
            tail -n 20 "$run/$name.out" "$run/$name-error.log" >&2 2>/dev/null || true
            exit 1
        fi
        code=$(curl -s -o "$run/$name.check" -w '%{http_code}' --max-time 1 \
            "http://127.0.0.1:$p$check" 2>/dev/null || true)
        if [[ $code == 200 ]]; then
            if [[ $check == /4k.bin ]] && ! cmp -s "$run/$name.check" "$docroot/4k.bin"; then
                die "$name served /4k.bin with different content"
            fi
            return 0
        fi
        sleep 0.1
    done
    die "$name did not answer 200 for $check on port $p within 15 s" \
        "(last status: ${code:-none}); see $run/$name-error.log"
}

# --- wrk -------------------------------------------------------------------

# Runs wrk once; prints "rps errors requests lat_avg_ms lat_p99_ms".
wrk_run() { # name seconds outfile path close conns
    local name=$1 secs=$2 out=$3 path=$4 close=$5 conns=$6 hdr=()
    ((close)) && hdr=(-H "Connection: close")
    timeout $((secs + 30)) wrk --latency -t"$threads" -c"$conns" -d"${secs}s" "${hdr[@]}" \
        "http://127.0.0.1:${port[$name]}$path" >"$out" 2>&1 ||
        die "wrk against $name failed: $(tail -n 3 "$out")"
    awk '
        function ms(v) {
            if (v ~ /us$/) return v * 0.001
            if (v ~ /ms$/) return v + 0
            if (v ~ /m$/) return v * 60000
            if (v ~ /s$/) return v * 1000
            return v + 0
        }
        /^ *Latency / && !avg { avg = ms($2) }
        /^ *99% / { p99 = ms($2) }
        / requests in / { reqs = $1 }
        /^ *Socket errors:/ {
            for (i = 3; i <= NF; i++) { v = $i; gsub(/,/, "", v); if (v ~ /^[0-9]+$/) errs += v }
        }
        /^ *Non-2xx or 3xx responses:/ { errs += $NF }
        /^Requests\/sec:/ { rps = $2 }
        END {
            if (rps == "") exit 1
            printf "%s %d %d %.3f %.3f\n", rps, errs, reqs, avg, p99
        }' "$out" || die "could not read wrk's output for $name: $out"
}

# One more run under perf stat, on every process of the server's session;
# prints "syscalls/req cs/req cpu_us/req rps". Not a round: perf's
# tracepoint costs the server time, so its rps is not compared.
cost_run() { # name row
    local name=$1 row=$2 pids out line perf_pid reqs
    pids=$(pgrep -s "${pid[$name]}" | paste -sd, -)
    [[ -n $pids ]] || die "no processes found for $name"
    out="$run/perf-$row-$name.csv"
    perf stat -x, -e raw_syscalls:sys_enter,context-switches,task-clock -p "$pids" \
        -o "$out" -- sleep $((duration + 1)) >/dev/null 2>&1 &
    perf_pid=$!
    sleep 0.5
    line=$(wrk_run "$name" "$duration" "$run/wrk-$row-$name-costs.txt" "${row_path[$row]}" \
        "${row_close[$row]}" "$connections") || exit 1
    wait "$perf_pid" || die "perf stat on $name failed: $(tail -n 3 "$out" 2>/dev/null)"
    read -r rps _ reqs _ _ <<<"$line"
    awk -F, -v reqs="$reqs" -v rps="$rps" '
        $3 ~ /raw_syscalls:sys_enter/ { sc = $1 }
        $3 ~ /context-switches/ { cs = $1 }
        $3 ~ /task-clock/ { ms = $1 }
        END {
            if (sc == "" || reqs <= 0) exit 1
            printf "%.2f %.3f %.1f %s\n", sc / reqs, cs / reqs, ms * 1000 / reqs, rps
        }' "$out" || die "could not read perf's counts for $name: $out"
}

# Mean, sample stddev % and so on of column 4 (rps) of @file grouped by
# columns 1-2; prints "key1 key2 mean sd% min max errors p99".
summarize() { # file
    awk -F'\t' '
        {
            k = $1 "\t" $2
            if (!(k in n)) order[++nk] = k
            n[k]++; sum[k] += $4; sq[k] += $4 * $4; errs[k] += $5; p99[k] += $8
            if (!(k in min) || $4 < min[k]) min[k] = $4
            if (!(k in max) || $4 > max[k]) max[k] = $4
        }
        END {
            for (i = 1; i <= nk; i++) {
                k = order[i]
                mean = sum[k] / n[k]
                var = n[k] > 1 ? (sq[k] - n[k] * mean * mean) / (n[k] - 1) : 0
                if (var < 0) var = 0
                sd = mean > 0 ? 100 * sqrt(var) / mean : 0
                printf "%s\t%.1f\t%.2f\t%.1f\t%.1f\t%d\t%.3f\n",
                    k, mean, sd, min[k], max[k], errs[k], p99[k] / n[k]
            }
        }' "$1"
}

mean_of() { # summary key1 key2
    awk -F'\t' -v a="$2" -v b="$3" '$1 == a && $2 == b { print $3 }' <<<"$1"
}

ratio() { # a b
    awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || b <= 0) print "-"; else printf "%.2f", a / b }'
}

mark() { # ratio target
    awk -v r="$1" -v t="$2" 'BEGIN { if (r == "-") print ""; else if (r + 0 >= t + 0) print "ok"; else print "BELOW" }'
}

# --- go --------------------------------------------------------------------

echo "== perf/peers.sh: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -n)," \
    "$(nproc) CPUs, $(uname -sr)"

versions_file="$run/versions"
: >"$versions_file"
for s in "${servers[@]}"; do
    case $(kind_of "$s") in
    ours)
        # -V reads the configuration (to name the MPM): give it the real one.
        write_conf "$s"
        mapfile -t cmd < <(command_of "$s")
        ident=$("${cmd[@]}" -V 2>&1 | awk '/^Server compiled with/ { exit } NR <= 12 { print }') ||
            true
        [[ -n $ident ]] || ident="(httpd -V printed nothing)"
        echo "-- $s: $httpd"
        while IFS= read -r l; do echo "   $l"; done <<<"$(grep -E 'version|commit|MPM' <<<"$ident")"
        ident=$(tr '\n' ' ' <<<"$ident")
        ;;
    apache) ident=$("$apache_bin" -v 2>&1 | head -n 1); echo "-- $s: $apache_bin: $ident" ;;
    nginx) ident=$("$nginx_bin" -v 2>&1 | head -n 1); echo "-- $s: $nginx_bin: $ident" ;;
    esac
    printf '%s\t%s\n' "$s" "${ident% }" >>"$versions_file"
done
echo "== sizing: prefork $start_servers,$min_spare,$max_spare,$max_workers" \
    "(Start,MinSpare,MaxSpare,MaxRequestWorkers); worker/event" \
    "$t_start,$t_min_spare,$t_max_spare,$t_per_child,$t_max_workers" \
    "(Start,MinSpareThreads,MaxSpareThreads,ThreadsPerChild,MaxRequestWorkers)"

results="$run/results.tsv"
: >"$results"
costs_results="$run/costs.tsv"
: >"$costs_results"
summary=""
if [[ ${#rows[@]} -gt 0 ]]; then
    echo "== wrk -t$threads -c$connections, ${rounds} round(s) x ${duration}s per server and" \
        "workload, alternating; ${warmup}s warm-up each"
    for s in "${servers[@]}"; do
        start_server "$s" /4k.bin
        echo "-- started $(label "$s") on 127.0.0.1:${port[$s]} (pid ${pid[$s]})"
    done
    for row in "${rows[@]}"; do
        if ((warmup > 0)); then
            for s in "${servers[@]}"; do
                wrk_run "$s" "$warmup" "$run/wrk-$row-$s-warmup.txt" "${row_path[$row]}" \
                    "${row_close[$row]}" "$connections" >/dev/null
            done
        fi
        for ((r = 1; r <= rounds; r++)); do
            for s in "${servers[@]}"; do
                kill -0 "${pid[$s]}" 2>/dev/null || die "$s (pid ${pid[$s]}) died; see $run/$s-error.log"
                line=$(wrk_run "$s" "$duration" "$run/wrk-$row-$s-$r.txt" "${row_path[$row]}" \
                    "${row_close[$row]}" "$connections") || exit 1
                read -r rps errs reqs lat p99 <<<"$line"
                printf '%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n' "$row" "$s" "$r" "$rps" "$errs" "$reqs" \
                    "$lat" "$p99" >>"$results"
                printf '   %-17s round %d/%d  %-15s %9.0f req/s  errors %s  p99 %s ms\n' \
                    "${row_label[$row]}" "$r" "$rounds" "$(label "$s")" "$rps" "$errs" "$p99"
            done
        done
        if ((costs)); then
            for s in "${servers[@]}"; do
                line=$(cost_run "$s" "$row") || exit 1
                printf '%s\t%s\t%s\n' "$row" "$s" "${line// /$'\t'}" >>"$costs_results"
                read -r sc cs us crps <<<"$line"
                printf '   %-17s costs      %-15s %6s syscalls  %6s cs  %6s us CPU per request\n' \
                    "${row_label[$row]}" "$(label "$s")" "$sc" "$cs" "$us"
            done
        fi
    done
    stop_all

    summary=$(summarize "$results")
    echo
    printf '%-17s %-15s %18s %10s %10s %7s %9s\n' workload server "rps (mean ~ sd%)" min max \
        errors "p99 ms"
    while IFS=$'\t' read -r row s mean sd mn mx errs p99; do
        printf '%-17s %-15s %9.0f ~ %5.1f%% %10.0f %10.0f %7d %9.3f\n' "${row_label[$row]}" \
            "$(label "$s")" "$mean" "$sd" "$mn" "$mx" "$errs" "$p99"
    done <<<"$summary"

    echo
    echo "== ratios of mean rps (targets: ours / apache >= 1.30 on every row;" \
        "ours event / nginx >= 1.00 on 4 KiB keep-alive)"
    printf '%-17s %-16s %-16s %-16s %-16s\n' workload "prefork/apache" "worker/apache" \
        "event/apache" "event/nginx"
    for row in "${rows[@]}"; do
        cells=()
        for m in prefork worker event; do
            rr=$(ratio "$(mean_of "$summary" "$row" "ours-$m")" "$(mean_of "$summary" "$row" "apache-$m")")
            cells+=("$rr $(mark "$rr" 1.30)")
        done
        rr=$(ratio "$(mean_of "$summary" "$row" ours-event)" "$(mean_of "$summary" "$row" nginx)")
        if [[ $row == 4k-ka ]]; then
            cells+=("$rr $(mark "$rr" 1.00)")
        else
            cells+=("$rr")
        fi
        printf '%-17s %-16s %-16s %-16s %-16s\n' "${row_label[$row]}" "${cells[@]}"
    done
    if ((costs)); then
        echo
        echo "== costs per request, from perf stat on all of a server's processes during one" \
            "more run (not counted above)"
        printf '%-17s %-15s %10s %10s %12s %10s\n' workload server "syscalls" "cs" "CPU us" \
            "rps"
        while IFS=$'\t' read -r row s sc cs us crps; do
            printf '%-17s %-15s %10s %10s %12s %10.0f\n' "${row_label[$row]}" "$(label "$s")" \
                "$sc" "$cs" "$us" "$crps"
        done <"$costs_results"
    fi
    errors_total=$(awk -F'\t' '{ e += $7 } END { print e + 0 }' <<<"$summary")
    if ((errors_total > 0)); then
        who=$(awk -F'\t' '$7 > 0 { n[$2] += $7 }
            END { for (s in n) printf "%s%s %d", (k++ ? ", " : ""), s, n[s] }' <<<"$summary")
        echo "peers: WARNING: $errors_total errors (socket, non-2xx/3xx; $who):" \
            "those servers' figures are suspect" >&2
    fi
fi

# --- scaling: many connections against few ---------------------------------

scaling_results="$run/scaling.tsv"
: >"$scaling_results"
scaling_summary=""
scale_servers=()
if ((scaling)); then
    for s in ours-event nginx; do
        has_server "$s" && scale_servers+=("$s")
    done
    [[ ${#scale_servers[@]} -gt 0 ]] || die "--scaling needs ours-event (or nginx) in --only"
    # Enough room for every connection: a child takes ThreadsPerChild +
    # factor x idle threads (Apache's rule would turn most of them away).
    async_factor=64
    nginx_conns=$((scaling_conns * 2 + 1024))
    echo
    echo "== scaling: 4 KiB keep-alive, wrk -t$threads -c$connections against" \
        "-c$scaling_conns, ${rounds} round(s) x ${duration}s, alternating" \
        "(ours event with AsyncRequestWorkerFactor $async_factor)"
    for s in "${scale_servers[@]}"; do
        start_server "$s" /4k.bin
        wrk_run "$s" "$warmup" "$run/wrk-scale-$s-warmup.txt" /4k.bin 0 "$scaling_conns" >/dev/null
    done
    for ((r = 1; r <= rounds; r++)); do
        for c in "$connections" "$scaling_conns"; do
            for s in "${scale_servers[@]}"; do
                line=$(wrk_run "$s" "$duration" "$run/wrk-scale-$s-$c-$r.txt" /4k.bin 0 "$c") ||
                    exit 1
                read -r rps errs reqs lat p99 <<<"$line"
                printf 'c%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n' "$c" "$s" "$r" "$rps" "$errs" "$reqs" \
                    "$lat" "$p99" >>"$scaling_results"
                printf '   -c%-6s round %d/%d  %-15s %9.0f req/s  errors %s  p99 %s ms\n' \
                    "$c" "$r" "$rounds" "$(label "$s")" "$rps" "$errs" "$p99"
            done
        done
    done
    stop_all
    async_factor=2
    nginx_conns=4096
    scaling_summary=$(summarize "$scaling_results")
    echo
    printf '%-15s %20s %20s %10s %14s\n' server "rps -c$connections" "rps -c$scaling_conns" \
        "ratio" "errors -c$scaling_conns"
    for s in "${scale_servers[@]}"; do
        lo=$(mean_of "$scaling_summary" "c$connections" "$s")
        hi=$(mean_of "$scaling_summary" "c$scaling_conns" "$s")
        sd_lo=$(awk -F'\t' -v a="c$connections" -v b="$s" '$1 == a && $2 == b { print $4 }' <<<"$scaling_summary")
        sd_hi=$(awk -F'\t' -v a="c$scaling_conns" -v b="$s" '$1 == a && $2 == b { print $4 }' <<<"$scaling_summary")
        errs=$(awk -F'\t' -v a="c$scaling_conns" -v b="$s" '$1 == a && $2 == b { print $7 }' <<<"$scaling_summary")
        rr=$(ratio "$hi" "$lo")
        target=""
        [[ $s == ours-event ]] && target="$(mark "$rr" 0.85)"
        [[ $s == ours-event && $errs != 0 ]] && target="BELOW (errors)"
        printf '%-15s %11.0f ~ %5.1f%% %11.0f ~ %5.1f%% %10s %14s  %s\n' "$(label "$s")" "$lo" \
            "$sd_lo" "$hi" "$sd_hi" "$rr" "$errs" "$target"
    done
    echo "   (target: ours event -c$scaling_conns >= 0.85 x -c$connections, with no socket error)"
fi

# --- memory per idle keep-alive connection ----------------------------------

memory_results="$run/memory.tsv"
: >"$memory_results"
if ((idle_conns > 0)); then
    mem_servers=()
    for s in ours-event nginx; do
        has_server "$s" && mem_servers+=("$s")
    done
    [[ ${#mem_servers[@]} -gt 0 ]] || die "--idle-memory needs ours-event (or nginx) in --only"
    keepalive_timeout=300
    async_factor=100000
    nginx_conns=$((idle_conns * 2 + 1024))
    echo
    echo "== idle memory: $idle_conns keep-alive connections that made one request each," \
        "summed PSS of the server's processes (ours event with AsyncRequestWorkerFactor" \
        "$async_factor)"
    printf '%-15s %12s %12s %10s %15s %8s %6s %8s\n' server "PSS before" "PSS after" \
        "KiB/conn" "new client ms" closed procs threads
    for s in "${mem_servers[@]}"; do
        start_server "$s" /4k.bin
        out=$(timeout 300 "$python" "$here/idle_memory.py" --port "${port[$s]}" --sid "${pid[$s]}" \
            --conns "$idle_conns" --path /4k.bin --json "$run/memory-$s.json") ||
            die "idle_memory.py against $s failed: $out"
        stop_server "$s"
        declare -A m=()
        for kv in $out; do
            m[${kv%%=*}]=${kv#*=}
        done
        target=""
        [[ $s == ours-event ]] && target=$(awk -v k="${m[kib_per_conn]}" -v ms="${m[new_client_ms]}" \
            'BEGIN { print (k <= 2 && ms < 1000) ? "ok" : "BELOW" }')
        printf '%-15s %8s KiB %8s KiB %10s %15s %8s %6s %8s  %s\n' "$(label "$s")" \
            "${m[pss_before_kib]}" "${m[pss_after_kib]}" "${m[kib_per_conn]}" \
            "${m[new_client_ms]}" "${m[closed]}" "${m[processes]}" "${m[threads]}" "$target"
        printf '%s\t%s\n' "$s" "$out" >>"$memory_results"
        unset m
    done
    echo "   (target: ours event <= 2 KiB per idle connection, a new client served at once)"
    keepalive_timeout=5
    async_factor=2
    nginx_conns=4096
fi

# --- JSON ------------------------------------------------------------------

json_str() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\t'/ }
    s=${s//$'\n'/ }
    s=${s//$'\r'/}
    printf '"%s"' "$s"
}

json_runs() { # file key1 key2
    awk -F'\t' -v a="$2" -v b="$3" '$1 == a && $2 == b {
        printf "%s{\"round\": %d, \"rps\": %s, \"errors\": %d, \"requests\": %d, ",
            (k++ ? ", " : ""), $3, $4, $5, $6
        printf "\"latency_avg_ms\": %s, \"latency_p99_ms\": %s}", $7, $8 }' "$1"
}

if [[ -n $json ]]; then
    {
        printf '{\n  "tool": "perf/peers.sh",\n'
        printf '  "date": %s,\n' "$(json_str "$(date -u '+%Y-%m-%dT%H:%M:%SZ')")"
        printf '  "host": {"name": %s, "cpus": %d, "kernel": %s},\n' \
            "$(json_str "$(uname -n)")" "$(nproc)" "$(json_str "$(uname -r)")"
        printf '  "load": {"tool": "wrk", "threads": %d, "connections": %d, "duration_s": %d, ' \
            "$threads" "$connections" "$duration"
        printf '"warmup_s": %d, "rounds": %d},\n' "$warmup" "$rounds"
        printf '  "sizing": {"prefork": [%d, %d, %d, %d], "threaded": [%d, %d, %d, %d, %d]},\n' \
            "$start_servers" "$min_spare" "$max_spare" "$max_workers" "$t_start" \
            "$t_min_spare" "$t_max_spare" "$t_per_child" "$t_max_workers"
        printf '  "versions": {'
        first=1
        while IFS=$'\t' read -r s ident; do
            ((first)) || printf ','
            first=0
            printf '\n    "%s": %s' "$s" "$(json_str "$ident")"
        done <"$versions_file"
        printf '\n  },\n  "rows": {'
        first=1
        for row in "${rows[@]}"; do
            ((first)) || printf ','
            first=0
            printf '\n    "%s": {"path": %s, "connection_close": %s, "servers": {' "$row" \
                "$(json_str "${row_path[$row]}")" "$( ((row_close[$row])) && echo true || echo false)"
            f2=1
            while IFS=$'\t' read -r rw s mean sd mn mx errs p99; do
                [[ $rw == "$row" ]] || continue
                ((f2)) || printf ','
                f2=0
                printf '\n      "%s": {"mean_rps": %s, "stddev_pct": %s, "min_rps": %s, ' \
                    "$s" "$mean" "$sd" "$mn"
                printf '"max_rps": %s, "errors": %d, "mean_p99_ms": %s, "runs": [%s]' \
                    "$mx" "$errs" "$p99" "$(json_runs "$results" "$row" "$s")"
                awk -F'\t' -v a="$row" -v b="$s" '$1 == a && $2 == b {
                    printf ", \"per_request\": {\"syscalls\": %s, \"context_switches\": %s, ", $3, $4
                    printf "\"cpu_us\": %s, \"rps_under_perf\": %s}", $5, $6 }' "$costs_results"
                printf "}"
            done <<<"$summary"
            printf '\n    }, "ratios": {'
            f2=1
            for m in prefork worker event; do
                ((f2)) || printf ', '
                f2=0
                rr=$(ratio "$(mean_of "$summary" "$row" "ours-$m")" \
                    "$(mean_of "$summary" "$row" "apache-$m")")
                printf '"%s_vs_apache": %s' "$m" "$([[ $rr == - ]] && echo null || echo "$rr")"
            done
            rr=$(ratio "$(mean_of "$summary" "$row" ours-event)" "$(mean_of "$summary" "$row" nginx)")
            printf ', "event_vs_nginx": %s}}' "$([[ $rr == - ]] && echo null || echo "$rr")"
        done
        printf '\n  },\n  "scaling": {'
        first=1
        if [[ -n $scaling_summary ]]; then
            for s in "${scale_servers[@]}"; do
                ((first)) || printf ','
                first=0
                lo=$(mean_of "$scaling_summary" "c$connections" "$s")
                hi=$(mean_of "$scaling_summary" "c$scaling_conns" "$s")
                rr=$(ratio "$hi" "$lo")
                printf '\n    "%s": {"connections": [%d, %d], "mean_rps": [%s, %s], "ratio": %s, ' \
                    "$s" "$connections" "$scaling_conns" "$lo" "$hi" \
                    "$([[ $rr == - ]] && echo null || echo "$rr")"
                printf '"runs_few": [%s], "runs_many": [%s]}' \
                    "$(json_runs "$scaling_results" "c$connections" "$s")" \
                    "$(json_runs "$scaling_results" "c$scaling_conns" "$s")"
            done
        fi
        printf '\n  },\n  "idle_memory": {'
        first=1
        while IFS=$'\t' read -r s out; do
            [[ -n $s ]] || continue
            ((first)) || printf ','
            first=0
            printf '\n    "%s": %s' "$s" "$(tr -d '\n' <"$run/memory-$s.json")"
        done <"$memory_results"
        printf '\n  }\n}\n'
    } >"$json"
    echo "== raw figures: $json"
fi
