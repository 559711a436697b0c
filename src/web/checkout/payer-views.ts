// Each payer view a rail descriptor can name (src/rails/registry.ts, payerView), and the module that draws
// it. The registry names a view rather than importing it (rails know nothing of pages); a view added there
// does not compile until it has its module here.
import type { PayerView } from '../../rails/registry.ts';
import type { RailPayerView } from './page-model.ts';
import { bankTransferView } from './payer-views/bank-transfer.ts';
import { cardView } from './payer-views/card.ts';
import { cashSlipView } from './payer-views/cash-slip.ts';
import { confirmationView } from './payer-views/confirmation.ts';
import { mobileMoneyView } from './payer-views/mobile-money.ts';

export const PAYER_VIEWS: Record<PayerView, RailPayerView> = {
  mobile_money: mobileMoneyView,
  card: cardView,
  bank_transfer: bankTransferView,
  cash_slip: cashSlipView,
  confirmation: confirmationView,
};
