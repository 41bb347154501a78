/** Baseline (c): a plain node:http server answering every request with a small JSON, body unread. */
import http from 'node:http';

const answer = JSON.stringify({ hello: 'world' });

const server = http.createServer((req, res) => {
  // The body is drained, not parsed, so the request completes and keep-alive holds.
  req.resume();
  req.on('end', () => {
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(answer),
    });
    res.end(answer);
  });
});

server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
