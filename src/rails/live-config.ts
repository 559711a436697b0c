// The Live providers the configuration enables, in LIVE_PROVIDER_ORDER (README "Going live"). A provider is
// enabled by its credentials; Live bank transfers by the collection account's settings; the rehearsal
// payout simulator only by LIVE_PAYOUT_SIMULATOR=on.
import type { Config } from '../config/index.ts';
import { createBankTransfer } from './bank-transfer/index.ts';
import { LiveProviders, type LiveProviderEntry } from './live.ts';
import { createMtnMomo, type MtnMomo } from './mtn-momo/index.ts';
import { createPaystack, type Paystack } from './paystack/index.ts';
import { LivePayoutSimulator } from './payouts.ts';

/** The provider-specific plumbing beyond the rail interfaces: Paystack's webhooks and refunds, MTN's callback. */
export interface ConfiguredProviders {
  providers: LiveProviders;
  paystack: Paystack | null;
  mtnMomo: MtnMomo | null;
}

/** Where MTN MoMo is asked to call back (unsigned: only ever a hint to ask the status). */
export const mtnCallbackUrl = (config: Config) => `${config.baseUrl}/api/v1/providers/mtn-momo/callback`;

export function configureProviders(config: Config): ConfiguredProviders {
  const settings = config.providers;
  const paystack = settings.paystack ? createPaystack({ ...settings.paystack, timeoutMs: settings.timeoutMs }) : null;
  const mtnMomo = settings.mtnMomo
    ? createMtnMomo({ ...settings.mtnMomo, timeoutMs: settings.timeoutMs, callbackUrl: mtnCallbackUrl(config) })
    : null;
  const byId: Record<string, LiveProviderEntry | null> = {
    mtn_momo: mtnMomo
      ? { id: 'mtn_momo', collection: mtnMomo.collection, payouts: mtnMomo.payouts, refunds: mtnMomo.refunds }
      : null,
    paystack: paystack
      ? { id: 'paystack', collection: paystack.collection, payouts: paystack.payouts, refunds: paystack.refunds }
      : null,
  };
  const entries: LiveProviderEntry[] = settings.order.flatMap((id) => (byId[id] ? [byId[id]] : []));
  // A configured provider left out of the order still serves what nobody before it does.
  for (const entry of Object.values(byId)) if (entry && !entries.includes(entry)) entries.push(entry);
  if (settings.bankTransfer)
    entries.push({ id: 'bank_statement', collection: createBankTransfer(settings.bankTransfer) });
  if (config.livePayoutSimulator) entries.unshift({ id: 'live_simulator', payouts: new LivePayoutSimulator() });
  return {
    providers: new LiveProviders(entries, { paystack, mtnMomo, reports: { paystack: paystack?.reports ?? null } }),
    paystack,
    mtnMomo,
  };
}

export const createLiveProviders = (config: Config): LiveProviders => configureProviders(config).providers;
