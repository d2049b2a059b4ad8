-- Exact fixed-point arithmetic on HUGEINT (int128), for money that must never pass through DOUBLE.
-- Why: DuckDB's DECIMAL / DECIMAL returns DOUBLE, DECIMAL(38,18) * DECIMAL(38,18) is typed
-- DECIMAL(38,36) and overflows above 100, and every operation that lowers the scale of a
-- DECIMAL(38,x) or reads it as an integer (a cast from VARCHAR too) runs a bit-by-bit 128-bit
-- division, 0.5 to 5 µs a value.
--
-- Two layers:
-- 1. Units (fast, for models over millions of rows): amounts enter as integer units parsed from
--    the exchange's strings (exact_parse_units), the arithmetic runs on units, and a result becomes
--    a DECIMAL only at the end (exact_decimal_*, a multiplication that only sets the scale).
--      quantity and price units: HUGEINT counting 1e-18 (the scale of DECIMAL(38,18)),
--      money units:              HUGEINT counting 1e-12 (DECIMAL(38,12)),
--      fractions:                HUGEINT counting 2^-120 (1 = 2^120), for 0 <= n/d <= 1.
--    A DOUBLE only ever estimates a quotient: the remainder is then computed exactly in int128 and
--    the quotient corrected, so no result depends on floating point. Nothing exceeds int128 for
--    quantities and prices below 1e14 and money below 1e24 (a price of 1e9 times a quantity of
--    1e12 is 1e21, exact). Rounding is half up, except in exact_mul_units and exact_mul_fraction
--    (halves away from zero).
-- 2. Decimals (convenient, for small aggregated tables): exact_qty_units / exact_money_units read a
--    DECIMAL as units (slow: 128-bit division), exact_ratio is n/d in units of 1e-36 by long
--    division, exact_mul and exact_mul_div take and return DECIMALs.
--
-- `list_transform([x], v -> ...)[1]` binds x once: a macro argument used several times would
-- otherwise be copied, and nested macros would grow exponentially. Each macro names its lambda
-- parameters with its own prefix, because a macro argument is substituted as text and would be
-- captured by a lambda parameter of the same name.

-- Units back to DECIMAL.
create or replace macro exact_decimal_18(u) as cast(u as decimal(38, 0)) * cast(0.000000000000000001 as decimal(19, 18));
create or replace macro exact_decimal_16(u) as cast(u as decimal(38, 0)) * cast(0.0000000000000001 as decimal(17, 16));
create or replace macro exact_decimal_12(u) as cast(u as decimal(38, 0)) * cast(0.000000000001 as decimal(13, 12));

-- A quotient estimate: n / d from DOUBLEs, scaled by (1 - 2^-50) and truncated toward zero, so
-- that its magnitude never exceeds |n / d| (estimate * d cannot overflow, and the remainder keeps
-- the sign of n). It is off by at most |n/d| * 2^-49 + 1.
create or replace macro exact_div_estimate(n, d) as
    cast(trunc(cast(n as double) / cast(nullif(d, 0) as double) * 0.9999999999999991) as hugeint);

-- The remainders after one and two estimate rounds (building blocks of exact_floor_div).
create or replace macro exact_div_rem1(n, d) as n - exact_div_estimate(n, d) * d;
create or replace macro exact_div_rem2(n, d) as exact_div_rem1(n, d) - exact_div_estimate(exact_div_rem1(n, d), d) * d;

-- floor(n / d) for d > 0 when |n / d| < 2^48: one estimate, then the remainder, which is in
-- (-2d, 2d) (the estimate is at most one short of n / d, toward zero), corrects it.
create or replace macro exact_floor_div_small(n, d) as
    exact_div_estimate(n, d)
    - case when exact_div_rem1(n, d) < 0 then 1 else 0 end
    - case when exact_div_rem1(n, d) < -d then 1 else 0 end
    + case when exact_div_rem1(n, d) >= d then 1 else 0 end;

-- floor(n / d) for any HUGEINT n and d > 0: each round leaves a quotient 2^49 times smaller, so
-- after two rounds the rest is below 2^48 and one small division finishes. n and d should be
-- columns or cheap expressions: they are repeated (a few dozen times).
create or replace macro exact_floor_div(n, d) as
    exact_div_estimate(n, d)
    + exact_div_estimate(exact_div_rem1(n, d), d)
    + exact_floor_div_small(exact_div_rem2(n, d), d);

