/*
 * The event MPM's timeout queues (poller.c): a FIFO while deadlines come in
 * order (each insertion at the tail), and still in deadline order when one
 * comes sooner (a RequestReadTimeout limit), so the head is always the next
 * to expire.
 */
#include "test.h"

#include "poller.h"

static int64_t order[16];

static int drain(hd_tq_t *q)
{
    int n = 0;
    hd_timer_t *t;
    while ((t = hd_tq_first(q)) != NULL) {
        order[n++] = t->deadline_ms;
        hd_tq_remove(t);
    }
    return n;
}

static void test_fifo(void)
{
    hd_tq_t q;
    hd_timer_t t[4];
    hd_tq_init(&q);
    for (int i = 0; i < 4; i++) {
        hd_tq_append(&q, &t[i], 100 + i);
    }
    CHECK_INT(q.count, 4);
    CHECK(hd_tq_first(&q) == &t[0]);
    /* equal deadlines keep their arrival order */
    hd_timer_t same;
    hd_tq_append(&q, &same, 103);
    CHECK(t[3].next == &same);
    CHECK_INT(drain(&q), 5);
    CHECK_INT(order[0], 100);
    CHECK_INT(order[4], 103);
    CHECK_INT(q.count, 0);
    CHECK(hd_tq_first(&q) == NULL);
}

static void test_sooner_deadline_finds_its_place(void)
{
    hd_tq_t q;
    hd_timer_t t[6];
    int64_t d[6] = {500, 600, 700, 550, 50, 900};
    hd_tq_init(&q);
    for (int i = 0; i < 6; i++) {
        hd_tq_append(&q, &t[i], d[i]);
    }
    CHECK(hd_tq_first(&q) == &t[4]);
    /* removing from the middle keeps the order */
    hd_tq_remove(&t[1]);
    CHECK(t[1].queue == NULL);
    hd_tq_remove(&t[1]); /* twice is harmless */
    CHECK_INT(drain(&q), 5);
    int64_t want[5] = {50, 500, 550, 700, 900};
    for (int i = 0; i < 5; i++) {
        CHECK_INT(order[i], want[i]);
    }
}

int main(void)
{
    RUN(test_fifo);
    RUN(test_sooner_deadline_finds_its_place);
    TEST_DONE();
}
