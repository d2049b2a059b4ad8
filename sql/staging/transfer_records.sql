-- Transfer records, one row per transfer; identical transfers are distinct rows.
-- Key: (account, record_key) where record_key = time:content-hash:occurrence (no id on the wire).
-- Input: raw.transfer_records.
with source as (
    select * from first_fetches('raw.transfer_records')
),

final as (
    select
        _account as account,
        _key as record_key,
        _record->>'coinName' as coin_name,
        _record->>'status' as status,
        nullif(_record->>'toType', '') as to_type,
        nullif(_record->>'toSymbol', '') as to_symbol,
        nullif(_record->>'fromType', '') as from_type,
        nullif(_record->>'fromSymbol', '') as from_symbol,
        parse_decimal_18(_record->>'amount') as amount,
        make_timestamptz(cast(_record->>'tradeTime' as bigint) * 1000) as trade_time_at,
        _key,
        _run_id,
        _fetched_at
    from source
)

select * from final
