import {
  chatCompletion,
  type FakeReply,
  type RecordedRequest,
} from '../../test/support/fake-ai-server.js';
import { eventually } from '../../test/support/eventually.js';
import { SIGNERS } from '../../test/support/signers.js';

/** How many events the seed stores: one page of Brain Logs. */
export const SEEDED_EVENTS = 50;

/** Prompts (as rendered) the fake model fails with a 503, each time it is asked. */
const OUTAGES = ['Order 1006 ', 'Order 1015 ', 'Ticket T-2207:'];
/** A prompt of the JSON channel the fake answers with prose: the reply check fails it. */
const PROSE_FOR_JSON = 'Ticket T-2211:';

/**
 * The fake model's answer to one call, decided by the prompt so that a run is the same each
 * time: plain replies, JSON replies for the support channel, a few outages and one reply that
 * is not the JSON asked for; each after 60 to 400 ms, as a model takes.
 */
export function fakeModelReply(request: RecordedRequest): FakeReply {
  const prompt = request.prompt ?? '';
  const delayMs = 60 + ((prompt.length * 37) % 340);
  if (OUTAGES.some((marker) => prompt.includes(marker)))
    return {
      status: 503,
      delayMs,
      body: {
        error: { message: 'The server is overloaded. Try again later.', type: 'server_error' },
      },
    };
  const completion = (content: string) => ({
    delayMs,
    body: {
      ...chatCompletion(content),
      usage: {
        prompt_tokens: 80 + (prompt.length % 400),
        completion_tokens: 20 + (content.length % 90),
        total_tokens: 100 + (prompt.length % 400) + (content.length % 90),
      },
    },
  });
  const ticket = /^Ticket (T-\d+): (.*)$/m.exec(prompt);
  if (ticket) {
    if (prompt.includes(PROSE_FOR_JSON))
      return completion('Sure! This ticket is about billing and looks urgent to me.');
    const subject = ticket[2] ?? '';
    const category = /refund|invoice|charge/i.test(subject)
      ? 'billing'
      : /login|password|2fa/i.test(subject)
        ? 'account'
        : 'product';
    return completion(
      JSON.stringify({
        ticket: ticket[1],
        category,
        priority: /urgent|down|cannot/i.test(subject) ? 'high' : 'normal',
        summary: subject.slice(0, 80),
      }),
    );
  }
  const order = /^Order (\d+) from ([^(]+?) \(/m.exec(prompt);
  if (order)
    return completion(
      `Thank you for your order, ${order[2]}! Order ${order[1]} is confirmed and ships within two business days.`,
    );
  const issue = /^New issue #(\d+) in (\S+): (.*)$/m.exec(prompt);
  if (issue)
    return completion(
      `Suggested labels for #${issue[1]}: ${/crash|error|fail/i.test(issue[3] ?? '') ? 'bug, needs-triage' : 'enhancement'}. ` +
        'Assign to the maintainers of the affected module.',
    );
  return completion(
    'Acknowledged. The on-call engineer has been paged; next update in 15 minutes.',
  );
}

export interface SeedTargets {
  /** `http://127.0.0.1:<port>` of hookprompt. */
  origin: string;
  apiKey: string;
  /** A reply URL that answers 200, and one that answers 500 to everything. */
  okUrl: string;
  failingUrl: string;
}

export interface Seeded {
  channels: Record<'orders' | 'support' | 'github' | 'status', string>;
  /** Every event stored, as the API shows it, newest first. */
  events: Record<string, unknown>[];
}

/**
 * Four channels as an operator would set them up, and 50 events over them as their senders
 * would send them: an online shop's orders (replies delivered to a reply URL, a few customers
 * without an e-mail address, two model outages), support tickets answered in JSON (one outage,
 * one reply that is not JSON; their reply URL answers 500, so deliveries fail), GitHub issues on
 * a channel that checks GitHub's signature (three senders refused `signature_invalid`, a
 * `closed` issue filtered by `accept_when`), and monitoring alerts (two without a summary).
 * Three alert rules watch them. Waits until every event and delivery is finished and the
 * alerts have been checked.
 */
export async function seedConsole(targets: SeedTargets): Promise<Seeded> {
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${targets.origin}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${targets.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const github = SIGNERS.find((signer) => signer.scheme === 'github');
  if (!github) throw new Error('no GitHub signer');

  const create = async (body: Record<string, unknown>) => {
    const channel = await api('POST', '/channels', body);
    // Posted to directly, not through PUBLIC_BASE_URL.
    const path = new URL(String(channel.webhook_url)).pathname;
    return { id: String(channel.id), url: `${targets.origin}${path}` };
  };
  const orders = await create({
    name: 'Shop orders',
    template:
      'Order {{order.id}} from {{customer.name}} ({{customer.email}}): {{order.total}} {{order.currency}}, ' +
      '{{order.items}} items, shipping to {{shipping.city}}.\nWrite a two-sentence thank-you note.',
    reply_delivery: { url: `${targets.okUrl}/orders` },
  });
  const support = await create({
    name: 'Support tickets',
    template:
      'Ticket {{ticket.id}}: {{ticket.subject}}\nFrom {{ticket.requester}}\n\n{{ticket.body}}',
    ai: {
      system_prompt: 'Classify the ticket. Answer with JSON: ticket, category, priority, summary.',
      response_format: 'json',
      temperature: 0.2,
    },
    reply_delivery: { url: `${targets.failingUrl}/helpdesk` },
  });
  const githubChannel = await create({
    name: 'GitHub issues',
    template:
      'New issue #{{issue.number}} in {{repository.full_name}}: {{issue.title}}\n{{issue.body}}\nSuggest labels.',
    verification: { ...github.verification, secret: github.secret },
    accept_when: [{ path: 'payload.action', op: 'in', value: ['opened', 'reopened'] }],
  });
  const status = await create({
    name: 'Status alerts',
    template: '{{alert.service}} is {{alert.state}} in {{alert.region}}: {{alert.summary}}',
    reply_delivery: { url: `${targets.okUrl}/status` },
  });

  const notify = { kind: 'webhook', url: `${targets.okUrl}/alerts` };
  await api('POST', '/alerts', {
    name: 'Helpdesk deliveries failing',
    condition: { type: 'delivery_failed', channel_id: support.id },
    notify,
  });
  await api('POST', '/alerts', {
    name: 'Unsigned GitHub senders',
    condition: { type: 'rejections', channel_id: githubChannel.id, count: 3, window_s: 3600 },
    notify,
  });
  await api('POST', '/alerts', {
    name: 'Model failures over 20 %',
    condition: { type: 'failure_rate', threshold: 0.2, window_s: 3600, min_events: 10 },
    notify,
  });

  const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'bench-sender/1.0', ...headers },
      body: text,
    });
    await res.arrayBuffer();
    return res.status;
  };
  const cities = ['Lisbon', 'Berlin', 'Leeds', 'Lyon', 'Utrecht', 'Bologna'];
  const names = [
    'Ada Lovelace',
    'Grace Hopper',
    'Alan Turing',
    'Katherine Johnson',
    'Linus Pauling',
  ];
  const subjects = [
    'Refund for a double charge',
    'Cannot log in after password reset',
    'Export to CSV drops the last column',
    'Invoice shows the wrong VAT number',
    'Dashboard is down for our team, urgent',
    '2FA codes are not accepted',
    'Feature request: dark mode',
    'Charge on a cancelled plan',
    'Webhook retries too aggressive',
    'Billing address cannot be changed',
    'App crashes on upload',
    'Question about the API limits',
  ];
  const issueTitles = [
    'Crash when the config file is empty',
    'Add a --dry-run flag to deploy',
    'Error 500 on /api/export with filters',
    'Docs: explain the retry schedule',
    'Tests fail on Node 24',
    'Support ARM64 images',
    'Memory grows while streaming logs',
    'Typo in the README',
  ];
  const services = ['checkout-api', 'search', 'payments', 'image-resizer'];

  // One sender's event after another's, as they would arrive: the list mixes the channels.
  const sends: (() => Promise<number>)[] = [];
  for (let i = 0; i < 18; i++) {
    const name = names[i % names.length] as string;
    sends.push(() =>
      post(orders.url, {
        order: {
          id: 1001 + i,
          total: (19.9 + i * 13.37).toFixed(2),
          currency: 'EUR',
          items: 1 + (i % 4),
          lines: Array.from({ length: 1 + (i % 4) }, (_, n) => ({
            sku: `SKU-${100 + n * 7 + i}`,
            qty: 1 + (n % 2),
          })),
        },
        // Three guests checked out without an e-mail address.
        customer:
          i % 6 === 2
            ? { name }
            : { name, email: `${name.split(' ')[0]?.toLowerCase()}@example.com` },
        shipping: { city: cities[i % cities.length], method: i % 3 === 0 ? 'express' : 'standard' },
      }),
    );
  }
  for (let i = 0; i < 12; i++) {
    sends.push(() =>
      post(support.url, {
        ticket: {
          id: `T-${2200 + i}`,
          subject: subjects[i],
          requester: `${names[(i + 2) % names.length]} <support-${i}@customer.example>`,
          body:
            `Hello, ${subjects[i]?.toLowerCase()}. It started yesterday after the update. ` +
            'Steps: open the app, go to settings, try again. Please advise. '.repeat(1 + (i % 3)),
          tags: i % 2 ? ['web'] : ['mobile', 'ios'],
        },
      }),
    );
  }
  for (let i = 0; i < 12; i++) {
    const body = {
      // The tenth is a closed issue: accept_when filters it.
      action: i === 9 ? 'closed' : 'opened',
      issue: {
        number: 340 + i,
        title: issueTitles[i % issueTitles.length],
        body: `Steps to reproduce:\n1. run the tool\n2. see the output\n\nVersion 2.${i}.0`,
        user: { login: `contributor${i}` },
      },
      repository: { full_name: 'acme/deploy-tool' },
    };
    sends.push(async () => {
      const text = JSON.stringify(body);
      // Three senders get the signature wrong: one signs with another secret, two do not sign.
      const headers =
        i === 4
          ? await github.sign(text, github.otherSecret, 0)
          : i === 7 || i === 11
            ? { 'X-GitHub-Event': 'issues' }
            : await github.sign(text, github.secret, 0);
      return post(githubChannel.url, body, headers);
    });
  }
  for (let i = 0; i < 8; i++) {
    sends.push(() =>
      post(status.url, {
        alert: {
          service: services[i % services.length],
          state: i % 3 === 2 ? 'resolved' : 'firing',
          region: i % 2 ? 'eu-west-1' : 'us-east-1',
          // Two alerts came without a summary: their events are flagged.
          ...(i === 3 || i === 6 ? {} : { summary: `p99 latency ${200 + i * 45} ms over 5 min` }),
          started_at: new Date(Date.now() - i * 600_000).toISOString(),
        },
      }),
    );
  }
  // Interleave: order, ticket, issue, order, alert...
  const byChannel = [sends.slice(0, 18), sends.slice(18, 30), sends.slice(30, 42), sends.slice(42)];
  const statuses: number[] = [];
  for (let round = 0; byChannel.some((list) => list.length); round++)
    for (const list of byChannel) {
      const next = list.shift();
      if (next) statuses.push(await next());
    }
  // A request to a URL that is no channel's is refused 404 and is no event.
  if ((await post(`${targets.origin}/hooks/no-such-channel-token`, { ping: 1 })) !== 404)
    throw new Error('an unknown webhook token was not refused 404');
  const refused = statuses.filter((code) => code === 401).length;
  if (refused !== 3)
    throw new Error(`expected 3 refusals (401), got ${refused}: ${statuses.join(' ')}`);

  const finished = await eventually(
    async () => {
      const { data } = (await api('GET', `/events?limit=100`)) as {
        data: Record<string, unknown>[];
      };
      const busy = data.some(
        (event) =>
          ['pending', 'processing'].includes(String(event.status)) ||
          (event.delivery as { status?: string } | null)?.status === 'pending',
      );
      return busy ? undefined : data;
    },
    { timeoutMs: 60_000, what: 'the seeded events and their deliveries to finish' },
  );
  if (finished.length !== SEEDED_EVENTS)
    throw new Error(`expected ${SEEDED_EVENTS} events, found ${finished.length}`);
  await eventually(
    async () => {
      const { data } = (await api('GET', '/alerts')) as { data: { state: string }[] };
      return data.filter((alert) => alert.state === 'firing').length >= 2;
    },
    { timeoutMs: 20_000, what: 'the alerts to fire' },
  );
  return {
    channels: {
      orders: orders.id,
      support: support.id,
      github: githubChannel.id,
      status: status.id,
    },
    events: finished,
  };
}
