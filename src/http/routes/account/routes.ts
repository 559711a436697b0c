// The merchant's own account (issue 33): whether Live is open for it and what is missing. Open to any key of
// the merchant, Test or Live, even while not approved or suspended (liveOpen): it is how a merchant's code
// learns why Live calls are refused.
import type { FastifyInstance } from 'fastify';
import { findAccount } from '../../../accounts/activation.ts';
import { errors } from '../../../lib/errors.ts';
import { principalOf } from '../../auth.ts';
import type { AppDeps } from '../../deps.ts';
import { described, errorResponses } from '../../schemas.ts';
import { Account } from './schemas.ts';

export async function accountRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get(
    '/api/v1/account',
    {
      config: { liveOpen: true },
      schema: {
        operationId: 'retrieveAccount',
        tags: ['Account'],
        summary: 'Retrieve your account',
        description:
          "The calling key's merchant: its activation (Live is open once approved) and whether it is suspended. Answers any key, Test or Live, whatever the account's standing.",
        response: { 200: described(Account, 'The account.'), ...errorResponses(401, 429) },
      },
    },
    async (request) => {
      const account = await findAccount(deps.db, principalOf(request).merchantId);
      if (!account) throw errors.unauthorized();
      return account;
    },
  );
}
