/*
 * Buffers and the chain writer: writev of memory runs, file ranges with and
 * without sendfile, partial writes on a full socket, consume arithmetic and
 * the number of system calls each case costs.
 */
/* sys.h uses rename() without <stdio.h> */
#include <stdio.h>

#include "buf.h"
#include "pool.h"
#include "sys.h"
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>

#define FILE_SIZE 300000


/* The chain writer on a plain descriptor, as the connection uses it. */
static int chain_write(int fd, hd_chain_t **chain, bool use_sendfile, char *scratch,
                       size_t scratch_size, off_t *sent)
{
    hd_chain_sink_t sink = hd_chain_sink_fd(fd, use_sendfile);
    return hd_chain_write(&sink, chain, scratch, scratch_size, sent);
}

static char file_data[FILE_SIZE];
static char file_path[] = "/tmp/hd_test_buf_XXXXXX";
static int file_fd = -1;

static void make_file(void)
{
    for (size_t i = 0; i < FILE_SIZE; i++) {
        file_data[i] = (char)('a' + (i * 7 + i / 251) % 26);
    }
    file_fd = mkstemp(file_path);
    CHECK(file_fd >= 0);
    CHECK_INT(write(file_fd, file_data, FILE_SIZE), FILE_SIZE);
    unlink(file_path);
}

static void make_pair(int sv[2], bool nonblock, int sndbuf)
{
    int type = SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0);

    CHECK_INT(socketpair(AF_UNIX, type, 0, sv), 0);
    if (sndbuf > 0) {
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sndbuf, sizeof(sndbuf));
    }
}

/* Reads exactly @p n bytes from a blocking socket. */
static size_t read_n(int fd, char *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0) {
            break;
        }
        got += (size_t)r;
    }
    return got;
}

static void test_memory_run(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_chain_t *chain = NULL;
    char got[64];
    int sv[2];
    off_t sent = 0;

    make_pair(sv, false, 0);
    hd_chain_append(p, &chain, hd_buf_wrap(p, "HTTP/1.1 200 OK\r\n", 17));
    hd_chain_append(p, &chain, hd_buf_wrap(p, "", 0));
    hd_buf_t *b = hd_buf_create(p, 32);
    memcpy(b->last, "Content-Length: 5\r\n\r\n", 21);
    b->last += 21;
    hd_chain_append(p, &chain, b);
    hd_chain_append(p, &chain, hd_buf_wrap(p, "hello", 5));
    CHECK_INT(hd_chain_size(chain), 43);

    uint64_t writes = hd_sys_counters[HD_SYS_WRITE];
    uint64_t sendfiles = hd_sys_counters[HD_SYS_SENDFILE];
    CHECK_INT(chain_write(sv[0], &chain, true, NULL, 0, &sent), HD_OK);
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - writes, 1);
    CHECK_INT(hd_sys_counters[HD_SYS_SENDFILE] - sendfiles, 0);
    CHECK(chain == NULL);
    CHECK_INT(sent, 43);
    CHECK_INT(read_n(sv[1], got, 43), 43);
    CHECK(memcmp(got, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 43) == 0);

    /* an empty chain, or one of empty buffers, is done at once */
    hd_chain_append(p, &chain, hd_buf_wrap(p, "", 0));
    writes = hd_sys_counters[HD_SYS_WRITE];
    CHECK_INT(chain_write(sv[0], &chain, true, NULL, 0, &sent), HD_OK);
    CHECK(chain == NULL);
    CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - writes, 0);
    close(sv[0]);
    close(sv[1]);
    hd_pool_destroy(p);
}

static void check_file_range(bool use_sendfile)
{
    hd_pool_t *p = hd_pool_create();
    hd_chain_t *chain = NULL;
    char scratch[16384];
    static char got[6000];
    int sv[2];
    off_t sent = 0;

    make_pair(sv, false, 0);
    hd_chain_append(p, &chain, hd_buf_wrap(p, "head", 4));
    hd_chain_append(p, &chain, hd_buf_file(p, file_fd, 1000, 5000));
    hd_chain_append(p, &chain, hd_buf_wrap(p, "tail", 4));

    uint64_t writes = hd_sys_counters[HD_SYS_WRITE];
    uint64_t sendfiles = hd_sys_counters[HD_SYS_SENDFILE];
    uint64_t reads = hd_sys_counters[HD_SYS_READ];
    CHECK_INT(chain_write(sv[0], &chain, use_sendfile, scratch, sizeof(scratch), &sent), HD_OK);
    CHECK(chain == NULL);
    CHECK_INT(sent, 5008);
    if (use_sendfile) {
        /* head sendmsg (MSG_MORE), sendfile, tail writev */
        CHECK_INT(hd_sys_counters[HD_SYS_SENDFILE] - sendfiles, 1);
        CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - writes, 2);
        CHECK_INT(hd_sys_counters[HD_SYS_READ] - reads, 0);
    } else {
        /* one pread into scratch, everything in one writev */
        CHECK_INT(hd_sys_counters[HD_SYS_SENDFILE] - sendfiles, 0);
        CHECK_INT(hd_sys_counters[HD_SYS_WRITE] - writes, 1);
        CHECK_INT(hd_sys_counters[HD_SYS_READ] - reads, 1);
    }
    CHECK_INT(read_n(sv[1], got, 5008), 5008);
    CHECK(memcmp(got, "head", 4) == 0);
    CHECK(memcmp(got + 4, file_data + 1000, 5000) == 0);
    CHECK(memcmp(got + 5004, "tail", 4) == 0);
    close(sv[0]);
    close(sv[1]);
    hd_pool_destroy(p);
}

