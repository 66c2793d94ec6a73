import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { CountingProxy, trafficBetween } from './counting-proxy.ts';

const opened: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

/** An upstream that echoes what it got: `/big` 1 000 bytes, `/gz` gzip, PUT → its body length. */
async function upstream(): Promise<{ uri: string; hosts: string[] }> {
  const hosts: string[] = [];
  const server: Server = createServer((req, res) => {
    hosts.push(req.headers.host ?? '');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/big')
        res.writeHead(200, { 'content-length': '1000' }).end('x'.repeat(1000));
      else if (req.url === '/gz') {
        const body = gzipSync(Buffer.from('y'.repeat(5000)));
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': body.length });
        res.end(body);
      } else if (req.method === 'HEAD') res.writeHead(404, { 'content-length': '7' }).end();
      else res.writeHead(201).end(String(Buffer.concat(chunks).length));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  opened.push({ close: () => new Promise((r) => server.close(r)) });
  server.keepAliveTimeout = 20_000;
  return { uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hosts };
}

/** One request over `agent`: status and body as received (no decompression). */
function call(
  agent: Agent,
  uri: string,
  method: string,
  path: string,
  body?: string,
  host?: string,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${uri}${path}`,
      { method, agent, ...(host === undefined ? {} : { headers: { host } }) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('CountingProxy', () => {
  it('forwards requests and counts requests, statuses, bodies and connections', async () => {
    const up = await upstream();
    const proxy = await CountingProxy.start(up.uri);
    opened.push(proxy);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    opened.push({ close: () => agent.destroy() });

    const big = await call(agent, proxy.uri, 'GET', '/big', undefined, 's3.example:9000');
    const put = await call(agent, proxy.uri, 'PUT', '/k', 'z'.repeat(300));
    const head = await call(agent, proxy.uri, 'HEAD', '/missing');
    const gz = await call(agent, proxy.uri, 'GET', '/gz');

    expect(big).toMatchObject({ status: 200 });
    expect(big.body.length).toBe(1000);
    expect(put).toMatchObject({ status: 201, body: Buffer.from('300') });
    expect(head).toMatchObject({ status: 404 });
    // Forwarded as sent: the body is still gzip, and counted at its compressed size.
    expect(gz.body.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    // The client's Host header reaches the upstream (an S3 signature covers it).
    expect(up.hosts[0]).toBe('s3.example:9000');

    const traffic = proxy.traffic();
    expect(traffic).toMatchObject({
      connections: 1, // one kept-alive connection for all four
      requests: 4,
      byRequest: { 'GET 200': 2, 'PUT 201': 1, 'HEAD 404': 1 },
      requestBodyBytes: 300,
      responseBodyBytes: 1000 + 3 + gz.body.length,
    });
    expect(gz.body.length).toBeLessThan(5000);
    expect(traffic.headerBytes).toBeGreaterThan(4 * 20);
  });

  it('gives the traffic between two snapshots', async () => {
    const up = await upstream();
    const proxy = await CountingProxy.start(up.uri);
    opened.push(proxy);
    const agent = new Agent({ keepAlive: false });
    await call(agent, proxy.uri, 'GET', '/big');
    const before = proxy.traffic();
    await call(agent, proxy.uri, 'PUT', '/k', 'abc');
    await call(agent, proxy.uri, 'PUT', '/k', 'de');

    expect(trafficBetween(before, proxy.traffic())).toMatchObject({
      connections: 2, // no keep-alive: one connection per request
      requests: 2,
      byRequest: { 'PUT 201': 2 },
      requestBodyBytes: 5,
      responseBodyBytes: 2,
    });
  });

  it('answers 502 and counts a proxy error when the upstream is down', async () => {
    const up = await upstream();
    const proxy = await CountingProxy.start(up.uri);
    opened.push(proxy);
    await opened[0]!.close(); // the upstream
    const agent = new Agent({ keepAlive: false });

    const answer = await call(agent, proxy.uri, 'GET', '/big');

    expect(answer.status).toBe(502);
    expect(proxy.traffic().byRequest).toEqual({ 'GET proxy-error': 1 });
  });
});
