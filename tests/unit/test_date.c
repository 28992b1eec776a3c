/* HTTP dates: formatting, the three accepted forms, round trips, rejections. */
#include "date.h"
#include "test.h"

/* Sun, 06 Nov 1994 08:49:37 GMT, the example of RFC 9110 */
#define RFC_EXAMPLE ((time_t)784111777)

static void test_format(void)
{
    char buf[HD_HTTP_DATE_LEN + 1];

    hd_http_date_format(RFC_EXAMPLE, buf);
    CHECK_STR(buf, "Sun, 06 Nov 1994 08:49:37 GMT");
    hd_http_date_format(0, buf);
    CHECK_STR(buf, "Thu, 01 Jan 1970 00:00:00 GMT");
    hd_http_date_format(951782400, buf);
    CHECK_STR(buf, "Tue, 29 Feb 2000 00:00:00 GMT");
    CHECK_INT(strlen(buf), HD_HTTP_DATE_LEN);
}

static void test_now(void)
{
    const char *a = hd_http_date_now();
    time_t t = time(NULL);
    time_t parsed = hd_http_date_parse(a);

    CHECK_INT(strlen(a), HD_HTTP_DATE_LEN);
    CHECK(parsed >= t - 2 && parsed <= t + 2);
    /* the same thread-local string every call */
    CHECK(hd_http_date_now() == a);
}

static void test_parse_forms(void)
{
    CHECK_INT(hd_http_date_parse("Sun, 06 Nov 1994 08:49:37 GMT"), RFC_EXAMPLE);
    CHECK_INT(hd_http_date_parse("Sunday, 06-Nov-94 08:49:37 GMT"), RFC_EXAMPLE);
    CHECK_INT(hd_http_date_parse("Sun Nov  6 08:49:37 1994"), RFC_EXAMPLE);
    CHECK_INT(hd_http_date_parse("Sun Nov 06 08:49:37 1994"), RFC_EXAMPLE);
    CHECK_INT(hd_http_date_parse("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
    CHECK_INT(hd_http_date_parse("Tue, 29 Feb 2000 00:00:00 GMT"), 951782400);
    /* two-digit years: more than 50 years ahead means the last century */
    CHECK_INT(hd_http_date_parse("Tuesday, 29-Feb-00 00:00:00 GMT"), 951782400);
}

static void test_round_trip(void)
{
    static const time_t times[] = {0,           1,         59,         86399,      86400,
                                   RFC_EXAMPLE, 951782400, 1700000000, 2147483647, 4102444800};
    char buf[HD_HTTP_DATE_LEN + 1];

    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
        hd_http_date_format(times[i], buf);
        CHECK_INT(hd_http_date_parse(buf), times[i]);
    }
}

static void test_reject(void)
{
    static const char *const bad[] = {
        "",
        "garbage",
        "Sun, 06 Nov 1994 08:49:37 GMT junk",
        "Sun, 06 Nov 1994 08:49:37 GMTX",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Thu, 29 Feb 2001 00:00:00 GMT",
        "Mon, 29 Feb 1900 00:00:00 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun,  06 Nov 1994 08:49:37 GMT",
        " Sun, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 06 Nov 94 08:49:37 GMT",
        "Sundae, 06-Nov-94 08:49:37 GMT",
        "Sunday, 31-Apr-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994 GMT",
        "Sun Nov 6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94",
        "Sun Nov 31 08:49:37 1994",
        "Sun Nov  6 08:49:37 1994 ",
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        time_t t = hd_http_date_parse(bad[i]);
        if (t != -1) {
            fprintf(stderr, "accepted: \"%s\"\n", bad[i]);
        }
        CHECK_INT(t, -1);
    }
    CHECK_INT(hd_http_date_parse(NULL), -1);
}

int main(void)
{
    RUN(test_format);
    RUN(test_now);
    RUN(test_parse_forms);
    RUN(test_round_trip);
    RUN(test_reject);
    TEST_DONE();
}
