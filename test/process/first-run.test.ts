// The first run (issue 19 part 1): `npm start`'s server (src/main.ts, a real child process) on an empty
// database with a loopback BASE_URL creates a demo merchant and prints its Test key and a one-time dashboard
// sign-in link; the key works on the API, the link signs in once (a second use gets a page saying so) and
// offers a first password, a restart prints nothing, and neither a non-loopback BASE_URL nor DEMO_MERCHANT=off
// creates anything. Each
// run gets fresh storage: a temp data dir, or a private database on DATABASE_URL's server, where two
// servers starting at once print one demo merchant between them.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import { createServer } from 'node:http';
import { createDemoMerchantOnFirstRun } from '../../src/accounts/demo-merchant.ts';
import { createMerchant } from '../../src/accounts/service.ts';
import { trigger } from '../../src/cli/trigger.ts';
import { loadConfig } from '../../src/config/index.ts';
import { storageKind } from '../support/helpers.ts';
import { freePort, reliabilityStorage, ROOT, type Storage } from '../reliability/process-support.ts';

const START_TIMEOUT_MS = 60_000;

interface Started {
  child: ChildProcess;
  base: string;
  stdout: () => string;
  stop(): Promise<number | null>;
}

async function startServer(storage: Storage, env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...storage.env(),
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    REDIS_URL: '',
    WORKERS: 'off',
    CHECKOUT_URL_HOST: '',
    ...env,
  };
  if (!storage.databaseUrl) delete childEnv.DATABASE_URL;
  if (childEnv.BASE_URL === undefined) childEnv.BASE_URL = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['scripts/start.mjs'], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  // Ready, and the banner (printed right after the ready line) flushed.
  while (
    !stdout.includes('"msg":"Sika is ready"') ||
    (stdout.includes('first run: demo merchant created') && !/={20,}\n\n/.test(stdout))
  ) {
    if (child.exitCode !== null) assert.fail(`the server exited with ${child.exitCode}: ${stderr.slice(0, 500)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL'); // a server left running keeps the test file from ever exiting
      assert.fail(`the server was not ready in time: ${stderr.slice(0, 500)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    child,
    base,
    stdout: () => stdout,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      return (await exited)[0] as number | null;
    },
  };
}

/** What the banner says, or null when there is none. */
function banner(stdout: string) {
  const key = /Test API key +(ak_test_\w+)/.exec(stdout)?.[1];
  if (!key) return null;
  const link = /Dashboard +(http:\/\/\S+\/dashboard\/login\/link\/[\w-]+)/.exec(stdout)?.[1];
  const merchantId = /Merchant +Demo Shop, ([0-9a-f-]{36})/.exec(stdout)?.[1];
  const secret = /Webhook secret +(whsec_[\w+/=]+)/.exec(stdout)?.[1];
  assert.ok(link && merchantId && secret, `the banner names the link, the merchant and the webhook secret:\n${stdout}`);
  return { key, link, merchantId, secret };
}

const cookieOf = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith(`${name}=`));

