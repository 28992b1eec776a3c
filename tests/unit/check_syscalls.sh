#!/bin/sh
# Fails if code outside the syscall layer calls a counted system call itself.
# Allowed: httpd/sys.h and httpd/sys.c (the layer), and the unit tests.
root=${1:-.}
calls='getpid|gettid|sendmsg|sendto|recv|recvfrom|connect|fcntl|dup|getrlimit|setrlimit|ppoll|sigprocmask|sigaction|mmap|munmap|setsid|chdir|getsockopt|read|write|writev|pread|sendfile|open|openat|fstat|stat|lstat|fstatat|close|accept|accept4|epoll_wait|epoll_ctl|epoll_create1|poll|socket|bind|listen|setsockopt|shutdown|fork|kill|waitpid|pipe2|dup2|unlink|rename|opendir|readdir|closedir'
bad=$(grep -nE "(^|[^_a-zA-Z0-9.>])($calls)[[:space:]]*\(" \
        "$root"/httpd/*.c "$root"/httpd/*.h "$root"/modules/*/*.c "$root"/modules/*/*.h 2>/dev/null |
      grep -vE '^[^:]*/httpd/sys\.[ch]:' |
      grep -vE ':[0-9]+:[[:space:]]*(\*|/\*|//)' |
      grep -vE '"[^"]*\b('"$calls"')\(' )
if [ -n "$bad" ]; then
    echo "system calls made outside the syscall layer (use the hd_ wrappers in httpd/sys.h):"
    echo "$bad"
    exit 1
fi
echo "syscall layer: no direct calls found"
