const BASE = 'http://panel.invalid';

/**
 * Where to go after signing in: a path on this site, never another site (`//evil.example`,
 * `/\evil.example`, `https://evil.example` and tricks the URL parser normalises into them all
 * fall back to `fallback`).
 */
export function localPath(next: unknown, fallback = '/channels'): string {
  if (typeof next !== 'string' || !next.startsWith('/')) return fallback;
  let url: URL;
  try {
    url = new URL(next, BASE);
  } catch {
    return fallback;
  }
  const path = url.pathname + url.search + url.hash;
  if (
    url.origin !== BASE ||
    !path.startsWith('/') ||
    path.startsWith('//') ||
    path.startsWith('/\\')
  ) {
    return fallback;
  }
  return path;
}
