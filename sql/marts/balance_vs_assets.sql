-- Reconciliation, not a check: the funding account's balance from its bills against the latest spot assets snapshot,
-- per account and coin. Key: (account, coin_name). Inputs: intermediate.int_ledger_events, staging.spot_assets, staging.snapshots.
-- The exchange documents spot assets and funding account bills as separate account data (exchange-api.md 2.4, 2.5),
-- so the two may legitimately differ: is_different marks the coins to explain; no SQL test fails on it.
-- The bill balance is the after_amount of the last bill at or before the snapshot (bills after it are counted, not used);
-- it is compared with equity (= available + frozen: the snapshot's total). A coin on one side only counts as 0 on the other.
-- An account without any assets snapshot has snapshot_at, assets_equity, difference and is_different null: nothing to compare with.
with events as (
    select * from intermediate.int_ledger_events
),

assets as (
    select * from staging.spot_assets
),

snapshots as (
    select * from staging.snapshots
),

-- The latest snapshot per account, an empty one included (then every coin's assets are 0).
latest_snapshots as (
    select account, max(snapshot_at) as snapshot_at
    from snapshots
    where stream = 'spot_assets'
    group by account
),

latest_assets as (
    select
        assets.account,
        assets.coin_name,
        assets.available,
        assets.frozen,
        coalesce(assets.equity, assets.available + assets.frozen) as equity
    from assets
    inner join latest_snapshots using (account, snapshot_at)
),

bill_balances as (
    select
        events.account,
        events.coin_name,
        arg_max(events.after_amount, events.chain_seq)
            filter (where events.c_time_at <= latest_snapshots.snapshot_at) as bill_balance,
        arg_max(events.bill_id, events.chain_seq)
            filter (where events.c_time_at <= latest_snapshots.snapshot_at) as bill_balance_bill_id,
        max(events.c_time_at) filter (where events.c_time_at <= latest_snapshots.snapshot_at) as bill_balance_at,
        count(*) filter (where events.c_time_at > latest_snapshots.snapshot_at) as bills_after_snapshot,
        arg_max(events.after_amount, events.chain_seq) as closing_balance,
        max(events.c_time_at) as last_bill_at
    from events
    left join latest_snapshots using (account)
    group by events.account, events.coin_name
),

coins as (
    select account, coin_name from bill_balances
    union
    select account, coin_name from latest_assets
),

final as (
    select
        coins.account,
        coins.coin_name,
        case
            when bill_balances.coin_name is null then 'assets_only'
            when latest_assets.coin_name is null then 'bills_only'
            else 'both'
        end as found_in,
        latest_snapshots.snapshot_at,
        bill_balances.closing_balance,
        bill_balances.last_bill_at,
        bill_balances.bill_balance,
        bill_balances.bill_balance_bill_id,
        bill_balances.bill_balance_at,
        coalesce(bill_balances.bills_after_snapshot, 0) as bills_after_snapshot,
        latest_assets.available as assets_available,
        latest_assets.frozen as assets_frozen,
        case when latest_snapshots.snapshot_at is not null then coalesce(latest_assets.equity, 0) end as assets_equity,
        case
            when latest_snapshots.snapshot_at is not null
                then coalesce(latest_assets.equity, 0) - coalesce(bill_balances.bill_balance, 0)
        end as difference,
        case
            when latest_snapshots.snapshot_at is not null
                then coalesce(latest_assets.equity, 0) <> coalesce(bill_balances.bill_balance, 0)
        end as is_different
    from coins
    left join bill_balances using (account, coin_name)
    left join latest_assets using (account, coin_name)
    left join latest_snapshots using (account)
)

select * from final