/* A connected TCP pair on loopback, Nagle off as on the server's sockets. */
static bool tcp_pair(int sv[2])
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    int one = 1;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &alen) != 0) {
        return false;
    }
    sv[1] = socket(AF_INET, SOCK_STREAM, 0);
    if (sv[1] < 0 || connect(sv[1], (struct sockaddr *)&a, sizeof(a)) != 0) {
        return false;
    }
    sv[0] = accept(l, NULL, NULL);
    close(l);
    return sv[0] >= 0 && setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0;
}

static unsigned data_segments_sent(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    memset(&ti, 0, sizeof(ti));
    CHECK_INT(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len), 0);
    return ti.tcpi_data_segs_out;
}

/*
 * A response head followed by its file leaves in one TCP segment (MSG_MORE
 * on the head): with TCP_NODELAY a plain writev would send two, and the
 * client would wake up twice per response.
 */
static void test_head_and_file_one_segment(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_chain_t *chain = NULL;
    static char got[4096 + 64];
    int sv[2] = {-1, -1};
    off_t sent = 0;

    CHECK(tcp_pair(sv));
    hd_chain_append(p, &chain, hd_buf_wrap(p, "HTTP/1.1 200 OK\r\n\r\n", 19));
    hd_chain_append(p, &chain, hd_buf_file(p, file_fd, 0, 4096));
    unsigned before = data_segments_sent(sv[0]);
    CHECK_INT(chain_write(sv[0], &chain, true, NULL, 0, &sent), HD_OK);
    CHECK_INT(sent, 4096 + 19);
    CHECK_INT(read_n(sv[1], got, 4096 + 19), 4096 + 19);
    CHECK(memcmp(got + 19, file_data, 4096) == 0);
    CHECK_INT(data_segments_sent(sv[0]) - before, 1);
    close(sv[0]);
    close(sv[1]);
    hd_pool_destroy(p);
}

static void test_file_sendfile(void)
{
    check_file_range(true);
}

static void test_file_pread(void)
{
    check_file_range(false);
}

/*
 * Writes a big chain through a non-blocking socket with small buffers: the
 * writer must stop with HD_AGAIN, keep what is left, and resume exactly.
 */
static void check_partial(bool use_sendfile, size_t scratch_size)
{
    hd_pool_t *p = hd_pool_create();
    static char mem[100000], expect[500000], got[500000];
    static char scratch[16384];
    hd_chain_t *chain = NULL;
    size_t total = 0, received = 0;
    int sv[2], again = 0, rc;
    off_t sent = 0;

    for (size_t i = 0; i < sizeof(mem); i++) {
        mem[i] = (char)('A' + i % 23);
    }
    make_pair(sv, true, 4096);
    hd_chain_append(p, &chain, hd_buf_wrap(p, mem, 1000));
    hd_chain_append(p, &chain, hd_buf_file(p, file_fd, 7, FILE_SIZE - 7));
    hd_chain_append(p, &chain, hd_buf_wrap(p, mem, sizeof(mem)));
    memcpy(expect, mem, 1000);
    memcpy(expect + 1000, file_data + 7, FILE_SIZE - 7);
    memcpy(expect + 1000 + FILE_SIZE - 7, mem, sizeof(mem));
    total = 1000 + FILE_SIZE - 7 + sizeof(mem);
    CHECK_INT(hd_chain_size(chain), total);

    while ((rc = chain_write(sv[0], &chain, use_sendfile, scratch, scratch_size, &sent)) ==
           HD_AGAIN) {
        again++;
        CHECK(chain != NULL);
        CHECK_INT((size_t)hd_chain_size(chain) + (size_t)sent, total);
        for (;;) {
            ssize_t r = read(sv[1], got + received, sizeof(got) - received);
            if (r <= 0) {
                break;
            }
            received += (size_t)r;
        }
    }
    CHECK_INT(rc, HD_OK);
    CHECK(chain == NULL);
    CHECK(again > 0);
    CHECK_INT(sent, total);
    for (;;) {
        ssize_t r = read(sv[1], got + received, sizeof(got) - received);
        if (r <= 0) {
            break;
        }
        received += (size_t)r;
    }
    CHECK_INT(received, total);
    CHECK(memcmp(got, expect, total) == 0);
    close(sv[0]);
    close(sv[1]);
    hd_pool_destroy(p);
}

