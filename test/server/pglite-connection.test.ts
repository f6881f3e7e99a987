/**
 * node-postgres's connection to PGlite (src/server/db/pglite-connection.ts): a transaction's BEGIN goes in with its
 * first statement, so a one-statement transaction is two exchanges with PGlite instead of three, and every answer
 * (errors, rollbacks, an empty transaction) is what PostgreSQL gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { pgliteHere } from '../../src/server/db/pglite-thread';
import { pgliteClientConfig, withoutBeginAnswer, type ProtocolEndpoint } from '../../src/server/db/pglite-connection';
import { emptyImage } from '../support/pglite';

describe('the connection to PGlite', () => {
  let endpoint: ProtocolEndpoint;
  let client: pg.Client;
  let exchanges = 0;

  beforeAll(async () => {
    const lite = await pgliteHere({ image: await emptyImage() });
    endpoint = {
      exec: (messages) => {
        exchanges++;
        return lite.exec(messages);
      },
      close: () => lite.close(),
    };
    client = new pg.Client(pgliteClientConfig(endpoint));
    await client.connect();
    await client.query('create table t (id int primary key)');
  }, 60_000);
  afterAll(async () => {
    await client.end();
    await endpoint.close();
  });

  it('sends BEGIN with the first statement of a transaction: two exchanges for BEGIN, an insert and COMMIT', async () => {
    const before = exchanges;
    await client.query('begin');
    expect(exchanges).toBe(before); // answered at once
    expect((await client.query('insert into t values ($1) returning id', [1])).rows).toEqual([{ id: 1 }]);
    await client.query('commit');
    expect(exchanges).toBe(before + 2);
    expect((await client.query('select count(*)::int as n from t')).rows).toEqual([{ n: 1 }]);
  });

  it('rolls back a transaction whose first statement failed, and one that ran nothing', async () => {
    await client.query('begin');
    await expect(client.query('insert into t values ($1)', [1])).rejects.toMatchObject({ code: '23505' });
    await client.query('rollback');
    await client.query('begin');
    await client.query('rollback');
    await client.query('begin');
    await client.query('insert into t values ($1)', [2]);
    await client.query('rollback');
    expect((await client.query('select array_agg(id order by id) as ids from t')).rows).toEqual([{ ids: [1] }]);
  });

  it('takes exactly the held BEGIN\'s answer off the front of the next one', () => {
    const message = (type: string, body: Buffer) => {
      const head = Buffer.alloc(5);
      head.write(type, 0, 'latin1');
      head.writeInt32BE(4 + body.length, 1);
      return Buffer.concat([head, body]);
    };
    const begin = Buffer.concat([message('C', Buffer.from('BEGIN\0')), message('Z', Buffer.from('T'))]);
    const next = Buffer.concat([message('1', Buffer.alloc(0)), message('Z', Buffer.from('T'))]);
    expect(withoutBeginAnswer(Buffer.concat([begin, next]))).toEqual({ rest: next, failed: false });
    const refused = Buffer.concat([message('E', Buffer.from('SERROR\0\0')), message('Z', Buffer.from('E'))]);
    expect(withoutBeginAnswer(Buffer.concat([refused, next])).failed).toBe(true);
  });
});