-- Money units from units of a finer scale (16 or 18): round(u / 10^(scale - 12)), half up.
create or replace macro exact_units_to_money(u, scale) as
    exact_floor_div(u + cast(power(10, scale - 12) as hugeint) // 2, cast(power(10, scale - 12) as hugeint));

-- q * p in money units, for q and p in units of 1e-18 (a quantity and a price): round(a*b / 1e24).
-- With a = a1*1e15 + a0 and b = b1*1e15 + b0: a*b / 1e24 = a1*b1*1e6 + (a1*b0 + a0*b1) / 1e9 + a0*b0 / 1e24,
-- and x = a1*b0 + a0*b1 is split again as x1*1e9 + x0. The splits need not be exact quotients
-- (DOUBLE estimates: a0 may be a little negative or above 1e15): only the last division, whose
-- quotient is small, must be, and no partial product exceeds int128 for quantities and prices
-- below 1e14. a and b should be non-negative columns (see exact_mul_units).
create or replace macro exact_mul_hi(a) as cast(floor(cast(a as double) / 1e15) as hugeint);
create or replace macro exact_mul_lo(a) as a - exact_mul_hi(a) * 1000000000000000;
create or replace macro exact_mul_x(a, b) as exact_mul_hi(a) * exact_mul_lo(b) + exact_mul_lo(a) * exact_mul_hi(b);
create or replace macro exact_mul_x1(a, b) as cast(floor(cast(exact_mul_x(a, b) as double) / 1e9) as hugeint);
create or replace macro exact_mul_abs(a, b) as
    exact_mul_hi(a) * exact_mul_hi(b) * 1000000
    + exact_mul_x1(a, b)
    + exact_floor_div_small(
        (exact_mul_x(a, b) - exact_mul_x1(a, b) * 1000000000) * 1000000000000000 + exact_mul_lo(a) * exact_mul_lo(b) + cast('500000000000000000000000' as hugeint),
        cast('1000000000000000000000000' as hugeint));
create or replace macro exact_mul_units(a, b) as
    sign(a) * sign(b) * exact_mul_abs(abs(cast(a as hugeint)), abs(cast(b as hugeint)));

-- Binary long division for exact_fraction, as three macros so that a model over millions of rows
-- can run the steps in successive CTEs on columns (each step reads its remainder several times):
--   s0 = exact_fraction_start(n, d), s1 = exact_fraction_step(s0), ..., s6, then exact_fraction_end(s6).
-- The state is {r, d, acc} with 0 <= r < 2d. A step estimates the next 20 bits of r / d from
-- DOUBLEs scaled by (1 - 2^-40): never too large, at most one too small, so the remainder stays
-- in [0, 2d) and the carry lands in acc. Six steps make 120 bits. r * 2^20 stays inside int128
-- for d < 2^106 (a quantity of 8.1e13 in units of 1e-18); a larger d is first shifted right to
-- about 105 bits, n with it, and the fraction then carries an error below 2^-102.
create or replace macro exact_fraction_shift(d) as
    case
        when d < cast('81129638414606681695789005144064' as hugeint) then 0
        else cast(floor(log2(cast(d as double))) as integer) - 104
    end;
create or replace macro exact_fraction_start(n, d) as
    {'r': cast(n as hugeint) >> exact_fraction_shift(d), 'd': cast(d as hugeint) >> exact_fraction_shift(d), 'acc': cast(0 as hugeint)};
create or replace macro exact_fraction_digit(s) as
    cast(floor(cast(s.r as double) / cast(nullif(s.d, 0) as double) * 1048575.99999904632568359375) as hugeint);
create or replace macro exact_fraction_step(s) as
    {'r': s.r * 1048576 - exact_fraction_digit(s) * s.d, 'd': s.d, 'acc': s.acc * 1048576 + exact_fraction_digit(s)};
create or replace macro exact_fraction_end(s) as
    s.acc
    + case when s.r >= s.d then 1 else 0 end
    + case when (s.r - case when s.r >= s.d then s.d else 0 end) * 2 >= s.d then 1 else 0 end;

-- round(n / d * 2^120) for 0 <= n <= d, d > 0, in one expression (n = d gives exactly 2^120).
-- Each step is bound once by list_transform: nesting the steps directly would repeat the first
-- one 2^6 times. For millions of rows, prefer the steps in CTEs (see above): lambdas cost ~0.5 µs.
create or replace macro exact_fraction(n, d) as
    list_transform([exact_fraction_start(n, d)], ef_0 ->
    list_transform([exact_fraction_step(ef_0)], ef_1 ->
    list_transform([exact_fraction_step(ef_1)], ef_2 ->
    list_transform([exact_fraction_step(ef_2)], ef_3 ->
    list_transform([exact_fraction_step(ef_3)], ef_4 ->
    list_transform([exact_fraction_step(ef_4)], ef_5 ->
        exact_fraction_end(exact_fraction_step(ef_5))
    )[1])[1])[1])[1])[1])[1];

-- round(m * t / 2^120) for HUGEINT m of either sign (|m| < 2^120) and a fraction 0 <= t <= 2^120:
-- both split into 60-bit halves, m*t / 2^120 = mh*th + (mh*tl + ml*th) / 2^60 + ml*tl / 2^120,
-- rounded half away from zero. m and t should be columns or cheap expressions (repeated).
create or replace macro exact_mul_fraction_y(m, t) as
    (abs(m) >> 60) * (t & 1152921504606846975) + (abs(m) & 1152921504606846975) * (t >> 60);
create or replace macro exact_mul_fraction(m, t) as
    sign(m) * (
        (abs(m) >> 60) * (t >> 60) + (exact_mul_fraction_y(m, t) >> 60)
        + ((((exact_mul_fraction_y(m, t) & 1152921504606846975) << 60) + (abs(m) & 1152921504606846975) * (t & 1152921504606846975)
            + cast('664613997892457936451903530140172288' as hugeint)) >> 120)
    );

-- round(m * n / d): the share of money m that n of d units carry (0 <= n <= d, d > 0). n = d gives
-- exactly m, so shares read off one cumulative function of n telescope to the whole of m.
create or replace macro exact_share(m, n, d) as
    list_transform([{'m': cast(m as hugeint), 't': exact_fraction(n, d)}], es_v -> exact_mul_fraction(es_v.m, es_v.t))[1];

-- The integer units (value * 10^scale) of a plain decimal string ('-12.5', '7', '3.'; the caller
-- checks the form, with at most `scale` decimals): its digits read as one integer, times
-- 10^(scale - decimals). Exact, and ten times faster than a DECIMAL(38,x) cast of the text.
create or replace macro exact_plain_units(s, scale) as
    cast(replace(s, '.', '') as hugeint) * cast(power(10, scale - (length(s) - coalesce(nullif(strpos(s, '.'), 0), length(s)))) as hugeint);

-- The integer units (value * 10^scale) of a decimal string such as '-12.5', exactly, without a
-- DECIMAL cast. A string with more than `scale` fractional digits, or in another form (an
-- exponent), goes through a DECIMAL(38,18) cast instead (slow, and rounds). scale: 12, 16 or 18.
create or replace macro exact_parse_units(s, scale) as
    case
        when s is null then null
        when regexp_full_match(s, '-?[0-9]+(\.[0-9]*)?') and length(split_part(s, '.', 2)) <= scale
            then exact_plain_units(s, scale)
        else list_transform([cast(s as decimal(38, 18))], pu_x ->
            exact_floor_div(
                cast(trunc(pu_x) as hugeint) * cast(1000000000000000000 as hugeint)
                + cast((pu_x - trunc(pu_x)) * cast(1000000000000000000 as decimal(19, 0)) as hugeint)
                + cast(power(10, 18 - scale) as hugeint) // 2,
                cast(power(10, 18 - scale) as hugeint)))[1]
    end;

-- Decimal layer ---------------------------------------------------------------------------------

-- A DECIMAL(38,18) as HUGEINT units of 1e-18 (integer part and fraction converted apart, since
-- DECIMAL(38,18) * 1e18 would overflow the 38 digits).
create or replace macro exact_qty_units(x) as
    list_transform([cast(x as decimal(38, 18))], qu_x ->
        cast(trunc(qu_x) as hugeint) * cast(1000000000000000000 as hugeint)
        + cast((qu_x - trunc(qu_x)) * cast(1000000000000000000 as decimal(19, 0)) as hugeint))[1];

-- A DECIMAL(38,12) as HUGEINT units of 1e-12.
create or replace macro exact_money_units(x) as
    list_transform([cast(x as decimal(38, 12))], mu_x ->
        cast(trunc(mu_x) as hugeint) * cast(1000000000000 as hugeint)
        + cast((mu_x - trunc(mu_x)) * cast(1000000000000 as decimal(13, 0)) as hugeint))[1];

create or replace macro exact_qty(u) as exact_decimal_18(u);
create or replace macro exact_money(u) as exact_decimal_12(u);

-- round(n / d), half away from zero, for HUGEINT n and d > 0 (DuckDB's // truncates toward zero).
create or replace macro exact_round_div(n, d) as
    n // d + case when abs(n % d) >= d - abs(n % d) then sign(n) else 0 end;

-- One step of decimal long division: the remainder after bringing down 6 more (zero) digits.
-- Needs d < 1.7e32, so that remainder * 1e6 stays inside int128.
create or replace macro exact_ratio_rem(r, d) as (r * 1000000) % d;

-- round(n * 1e36 / d) for 0 <= n <= d < 1.7e32: the integer part, then six chunks of six digits,
-- each from the previous chunk's remainder, then rounding on the last remainder.
create or replace macro exact_ratio_small(n, d) as
    (n // d) * cast('1000000000000000000000000000000000000' as hugeint)
    + ((n % d) * 1000000 // d) * cast('1000000000000000000000000000000' as hugeint)
    + (exact_ratio_rem(n % d, d) * 1000000 // d) * cast('1000000000000000000000000' as hugeint)
    + (exact_ratio_rem(exact_ratio_rem(n % d, d), d) * 1000000 // d) * cast('1000000000000000000' as hugeint)
    + (exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(n % d, d), d), d) * 1000000 // d) * cast('1000000000000' as hugeint)
    + (exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(n % d, d), d), d), d) * 1000000 // d) * cast('1000000' as hugeint)
    + (exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(n % d, d), d), d), d), d) * 1000000 // d)
    + case
        when exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(n % d, d), d), d), d), d), d)
            >= d - exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(exact_ratio_rem(n % d, d), d), d), d), d), d)
        then 1 else 0
    end;