describe(`the first run (${storageKind})`, { timeout: 300_000 }, () => {
  const storages: Storage[] = [];
  const servers: Started[] = [];
  const fresh = async () => {
    const storage = await reliabilityStorage('first-run');
    storages.push(storage);
    return storage;
  };
  const start = async (storage: Storage, env: Record<string, string> = {}) => {
    const server = await startServer(storage, env);
    servers.push(server);
    return server;
  };
  after(async () => {
    for (const server of servers) await server.stop();
    for (const storage of storages) await storage.drop();
  });

  it('on an empty database with a loopback BASE_URL: prints a demo merchant once; its key works; its link signs in once; a restart prints nothing', async () => {
    const storage = await fresh();
    const first = await start(storage);
    const printed = banner(first.stdout());
    assert.ok(printed, `no demo merchant printed:\n${first.stdout()}`);
    // Plain text for a person, framed; the secrets never in a log line.
    assert.match(first.stdout(), /\n={20,}\n {2}Sika is running\. This is its first run/);
    const logLines = first
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    assert.ok(
      logLines.some((line) => line.includes('first run: demo merchant created') && line.includes(printed.merchantId)),
    );
    assert.ok(
      !logLines.some(
        (line) =>
          line.includes(printed.key) || line.includes(printed.secret) || line.includes(printed.link.split('/').pop()!),
      ),
      'a secret reached the logs',
    );
    // A Test webhook endpoint on the developer's machine, signed with the printed secret (Test payouts need one).
    assert.match(first.stdout(), /sent to http:\/\/localhost:3000\/hooks/);

    assert.ok(printed.link.startsWith(`${first.base}/dashboard/login/link/`), printed.link);

    const created = await fetch(`${first.base}/api/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${printed.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount_minor: 1500, invoice_ref: 'INV-FIRST-RUN' }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const session = (await created.json()) as { id: string };

    // The link: a dashboard session, offered a first password (the demo merchant has none), then the
    // dashboard of the demo merchant with its session.
    const signIn = await fetch(printed.link, { redirect: 'manual' });
    assert.equal(signIn.status, 303);
    assert.equal(signIn.headers.get('location'), '/dashboard/password/new');
    const cookie = cookieOf(signIn, 'sika_dashboard');
    assert.ok(cookie, 'the link sets the dashboard session cookie');
    const offer = await fetch(`${first.base}/dashboard/password/new`, { headers: { cookie }, redirect: 'manual' });
    assert.equal(offer.status, 200);
    const offerPage = await offer.text();
    assert.match(offerPage, /Choose a password to sign in with next time \(as demo@example\.com\)/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(offerPage)![1]!;
    const post = (fields: Record<string, string>) =>
      fetch(`${first.base}/dashboard/password/new`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
      });
    const short = await post({ new_password: 'short', new_password_confirm: 'short' });
    assert.equal(short.status, 400);
    assert.match(await short.text(), /role="alert">The password must be at least 10 characters/);
    const differ = await post({ new_password: 'first password 1', new_password_confirm: 'first password 2' });
    assert.equal(differ.status, 400);
    assert.match(await differ.text(), /The two passwords differ/);
    const chosen = await post({ new_password: 'first password 1', new_password_confirm: 'first password 1' });
    assert.equal(chosen.status, 303);
    assert.equal(chosen.headers.get('location'), '/dashboard');
    // Once it has one, the offer is gone (changing it is the account page's, with the current one).
    const gone = await fetch(`${first.base}/dashboard/password/new`, { headers: { cookie }, redirect: 'manual' });
    assert.equal(gone.status, 303);
    assert.equal(gone.headers.get('location'), '/dashboard/account');
    const again2 = await post({ new_password: 'second password', new_password_confirm: 'second password' });
    assert.equal(again2.status, 400);
    assert.match(await again2.text(), /You have a password already/);
    // The password signs in.
    const form = await fetch(`${first.base}/dashboard/login`);
    const loginCsrf = /sika_login_csrf=([^;]+)/.exec(form.headers.getSetCookie().join(';'))![1]!;
    const login = await fetch(`${first.base}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: `sika_login_csrf=${loginCsrf}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        _csrf: loginCsrf,
        email: 'demo@example.com',
        password: 'first password 1',
      }).toString(),
    });
    assert.equal(login.status, 303, 'the chosen password signs in');
    const home = await fetch(`${first.base}/dashboard`, { headers: { cookie }, redirect: 'manual' });
    assert.equal(home.status, 200);
    const page = await home.text();
    assert.match(page, /<h1>Demo Shop<\/h1>/);
    assert.ok(page.includes(session.id), 'the dashboard lists the session made with the key');

    // Once only: the second use is a page that says so and how to get another.
    const again = await fetch(printed.link, { redirect: 'manual' });
    assert.equal(again.status, 410);
    assert.equal(cookieOf(again, 'sika_dashboard'), undefined);
    const refusal = await again.text();
    assert.match(refusal, /role="alert">This sign-in link was used already/);
    assert.match(refusal, /sika user sign-in-link --email/);
    const forged = await fetch(`${printed.link.slice(0, -4)}AAAA`, { redirect: 'manual' });
    assert.equal(forged.status, 404);
    assert.match(await forged.text(), /not valid/);

    assert.equal(await first.stop(), 0);
    const second = await start(storage);
    assert.equal(banner(second.stdout()), null, `a restart printed a demo merchant again:\n${second.stdout()}`);
    assert.doesNotMatch(second.stdout(), /first run/);
    // The first key still works after the restart.
    const read = await fetch(`${second.base}/api/v1/sessions/${session.id}`, {
      headers: { authorization: `Bearer ${printed.key}` },
    });
    assert.equal(read.status, 200);
    assert.equal(await second.stop(), 0);
    const merchants = await storage.with((db) => db.query<{ n: number }>('SELECT count(*)::int AS n FROM merchants'));
    const endpoints = await storage.with((db) =>
      db.query<{ url: string; environment: string }>(
        'SELECT url, environment FROM webhook_endpoints WHERE merchant_id = $1',
        [printed.merchantId],
      ),
    );
    assert.deepEqual(
      endpoints.map((e) => [e.environment, e.url]),
      [['test', 'http://localhost:3000/hooks']],
    );
    assert.equal(merchants[0]!.n, 1);
  });

  it('a non-loopback BASE_URL, or DEMO_MERCHANT=off, creates nothing and prints nothing', async () => {
    for (const env of [{ BASE_URL: 'http://sika.first-run.test' }, { DEMO_MERCHANT: 'off' }] as Record<
      string,
      string
    >[]) {
      const storage = await fresh();
      const server = await start(storage, env);
      assert.equal(banner(server.stdout()), null, `${JSON.stringify(env)} printed a demo merchant`);
      assert.equal(await server.stop(), 0);
      const counts = await storage.with((db) =>
        db.query<{ merchants: number; links: number }>(
          'SELECT (SELECT count(*)::int FROM merchants) AS merchants, (SELECT count(*)::int FROM sign_in_links) AS links',
        ),
      );
      assert.deepEqual(counts[0], { merchants: 0, links: 0 }, JSON.stringify(env));
    }
  });

  it('two first runs at once on one database make one demo merchant', async () => {
    const storage = await fresh();
    if (storage.kind === 'postgres') {
      // Two servers starting together: one banner between them.
      const [a, b] = await Promise.all([start(storage), start(storage)]);
      const printed = [banner(a.stdout()), banner(b.stdout())].filter((x) => x !== null);
      assert.equal(printed.length, 1, `banners: ${printed.length}`);
      await Promise.all([a.stop(), b.stop()]);
    } else {
      // One process holds an embedded data dir: two first runs at once in it.
      const outcomes = await storage.with((db) =>
        Promise.all([
          createDemoMerchantOnFirstRun(db),
          createDemoMerchantOnFirstRun(db),
          createDemoMerchantOnFirstRun(db),
        ]),
      );
      assert.equal(outcomes.filter((x) => x !== null).length, 1);
    }
    const merchants = await storage.with((db) => db.query<{ n: number }>('SELECT count(*)::int AS n FROM merchants'));
    assert.equal(merchants[0]!.n, 1);
  });
});

// Issue 29: on a developer's machine (a loopback BASE_URL) the banner stays readable. Without LOG_LEVEL no
// line per request (warnings and errors still show), and a receiver that is down (here a closed port, as the
// demo endpoint's localhost:3000 is until the developer runs one) is logged once when its tries start failing
// and once when one succeeds again, not once per try; its tries still follow the retry schedule.
describe(`a developer's log (${storageKind})`, { timeout: 600_000 }, () => {
  it('no request lines; a closed receiver port is one line per outage however many tries fail, and one when it delivers again', async () => {
    const storage = await reliabilityStorage('dev-log');
    const closedPort = await freePort();
    const merchant = await storage.with((db) =>
      createMerchant(
        db,
        {
          name: 'Closed Port',
          email: `closed-${Date.now()}@example.com`,
          webhookUrl: `http://127.0.0.1:${closedPort}/hooks`,
        },
        { allowPrivateTargets: true },
      ),
    );
    const server = await startServer(storage, {
      LOG_LEVEL: '',
      DEMO_MERCHANT: 'off',
      WORKERS: 'on',
      WEBHOOK_RETRY_SCHEDULE_S: '1,1,1,1,1,1,1,1',
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_CLAIM_TTL_S: '2',
    });
    let receiver: import('node:http').Server | null = null;
    try {
      const target = { apiKey: merchant.test_api_key, baseUrl: server.base };
      const secrets = (await (
        await fetch(`${server.base}/api/v1/events/stream/signing-secrets`, {
          headers: { authorization: `Bearer ${merchant.test_api_key}` },
        })
      ).json()) as { secrets: { endpoint_id: string }[] };
      const endpointId = secrets.secrets[0]!.endpoint_id;
      await trigger(target, 'checkout.session.completed', {});
      await trigger(target, 'checkout.session.completed', {});
      assert.equal(
        (
          await fetch(`${server.base}/api/v1/sessions/cs_unknown`, {
            headers: { authorization: `Bearer ${merchant.test_api_key}` },
          })
        ).status,
        404,
      );

      // Wait until at least 10 tries to the closed port have failed.
      const failedTries = async () => {
        const list = (await (
          await fetch(`${server.base}/api/v1/events?limit=100`, {
            headers: { authorization: `Bearer ${merchant.test_api_key}` },
          })
        ).json()) as { data: { id: string }[] };
        let tries = 0;
        for (const event of list.data) {
          const one = (await (
            await fetch(`${server.base}/api/v1/events/${event.id}`, {
              headers: { authorization: `Bearer ${merchant.test_api_key}` },
            })
          ).json()) as { deliveries: { try_count: number }[] };
          tries += one.deliveries.reduce((sum, d) => sum + d.try_count, 0);
        }
        return tries;
      };
      const deadline = Date.now() + 120_000;
      let tries = await failedTries();
      while (tries < 10) {
        assert.ok(Date.now() < deadline, `only ${tries} tries were made`);
        await new Promise((resolve) => setTimeout(resolve, 500));
        tries = await failedTries();
      }
      const logLines = () =>
        server
          .stdout()
          .split('\n')
          .filter((line) => line.startsWith('{'));
      const aboutEndpoint = () => logLines().filter((line) => line.includes(endpointId));
      assert.equal(
        aboutEndpoint().length,
        1,
        `one line for the failing endpoint after ${tries} failed tries:\n${aboutEndpoint().join('\n')}`,
      );
      assert.match(aboutEndpoint()[0]!, /ECONNREFUSED/);
      assert.deepEqual(
        logLines().filter((line) => /"req(Id)?"|request completed|incoming request|"res":/.test(line)),
        [],
        'no line per request, nor for the 404',
      );

      // The receiver comes up: the next event is delivered, and one line says the outage is over, with its count.
      receiver = createServer((_req, res) => res.writeHead(200).end());
      await new Promise<void>((resolve) => receiver!.listen(closedPort, '127.0.0.1', resolve));
      await trigger(target, 'checkout.session.completed', {});
      const until = Date.now() + 60_000;
      while (!aboutEndpoint().some((line) => line.includes('delivering again'))) {
        assert.ok(Date.now() < until, `no recovery line:\n${aboutEndpoint().join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const recovered = JSON.parse(aboutEndpoint().find((line) => line.includes('delivering again'))!) as {
        failed_tries: number;
      };
      assert.ok(
        recovered.failed_tries >= tries,
        `counted ${recovered.failed_tries} failed tries, at least the ${tries} seen`,
      );
      assert.equal(aboutEndpoint().length, 2, aboutEndpoint().join('\n'));
    } finally {
      if (receiver) await new Promise((resolve) => receiver!.close(resolve));
      await server.stop();
      await storage.drop();
    }
  });

  it("request lines are quiet only on a developer's machine and only while LOG_LEVEL does not ask for them", () => {
    const level = (env: Record<string, string>) => loadConfig({ ...env, WORKERS: 'off' }).requestLogLevel;
    assert.equal(level({ BASE_URL: 'http://127.0.0.1:8080' }), 'warn');
    assert.equal(level({ BASE_URL: 'http://localhost:8080' }), 'warn');
    assert.equal(level({ BASE_URL: 'http://127.0.0.1:8080', LOG_LEVEL: 'info' }), 'info');
    assert.equal(level({ BASE_URL: 'http://127.0.0.1:8080', LOG_LEVEL: 'debug' }), 'debug');
    assert.equal(level({ BASE_URL: 'https://pay.example.com' }), 'info');
  });
});
