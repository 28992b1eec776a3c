#!/usr/bin/env bash
#
# perf/peers.sh: our server against its peers on the same static file.
#
# Starts our httpd (prefork), Debian's Apache 2.4 (prefork) and nginx, each on
# its own loopback port with the same settings where they share one (no access
# log, sendfile on, unlimited keep-alive requests, the same prefork sizing for
# the two prefork servers), then runs wrk against each in turn, A B C A B C ...,
# so that drift in the machine's speed spreads over all of them. Prints mean
# requests/s, stddev, min, max, errors and the ratio to Apache; --json writes
# every run's figures.
#
# It builds nothing: ./setup.sh build makes build/httpd, and ./setup.sh
# installs wrk, curl, apache2 and nginx.
#
# Usage: perf/peers.sh [options]
#   --httpd PATH       our binary (default: build/httpd in the repository)
#   --only LIST        comma-separated subset of: ours,apache,nginx
#   --rounds N         rounds of A B C (default 3)
#   --duration S       seconds per run (default 10)
#   --warmup S         seconds of warm-up per server before the rounds (default 2)
#   --connections N    wrk connections (default 50)
#   --threads N        wrk threads (default 1)
#   --prefork S,MIN,MAX,W  prefork sizing for ours and Apache: StartServers,
#                      MinSpareServers, MaxSpareServers, MaxRequestWorkers
#                      (default 8,5,20,150)
#   --path URL-PATH    what to fetch (default /4k.bin; /manual/index.html also exists)
#   --json FILE        write the raw figures as JSON
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
rounds=3
duration=10
warmup=2
connections=50
threads=1
url_path=/4k.bin
json=""
skip_missing=0
keep=0

apache_bin=${APACHE2:-/usr/sbin/apache2}
apache_modules=${APACHE_MODULES:-/usr/lib/apache2/modules}
nginx_bin=${NGINX:-/usr/sbin/nginx}

# prefork sizing, the same for ours and Apache
start_servers=8
min_spare=5
max_spare=20
max_workers=150

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
    --rounds) rounds=${2:?}; shift 2 ;;
    --duration) duration=${2:?}; shift 2 ;;
    --warmup) warmup=${2:?}; shift 2 ;;
    --connections) connections=${2:?}; shift 2 ;;
    --threads) threads=${2:?}; shift 2 ;;
    --path) url_path=${2:?}; shift 2 ;;
    --prefork)
        IFS=, read -r start_servers min_spare max_spare max_workers <<<"${2:?}"
        shift 2
        ;;
    --json) json=${2:?--json needs a file}; shift 2 ;;
    --skip-missing) skip_missing=1; shift ;;
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
    esac
done

for v in rounds duration warmup connections threads; do
    is_uint "${!v}" || die "--$v must be a whole number"
done
for v in start_servers min_spare max_spare max_workers; do
    is_uint "${!v:-}" || die "--prefork needs four whole numbers: START,MINSPARE,MAXSPARE,WORKERS"
done
((max_workers >= 1 && min_spare <= max_spare)) ||
    die "--prefork: MaxRequestWorkers must be at least 1 and MinSpareServers <= MaxSpareServers"
((rounds >= 1 && duration >= 1 && connections >= 1 && threads >= 1)) ||
    die "--rounds, --duration, --connections and --threads must be at least 1"