-- The power of ten that cuts d (>= 1e32) to 32 digits.
create or replace macro exact_ratio_cut(d) as
    cast(rpad('1', cast(length(cast(d as varchar)) - 31 as integer), '0') as hugeint);

-- The fraction n / d (0 <= n <= d, d > 0, HUGEINT in the same units) in units of 1e-36. Exact (to
-- the rounding of the last digit) for d < 1e32, above, n and d are first truncated to d's 32
-- leading digits, an error below 1e-31 (n = d still gives exactly 1).
create or replace macro exact_ratio(n, d) as
    list_transform([{'n': cast(n as hugeint), 'd': cast(d as hugeint)}], er_v ->
        case
            when er_v.d < cast('100000000000000000000000000000000' as hugeint) then exact_ratio_small(er_v.n, er_v.d)
            else exact_ratio_small(er_v.n // exact_ratio_cut(er_v.d), er_v.d // exact_ratio_cut(er_v.d))
        end)[1];

-- round(m * r / 1e36) for HUGEINT m of either sign and a ratio 0 <= r <= 1e36 (units of 1e-36).
create or replace macro exact_mul_ratio(m, r) as
    list_transform([{'m': abs(cast(m as hugeint)), 's': sign(cast(m as hugeint)), 'r': cast(r as hugeint)}], em_v ->
        em_v.s * (
            (em_v.m // 1000000000000000000) * (em_v.r // 1000000000000000000)
            + ((em_v.m // 1000000000000000000) * (em_v.r % 1000000000000000000) + (em_v.m % 1000000000000000000) * (em_v.r // 1000000000000000000)) // 1000000000000000000
            + exact_round_div(
                (((em_v.m // 1000000000000000000) * (em_v.r % 1000000000000000000) + (em_v.m % 1000000000000000000) * (em_v.r // 1000000000000000000)) % 1000000000000000000) * 1000000000000000000
                + (em_v.m % 1000000000000000000) * (em_v.r % 1000000000000000000),
                cast('1000000000000000000000000000000000000' as hugeint))
        ))[1];

-- q * p for two DECIMAL(38,18) (a quantity and a price) as DECIMAL(38,12), exactly rounded.
create or replace macro exact_mul(q, p) as
    list_transform([{'a': exact_qty_units(q), 'b': exact_qty_units(p)}], em_u -> exact_decimal_12(exact_mul_units(em_u.a, em_u.b)))[1];

-- m * p for money m (DECIMAL(38,12), any size whose product fits) and a price p (DECIMAL(38,18)) as
-- DECIMAL(38,12), exactly rounded (halves away from zero, as exact_mul). exact_mul reads m as units of
-- 1e-18, which leave int128 from |m| = 1.7e20 on; here a = |m| in units of 1e-12 is split as
-- a1 * 1e18 + a0: round(a * b / 1e18) = a1 * b + round(a0 * 1e6 * b / 1e24), and a0 * 1e6 < 1e24
-- is a quantity for exact_mul_abs. a1 * b overflows only when the product itself would not fit.
create or replace macro exact_mul_money(m, p) as
    list_transform([{'a': exact_money_units(m), 'b': exact_qty_units(p)}], mm_u ->
        exact_decimal_12(sign(mm_u.a) * sign(mm_u.b) * list_transform([{'a': abs(mm_u.a), 'b': abs(mm_u.b)}], mm_v ->
            (mm_v.a // cast(1000000000000000000 as hugeint)) * mm_v.b
            + exact_mul_abs((mm_v.a % cast(1000000000000000000 as hugeint)) * 1000000, mm_v.b))[1]))[1];

-- m * n / d for money m (DECIMAL(38,12)) and quantities 0 <= n <= d (DECIMAL(38,18)), d > 0, as
-- DECIMAL(38,12): the share of m that n of d units carry.
create or replace macro exact_mul_div(m, n, d) as
    list_transform([{'m': exact_money_units(m), 'n': exact_qty_units(n), 'd': exact_qty_units(d)}], ed_u ->
        exact_decimal_12(exact_share(ed_u.m, ed_u.n, ed_u.d)))[1];
