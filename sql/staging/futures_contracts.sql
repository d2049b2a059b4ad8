-- Futures contracts, one row per contract per snapshot.
-- Key: (account, snapshot_at, symbol). Input: raw.futures_contracts.
with source as (
    select * from raw.futures_contracts where _seq >= 0
),

final as (
    select
        _account as account,
        _snapshot_at as snapshot_at,
        _record->>'symbol' as symbol,
        _record->>'underlying_index' as underlying_index,
        _record->>'quote_currency' as quote_currency,
        _record->>'coin' as coin,
        parse_decimal_18(_record->>'contract_val') as contract_val,
        parse_decimal_18(nullif(_record->>'size_increment', '')) as size_increment,
        parse_decimal_18(nullif(_record->>'tick_size', '')) as tick_size,
        parse_decimal_18(nullif(_record->>'makerFeeRate', '')) as maker_fee_rate,
        parse_decimal_18(nullif(_record->>'takerFeeRate', '')) as taker_fee_rate,
        cast(_record->>'forwardContractFlag' as boolean) as is_forward_contract,
        _run_id,
        _fetched_at
    from source
)

select * from final
