// Helpers the Node.js driver tests share: a free loopback port and a bounded
// wait until a started `tessera server` accepts connections on it.
'use strict';
const net = require('node:net');

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

async function waitForPort(p, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const ok = await new Promise((resolve) => {
      const sock = net.connect(p, '127.0.0.1', () => { sock.end(); resolve(true); });
      sock.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('tessera server did not start');
}

// A `tessera server` of its own (TESSERA_BINARY) on a free loopback port, in
// a fresh temporary directory: resolves to { port, stop }, where stop()
// SIGTERMs it by its pid, waits for it to exit and removes the directory.
async function startServer(prefix) {
  const { spawn } = require('node:child_process');
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const port = await freePort();
  const server = spawn(process.env.TESSERA_BINARY, ['server', '--data-dir', path.join(dir, 'data'), '--listen',
                                                    `127.0.0.1:${port}`, '--admin-listen', '127.0.0.1:0'],
                       { stdio: 'ignore' });
  const exited = new Promise((resolve) => server.on('exit', resolve));
  await waitForPort(port, 30000);
  return {
    port,
    stop: async () => {
      server.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

module.exports = { freePort, waitForPort, startServer };
