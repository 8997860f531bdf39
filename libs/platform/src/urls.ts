/**
 * The database a PostgreSQL URL names (`postgres://user@host:port/<name>`), percent-decoded, or
 * `fallback` when the URL names none or is not a URL.
 */
export function databaseNameOf(url: string, fallback: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || fallback;
  } catch {
    return fallback;
  }
}

/** `host:port` of a PostgreSQL or Redis URL (default port 5432, 6379 for redis://), for messages; the text itself when it is not a URL. */
export function serverOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || (u.protocol.startsWith('redis') ? 6379 : 5432)}`;
  } catch {
    return url;
  }
}
