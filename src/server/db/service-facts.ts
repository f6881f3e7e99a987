/**
 * What a running service records in its store for the tools that share it (migration 28, table service_facts): the
 * public URL it serves, so `cnv` prints the links and snippets the service itself hands out.
 */
import type { Queryable } from './db';

const PUBLIC_URL = 'public_url';

/** Records the public URL this service serves (at every start; several services on one store: the last one wins). */
export async function recordPublicUrl(db: Queryable, publicUrl: string): Promise<void> {
  await db.query(
    `insert into service_facts (name, value, recorded_at) values ($1, $2, now())
     on conflict (name) do update set value = excluded.value, recorded_at = excluded.recorded_at`,
    [PUBLIC_URL, publicUrl],
  );
}

/** The public URL the last service started on this store recorded, or null when none has (a store no service ran on since). */
export async function recordedPublicUrl(db: Queryable): Promise<string | null> {
  const [row] = await db.query<{ value: string }>('select value from service_facts where name = $1', [PUBLIC_URL]);
  return row?.value ?? null;
}
