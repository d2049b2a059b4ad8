-- Reconciliation, not a check: the funding account's balance from its bills against each spot assets snapshot,
-- per account, coin and snapshot. Key: (account, coin_name, snapshot_at). Inputs: intermediate.int_ledger_events, staging.spot_assets, staging.snapshots.
-- The exchange documents spot assets and funding account bills as separate account data (exchange-api.md 2.4, 2.5),
-- so the two may legitimately differ: is_different marks the coins to explain; no SQL test fails on it.
-- The bill balance is the after_amount of the last bill at or before the snapshot (bills after it are counted, not used);
-- it is compared with equity (= available + frozen: the snapshot's total). A coin on one side only counts as 0 on the other.
-- Every snapshot is kept: a workbook compares with the one nearest the end of its period (reports/balances.ts).
-- An account without any assets snapshot has one row per coin with snapshot_at, assets_equity, difference and is_different null.
with events as (
    select * from intermediate.int_ledger_events
),

assets as (
    select * from staging.spot_assets
),

snapshots as (
    select * from staging.snapshots
),

-- Every spot assets snapshot per account, an empty one included (then every coin's assets are 0).
assets_snapshots as (
    select distinct account, snapshot_at
    from snapshots
    where stream = 'spot_assets'
),

snapshot_assets as (
    select
        assets.account,
        assets.coin_name,
        assets.snapshot_at,
        assets.available,
        assets.frozen,
        coalesce(assets.equity, assets.available + assets.frozen) as equity
    from assets
    inner join assets_snapshots using (account, snapshot_at)
),

-- Per coin and bill time: the balance after its last bill there (chain order) and the coin's bills up to then.
bill_steps as (
    select
        account,
        coin_name,
        c_time_at,
        arg_max(after_amount, chain_seq) as after_amount,
        arg_max(bill_id, chain_seq) as bill_id,
        sum(count(*)) over (partition by account, coin_name order by c_time_at) as bills_so_far
    from events
    group by account, coin_name, c_time_at
),

coin_totals as (
    select
        account,
        coin_name,
        count(*) as bill_count,
        arg_max(after_amount, chain_seq) as closing_balance,
        max(c_time_at) as last_bill_at
    from events
    group by account, coin_name
),

-- Each coin with bills, at each snapshot of its account (snapshot_at null: the account has none).
bill_pairs as (
    select
        coin_totals.*,
        assets_snapshots.snapshot_at
    from coin_totals
    left join assets_snapshots using (account)
),

bill_balances as (
    select
        bill_pairs.account,
        bill_pairs.coin_name,
        bill_pairs.snapshot_at,
        bill_pairs.closing_balance,
        bill_pairs.last_bill_at,
        bill_steps.after_amount as bill_balance,
        bill_steps.bill_id as bill_balance_bill_id,
        bill_steps.c_time_at as bill_balance_at,
        case
            when bill_pairs.snapshot_at is null then 0
            else bill_pairs.bill_count - coalesce(bill_steps.bills_so_far, 0)
        end as bills_after_snapshot
    from bill_pairs
    asof left join bill_steps
        on bill_steps.account = bill_pairs.account
        and bill_steps.coin_name = bill_pairs.coin_name
        and bill_steps.c_time_at <= bill_pairs.snapshot_at
),

coins as (
    select account, coin_name, snapshot_at from bill_balances
    union
    select account, coin_name, snapshot_at from snapshot_assets
),

final as (
    select
        coins.account,
        coins.coin_name,
        case
            when bill_balances.coin_name is null then 'assets_only'
            when snapshot_assets.coin_name is null then 'bills_only'
            else 'both'
        end as found_in,
        coins.snapshot_at,
        bill_balances.closing_balance,
        bill_balances.last_bill_at,
        bill_balances.bill_balance,
        bill_balances.bill_balance_bill_id,
        bill_balances.bill_balance_at,
        coalesce(bill_balances.bills_after_snapshot, 0) as bills_after_snapshot,
        snapshot_assets.available as assets_available,
        snapshot_assets.frozen as assets_frozen,
        case when coins.snapshot_at is not null then coalesce(snapshot_assets.equity, 0) end as assets_equity,
        case
            when coins.snapshot_at is not null
                then coalesce(snapshot_assets.equity, 0) - coalesce(bill_balances.bill_balance, 0)
        end as difference,
        case
            when coins.snapshot_at is not null
                then coalesce(snapshot_assets.equity, 0) <> coalesce(bill_balances.bill_balance, 0)
        end as is_different,
        'balance_vs_assets/' || concat_ws('/', ref_part(coins.account), ref_part(coins.coin_name), ref_part(ref_instant(coins.snapshot_at))) as reference
    from coins
    left join bill_balances
        on bill_balances.account = coins.account
        and bill_balances.coin_name = coins.coin_name
        and bill_balances.snapshot_at is not distinct from coins.snapshot_at
    left join snapshot_assets
        on snapshot_assets.account = coins.account
        and snapshot_assets.coin_name = coins.coin_name
        and snapshot_assets.snapshot_at = coins.snapshot_at
)

select * from final
