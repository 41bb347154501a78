import { afterEach, describe, expect, it } from 'vitest';
import { REDACTION_KINDS, type RedactionKind } from '../../src/guardrails/redaction-kinds.js';
import { Redactor } from '../../src/guardrails/redactor.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({ ai: true, env: { WORKER_RETRY_BASE_MS: '0' } });

afterEach(async () => {
  await app.ctx.db.query('delete from events');
});

type Message = { role: string; content: string };
const messagesOf = (i: number) => (ai.requests[i]?.body as { messages: Message[] }).messages;

const NBSP = '\u00a0';
const NARROW_NBSP = '\u202f';
const THIN = '\u2009';
const IDEOGRAPHIC_SPACE = '\u3000';
const ZWSP = '\u200b';
const ZWJ = '\u200d';
const WORD_JOINER = '\u2060';
const BOM = '\ufeff';
const NB_HYPHEN = '\u2011';
const EN_DASH = '\u2013';
const MINUS = '\u2212';
const FIGURE_DASH = '\u2012';

/** Full-width forms of ASCII text: digits, letters, `＠`, `．`, `－`, `＋`. */
const fullWidth = (text: string) =>
  text.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));

/** Values as real payloads write them: other spaces, dashes, full-width forms, invisible marks. */
const ODD_VALUES: Record<RedactionKind, string[]> = {
  email: [
    `ada${ZWSP}@example.com`,
    `ada@exam${ZWJ}ple.com`,
    `ada＠example．com`,
    fullWidth('ada@example.com'),
    `ada.love${BOM}lace@example${WORD_JOINER}.com`,
  ],
  phone: [
    `+44${NBSP}20${NBSP}7946${NBSP}0958`,
    `+44${NARROW_NBSP}20${NARROW_NBSP}7946${NARROW_NBSP}0958`,
    `+44${THIN}20${THIN}7946${THIN}0958`,
    `+44\t20\t7946\t0958`,
    `(415)${NBSP}555${NB_HYPHEN}0132`,
    `415${EN_DASH}555${EN_DASH}0132`,
    `415${FIGURE_DASH}555${FIGURE_DASH}0132`,
    fullWidth('+44 20 7946 0958'),
    `+44 20 79${ZWSP}46 0958`,
    `+44${IDEOGRAPHIC_SPACE}20${IDEOGRAPHIC_SPACE}7946${IDEOGRAPHIC_SPACE}0958`,
  ],
  card: [
    `4111${NBSP}1111${NBSP}1111${NBSP}1111`,
    `4111${NARROW_NBSP}1111${NARROW_NBSP}1111${NARROW_NBSP}1111`,
    `4111${NB_HYPHEN}1111${NB_HYPHEN}1111${NB_HYPHEN}1111`,
    `4111${EN_DASH}1111${EN_DASH}1111${EN_DASH}1111`,
    `4111${MINUS}1111${MINUS}1111${MINUS}1111`,
    `4111\t1111\t1111\t1111`,
    fullWidth('4111111111111111'),
    `4111 11${ZWSP}11 1111 1111`,
    `4111${ZWSP}1111${ZWSP}1111${ZWSP}1111`,
  ],
  iban: [
    `DE89${NBSP}3704${NBSP}0044${NBSP}0532${NBSP}0130${NBSP}00`,
    `DE89${THIN}3704${THIN}0044${THIN}0532${THIN}0130${THIN}00`,
    fullWidth('DE89 3704 0044 0532 0130 00'),
    `DE89 3704 00${ZWSP}44 0532 0130 00`,
    `GB82${NB_HYPHEN}WEST${NB_HYPHEN}1234${NB_HYPHEN}5698${NB_HYPHEN}7654${NB_HYPHEN}32`,
  ],
  ip: [fullWidth('192.168.1.20'), `203.0.${ZWSP}113.7`, `2001:db8::${WORD_JOINER}1`],
  secret: [
    `sk-proj-4fT9aQ2b${ZWSP}X7mK1pL8vR3sW6yZ0cD5eH`,
    `sk${NB_HYPHEN}proj${NB_HYPHEN}4fT9aQ2bX7mK1pL8vR3sW6yZ0cD5eH`,
    fullWidth('sk-proj-4fT9aQ2bX7mK1pL8vR3sW6yZ0cD5eH'),
    `AKIA${ZWJ}IOSFODNN7EXAMPLE`,
    `ghp_16C7e42F292c6912E77${BOM}10c838347Ae178B4a`,
    `-----BEGIN${NBSP}PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END${NBSP}PRIVATE KEY-----`,
  ],
};

async function channelWith(aiSettings: Record<string, unknown>, template: string) {
  const res = await driver
    .api('post', '/channels')
    .send({ name: 'Guarded', template, ai: aiSettings });
  expect(res.status).toBe(201);
  return res.body as ChannelJson;
}

