/** `{{input.<path>}}`: a member of the call's input, by its dotted path. */
const PLACEHOLDER = /\{\{\s*input((?:\.[A-Za-z0-9_-]+)+)\s*\}\}/g;

/**
 * Why an `http` tool's URL cannot be used, or undefined. Placeholders may stand in its path and
 * query only: the server a call goes to (scheme, host, port) is the one saved and checked.
 */
export function urlTemplateProblem(template: string): string | undefined {
  const scheme = /^(https?):\/\//i.exec(template);
  if (!scheme) return 'must be an http:// or https:// URL';
  const afterScheme = template.slice(scheme[0].length);
  const authorityEnd = afterScheme.search(/[/?#]/);
  const authority = authorityEnd < 0 ? afterScheme : afterScheme.slice(0, authorityEnd);
  if (authority.includes('{{'))
    return 'may hold {{input.…}} placeholders in its path and query only';
  const rest = template.replace(PLACEHOLDER, '');
  if (rest.includes('{{') || rest.includes('}}')) {
    return 'has a placeholder that is not {{input.<path>}}';
  }
  try {
    const url = new URL(template.replace(PLACEHOLDER, 'x'));
    if (!url.hostname) return 'must name a host';
  } catch {
    return 'must be an http:// or https:// URL';
  }
  return undefined;
}

/** The URL with its placeholders filled in from `input`, each URL-encoded (`''` when missing). */
export function renderToolUrl(template: string, input: Record<string, unknown>): string {
  return template.replace(PLACEHOLDER, (_match, path: string) =>
    encodeURIComponent(asText(valueAt(input, path.slice(1).split('.')))),
  );
}

function valueAt(input: unknown, path: readonly string[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
