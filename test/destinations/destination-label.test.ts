import { describe, expect, it } from 'vitest';
import { destinationLabel } from '../../src/destinations/destination-label.js';

describe('destinationLabel', () => {
  it('names a Slack destination by its channel, once with its #', () => {
    expect(destinationLabel({ kind: 'slack', fields: { channel: 'alerts' } })).toBe(
      'Slack #alerts',
    );
    expect(destinationLabel({ kind: 'slack', fields: { channel: '#alerts' } })).toBe(
      'Slack #alerts',
    );
  });

  it('names a Telegram destination by its chat, templated or not', () => {
    expect(destinationLabel({ kind: 'telegram', fields: { chat_id: '-1001234' } })).toBe(
      'Telegram chat -1001234',
    );
    expect(destinationLabel({ kind: 'telegram', fields: { chat_id: '{{payload.chat.id}}' } })).toBe(
      'Telegram chat {{payload.chat.id}}',
    );
  });

  it('names one posting to a URL by its host alone: no credentials, path or query', () => {
    const named = (kind: 'webhook' | 'slack' | 'discord' | 'teams', url: string) =>
      destinationLabel({ kind, fields: {}, url });
    expect(named('webhook', 'https://user:pw@hooks.example.com:8443/in/x?token=abc')).toBe(
      'Webhook hooks.example.com:8443',
    );
    expect(named('slack', 'https://hooks.slack.com/services/T0/B0/SECRET')).toBe(
      'Slack hooks.slack.com',
    );
    expect(named('discord', 'https://discord.com/api/webhooks/1/SECRET')).toBe(
      'Discord discord.com',
    );
    expect(named('teams', 'https://acme.webhook.office.com/webhookb2/SECRET')).toBe(
      'Teams acme.webhook.office.com',
    );
  });

  it('names one whose place is unknown by its kind alone', () => {
    expect(destinationLabel({ kind: 'discord', fields: {} })).toBe('Discord');
    expect(destinationLabel({ kind: 'webhook', fields: {}, url: 'not a url' })).toBe('Webhook');
    expect(destinationLabel({ kind: 'slack', fields: { channel: '  ' } })).toBe('Slack');
  });
});
