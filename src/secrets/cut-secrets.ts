import { decodedViews, type TextView } from './decoded-text.js';
import { parsedUrl } from './secret-values.js';

/** What a secret cut out of a text is replaced by, unless the caller names another. */
export const SECRET_PLACEHOLDER = '[secret]';

/**
 * Query values (`?v=2`, `?wait=true`) and lone user names (`https://ci@…`) shorter than this are
 * not taken for tokens.
 */
const MIN_URL_PART = 8;
/** Plain values shorter than this are not looked for in base64: their encoding is no secret. */
const MIN_BASE64_SOURCE = 8;

/**
 * The secrets a text from outside must not show:
 * - `values`, secret whole: a token, an API key, a header's value, a secret webhook URL (whose
 *   path holds its token, so the path is cut too, and its query values);
 * - `urls` whose userinfo and query hold the secrets: a reply URL, a `webhook` destination's or
 *   an alert's URL, a tool's URL, a provider's base URL. Only those parts are cut (a user name
 *   with its password, or alone as the credential); the host and the path stay readable.
 *
 * Which values are secrets, of which kind, is said once in secret-values.ts.
 */
export interface SecretsToCut {
  values?: readonly (string | null | undefined)[];
  urls?: readonly (string | null | undefined)[];
}

/**
 * The one rule for cutting secrets out of what the service keeps or shows of a text it got from
 * elsewhere: errors, `last_error`, answers' excerpts, provider errors (and the next tools' URLs
 * and headers). Each secret is looked for as it is, in the forms it is sent in (the base64 of a
 * Basic credential, a URL's query values), and in the text after decoding: JSON string escapes
 * (`\u0073k-…`, `\/`), percent-encoding and HTML character references, up to three times over (a
 * JSON error quoted inside another). Whatever matched is replaced in the original text, escapes
 * and all, so no part of a secret is left; cut before shortening a text, never after.
 */
export class SecretCutter {
  private readonly forms: readonly string[];

  constructor(
    secrets: SecretsToCut,
    private readonly placeholder = SECRET_PLACEHOLDER,
  ) {
    const forms = new Set<string>();
    for (const value of secrets.values ?? []) if (value) valueForms(value, forms);
    for (const url of secrets.urls ?? []) if (url) urlForms(url, forms);
    forms.delete('');
    this.forms = [...forms];
  }

  /** Whether there is anything to cut. */
  get empty(): boolean {
    return this.forms.length === 0;
  }

  cut(text: string): string;
  cut(text: string | null | undefined): string | null | undefined;
  cut(text: string | null | undefined): string | null | undefined {
    if (!text || this.forms.length === 0) return text;
    const ranges: [number, number][] = [];
    for (const view of decodedViews(text)) this.find(view, ranges);
    if (ranges.length === 0) return text;
    ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    let out = '';
    let at = 0;
    let [start, end] = ranges[0] as [number, number];
    for (const [from, to] of ranges.slice(1)) {
      if (from <= end) end = Math.max(end, to);
      else {
        out += text.slice(at, start) + this.placeholder;
        [at, start, end] = [end, from, to];
      }
    }
    return out + text.slice(at, start) + this.placeholder + text.slice(end);
  }

  /** Adds the original text's ranges of each form found in `view`. */
  private find(view: TextView, ranges: [number, number][]): void {
    for (const form of this.forms) {
      for (let i = view.text.indexOf(form); i >= 0; i = view.text.indexOf(form, i + 1))
        ranges.push([view.start(i), view.end(i + form.length - 1)]);
    }
  }
}

/** `text` without `secrets` (see SecretCutter). */
export function cutSecrets(
  text: string,
  secrets: SecretsToCut,
  placeholder = SECRET_PLACEHOLDER,
): string {
  return new SecretCutter(secrets, placeholder).cut(text);
}

/** A value secret whole; a URL also by its path and its URL parts. */
function valueForms(value: string, forms: Set<string>): void {
  forms.add(value);
  if (value.length >= MIN_BASE64_SOURCE) base64Forms(value, forms);
  const url = parsedUrl(value);
  if (!url) return;
  forms.add(url.href);
  // The path of a webhook URL holds its token (a host alone is harmless); its leading slash
  // stays, so an answer reads `/[secret]`.
  if (url.pathname.length > 1) addDecoded(url.pathname.slice(1), forms);
  urlForms(value, forms);
}

/**
 * The secrets a URL carries: its password (and its Basic credential), or its user name when it
 * comes alone, and its query's values.
 */
function urlForms(text: string, forms: Set<string>): void {
  const url = parsedUrl(text);
  if (!url) {
    // Not a URL after all: all of it is kept out.
    forms.add(text);
    return;
  }
  if (url.password) {
    addDecoded(url.password, forms);
    forms.add(`${url.username}:${url.password}`);
    base64Forms(`${decoded(url.username)}:${decoded(url.password)}`, forms);
  } else if (url.username.length >= MIN_URL_PART) {
    addDecoded(url.username, forms);
    base64Forms(`${decoded(url.username)}:`, forms);
  }
  const query = url.search.slice(1);
  if (!query) return;
  addDecoded(query, forms);
  for (const pair of query.split('&')) {
    const raw = pair.slice(pair.indexOf('=') + 1);
    if (pair.includes('=') && raw.length >= MIN_URL_PART) addDecoded(raw, forms);
  }
  for (const value of url.searchParams.values()) if (value.length >= MIN_URL_PART) forms.add(value);
}

/** Standard and URL-safe base64, without padding: an encoding ends where the value does. */
function base64Forms(value: string, forms: Set<string>): void {
  const bytes = Buffer.from(value, 'utf8');
  forms.add(bytes.toString('base64').replace(/=+$/, ''));
  forms.add(bytes.toString('base64url'));
}

function addDecoded(text: string, forms: Set<string>): void {
  forms.add(text);
  forms.add(decoded(text));
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
