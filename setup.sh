#!/bin/sh
# Installs what the build, the tests and the benchmarks need, builds, and then:
#   ./setup.sh run    starts the server in the foreground on conf/httpd.conf
#   ./setup.sh test   builds Release (warnings as errors) and the ASAN+UBSAN
#                     build, and runs every test in both with ctest; then
#                     the libFuzzer harnesses (clang) for a bounded time
#   ./setup.sh build  only installs and builds (build/)
# Safe to run again: packages already present are not reinstalled.
set -eu
cd "$(dirname "$0")"
root=$(pwd)

packages="build-essential cmake pkg-config git libssl-dev libpcre2-dev zlib1g-dev
python3 python3-pytest curl wrk apache2 nginx procps strace valgrind
chromium linux-perf prometheus-apache-exporter python3-jsonschema python3-prometheus-client
iproute2 util-linux clang libclang-rt-14-dev slowhttptest"

install_packages() {
    missing=""
    for p in $packages; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    echo "setup: installing$missing"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
}

build() { # build dir, extra cmake args...
    dir=$1
    shift
    cmake -S "$root" -B "$dir" "$@" >/dev/null
    cmake --build "$dir" -j "$(nproc)"
}

mode=${1:-build}
install_packages
mkdir -p "$root/logs"
case "$mode" in
build)
    build "$root/build" -DCMAKE_BUILD_TYPE=Release
    ;;
run)
    build "$root/build" -DCMAKE_BUILD_TYPE=Release
    echo "setup: serving $root/htdocs on http://127.0.0.1:8080/ (Ctrl-C stops)"
    exec "$root/build/httpd" -d "$root" -f conf/httpd.conf -D FOREGROUND
    ;;
test)
    build "$root/build" -DCMAKE_BUILD_TYPE=Release -DHD_WERROR=ON
    (cd "$root/build" && ctest --output-on-failure -j 2)
    build "$root/build-asan" -DCMAKE_BUILD_TYPE=Sanitize -DHD_WERROR=ON
    (cd "$root/build-asan" && ctest --output-on-failure -j 2)
    cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_C_COMPILER=clang -DHD_FUZZ=ON \
        -DHD_WERROR=ON >/dev/null
    cmake --build "$root/build-fuzz" --target hd_fuzzers -j "$(nproc)"
    (cd "$root/build-fuzz" && ctest --output-on-failure -j 2 -L fuzz)
    ;;
*)
    echo "usage: $0 [build|run|test]" >&2
    exit 1
    ;;
esac
