/* analysis/_tables/timestamps.h: date-times as microseconds since the epoch in UTC, the way
 * both _columnar.c and _gather.c store a timestamp column. Include after <datetime.h>, in a
 * module that has run PyDateTime_IMPORT. */
#ifndef DIMS_TIMESTAMPS_H
#define DIMS_TIMESTAMPS_H

#include <stdint.h>

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static inline int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* Microseconds since the epoch, in UTC, of an aware datetime: 0; 1 for anything else (a
 * naive datetime, a zone other than datetime.timezone, whose utcoffset could run Python
 * code); -1 with an error set. `utcoffset` is the interned name "utcoffset". */
static inline int aware_micros(PyObject *value, PyObject *utcoffset, int64_t *out)
{
    if (!PyDateTime_CheckExact(value))
        return 1;
    PyObject *tz = PyDateTime_DATE_GET_TZINFO(value);
    if (tz == Py_None)
        return 1;
    int64_t offset_us = 0;
    if (tz != PyDateTime_TimeZone_UTC) {
        if (!Py_IS_TYPE(tz, Py_TYPE(PyDateTime_TimeZone_UTC)))
            return 1;
        PyObject *delta = PyObject_CallMethodNoArgs(value, utcoffset);
        if (delta == NULL)
            return -1;
        if (!PyDelta_CheckExact(delta)) {
            Py_DECREF(delta);
            return 1;
        }
        offset_us = ((int64_t)PyDateTime_DELTA_GET_DAYS(delta) * 86400 +
                     PyDateTime_DELTA_GET_SECONDS(delta)) * 1000000 +
                    PyDateTime_DELTA_GET_MICROSECONDS(delta);
        Py_DECREF(delta);
    }
    int64_t days = days_from_civil(PyDateTime_GET_YEAR(value),
                                   (unsigned)PyDateTime_GET_MONTH(value),
                                   (unsigned)PyDateTime_GET_DAY(value));
    int64_t seconds = days * 86400 + PyDateTime_DATE_GET_HOUR(value) * 3600 +
                      PyDateTime_DATE_GET_MINUTE(value) * 60 + PyDateTime_DATE_GET_SECOND(value);
    *out = seconds * 1000000 + PyDateTime_DATE_GET_MICROSECOND(value) - offset_us;
    return 0;
}

#endif