static void test_partial_sendfile(void)
{
    check_partial(true, 16384);
}

static void test_partial_pread(void)
{
    check_partial(false, 16384);
    /* a scratch smaller than the socket buffer: many rounds per call */
    check_partial(false, 1000);
}

static void test_consume(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_chain_t *chain = NULL, *c;
    hd_chain_t *l1 = hd_chain_append(p, &chain, hd_buf_wrap(p, "0123456789", 10));
    hd_chain_t *l2 = hd_chain_append(p, &chain, hd_buf_wrap(p, "", 0));
    hd_chain_t *l3 = hd_chain_append(p, &chain, hd_buf_file(p, 3, 100, 20));
    hd_chain_t *l4 = hd_chain_append(p, &chain, hd_buf_wrap(p, "abcde", 5));

    CHECK(chain == l1 && l1->next == l2 && l3->next == l4);
    CHECK_INT(hd_chain_size(chain), 35);
    c = hd_chain_consume(chain, 0);
    CHECK(c == l1);
    c = hd_chain_consume(chain, 4);
    CHECK(c == l1);
    CHECK_INT(*l1->buf->pos, '4');
    CHECK_INT(hd_chain_size(chain), 31);
    /* the rest of the first buffer: the empty one is skipped */
    c = hd_chain_consume(c, 6);
    CHECK(c == l3);
    c = hd_chain_consume(c, 15);
    CHECK(c == l3);
    CHECK_INT(l3->buf->file_pos, 115);
    CHECK_INT(hd_buf_size(l3->buf), 5);
    c = hd_chain_consume(c, 7);
    CHECK(c == l4);
    CHECK_INT(l3->buf->file_pos, 120);
    CHECK_INT(*l4->buf->pos, 'c');
    c = hd_chain_consume(c, 3);
    CHECK(c == NULL);
    CHECK_INT(hd_chain_size(chain), 0);
    hd_pool_destroy(p);
}

static void test_errors(void)
{
    hd_pool_t *p = hd_pool_create();
    hd_chain_t *chain = NULL;
    int sv[2];
    off_t sent = 0;

    /* a file buffer with neither sendfile nor scratch cannot be sent */
    make_pair(sv, false, 0);
    hd_chain_append(p, &chain, hd_buf_file(p, file_fd, 0, 10));
    CHECK_INT(chain_write(sv[0], &chain, false, NULL, 0, &sent), HD_ERROR);
    CHECK_INT(errno, EINVAL);
    CHECK(chain != NULL);

    /* the peer went away */
    close(sv[1]);
    chain = NULL;
    hd_chain_append(p, &chain, hd_buf_wrap(p, "data", 4));
    CHECK_INT(chain_write(sv[0], &chain, true, NULL, 0, &sent), HD_ERROR);
    CHECK_INT(errno, EPIPE);
    CHECK(chain != NULL);
    CHECK_INT(sent, 0);
    close(sv[0]);

    /* a file shorter than its buffer says */
    make_pair(sv, false, 0);
    chain = NULL;
    hd_chain_append(p, &chain, hd_buf_file(p, file_fd, FILE_SIZE - 10, 20));
    char scratch[64];
    /* the short sendfile looks like a full socket at first; the retry finds the end */
    CHECK_INT(chain_write(sv[0], &chain, true, scratch, sizeof(scratch), &sent), HD_AGAIN);
    CHECK_INT(chain_write(sv[0], &chain, true, scratch, sizeof(scratch), &sent), HD_ERROR);
    CHECK_INT(errno, EIO);
    CHECK_INT(sent, 10);
    chain = NULL;
    hd_chain_append(p, &chain, hd_buf_file(p, file_fd, FILE_SIZE, 20));
    CHECK_INT(chain_write(sv[0], &chain, false, scratch, sizeof(scratch), &sent), HD_ERROR);
    CHECK_INT(errno, EIO);
    close(sv[0]);
    close(sv[1]);
    hd_pool_destroy(p);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    make_file();
    RUN(test_memory_run);
    RUN(test_file_sendfile);
    RUN(test_head_and_file_one_segment);
    RUN(test_file_pread);
    RUN(test_partial_sendfile);
    RUN(test_partial_pread);
    RUN(test_consume);
    RUN(test_errors);
    close(file_fd);
    hd_pool_recycler_drain();
    TEST_DONE();
}
