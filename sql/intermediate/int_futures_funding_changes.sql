-- Futures funding between two consecutive snapshots of one collateral entry, one row per later snapshot.
-- Key: (account, coin_id, margin_mode, cross_contract_id, isolated_position_id, snapshot_at).
-- Inputs: staging.futures_collateral, staging.currencies (coin names), settings.reporting (days and months).
-- funding = -(cum_position_funding_amount now - at the previous snapshot): received positive, paid negative.
with collateral as (
    select * from staging.futures_collateral
),

currencies as (
    select * from staging.currencies
),

reporting as (
    select time_zone from settings.reporting
),

-- The latest name listed for each coin id (a coin delisted since keeps its last known name).
coin_names as (
    select coin_id, arg_max(coin_name, snapshot_at) as coin_name
    from currencies
    group by coin_id
),

consecutive as (
    select
        account,
        coin_id,
        margin_mode,
        cross_contract_id,
        isolated_position_id,
        snapshot_at,
        cum_position_funding_amount,
        lag(snapshot_at) over entry_snapshots as previous_snapshot_at,
        lag(cum_position_funding_amount) over entry_snapshots as previous_cum_position_funding_amount
    from collateral
    window entry_snapshots as (
        partition by account, coin_id, margin_mode, cross_contract_id, isolated_position_id
        order by snapshot_at
    )
),

final as (
    select
        consecutive.account,
        consecutive.coin_id,
        -- A coin id missing from every currencies snapshot is shown as its id, so its funding is not dropped.
        coalesce(coin_names.coin_name, 'coin_id ' || consecutive.coin_id) as margin_coin,
        consecutive.margin_mode,
        consecutive.cross_contract_id,
        consecutive.isolated_position_id,
        consecutive.previous_snapshot_at,
        consecutive.snapshot_at,
        local_date(consecutive.snapshot_at, reporting.time_zone) as snapshot_date,
        cast(date_trunc('month', local_date(consecutive.snapshot_at, reporting.time_zone)) as date) as snapshot_month,
        consecutive.previous_cum_position_funding_amount,
        consecutive.cum_position_funding_amount,
        -- The running total counts funding the account pays as positive, like the fee totals beside it
        -- (exchange-api.md 2.11 "accumulated funding fees"; the sandbox's futures-ledger.ts books it so).
        consecutive.previous_cum_position_funding_amount - consecutive.cum_position_funding_amount as funding
    from consecutive
    cross join reporting
    left join coin_names using (coin_id)
    -- The first snapshot of an entry has nothing to compare with: no row, rather than a 0 that pretends to be known.
    where consecutive.previous_snapshot_at is not null
)

select * from final
