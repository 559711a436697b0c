-- The daily payout limit (SPEC 4.3, Africa/Accra day) was checked by summing the merchant's payouts of
-- the day under a per-merchant lock: work that grew with every payout of the day, and a lock held across
-- round trips. This keeps the running total instead, written in the transaction of each change that
-- moves it (+ amount when a payout is created, - amount when it fails or is cancelled; returned payouts
-- still count, as before), with the limit in force when it last grew. The CHECK makes the limit hold
-- under any concurrency: two payouts racing for the last of the day's allowance cannot both commit.
CREATE TABLE payout_day_totals (
  merchant_id uuid NOT NULL,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  day date NOT NULL,
  committed_minor bigint NOT NULL CHECK (committed_minor >= 0),
  limit_minor bigint NOT NULL,
  PRIMARY KEY (merchant_id, environment, day),
  CONSTRAINT payout_day_totals_within_limit CHECK (committed_minor <= limit_minor)
);

-- Accra is UTC+0 all year: the Accra day of a payout is the date of created_at there.
INSERT INTO payout_day_totals (merchant_id, environment, day, committed_minor, limit_minor)
SELECT p.merchant_id, p.environment, (p.created_at AT TIME ZONE 'Africa/Accra')::date, sum(p.amount_minor),
       greatest(sum(p.amount_minor), max(s.daily_limit_minor))
  FROM payouts p LEFT JOIN payout_settings s ON s.merchant_id = p.merchant_id AND s.environment = p.environment
 WHERE p.status NOT IN ('failed', 'cancelled')
 GROUP BY 1, 2, 3;
