"""Whole quantities (``250m``, ``128Mi``, ``2``, ``512``) are computed in integers
(issue 16: the general way through exact fractions was a fifth of converting a pod);
they must give what the general way gives, for every suffix and scale."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from podsync.load.schema._scalars import _SUFFIXES, _quantity, _quantity_value

SUFFIXES = sorted(_SUFFIXES)


@given(
    number=st.integers(min_value=0, max_value=10**20),
    suffix=st.sampled_from(SUFFIXES),
    scale=st.sampled_from([1, 1000]),
    as_int=st.booleans(),
)
def test_whole_quantities_agree_with_the_general_way(
    number: int, suffix: str, scale: int, as_int: bool
) -> None:
    value: object = number if as_int and not suffix else f"{number}{suffix}"
    general = math.ceil(_quantity_value(value, unit="units", examples="1") * scale)
    try:
        fast: object = _quantity(value, scale=scale, unit="units", examples="1")
    except ValueError as exc:
        fast = str(exc)
    if general > 2**63 - 1:
        assert fast == f"{value!r} is too large: at most {2**63 - 1} units"
    else:
        assert fast == general
