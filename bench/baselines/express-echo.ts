/** Baseline (b): the Express receiver of (a) without the database: parse the JSON, answer 200. */
import express from 'express';

const app = express();
app.use(express.json());

app.post('/hooks/:token', (req, res) => {
  res.json({ received: typeof req.body === 'object' });
});

const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
