// Which deployment a `sika` command acts for: links (sign-in links, payer URLs) and the webhook target rule
// come from what the server was started with, recorded in storage at its start (src/db/deployment-settings.ts),
// never from the CLI's own shell, which on a hosted database usually knows neither BASE_URL nor the rule.
// Inside the running server (src/cli/forward.ts) they are the server's own settings.
import type { Config } from '../config/index.ts';
import { readDeploymentSettings, type DeploymentSettings } from '../db/deployment-settings.ts';
import type { Queryable } from '../db/index.ts';

export type { DeploymentSettings };

/** The settings a server started with, from its configuration. */
export const deploymentSettingsOf = (config: Config): DeploymentSettings => ({
  baseUrl: config.baseUrl,
  checkoutUrlHost: config.checkoutUrlHost,
  webhookAllowPrivateTargets: config.webhookAllowPrivateTargets,
});

/**
 * The recorded settings of the server last started on this storage. When none has ever started there, the
 * CLI's own configuration, with a warning naming what it used: setting up merchants before the first start
 * (`sika migrate`, `sika merchant create`) is a fair order, and refusing it would only send people to guess
 * the same variables by hand.
 */
export async function storedDeploymentSettings(
  db: Queryable,
  own: () => Config,
  warn: (line: string) => void,
): Promise<DeploymentSettings> {
  const recorded = await readDeploymentSettings(db);
  if (recorded)
    return {
      baseUrl: recorded.baseUrl,
      checkoutUrlHost: recorded.checkoutUrlHost,
      webhookAllowPrivateTargets: recorded.webhookAllowPrivateTargets,
    };
  const settings = deploymentSettingsOf(own());
  warn(
    `warning: no Sika server has started on this storage yet, so this command uses this shell's settings: BASE_URL ${settings.baseUrl}, ` +
      `CHECKOUT_URL_HOST ${settings.checkoutUrlHost}, private webhook targets ${settings.webhookAllowPrivateTargets ? 'allowed' : 'refused'}. ` +
      'Once the server has started, commands use its settings.',
  );
  return settings;
}
