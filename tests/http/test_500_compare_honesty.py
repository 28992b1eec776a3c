"""Honesty of the comparison harness (perf/compare, issue 5), in short mode.

A harness that calls noise a change, or misses a change that is there,
is worse than none. These run perf/compare end to end on the binary under
test and check its verdicts, not its timings:

- A vs A (the same binary twice): NO significant change in requests/s or
  in syscalls per request;
- EnableSendfile On vs Off on a 1 MiB file at a fixed rate: a significant
  change in the syscall mix (sendfile calls go, reads and writes come);
- prefork vs event at the same fixed rate: a different syscall mix per
  request (poll per keep-alive wait against a shared epoll set), which is
  their structure and so beyond noise on any day (skipped while mpm_event is
  not built).

Plus the statistics against published tables. Together well under two
minutes; the harness's own figures are printed on failure.
"""

import json
import os
import subprocess
import sys

import pytest

import hdtest

PERF_DIR = os.path.join(hdtest.HTTPD_SOURCE, "perf")
COMPARE = os.path.join(PERF_DIR, "compare")
sys.path.insert(0, PERF_DIR)

from compare_lib import collect, servers, stats  # noqa: E402

# A harness test, not an MPM test: once per suite is enough.
pytestmark = pytest.mark.mpm("prefork")


def build_type():
    try:
        return servers.identity_of(hdtest.HTTPD_BIN).get("build_type", "")
    except servers.ServerError:
        return ""


@pytest.fixture(autouse=True)
def release_only(request):
    # The harness compares Release builds; its verdicts do not depend on the
    # binary, and a sanitizer build would only make the suite two minutes longer.
    if request.node.name != "test_statistics_match_tables" and build_type() == "Sanitize":
        pytest.skip("perf/compare is checked on the Release build (this one is Sanitize)")


def run_compare(tmp_path, *args, timeout=110):
    out = tmp_path / "out"
    cmd = [COMPARE, "--quiet", "--no-charts", "--out", str(out)] + list(args)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    assert p.returncode == 0, "perf/compare failed (%d): %s\n%s\n%s" % (
        p.returncode, " ".join(cmd), p.stdout[-3000:], p.stderr[-3000:])
    with open(out / "compare.json") as f:
        return json.load(f), p.stdout


def pick(comps, *names):
    """The first metric of @names the report has (server counters, else perf's)."""
    for n in names:
        if n in comps:
            return n, comps[n]
    return None, None


def need_syscall_counts(comps):
    name, _c = pick(comps, "syscalls/req", "perf syscalls/req")
    if name is None:
        ok, why = collect.perf_usable()
        pytest.skip("no syscall counts: the build has no /server-status?json and perf "
                    "stat is unusable here (%s)" % why)
    return name


def test_statistics_match_tables():
    # Student's t, two-sided: published critical values.
    assert abs(stats.t_two_sided_p(2.228139, 10) - 0.05) < 1e-6
    assert abs(stats.t_two_sided_p(12.7062, 1) - 0.05) < 1e-5
    assert abs(stats.t_two_sided_p(2.0, 10) - 0.073388) < 1e-5
    # Welch's test on a textbook pair (R: t = 3.5256, df = 7.95, p = 0.00786).
    t, df, p = stats.welch([19.1, 20.3, 18.7, 21.0, 19.9], [21.2, 22.0, 20.9, 23.1, 21.7])
    assert abs(t - 3.5256) < 1e-3 and abs(df - 7.9516) < 1e-3 and abs(p - 0.00786) < 1e-4
    # Overlapping runs are never beyond noise, whatever the t-test says.
    c = stats.compare([10, 11, 12, 13], [12.5, 13.5, 14, 15])
    assert not c["robot"] and not c["significant"]
    # Deterministic figures (callgrind): any difference is real, none is none.
    assert stats.compare([100, 100], [101, 101])["significant"]
    assert not stats.compare([100, 100], [100, 100])["significant"]


