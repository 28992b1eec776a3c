/*
 * HTTP dates (RFC 9110 section 5.6.7). Formatting uses our own day and month
 * names so that no locale can change them; parsing accepts the three forms a
 * recipient must accept and rejects anything out of range or trailing.
 */
#include "date.h"

#include <string.h>

static const char day_names[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const day_names_long[7] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                              "Thursday", "Friday", "Saturday"};
static const char month_names[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

static __thread time_t now_sec = -1;
static __thread char now_str[HD_HTTP_DATE_LEN + 1];

const char *hd_http_date_now(void)
{
    /* time() is served by the vDSO: checking the second costs no syscall */
    time_t t = time(NULL);

    if (t != now_sec) {
        hd_http_date_format(t, now_str);
        now_sec = t;
    }
    return now_str;
}

static char *put2(char *p, int v)
{
    p[0] = (char)('0' + v / 10);
    p[1] = (char)('0' + v % 10);
    return p + 2;
}

void hd_http_date_format(time_t t, char *buf)
{
    struct tm tm;
    char *p = buf;
    int year;

    if (gmtime_r(&t, &tm) == NULL || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999) {
        /* not representable in four digits: the epoch is a safe, valid answer */
        t = 0;
        gmtime_r(&t, &tm);
    }
    year = tm.tm_year + 1900;
    memcpy(p, day_names[tm.tm_wday], 3);
    p += 3;
    *p++ = ',';
    *p++ = ' ';
    p = put2(p, tm.tm_mday);
    *p++ = ' ';
    memcpy(p, month_names[tm.tm_mon], 3);
    p += 3;
    *p++ = ' ';
    p = put2(p, year / 100);
    p = put2(p, year % 100);
    *p++ = ' ';
    p = put2(p, tm.tm_hour);
    *p++ = ':';
    p = put2(p, tm.tm_min);
    *p++ = ':';
    p = put2(p, tm.tm_sec);
    memcpy(p, " GMT", 5);
}

/* Reads exactly @p n digits at *@p p. */
static bool digits(const char **p, int n, int *val)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        char ch = (*p)[i];

        if (ch < '0' || ch > '9') {
            return false;
        }
        v = v * 10 + (ch - '0');
    }
    *p += n;
    *val = v;
    return true;
}

static bool lit(const char **p, const char *s)
{
    size_t n = strlen(s);

    if (strncmp(*p, s, n) != 0) {
        return false;
    }
    *p += n;
    return true;
}

static int month(const char **p)
{
    for (int i = 0; i < 12; i++) {
        if (strncmp(*p, month_names[i], 3) == 0) {
            *p += 3;
            return i;
        }
    }
    return -1;
}

static bool short_day(const char **p)
{
    for (int i = 0; i < 7; i++) {
        if (strncmp(*p, day_names[i], 3) == 0) {
            *p += 3;
            return true;
        }
    }
    return false;
}

static bool long_day(const char **p)
{
    for (int i = 0; i < 7; i++) {
        if (lit(p, day_names_long[i])) {
            return true;
        }
    }
    return false;
}

/* "08:49:37"; 60 seconds is a leap second, which the grammar allows. */
static bool time_of_day(const char **p, struct tm *tm)
{
    return digits(p, 2, &tm->tm_hour) && tm->tm_hour <= 23 && lit(p, ":") &&
           digits(p, 2, &tm->tm_min) && tm->tm_min <= 59 && lit(p, ":") &&
           digits(p, 2, &tm->tm_sec) && tm->tm_sec <= 60;
}

static int days_in_month(int year, int mon)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

    return mon == 1 && leap ? 29 : days[mon];
}

/* RFC 9110: a two-digit year more than 50 years ahead is in the past century. */
static int expand_year(int yy)
{
    time_t now = time(NULL);
    struct tm tm;
    int cur, year;

    gmtime_r(&now, &tm);
    cur = tm.tm_year + 1900;
    year = cur - cur % 100 + yy;
    if (year > cur + 50) {
        year -= 100;
    }
    return year;
}

/* "06 Nov 1994" */
static bool date1(const char **p, struct tm *tm, int *year)
{
    return digits(p, 2, &tm->tm_mday) && lit(p, " ") && (tm->tm_mon = month(p)) >= 0 &&
           lit(p, " ") && digits(p, 4, year);
}

/* "06-Nov-94" */
static bool date2(const char **p, struct tm *tm, int *year)
{
    int yy;

    if (!(digits(p, 2, &tm->tm_mday) && lit(p, "-") && (tm->tm_mon = month(p)) >= 0 &&
          lit(p, "-") && digits(p, 2, &yy))) {
        return false;
    }
    *year = expand_year(yy);
    return true;
}

/* "Nov  6" or "Nov 06" */
static bool date3(const char **p, struct tm *tm)
{
    if ((tm->tm_mon = month(p)) < 0 || !lit(p, " ")) {
        return false;
    }
    if (**p == ' ') {
        (*p)++;
        return digits(p, 1, &tm->tm_mday);
    }
    return digits(p, 2, &tm->tm_mday);
}

time_t hd_http_date_parse(const char *s)
{
    struct tm tm;
    const char *p = s;
    int year = 0;
    bool ok;

    if (s == NULL) {
        return -1;
    }
    memset(&tm, 0, sizeof(tm));
    if (strlen(s) >= 4 && s[3] == ',') {
        ok = short_day(&p) && lit(&p, ", ") && date1(&p, &tm, &year) && lit(&p, " ") &&
             time_of_day(&p, &tm) && lit(&p, " GMT");
    } else if (strlen(s) >= 4 && s[3] == ' ') {
        ok = short_day(&p) && lit(&p, " ") && date3(&p, &tm) && lit(&p, " ") &&
             time_of_day(&p, &tm) && lit(&p, " ") && digits(&p, 4, &year);
    } else {
        ok = long_day(&p) && lit(&p, ", ") && date2(&p, &tm, &year) && lit(&p, " ") &&
             time_of_day(&p, &tm) && lit(&p, " GMT");
    }
    if (!ok || *p != '\0' || year < 1900) {
        return -1;
    }
    if (tm.tm_mday < 1 || tm.tm_mday > days_in_month(year, tm.tm_mon)) {
        return -1;
    }
    tm.tm_year = year - 1900;
    return timegm(&tm);
}
