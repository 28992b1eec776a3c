"""Git revisions -> Release binaries.

Each revision is checked out with `git worktree add --detach` under /tmp
(never in the repository's own work tree, whose checkout is left alone),
built with CMake in Release mode in a build directory named after the full
commit id, and the worktree is removed again. A build directory that
already holds the binary of that commit is reused: the second comparison of
the same revisions builds nothing.
"""

import os
import shutil
import subprocess
import time

BUILD_BASE = os.environ.get("HDCMP_BUILD_DIR", "/tmp")


class BuildError(Exception):
    pass


def git(repo, *args, check=True):
    p = subprocess.run(["git", "-C", repo] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, errors="replace")
    if check and p.returncode != 0:
        raise BuildError("git %s: %s" % (" ".join(args), p.stderr.strip()))
    return p.stdout.strip()


def resolve(repo, rev):
    """Full commit id of @rev in @repo."""
    if not os.path.isdir(repo):
        raise BuildError("no repository at %s" % repo)
    sha = git(repo, "rev-parse", "--verify", "--quiet", rev + "^{commit}", check=False)
    if not sha:
        raise BuildError("%s: no such revision in %s" % (rev, repo))
    return sha


def subject(repo, sha):
    return git(repo, "log", "-1", "--format=%s", sha, check=False)


def build_revision(repo, rev, jobs=2, log=None, base=BUILD_BASE):
    """Builds @rev of @repo (Release); returns (binary, full sha, seconds spent building)."""
    sha = resolve(repo, rev)
    bdir = os.path.join(base, "hdcmp-build-" + sha[:16])
    binary = os.path.join(bdir, "httpd")
    stamp = os.path.join(bdir, "hdcmp-commit")
    if os.path.exists(binary) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read().strip() == sha:
                return binary, sha, 0.0
    t0 = time.monotonic()
    wt = os.path.join(base, "hdcmp-wt-%s-%d" % (sha[:16], os.getpid()))
    logf = open(log, "a") if log else subprocess.DEVNULL
    try:
        git(repo, "worktree", "add", "--detach", "--force", wt, sha)
        shutil.rmtree(bdir, ignore_errors=True)
        for args in (["cmake", "-S", wt, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release"],
                     ["cmake", "--build", bdir, "--target", "httpd", "-j", str(jobs)]):
            p = subprocess.run(args, stdout=logf, stderr=subprocess.STDOUT)
            if p.returncode != 0:
                raise BuildError("build of %s (%s) failed: %s%s" % (
                    rev, sha[:12], " ".join(args), " (see %s)" % log if log else ""))
        if not os.path.exists(binary):
            raise BuildError("build of %s made no %s" % (rev, binary))
        with open(stamp, "w") as f:
            f.write(sha + "\n")
    finally:
        if log:
            logf.close()
        if os.path.isdir(wt):
            git(repo, "worktree", "remove", "--force", wt, check=False)
            shutil.rmtree(wt, ignore_errors=True)
    return binary, sha, time.monotonic() - t0
