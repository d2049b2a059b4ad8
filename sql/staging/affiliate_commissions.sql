-- Affiliate commission records, one row per record; identical records are distinct rows.
-- Key: (account, record_key) where record_key = time:content-hash:occurrence (no id on the wire).
-- Input: raw.affiliate_commissions; product_type comes from the request (the record may not carry it).
with source as (
    select * from first_fetches('raw.affiliate_commissions')
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
        parse_decimal_18(_record->>'fee') as fee,
        parse_decimal_18(_record->>'commission') as commission,
        parse_decimal_18(nullif(_record->>'rate', '')) as rate,
        parse_decimal_18(nullif(_record->>'takerAmount', '')) as taker_amount,
        parse_decimal_18(nullif(_record->>'makerAmount', '')) as maker_amount,
        make_timestamptz(cast(coalesce(_record->>'dealTime', _record->>'date') as bigint) * 1000) as deal_time_at,
        _key,
        _run_id,
        _fetched_at
    from source
)

select * from final
