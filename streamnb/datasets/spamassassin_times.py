"""When a SpamAssassin message was received: the collector's mbox ``From `` line (Europe/Dublin
wall-clock time, converted to UTC), else a plausible ``Date`` header (the sender's clock).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_tz

__all__ = ["dublin_to_utc", "received_at"]

_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, 1)}
# The asctime() stamp that ends an mbox separator line: "From sender  Tue Aug  6 11:51:02 2002".
_FROM_LINE_TIME = re.compile(
    r"\s(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +"
    r"(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})\s*$"
)
_DATE_HEADER = re.compile(r"^Date:[ \t]*(.*(?:\n[ \t].*)*)", re.MULTILINE | re.IGNORECASE)
# The corpus was received between June 2001 and December 2002 (its mbox stamps); a Date header
# outside these years is a forged or broken sender clock, not a time the message was seen.
_PLAUSIBLE_DATES = (datetime(2001, 1, 1, tzinfo=UTC), datetime(2003, 1, 1, tzinfo=UTC))


def received_at(text: str) -> datetime | None:
    """When the message was received, in UTC (see
    `streamnb.datasets.spamassassin.Message.timestamp`)."""
    first_line = text.partition("\n")[0]
    if first_line.startswith("From "):
        stamp = _FROM_LINE_TIME.search(first_line)
        if stamp is not None:
            month, day, hour, minute, second, year = stamp.groups()
            local = datetime(
                int(year), _MONTHS[month], int(day), int(hour), int(minute), int(second)
            )
            return dublin_to_utc(local)
    headers = re.split(r"\n\r?\n", text, maxsplit=1)[0]
    date = _DATE_HEADER.search(headers)
    parsed = parsedate_tz(date.group(1)) if date else None
    if parsed is None:
        return None
    year, month, day, hour, minute, second = parsed[:6]
    if 100 <= year < 200:
        year += 1900  # a Y2K bug: struct tm's years-since-1900 printed as is ("0102")
    try:
        sent = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:  # day 31 of a 30-day month and the like
        return None
    sent -= timedelta(seconds=parsed[9] or 0)  # no zone given: taken as UTC
    return sent if _PLAUSIBLE_DATES[0] <= sent < _PLAUSIBLE_DATES[1] else None


def dublin_to_utc(local: datetime) -> datetime:
    """Convert a naive Europe/Dublin wall-clock time (1996 onwards) to an aware UTC time.

    The corpus was collected in Dublin, and its mbox stamps agree with the local times of the
    collector's own Received headers (+0100 in summer, +0000 in winter). The EU rule is spelt
    out instead of using zoneinfo, which needs a time-zone database that not every platform
    has. In the repeated hour when summer time ends, the first (summer) reading is taken.
    """
    start = _last_sunday(local.year, 3).replace(hour=1)  # 01:00 GMT becomes 02:00 IST
    end = _last_sunday(local.year, 10).replace(hour=2)  # 02:00 IST becomes 01:00 GMT
    offset = timedelta(hours=1) if start <= local < end else timedelta(0)
    return (local - offset).replace(tzinfo=UTC)


def _last_sunday(year: int, month: int) -> datetime:
    last_day = datetime(year, month + 1, 1) - timedelta(days=1)
    return last_day - timedelta(days=(last_day.weekday() - 6) % 7)
