-- One name per concept (issue 15): a Mobile Money attempt's MTN / Telecel / AT is its network, as on
-- recipients and in payout capabilities; "operator" is the Sika staff member of the operator console.
-- The payer API keeps the SPEC's wire field `operator` (attempt body and instructions).
ALTER TABLE payment_attempts RENAME COLUMN operator TO network;
ALTER TABLE payment_attempts RENAME CONSTRAINT payment_attempts_operator_check TO payment_attempts_network_check;
