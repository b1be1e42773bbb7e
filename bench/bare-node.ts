/**
 * The floor for figure 7: a bare `node:http` server on the same Node, answering GET /api/v1/health
 * with a small JSON body. Start-up to its first healthy answer and its idle RSS are what the Node
 * runtime itself costs; gatewayd's figures are read beside them.
 * `node dist/bench/bare-node.js PORT`.
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
createServer((req, res) => {
  res.writeHead(req.url === '/api/v1/health' ? 200 : 404, { 'content-type': 'application/json' });
  res.end('{"status":"ok"}');
}).listen(port, '127.0.0.1');
