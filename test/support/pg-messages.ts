import pg from 'pg';

/**
 * The messages `fn` sends to PostgreSQL from any connection of this process (node-postgres sends
 * one per `query` call): a simple-protocol text as it is, a prepared statement as
 * `[prepared name] text`. The client's `query` is wrapped only while `fn` runs.
 */
export async function sentMessages(fn: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text: string; name?: string };
    sent.push(typeof q === 'string' ? q : `[prepared ${q.name ?? 'unnamed'}] ${q.text}`);
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = query;
  }
  return sent;
}
