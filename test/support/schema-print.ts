/**
 * What the tests check before they lend a store to the next test file (test/support/pglite.ts, the PostgreSQL schemas
 * of test/server/support/databases.ts): that its schema is still the migrated one, and how to empty it; and why a
 * store given back was not lent again.
 */
import type pg from 'pg';

/**
 * A print of the current schema (`current_schema()`, the connection's search_path): its relations, columns and their
 * defaults, constraints, indexes, functions and triggers, and the migrations it recorded, one line each, sorted. A
 * schema's print holds its name (PostgreSQL's pg_get_indexdef writes the table of an index schema-qualified): compare a
 * schema's print with its own, as it was freshly migrated. The schema's relations are found first and the rest by
 * them, through the catalogs' indexes: a PostgreSQL server holds the schemas of every test file of a run besides.
 */
const SCHEMA_PRINT = `
with rels as materialized (
  select oid, relname, relkind, relpersistence from pg_class where relnamespace = current_schema()::regnamespace
)
select coalesce(string_agg(x, E'\\n' order by x), '') as print from (
  select 'r ' || relname || ' ' || relkind::text || ' ' || relpersistence::text as x from rels
  union all select 'a ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull
      || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
    from rels c join pg_attribute a on a.attrelid = c.oid left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attnum > 0 and not a.attisdropped
  union all select 'k ' || c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid) from rels c join pg_constraint k on k.conrelid = c.oid
  union all select 'i ' || pg_get_indexdef(i.indexrelid) from rels c join pg_index i on i.indrelid = c.oid
  union all select 't ' || c.relname || ' ' || t.tgname || ' ' || t.tgenabled::text from rels c join pg_trigger t on t.tgrelid = c.oid where not t.tgisinternal
  union all select 'f ' || oid::regprocedure from pg_proc where pronamespace = current_schema()::regnamespace
  union all select 'm ' || version || ' ' || name from schema_migrations
) objects`;

/** The current schema's print (see SCHEMA_PRINT). */
export async function schemaPrint(client: pg.Client): Promise<string> {
  return (await client.query<{ print: string }>(SCHEMA_PRINT)).rows[0]!.print;
}

/** What a freshly migrated schema is: its print, and the statement that empties it (every table but the migrations' record). */
export interface MigratedSchema {
  print: string;
  empty: string;
}

/** Reads the current schema, which must be freshly migrated, as the stores lent from it must stay. */
export async function migratedSchemaOf(client: pg.Client): Promise<MigratedSchema> {
  const tables = (
    await client.query<{ name: string }>(
      `select format('%I', relname) as name from pg_class
       where relnamespace = current_schema()::regnamespace and relkind in ('r', 'p') and relname <> 'schema_migrations' order by 1`,
    )
  ).rows.map((row) => row.name);
  return { print: await schemaPrint(client), empty: `truncate ${tables.join(', ')} restart identity cascade` };
}

/** Why a store given back was not lent again: which check refused it, and what it found. */
export interface Refusal {
  /** The store: a PostgreSQL schema's name, or 'pglite'. */
  store: string;
  /** `print`: its schema is not the migrated one's; `lock timeout`: a lock a test left; `error`: anything else. */
  check: 'print' | 'lock timeout' | 'error';
  /** For `print`, the lines only the store's print has (+) and only the migrated one's (-); else the error. */
  detail: string;
}

/** What differs between two prints, as `+ line` (only in `given`) and `- line` (only in `expected`), a few of each. */
export function printDifference(expected: string, given: string, most = 6): string {
  const a = new Set(expected.split('\n'));
  const b = new Set(given.split('\n'));
  const only = (from: Set<string>, other: Set<string>, sign: string) => {
    const lines = [...from].filter((line) => !other.has(line));
    return lines.slice(0, most).map((line) => `${sign} ${line}`).concat(lines.length > most ? [`${sign} … ${lines.length - most} more`] : []);
  };
  return [...only(b, a, '+'), ...only(a, b, '-')].join('\n') || '(the same lines, in another order)';
}

/** A refusal for an error thrown while a store was checked or emptied. */
export function refusalOfError(store: string, error: unknown): Refusal {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return { store, check: code === '55P03' ? 'lock timeout' : 'error', detail: `${typeof code === 'string' ? `${code} ` : ''}${message}` };
}

/**
 * Keeps a refusal where a test (test/server/lent-stores.test.ts) or a person can read it: the last few in `into`, and
 * on stderr when CNV_TEST_LENDING_LOG is set.
 */
export function recordRefusal(into: Refusal[], refusal: Refusal): void {
  into.push(refusal);
  if (into.length > 20) into.shift();
  if (process.env.CNV_TEST_LENDING_LOG) process.stderr.write(`[lending] refused ${refusal.store} (${refusal.check}): ${refusal.detail}\n`);
}
