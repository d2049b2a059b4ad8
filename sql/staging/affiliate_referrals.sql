-- Referral figures per invited user and UTC day (the exchange returns totals per requested range).
-- Key: (account, uid, activity_date). Input: raw.affiliate_referrals.
with source as (
    select * from raw.affiliate_referrals
),

deduplicated as (
    select * from source
    qualify row_number() over (partition by _account, _key order by _fetched_at desc, _run_id desc) = 1
),

final as (
    select
        _account as account,
        _record->>'uid' as uid,
        cast(make_timestamptz(_event_ms * 1000) at time zone 'UTC' as date) as activity_date,
        cast(_record->>'depositAmount' as decimal(38, 18)) as deposit_amount,
        cast(_record->>'withdrawalAmount' as decimal(38, 18)) as withdrawal_amount,
        cast(_record->>'spotTradingAmount' as decimal(38, 18)) as spot_trading_amount,
        cast(_record->>'futuresTradingAmount' as decimal(38, 18)) as futures_trading_amount,
        cast(_record->>'commission' as decimal(38, 18)) as commission,
        _run_id,
        _fetched_at
    from deduplicated
)

select * from final
