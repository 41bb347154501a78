import type { AppRoute } from '../support/app-routes.js';

/** What a path parameter holds; the first kinds are row ids, the others are not. */
export type PathPart =
  | 'channel'
  | 'event'
  | 'trial'
  | 'provider'
  | 'alert'
  | 'apiKey'
  | 'admin'
  | 'invitation'
  | 'destination'
  | 'tool'
  | 'token'
  | 'version';

export const ROW_ID_PARTS: readonly PathPart[] = [
  'channel',
  'event',
  'trial',
  'provider',
  'alert',
  'apiKey',
  'admin',
  'invitation',
  'destination',
  'tool',
];

/** What a request answers: its status and the words of its refusal (a problem's `detail`). */
export interface Answer {
  status: number;
  detail?: string;
  /** For an answer that is not a refusal: text the page shows, or the whole text of the body. */
  shows?: string;
  text?: string;
}

const notFound = (what: string): Answer => ({ status: 404, detail: `${what} does not exist.` });

/**
 * Every route with a row id in its path. `parts` says what each `{}` of the path holds; a
 * malformed id in one of them (the others valid) answers `answers[i]` (the row-id parts only).
 * `body` is a request body the route takes (JSON for the API, form fields for the panel), so
 * that what is refused is the id.
 */
export interface IdRoute {
  /** `post /api/v1/channels/{}/trials`: the method and path as the app's router has them. */
  route: string;
  parts: PathPart[];
  body?: Record<string, unknown>;
  answers: Partial<Record<number, Answer>>;
}

const channel = notFound('This channel');
const event = notFound('This event');
const trial = notFound('This trial');
const provider = notFound('This provider');
const alert = notFound('This alert');
const tool = notFound('This tool');

