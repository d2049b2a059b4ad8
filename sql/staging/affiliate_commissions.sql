-- Affiliate commission records, one row per record; identical records are distinct rows.
-- Key: (account, record_key) where record_key = time:content-hash:occurrence (no id on the wire).
-- Input: raw.affiliate_commissions; product_type comes from the request (the record may not carry it).
with source as (
    select * from raw.affiliate_commissions
),

deduplicated as (
    select * from source
    qualify row_number() over (partition by _account, _partition, _key order by _fetched_at, _run_id) = 1
),

final as (
    select
        _account as account,
        _key as record_key,
        _record->>'uid' as uid,
        coalesce(_record->>'productType', regexp_extract(_partition, 'productType=([A-Z]+)', 1)) as product_type,
        _record->>'coin' as coin,
        _record->>'symbol' as symbol,
        cast(_record->>'sourceType' as integer) as source_type,
        cast(_record->>'fee' as decimal(38, 18)) as fee,
        cast(_record->>'commission' as decimal(38, 18)) as commission,
        cast(nullif(_record->>'rate', '') as decimal(38, 18)) as rate,
        cast(nullif(_record->>'takerAmount', '') as decimal(38, 18)) as taker_amount,
        cast(nullif(_record->>'makerAmount', '') as decimal(38, 18)) as maker_amount,
        make_timestamptz(cast(coalesce(_record->>'dealTime', _record->>'date') as bigint) * 1000) as deal_time_at,
        _run_id,
        _fetched_at
    from deduplicated
)

select * from final
