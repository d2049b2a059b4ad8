-- Referral figures per invited user and UTC day (the exchange returns totals per requested range).
-- Key: (account, uid, activity_date). Input: raw.affiliate_referrals.
-- A re-read of a day replaces its stored totals (src/store/raw-store.ts replaceWindow), so the raw
-- table holds one row per key and first_fetches, the rule of every stream, drops nothing here.
with source as (
    select * from first_fetches('raw.affiliate_referrals')
),

final as (
    select
        _account as account,
        _record->>'uid' as uid,
        cast(make_timestamptz(_event_ms * 1000) at time zone 'UTC' as date) as activity_date,
        parse_decimal_18(_record->>'depositAmount') as deposit_amount,
        parse_decimal_18(_record->>'withdrawalAmount') as withdrawal_amount,
        parse_decimal_18(_record->>'spotTradingAmount') as spot_trading_amount,
        parse_decimal_18(_record->>'futuresTradingAmount') as futures_trading_amount,
        parse_decimal_18(_record->>'commission') as commission,
        _key,
        _run_id,
        _fetched_at
    from source
)

select * from final