async function answered(channel: ChannelJson, payload: unknown) {
  const res = await driver.sendEvent(channel.webhook_url, payload);
  expect(res.status).toBe(200);
  const id = res.body.event_id as string;
  await createWorker(app.ctx).runOnce();
  return (await driver.api('get', `/events/${id}`).expect(200)).body as Record<string, unknown>;
}

describe('redaction of values written with Unicode look-alikes', () => {
  it('sends no part of a value written with odd spaces, dashes, full-width forms or invisible marks', async () => {
    const channel = await channelWith(
      { redact: [...REDACTION_KINDS], restore: true },
      'Mail {{mail}}, again {{again}}, call {{phone}}, card {{card}}, IBAN {{iban}}, key {{key}}',
    );
    const payload = {
      mail: `ada${ZWSP}@example.com`,
      again: 'ada@example.com',
      phone: `(415)${NBSP}555${NB_HYPHEN}0132`,
      card: fullWidth('4111 1111 1111 1111'),
      iban: `DE89${NARROW_NBSP}3704${NARROW_NBSP}0044${NARROW_NBSP}0532${NARROW_NBSP}0130${NARROW_NBSP}00`,
      key: `sk-proj-4fT9aQ2b${ZWJ}X7mK1pL8vR3sW6yZ0cD5eH`,
    };
    ai.enqueue({ body: chatCompletion('Wrote to [EMAIL_1] about [CARD_1] and [PHONE_1].') });
    const event = await answered(channel, payload);

    // The whole value is the placeholder, odd characters included: nothing of it is left over.
    expect(messagesOf(0)).toEqual([
      {
        role: 'user',
        content:
          'Mail [EMAIL_1], again [EMAIL_1], call [PHONE_1], card [CARD_1], IBAN [IBAN_1], key [SECRET_1]',
      },
    ]);
    expect(event.prompt).toBe(messagesOf(0)[0]?.content);
    expect(event.redactions).toEqual({ email: 1, phone: 1, card: 1, iban: 1, secret: 1 });
    expect(event.payload).toBe(JSON.stringify(payload));
    // Restored as the sender first wrote each value.
    expect(event.reply).toBe(
      `Wrote to ${payload.mail} about ${payload.card} and ${payload.phone}.`,
    );
  });
});

describe('the redaction kinds, written with Unicode look-alikes', () => {
  for (const kind of REDACTION_KINDS) {
    it(`catches every ${kind} whole`, () => {
      const missed: string[] = [];
      for (const value of ODD_VALUES[kind]) {
        const out = new Redactor(REDACTION_KINDS).redact(`before ${value} after`);
        if (out !== `before [${kind.toUpperCase()}_1] after`) missed.push(`${value} → ${out}`);
      }
      expect(missed).toEqual([]);
    });
  }

  it('gives a value written with look-alikes the placeholder of its plain spelling', () => {
    const redactor = new Redactor(['email', 'phone', 'card', 'iban']);
    expect(
      redactor.redact(
        `ada@example.com, ${fullWidth('ADA@EXAMPLE.COM')}, +44 20 7946 0958, +44${NBSP}20${NBSP}7946${NBSP}0958, ` +
          `4111-1111-1111-1111, 4111${EN_DASH}1111${EN_DASH}1111${EN_DASH}1111`,
      ),
    ).toBe('[EMAIL_1], [EMAIL_1], [PHONE_1], [PHONE_1], [CARD_1], [CARD_1]');
    expect(redactor.counts()).toEqual({ email: 1, phone: 1, card: 1 });
    // What was sent stands for the value as first written.
    expect(redactor.sent.get('[PHONE_1]')).toBe('+44 20 7946 0958');
  });

  it('keeps the text around a value as written, invisible marks outside it included', () => {
    const redactor = new Redactor(['email', 'phone']);
    expect(
      redactor.redact(
        `${BOM}Hi${ZWSP} ${NBSP}a${ZWSP}da@example.com${ZWSP}, call 415${EN_DASH}555${EN_DASH}0132 – thanks`,
      ),
    ).toBe(`${BOM}Hi${ZWSP} ${NBSP}[EMAIL_1]${ZWSP}, call [PHONE_1] – thanks`);
  });

  it('still leaves dates, versions and order numbers alone when written with look-alikes', () => {
    for (const text of [
      `Due 2024${EN_DASH}01${EN_DASH}15 and 15${NBSP}01${NBSP}2024`,
      fullWidth('Version 1.2.3, order 1234567890'),
      `Reference 1234${NBSP}5678${NBSP}9012${NBSP}3456`,
      `Room${NBSP}12${NBSP}34`,
    ]) {
      expect(new Redactor(REDACTION_KINDS).redact(text)).toBe(text);
    }
  });
});
