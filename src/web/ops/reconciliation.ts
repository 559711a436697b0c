// The operator console's Reconciliation page (/ops/reconciliation?provider=&day=, docs/reconciliation.md):
// for a provider and an Africa/Accra day (yesterday by default), Sika's records against the provider's
// report and the differences. A provider or day that is not one is a 400 page with the form.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { collectionAccounts } from '../../rails/bank-transfer/accounts.ts';
import { isReconciliationProvider, parseDay, reconcileDay, yesterdayInAccra } from '../../reconciliation/service.ts';
import { sessionOf, pageSender } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html } from '../html.ts';
import { reconciliationForm, reconciliationView } from './reconciliation-views.ts';

const DEFAULT_PROVIDER = 'paystack';

export async function reconciliationPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const show = pageSender('operator', 'reconciliation');

  app.get<{ Querystring: { provider?: string; day?: string } }>(
    '/ops/reconciliation',
    { schema: { hide: true, ...opsSchemas.reconciliation } },
    async (request, reply) => {
      const session = sessionOf(request);
      const provider = request.query.provider || DEFAULT_PROVIDER;
      const dayText = request.query.day || yesterdayInAccra(new Date());
      const refuse = (message: string) =>
        show(
          reply,
          session,
          'Reconciliation',
          html`<h1>Reconciliation</h1>${reconciliationForm(isReconciliationProvider(provider) ? provider : null, '')}`,
          { message, error: true },
          400,
        );
      if (!isReconciliationProvider(provider))
        return refuse('Choose a provider: Paystack, MTN MoMo or Bank transfers.');
      const day = parseDay(dayText);
      if (!day)
        return refuse(
          'The day must be a calendar date written YYYY-MM-DD (an Africa/Accra day), for example 2026-03-02.',
        );
      const reconciliation = await reconcileDay(
        deps.db,
        deps.providers,
        provider,
        day,
        collectionAccounts(deps.config.providers.bankTransfer),
      );
      return show(reply, session, 'Reconciliation', reconciliationView(reconciliation));
    },
  );
}
