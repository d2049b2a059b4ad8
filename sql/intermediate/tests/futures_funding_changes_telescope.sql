-- Per collateral entry, the funding changes in intermediate.int_futures_funding_changes add up to the running total's
-- change from the entry's first snapshot to its last (staging.futures_collateral), and there is one change per later snapshot.
-- Checking what changed: whole (no {{ changed }}). An entry's telescope runs from its first snapshot to its last, and
-- both tables hold a row per entry and snapshot: small next to the fills.
with snapshots as (
    select
        account, coin_id, margin_mode, cross_contract_id, isolated_position_id,
        count(*) - 1 as expected_changes,
        arg_min(cum_position_funding_amount, snapshot_at) - arg_max(cum_position_funding_amount, snapshot_at) as expected_funding
    from staging.futures_collateral
    group by all
),

changes as (
    select
        account, coin_id, margin_mode, cross_contract_id, isolated_position_id,
        count(*) as changes,
        sum(funding) as funding
    from intermediate.int_futures_funding_changes
    group by all
)

select *
from snapshots
left join changes using (account, coin_id, margin_mode, cross_contract_id, isolated_position_id)
where coalesce(changes.changes, 0) <> snapshots.expected_changes
    or (snapshots.expected_changes > 0 and changes.funding is distinct from snapshots.expected_funding)
