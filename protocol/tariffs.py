"""Electricity tariffs of clusters: a day price and an optional night price at local time.

The rule shared by the seed 004 broker (deciders/grid/cluster_broker.py) and the simulator's energy
cost accounting (simulator/energy/energy_cost.py): `price` (US cents/kWh) applies in the local hours
[day_start, day_end) (defaults 8 and 20), `night_price` outside them; without `night_price`
the tariff is flat. Local time = UTC + utc_offset hours, simulation time 0 being
`start_utc_hour` o'clock UTC (0 unless told otherwise).
"""

from __future__ import annotations

import math

from joulesim.protocol.number_text import NumberTextError, parse_decimal

HOUR = 3600.0
DAY = 24.0 * HOUR
DAY_START, DAY_END = 8.0, 20.0  # local hours of the day price when the hosts do not say
# Prices are finite and at most MAX_PRICE cents/kWh: 1,000 times the highest spot prices seen
# (about 1,000 cents/kWh), and small enough that a cost, price x joules / 3.6e6 over at most
# 2^33 s, stays finite for any host power below 1e298 W (an "inf" price made costs inf and
# the total NaN).
MAX_PRICE = 1e6

#: The admissible values of each tariff property (a host property is a string).
TARIFF_RANGES = {"price": (0.0, MAX_PRICE), "utc_offset": (-24.0, 24.0), "night_price": (0.0, MAX_PRICE),
                 "day_start": (0.0, 24.0), "day_end": (0.0, 24.0)}


def tariff_number(key: str, text: object) -> float:
    """Tariff property `key` as a number; ValueError("[min, max] ...") when `text` is no ASCII
    decimal number in the property's range (protocol.number_text: no NaN, infinity, "1_0" or
    other scripts' digits), for the caller to name the host or cluster."""
    minimum, maximum = TARIFF_RANGES[key]
    try:
        value = parse_decimal(str(text))
    except NumberTextError:
        value = math.nan
    if not (minimum <= value <= maximum):
        raise ValueError(f"[{minimum:g}, {maximum:g}] written in ASCII decimal notation (e.g. 12.5)")
    return value


def is_day(local_hour: float, day_start: float, day_end: float) -> bool:
    """Whether the day price applies at `local_hour` (in [0, 24))."""
    if day_start <= day_end:
        return day_start <= local_hour < day_end
    return local_hour >= day_start or local_hour < day_end  # a day tariff across midnight


def price_at(now: float, price: float, night_price: float, utc_offset: float, day_start: float,
             day_end: float, start_utc_hour: float = 0.0) -> float:
    """The price in force at simulation time `now` (cents/kWh)."""
    if night_price == price:
        return price
    local = (now / HOUR + start_utc_hour + utc_offset) % 24.0
    return price if is_day(local, day_start, day_end) else night_price


def next_change(now: float, utc_offset: float, day_start: float, day_end: float,
                start_utc_hour: float = 0.0) -> float:
    """The first simulation time > `now` at which the local hour is day_start or day_end
    (math.inf when both are the same hour modulo 24: the price then never changes)."""
    if day_start % 24.0 == day_end % 24.0:
        return math.inf
    best = math.inf
    for hour in (day_start, day_end):
        # Simulation times t with local hour `hour`: t = (hour - start_utc_hour - utc_offset) h + k days.
        base = ((hour - start_utc_hour - utc_offset) * HOUR) % DAY
        k = math.floor((now - base) / DAY) + 1
        candidate = base + k * DAY
        while candidate <= now:  # float rounding
            candidate += DAY
        while candidate - DAY > now:
            candidate -= DAY
        best = min(best, candidate)
    return best