((threads <= connections)) || die "--threads must not exceed --connections"
[[ $url_path == /* ]] || die "--path must start with /"
[[ $httpd == /* ]] || httpd="$(pwd)/$httpd"

# --- what runs -------------------------------------------------------------

servers=()
IFS=, read -r -a wanted <<<"$only"
for s in "${wanted[@]}"; do
    case $s in
    ours | apache | nginx) ;;
    *) die "--only: unknown server '$s' (use ours, apache, nginx)" ;;
    esac
    [[ " ${servers[*]} " == *" $s "* ]] || servers+=("$s")
done
[[ ${#servers[@]} -gt 0 ]] || die "--only: no server given"

missing=()
for tool in wrk curl setsid timeout; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
[[ ${#missing[@]} -eq 0 ]] || die "missing: ${missing[*]} (./setup.sh installs them)"

binary_missing() { # server -> prints why it cannot run, or nothing
    case $1 in
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
        local m
        for m in mpm_prefork authz_core mime dir; do
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

# --- the temporary tree ----------------------------------------------------

run=$(mktemp -d "${TMPDIR:-/tmp}/peers.XXXXXX")
# Apache's and nginx's children run as www-data when we are root: they must
# be able to read the document root.
chmod 755 "$run"
docroot="$run/htdocs"
mkdir -p "$docroot" "$run/apache-run" "$run/nginx-tmp" "$run/logs"

declare -A pid=() port=() label=()
label=([ours]="httpd (ours, prefork)" [apache]="apache2 prefork" [nginx]="nginx")

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

cleanup() {
    local s
    for s in "${!pid[@]}"; do
        stop_server "$s"
    done
    if ((keep)); then
        echo "peers: kept $run" >&2
    else
        rm -rf "$run"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The same small type map for all three, in both formats.
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
    for ((i = 0; i < 200; i++)); do
        p=$((20000 + RANDOM % 40000))
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

render() { # template output
    local sed_user=(-e "s|@USER@|$run_user|g" -e "s|@GROUP@|$run_group|g")
    if [[ -z $run_user ]]; then
        sed_user=(-e '/@USER@/d' -e '/@GROUP@/d')
    fi
    sed "${sed_user[@]}" \
        -e "s|@RUN@|$run|g" -e "s|@DOCROOT@|$docroot|g" -e "s|@PORT@|$3|g" \
        -e "s|@APACHE_MODULES@|$apache_modules|g" \
        -e "s|@START_SERVERS@|$start_servers|g" -e "s|@MIN_SPARE@|$min_spare|g" \
        -e "s|@MAX_SPARE@|$max_spare|g" -e "s|@MAX_WORKERS@|$max_workers|g" \
        "$1" >"$2"
}

error_log_of() {
    case $1 in
    ours) echo "$run/ours-error.log" ;;
    apache) echo "$run/apache-error.log" ;;
    nginx) echo "$run/nginx-error.log" ;;
    esac
}

start_server() { # name
    local name=$1 p=${port[$1]:-} cmd=() i code
    if [[ -z $p ]]; then
        p=$(free_port) || exit 1
        port[$name]=$p
    fi
    render "$here/peers/$name.conf" "$run/$name.conf" "$p"
    case $name in
    ours) cmd=("$httpd" -d "$run" -f "$run/ours.conf" -D FOREGROUND) ;;
    apache) cmd=("$apache_bin" -d "$run" -f "$run/apache.conf" -D FOREGROUND) ;;
    nginx)
        cmd=("$nginx_bin" -c "$run/nginx.conf" -p "$run/" -e "$run/nginx-error.log"
            -g 'daemon off;')
        ;;
    esac
    setsid "${cmd[@]}" >"$run/$name.out" 2>&1 </dev/null &
    pid[$name]=$!
    for ((i = 0; i < 150; i++)); do
        if ! kill -0 "${pid[$name]}" 2>/dev/null; then
            wait "${pid[$name]}" 2>/dev/null || true
            unset "pid[$name]"
            echo "peers: $name exited at start; its output and error log:" >&2
            tail -n 20 "$run/$name.out" "$(error_log_of "$name")" >&2 2>/dev/null || true
            exit 1
        fi
        code=$(curl -s -o "$run/$name.check" -w '%{http_code}' --max-time 1 \
            "http://127.0.0.1:$p$url_path" 2>/dev/null || true)
        if [[ $code == 200 ]]; then
            if [[ $url_path == /4k.bin ]] && ! cmp -s "$run/$name.check" "$docroot/4k.bin"; then
                die "$name served /4k.bin with different content"
            fi
            return 0
        fi
        sleep 0.1
    done
    die "$name did not answer 200 for $url_path on port $p within 15 s" \
        "(last status: ${code:-none}); see $(error_log_of "$name")"
}

# --- wrk -------------------------------------------------------------------

# Runs wrk once; prints "rps errors requests lat_avg_ms lat_p99_ms".
wrk_run() { # name seconds outfile
    local name=$1 secs=$2 out=$3
    timeout $((secs + 30)) wrk --latency -t"$threads" -c"$connections" -d"${secs}s" \
        "http://127.0.0.1:${port[$name]}$url_path" >"$out" 2>&1 ||
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

# --- go --------------------------------------------------------------------

echo "== perf/peers.sh: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -n)," \
    "$(nproc) CPUs, $(uname -sr)"
echo "== wrk -t$threads -c$connections -d${duration}s http://127.0.0.1:PORT$url_path," \
    "$rounds round(s), ${warmup}s warm-up"

versions_file="$run/versions"
: >"$versions_file"
for s in "${servers[@]}"; do
    case $s in
    ours)
        # -V reads the configuration (to name the MPM): give it the real one.
        port[ours]=$(free_port) || exit 1
        render "$here/peers/ours.conf" "$run/ours.conf" "${port[ours]}"
        echo "-- ours: $httpd"
        ident=$("$httpd" -V -d "$run" -f "$run/ours.conf" 2>&1 |
            awk '/^Server compiled with/ { exit } NR <= 12 { print }') || true
        [[ -n $ident ]] || ident="(httpd -V printed nothing)"
        while IFS= read -r l; do echo "   $l"; done <<<"$ident"
        ident=$(tr '\n' ' ' <<<"$ident")
        printf 'ours\t%s\n' "${ident% }" >>"$versions_file"
        ;;
    apache)
        ident=$("$apache_bin" -v 2>&1 | head -n 1)
        echo "-- apache: $apache_bin: $ident"
        printf 'apache\t%s\n' "$ident" >>"$versions_file"
        ;;
    nginx)
        ident=$("$nginx_bin" -v 2>&1 | head -n 1)
        echo "-- nginx: $nginx_bin: $ident"
        printf 'nginx\t%s\n' "$ident" >>"$versions_file"
        ;;
    esac
done

for s in "${servers[@]}"; do
    start_server "$s"
    echo "-- started ${label[$s]} on 127.0.0.1:${port[$s]} (pid ${pid[$s]})"
done

if ((warmup > 0)); then
    for s in "${servers[@]}"; do
        wrk_run "$s" "$warmup" "$run/wrk-$s-warmup.txt" >/dev/null
    done
fi

results="$run/results.tsv"
: >"$results"
for ((r = 1; r <= rounds; r++)); do
    for s in "${servers[@]}"; do
        kill -0 "${pid[$s]}" 2>/dev/null || die "$s (pid ${pid[$s]}) died; see $(error_log_of "$s")"
        line=$(wrk_run "$s" "$duration" "$run/wrk-$s-$r.txt") || exit 1
        read -r rps errs reqs lat p99 <<<"$line"
        printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\n' "$s" "$r" "$rps" "$errs" "$reqs" "$lat" "$p99" \
            >>"$results"
        printf '   round %d/%d  %-22s %12.0f req/s  errors %s  p99 %s ms\n' \
            "$r" "$rounds" "${label[$s]}" "$rps" "$errs" "$p99"
    done
done

for s in "${servers[@]}"; do
    stop_server "$s"
done

# Per server: mean, sample stddev as % of the mean, min, max, errors.
order=$(printf '%s ' "${servers[@]}")
summary=$(awk -F'\t' -v order="$order" '
    {
        n[$1]++; sum[$1] += $3; sq[$1] += $3 * $3; errs[$1] += $4; p99[$1] += $7
        if (!($1 in min) || $3 < min[$1]) min[$1] = $3
        if (!($1 in max) || $3 > max[$1]) max[$1] = $3
    }
    END {
        k = split(order, names, " ")
        for (i = 1; i <= k; i++) {
            s = names[i]; if (!(s in n)) continue
            mean = sum[s] / n[s]
            var = n[s] > 1 ? (sq[s] - n[s] * mean * mean) / (n[s] - 1) : 0
            if (var < 0) var = 0
            sd = mean > 0 ? 100 * sqrt(var) / mean : 0
            printf "%s\t%.1f\t%.2f\t%.1f\t%.1f\t%d\t%.3f\n",
                s, mean, sd, min[s], max[s], errs[s], p99[s] / n[s]
        }
    }' "$results")

apache_mean=$(awk -F'\t' '$1 == "apache" { print $2 }' <<<"$summary")

echo
printf '%-22s %12s %8s %12s %12s %8s %9s %11s\n' \
    server "mean rps" "stddev%" min max errors "vs apache" "p99 ms"
while IFS=$'\t' read -r s mean sd mn mx errs p99; do
    if [[ -n $apache_mean ]]; then
        ratio=$(awk -v a="$mean" -v b="$apache_mean" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    else
        ratio="-"
    fi
    printf '%-22s %12.0f %8.2f %12.0f %12.0f %8d %9s %11.3f\n' \
        "${label[$s]}" "$mean" "$sd" "$mn" "$mx" "$errs" "$ratio" "$p99"
done <<<"$summary"

errors_total=$(awk -F'\t' '{ e += $6 } END { print e + 0 }' <<<"$summary")
((errors_total == 0)) ||
    echo "peers: WARNING: $errors_total errors (socket, non-2xx/3xx): figures are suspect" >&2

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

if [[ -n $json ]]; then
    {
        printf '{\n  "tool": "perf/peers.sh",\n'
        printf '  "date": %s,\n' "$(json_str "$(date -u '+%Y-%m-%dT%H:%M:%SZ')")"
        printf '  "host": {"name": %s, "cpus": %d, "kernel": %s},\n' \
            "$(json_str "$(uname -n)")" "$(nproc)" "$(json_str "$(uname -r)")"
        printf '  "load": {"tool": "wrk", "threads": %d, "connections": %d, "duration_s": %d, ' \
            "$threads" "$connections" "$duration"
        printf '"warmup_s": %d, "rounds": %d, "path": %s},\n' \
            "$warmup" "$rounds" "$(json_str "$url_path")"
        printf '  "prefork": {"StartServers": %d, "MinSpareServers": %d, ' \
            "$start_servers" "$min_spare"
        printf '"MaxSpareServers": %d, "MaxRequestWorkers": %d},\n' "$max_spare" "$max_workers"
        printf '  "servers": {'
        first=1
        while IFS=$'\t' read -r s mean sd mn mx errs p99; do
            ((first)) || printf ','
            first=0
            ident=$(awk -F'\t' -v s="$s" '$1 == s { print $2 }' "$versions_file")
            if [[ -n $apache_mean ]]; then
                ratio=$(awk -v a="$mean" -v b="$apache_mean" \
                    'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')
            else
                ratio=null
            fi
            printf '\n    "%s": {\n      "label": %s,\n      "version": %s,\n' "$s" \
                "$(json_str "${label[$s]}")" "$(json_str "$ident")"
            printf '      "mean_rps": %s, "stddev_pct": %s, "min_rps": %s, "max_rps": %s,\n' \
                "$mean" "$sd" "$mn" "$mx"
            printf '      "errors": %d, "ratio_to_apache": %s, "mean_p99_ms": %s,\n' \
                "$errs" "$ratio" "$p99"
            printf '      "runs": ['
            awk -F'\t' -v s="$s" '$1 == s {
                printf "%s\n        {\"round\": %d, \"rps\": %s, \"errors\": %d, ",
                    (k++ ? "," : ""), $2, $3, $4
                printf "\"requests\": %d, \"latency_avg_ms\": %s, \"latency_p99_ms\": %s}",
                    $5, $6, $7 }' "$results"
            printf '\n      ]\n    }'
        done <<<"$summary"
        printf '\n  }\n}\n'
    } >"$json"
    echo "== raw figures: $json"
fi
