#!/bin/sh
# Fails if code outside the syscall layer calls a counted system call itself.
# Allowed: httpd/base/sys.h and httpd/base/sys.c (the layer), and the unit tests.
root=${1:-.}
calls='getpid|gettid|sendmsg|sendto|recv|recvfrom|connect|fcntl|dup|getrlimit|setrlimit|ppoll|sigprocmask|sigaction|mmap|munmap|setsid|chdir|getsockopt|read|write|writev|pread|sendfile|open|openat|fstat|stat|lstat|fstatat|close|accept|accept4|epoll_wait|epoll_ctl|epoll_create1|poll|socket|bind|listen|setsockopt|shutdown|fork|kill|waitpid|pipe2|dup2|unlink|rename|opendir|readdir|closedir'
# httpd/tools/ builds the manual and is not the server
files=$(ls "$root"/httpd/*/*.c "$root"/httpd/*/*.h "$root"/modules/*/*.c "$root"/modules/*/*.h 2>/dev/null | grep -v "/httpd/tools/")
# a check that finds no files would pass for the wrong reason
if [ "$(echo "$files" | grep -c 'httpd/base/sys\.c$')" -ne 1 ] || [ "$(echo "$files" | wc -l)" -lt 50 ]; then
    echo "check_syscalls.sh: the sources were not found under $root/httpd/*/ and $root/modules/*/"
    exit 1
fi
bad=$(grep -nE "(^|[^_a-zA-Z0-9.>])($calls)[[:space:]]*\(" $files |
      grep -vE '^[^:]*/httpd/base/sys\.[ch]:' |
      grep -vE ':[0-9]+:[[:space:]]*(\*|/\*|//)' |
      grep -vE '"[^"]*\b('"$calls"')\(' )
if [ -n "$bad" ]; then
    echo "system calls made outside the syscall layer (use the hd_ wrappers in httpd/base/sys.h):"
    echo "$bad"
    exit 1
fi
echo "syscall layer: no direct calls found"
