import { describe, expect, it } from 'vitest';
import { useFakeAi, useTestApp } from '../support/harness.js';

// The finding: PATCH a provider's base_url to your own server, press Test, receive its key.
// `ai` is the server the key was given for; `elsewhere` stands for anyone else's.
const elsewhere = useFakeAi();
const { driver, ai } = useTestApp({ ai: true, env: { PROVIDERS_ALLOW_PRIVATE: 'true' } });

const KEY = 'sk-given-for-the-first-server-0123456789';
const NEW_KEY = 'sk-given-for-the-second-server-9876543210';

async function providerWithKey(name: string): Promise<string> {
  const res = await driver
    .api('post', '/providers')
    .send({ name, kind: 'openai', base_url: ai.baseUrl, api_key: KEY })
    .expect(201);
  return res.body.id as string;
}

const patch = (id: string, body: Record<string, unknown>) =>
  driver.api('patch', `/providers/${id}`).send(body);
const test = (id: string) =>
  driver.api('post', `/providers/${id}/test`).send({ model: 'm-1' }).expect(200);

describe("a provider's key follows only the server it was given for", () => {
  it('is cleared when base_url changes without a key, and never reaches the new server', async () => {
    const id = await providerWithKey('moved');
    const moved = await patch(id, { base_url: elsewhere.baseUrl }).expect(200);
    expect(moved.body).toMatchObject({ base_url: elsewhere.baseUrl, api_key_set: false });
    expect((await driver.api('get', `/providers/${id}`).expect(200)).body.api_key_set).toBe(false);

    await test(id);
    expect(elsewhere.requests).toHaveLength(1);
    expect(elsewhere.requests[0]?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(elsewhere.requests)).not.toContain(KEY);

    // Pointing it back does not bring the key back either.
    const back = await patch(id, { base_url: ai.baseUrl }).expect(200);
    expect(back.body.api_key_set).toBe(false);
  });

  it('keeps the key given in the same request as the new base_url', async () => {
    const id = await providerWithKey('moved-with-key');
    const moved = await patch(id, { base_url: elsewhere.baseUrl, api_key: NEW_KEY }).expect(200);
    expect(moved.body.api_key_set).toBe(true);
    await test(id);
    expect(elsewhere.requests[0]?.headers.authorization).toBe(`Bearer ${NEW_KEY}`);
    expect(JSON.stringify(elsewhere.requests)).not.toContain(KEY);
  });

  it('is cleared when the kind changes without a key (PATCH takes kind)', async () => {
    const id = await providerWithKey('rekinded');
    const changed = await patch(id, { kind: 'anthropic' }).expect(200);
    expect(changed.body).toMatchObject({ kind: 'anthropic', api_key_set: false });
    await test(id);
    // The same host, now asked in another protocol: without the key given for the first.
    expect(ai.requests.length).toBeGreaterThan(0);
    expect(JSON.stringify(ai.requests)).not.toContain(KEY);

    const withKey = await patch(id, { kind: 'openai', api_key: NEW_KEY }).expect(200);
    expect(withKey.body).toMatchObject({ kind: 'openai', api_key_set: true });
    ai.reset();
    await test(id);
    expect(ai.requests[0]?.headers.authorization).toBe(`Bearer ${NEW_KEY}`);
  });

  it('is kept by changes that send the requests to the same server', async () => {
    const id = await providerWithKey('unmoved');
    // The panel sends the URL shown back with every save.
    await patch(id, { name: 'unmoved-renamed', base_url: ai.baseUrl }).expect(200);
    expect((await patch(id, { kind: 'openai' }).expect(200)).body.api_key_set).toBe(true);

    // A provider on its kind's usual server: writing that server's URL out is no move.
    const usual = await driver
      .api('post', '/providers')
      .send({ name: 'usual', kind: 'openai', api_key: KEY })
      .expect(201);
    const spelled = await patch(usual.body.id as string, {
      base_url: 'https://api.openai.com/v1',
    }).expect(200);
    expect(spelled.body.api_key_set).toBe(true);

    ai.reset();
    await test(id);
    expect(ai.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('forgets the URL of a provider that becomes the echo, which calls no server', async () => {
    const id = await providerWithKey('to-echo');
    const echo = await patch(id, { kind: 'echo' }).expect(200);
    expect(echo.body).toMatchObject({ kind: 'echo', base_url: null, api_key_set: false });
    const refused = await patch(id, { base_url: elsewhere.baseUrl });
    expect([refused.status, refused.body.code]).toEqual([400, 'validation_failed']);
    const bad = await patch(id, { kind: 'mistral' });
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
  });
});
