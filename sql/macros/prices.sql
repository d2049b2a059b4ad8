-- Valuation in the reporting currency (docs/workbooks.md "Reporting currency"). A mart joins
-- intermediate.int_prices on (coin, day) and settings.reporting, then:
--   valued_price(coin, currency, price): the coin's price that day; the reporting currency itself is
--     1 ('identity'); NULL without a reporting currency or without a price (unknown, never 0);
--   valued_source(coin, currency, source): 'identity', the price's source, or NULL;
--   valued_amount(amount, price, currency): amount * price, exact (exact_mul), as DECIMAL(38,12). An
--     amount of exactly 0 is 0 in any currency and needs no price; any other amount without a price
--     is NULL, and every amount is NULL without a reporting currency.
--   valued_money(amount, price, currency): valued_amount of money in DECIMAL(38,12) (spot realized PnL),
--     which may reach 1e20 and more (exact_mul reads its amount as DECIMAL(38,18)): from 1e20 on
--     through exact_mul_money, below through exact_mul as valued_amount (the same result).
create or replace macro valued_price(coin, currency, price) as
    case when currency is null then null when coin = currency then cast(1 as decimal(38, 18)) else cast(price as decimal(38, 18)) end;
create or replace macro valued_source(coin, currency, source) as
    case when currency is null then null when coin = currency then 'identity' else source end;
create or replace macro valued_amount(amount, price, currency) as
    case when amount is null or currency is null then null when amount = 0 then cast(0 as decimal(38, 12)) when price is null then null else exact_mul(amount, price) end;
create or replace macro valued_money(amount, price, currency) as
    case
        when amount is null or currency is null then null
        when amount = 0 then cast(0 as decimal(38, 12))
        when price is null then null
        -- A DECIMAL literal (not the DOUBLE 1e20): the comparison is exact.
        when abs(amount) < 100000000000000000000.0 then exact_mul(amount, price)
        else exact_mul_money(amount, price)
    end;