export const ID_ROUTES: IdRoute[] = [
  // The management API.
  ...['get', 'delete', 'post /regenerate-url', 'get /versions', 'get /reply-secret'].map(
    (what): IdRoute => {
      const [method, suffix = ''] = what.split(' ');
      return {
        route: `${method} /api/v1/channels/{}${suffix}`,
        parts: ['channel'],
        answers: [channel],
      };
    },
  ),
  {
    route: 'patch /api/v1/channels/{}',
    parts: ['channel'],
    body: { name: 'Renamed' },
    answers: [channel],
  },
  { route: 'post /api/v1/channels/{}/reply-secret/rotate', parts: ['channel'], answers: [channel] },
  {
    route: 'post /api/v1/channels/{}/versions/{}/restore',
    parts: ['channel', 'version'],
    answers: [channel],
  },
  {
    route: 'post /api/v1/channels/{}/trials',
    parts: ['channel'],
    body: { events: { last: 1 } },
    answers: [channel],
  },
  { route: 'get /api/v1/channels/{}/trials', parts: ['channel'], answers: [channel] },
  ...['get', 'post /cancel', 'post /promote'].map((what): IdRoute => {
    const [method, suffix = ''] = what.split(' ');
    return { route: `${method} /api/v1/trials/{}${suffix}`, parts: ['trial'], answers: [trial] };
  }),
  { route: 'get /api/v1/providers/{}', parts: ['provider'], answers: [provider] },
  {
    route: 'patch /api/v1/providers/{}',
    parts: ['provider'],
    body: { name: 'renamed' },
    answers: [provider],
  },
  { route: 'delete /api/v1/providers/{}', parts: ['provider'], answers: [provider] },
  {
    route: 'post /api/v1/providers/{}/test',
    parts: ['provider'],
    body: { model: 'm' },
    answers: [provider],
  },
  { route: 'get /api/v1/tools/{}', parts: ['tool'], answers: [tool] },
  {
    route: 'patch /api/v1/tools/{}',
    parts: ['tool'],
    body: { description: 'renamed' },
    answers: [tool],
  },
  { route: 'delete /api/v1/tools/{}', parts: ['tool'], answers: [tool] },
  { route: 'post /api/v1/tools/{}/test', parts: ['tool'], body: {}, answers: [tool] },
  { route: 'get /api/v1/events/{}', parts: ['event'], answers: [event] },
  { route: 'post /api/v1/events/{}/replay', parts: ['event'], answers: [event] },
  { route: 'post /api/v1/events/{}/redeliver', parts: ['event'], answers: [event] },
  {
    route: 'post /api/v1/events/{}/approval',
    parts: ['event'],
    body: { decision: 'deny' },
    answers: [event],
  },
  {
    route: 'delete /api/v1/api-keys/{}',
    parts: ['apiKey'],
    answers: [notFound('This API key')],
  },
  { route: 'delete /api/v1/admins/{}', parts: ['admin'], answers: [notFound('This admin')] },
  {
    route: 'patch /api/v1/admins/{}',
    parts: ['admin'],
    body: { role: 'viewer' },
    answers: [notFound('This admin')],
  },
  { route: 'get /api/v1/alerts/{}', parts: ['alert'], answers: [alert] },
  {
    route: 'patch /api/v1/alerts/{}',
    parts: ['alert'],
    body: { enabled: false },
    answers: [alert],
  },
  { route: 'post /api/v1/alerts/{}/test', parts: ['alert'], answers: [alert] },
  { route: 'delete /api/v1/alerts/{}', parts: ['alert'], answers: [alert] },

  // The webhook receiver: a sender fetching its reply later.
  {
    route: 'all /hooks/{}/events/{}',
    parts: ['token', 'event'],
    answers: [undefined, { status: 404, detail: 'This webhook URL has no event with this id.' }],
  },

  // The panel.
  ...['get', 'post', 'get /regenerate', 'post /regenerate', 'get /delete', 'post /delete'].map(
    (what): IdRoute => {
      const [method, suffix = ''] = what.split(' ');
      return { route: `${method} /channels/{}${suffix}`, parts: ['channel'], answers: [channel] };
    },
  ),
  ...[
    '/preview',
    '/senders',
    '/test',
    '/enable',
    '/disable',
    '/trials',
    '/reply-url',
    '/reply-delivery/enable',
    '/reply-delivery/disable',
    '/reply-secret/rotate',
  ].map((suffix): IdRoute => ({
    route: `post /channels/{}${suffix}`,
    parts: ['channel'],
    answers: [channel],
  })),
  {
    route: 'post /channels/{}/versions/{}/restore',
    parts: ['channel', 'version'],
    answers: [channel],
  },
  { route: 'get /channels/{}/trials/{}', parts: ['channel', 'trial'], answers: [channel, trial] },
  ...['/promote', '/discard'].map((suffix): IdRoute => ({
    route: `post /channels/{}/trials/{}${suffix}`,
    parts: ['channel', 'trial'],
    answers: [channel, trial],
  })),
  { route: 'post /channels/{}/destinations/new', parts: ['channel'], answers: [channel] },
  ...['', '/remove', '/test'].map((suffix): IdRoute => ({
    route: `post /channels/{}/destinations/{}${suffix}`,
    parts: ['channel', 'destination'],
    answers: [channel, notFound('This destination')],
  })),
  ...['get', 'get /row', 'get /panel', 'post /replay', 'post /deliver-again', 'post /approval'].map(
    (what): IdRoute => {
      const [method, suffix = ''] = what.split(' ');
      return { route: `${method} /logs/{}${suffix}`, parts: ['event'], answers: [event] };
    },
  ),
  ...['get', 'post', 'post /delete', 'post /test'].map((what): IdRoute => {
    const [method, suffix = ''] = what.split(' ');
    return { route: `${method} /providers/{}${suffix}`, parts: ['provider'], answers: [provider] };
  }),
  ...['get', 'post', 'post /delete', 'post /test'].map((what): IdRoute => {
    const [method, suffix = ''] = what.split(' ');
    return { route: `${method} /tools/{}${suffix}`, parts: ['tool'], answers: [tool] };
  }),
  ...[
    'get',
    'post',
    'post /enable',
    'post /disable',
    'post /test',
    'get /delete',
    'post /delete',
  ].map((what): IdRoute => {
    const [method, suffix = ''] = what.split(' ');
    return { route: `${method} /alerts/{}${suffix}`, parts: ['alert'], answers: [alert] };
  }),
  {
    route: 'post /workspace/api-keys/{}/revoke',
    parts: ['apiKey'],
    answers: [notFound('This API key')],
  },
  {
    route: 'post /workspace/admins/{}/role',
    parts: ['admin'],
    body: { role: 'viewer' },
    answers: [notFound('This admin')],
  },
  {
    route: 'post /workspace/admins/{}/remove',
    parts: ['admin'],
    answers: [notFound('This admin')],
  },
  {
    route: 'post /workspace/admins/invitations/{}/cancel',
    parts: ['invitation'],
    answers: [notFound('This invitation')],
  },
];

/** Routes whose path parameters hold no row id: a webhook token, a model name. */
export const NOT_ID_ROUTES = [
  'all /hooks/{}',
  'put /api/v1/prices/{}',
  'delete /api/v1/prices/{}',
  'get /invitations/{}',
  'post /invitations/{}',
  'post /invitations/{}/join',
];

/** A route as ID_ROUTES names it: its parameters' names left out. */
export const routeShape = (route: AppRoute) =>
  `${route.method} ${route.path.replace(/\{[^}]+\}/g, '{}')}`;