def test_a_vs_a_reports_no_change(tmp_path):
    res, report = run_compare(tmp_path, "--bin", hdtest.HTTPD_BIN, "--bin", hdtest.HTTPD_BIN,
                              "--short", "--rounds", "4", "--duration", "1",
                              "--phases", "closed", "--no-loadgen")
    comps = res["comparisons"]["B"]["closed/wrk"]
    syscalls = need_syscall_counts(comps)
    rps = comps["requests/s"]
    assert not rps["significant"], "A vs A: requests/s called a change\n" + report
    for name in ("syscalls/req", "perf syscalls/req"):
        if name in comps:
            assert not comps[name]["significant"], "A vs A: %s called a change\n%s" % (
                name, report)
            assert abs(comps[name]["diff"]) < 0.05, report
    assert comps[syscalls]["base_mean"] > 1.0     # it did count something
    assert "NOT more expensive" in report or "within noise" in report, report


def test_sendfile_on_off_changes_the_syscall_mix(tmp_path):
    res, report = run_compare(tmp_path, "--httpd", hdtest.HTTPD_BIN,
                              "--directive", "EnableSendfile On",
                              "--directive", "EnableSendfile Off",
                              "--url", "/large.bin", "--short", "--warmup", "0",
                              "-c", "10",
                              "--phases", "parity", "--parity-rate", "200")
    comps = res["comparisons"]["B"]["parity"]
    need_syscall_counts(comps)
    name, sf = pick(comps, "sys sendfile/req", "perf sys sendfile/req")
    assert sf is not None, report
    assert sf["significant"] and sf["base_mean"] >= 0.9 and sf["new_mean"] < 0.05, \
        "%s On vs Off not flagged\n%s" % (name, report)
    name, wr = pick(comps, "sys write/req", "perf sys write/req")
    assert wr["significant"] and wr["diff"] > 1.0, "%s not flagged\n%s" % (name, report)
    name, rd = pick(comps, "sys read/req", "perf sys read/req")
    assert rd["significant"] and rd["diff"] > 1.0, "%s not flagged\n%s" % (name, report)
    # Whether each side reached the rate is checked in every run (a loaded
    # machine may not: then the report says so, loudly).
    for rec in res["records"]:
        assert rec["load"]["achieved"] in (True, False), report
    assert ("DID NOT ACHIEVE" in report) == any(not r["load"]["achieved"]
                                                for r in res["records"]), report


def event_mpm_missing():
    ws = servers.Workspace()
    try:
        side = servers.Side("E", "mpm event", hdtest.HTTPD_BIN, "event")
        ok, out = ws.check_conf(side, status=False)
    finally:
        ws.cleanup()
    return None if ok else out


def test_prefork_vs_event_differ_where_they_must(tmp_path):
    why = event_mpm_missing()
    if why:
        pytest.skip("mpm_event is not built yet (httpd -t with LoadModule mpm_event_module "
                    "fails: %s)" % why.splitlines()[-1][:200])
    # Few connections at a brisk rate. The MPMs wait for a keep-alive
    # connection's next request differently: a prefork child polls its one
    # connection once per request (a syscall of kind "other"), event's threads
    # share an epoll set. That mix is the MPMs' structure, not timing: it
    # differs by about one call per request however busy the machine is. (The
    # context switches differ too, but another load on the machine can drown
    # that difference: a test that fails on a busy day blocks every submission,
    # so they are reported, not required.)
    res, report = run_compare(tmp_path, "--httpd", hdtest.HTTPD_BIN, "--mpms", "prefork,event",
                              "--short", "--warmup", "0",
                              "--phases", "parity", "--parity-rate", "2000", "-c", "8",
                              "--rounds", "4")
    comps = res["comparisons"]["B"]["parity"]
    need_syscall_counts(comps)
    name, other = pick(comps, "sys other/req", "perf sys other/req")
    assert other is not None, report
    if name == "sys other/req":
        # the server's own counts: poll is "other", one per keep-alive wait under prefork
        assert other["significant"] and other["base_mean"] > 0.5 and other["new_mean"] < 0.2, \
            "prefork vs event: %s not flagged\n%s" % (name, report)
        name, ep = pick(comps, "sys epoll_wait/req")
        assert ep["significant"] and ep["new_mean"] > ep["base_mean"] + 0.1, \
            "prefork vs event: %s not flagged\n%s" % (name, report)
    else:
        assert other["significant"], "prefork vs event: %s not flagged\n%s" % (name, report)
    # and both sides were measured at the same rate, or the report says they were not
    assert ("DID NOT ACHIEVE" in report) == any(not r["load"]["achieved"]
                                                for r in res["records"]), report
