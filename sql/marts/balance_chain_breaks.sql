-- Bills that do not continue their coin's chain: after_amount - delta_amount differs from the previous bill's after_amount.
-- Key: (account, bill_id). Input: intermediate.int_ledger_events.
-- A coin's first synced bill starts its chain (history may begin after the account was funded), so it is never a break.
-- gap = found - expected: what happened between the two bills that no synced bill shows (a missing or altered bill).
with events as (
    select * from intermediate.int_ledger_events
),

final as (
    select
        account,
        coin_name,
        bill_id,
        c_time_at,
        biz_type,
        delta_amount,
        after_amount,
        previous_after_amount as expected_before_amount,
        before_amount as found_before_amount,
        before_amount - previous_after_amount as gap,
        previous_bill_id,
        previous_c_time_at,
        c_time_month,
        'balance_chain_breaks/' || concat_ws('/', ref_part(account), ref_part(bill_id)) as reference
    from events
    where previous_after_amount is not null
        and before_amount <> previous_after_amount
)

select * from final
