/**
 * Baselines (a) and (a+q): the usual Express receiver. `express.json()`, then one INSERT
 * committed per request through a pg Pool of 10, answering 200 with the new id. With
 * BASELINE_QUOTA=on the quota is one hot counter row updated in the same transaction as the
 * insert: the naive design, where every request waits for the row lock of the one before.
 */
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const withQuota = process.env.BASELINE_QUOTA === 'on';
const app = express();
app.use(express.json());

app.post('/hooks/:token', async (req, res) => {
  const payload = JSON.stringify(req.body);
  if (!withQuota) {
    const { rows } = await pool.query<{ id: string }>(
      'insert into events_baseline (payload) values ($1) returning id',
      [payload],
    );
    res.json({ id: rows[0]?.id });
    return;
  }
  const client = await pool.connect();
  try {
    await client.query('begin');
    const spent = await client.query(
      'update quota set used = used + 1 where id = 1 and used < cap returning used',
    );
    if (spent.rowCount === 0) {
      await client.query('rollback');
      res.status(403).json({ error: 'quota_exceeded' });
      return;
    }
    const { rows } = await client.query<{ id: string }>(
      'insert into events_baseline (payload) values ($1) returning id',
      [payload],
    );
    await client.query('commit');
    res.json({ id: rows[0]?.id });
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
});

const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
