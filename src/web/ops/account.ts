// Operator console: the signed-in operator's account (change password, the TOTP second factor every
// operator must use, with recovery codes): the dashboard's pages, ../console-account.ts, for operators.
// It cannot be turned off here; another operator's reset (operators.ts) or `sika operator reset` clears it.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { consoleAccountPages } from '../console-account.ts';

export async function operatorAccountPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await consoleAccountPages(app, deps, 'operator', null);
}
