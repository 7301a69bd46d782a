import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { expect, onTestFinished } from 'vitest';
import { BIN, finished, runBuilt, spawnBuilt, type RunOptions } from '../../support/builtCli.js';

/** Resolves with the first match of `pattern` in the child's stdout; rejects if it exits first. */
export const awaitOutput = (child: ChildProcess, pattern: RegExp): Promise<RegExpMatchArray> =>
  new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = pattern.exec(stdout);
      if (match) resolve(match);
    });
    child.on('exit', (code) =>
      reject(
        new Error(`exited with ${code} before printing ${pattern}\nstdout: ${stdout}\nstderr: ${stderr}`),
      ),
    );
  });

/** `ctx serve`: answers /health at the URL it announces, serves the CLI, and stops cleanly on SIGTERM. */
export const serveSession = async (args: string[], options: Required<RunOptions>): Promise<void> => {
  const child = spawnBuilt(args, options);
  // A server that never announces itself fails the test on its timeout; it must not outlive it.
  onTestFinished(() => void child.kill('SIGKILL'));
  const ended = finished(child);
  try {
    const [, url] = (await awaitOutput(child, /serving on (http:\/\/[\d.:]+)/)) as [string, string];
    const health = await fetch(`${url}/health`);
    expect(await health.json()).toEqual({ status: 'ok' });
    // Other commands go through it, found through the data directory or named with --server.
    for (const through of [['history'], ['history', '--server', url]]) {
      const run = await runBuilt(through, options);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^No events\.$|^POSITION/m);
    }
  } finally {
    child.kill('SIGTERM');
  }
  const run = await ended;
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toMatch(/Context Ledger stopped/);
};

/** `ctx mcp`: initializes with the real MCP client over stdio, serves its tools, and ends when closed. */
export const mcpSession = async (args: string[], { env, cwd }: Required<RunOptions>): Promise<void> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    cwd,
    env: { ...process.env, ...env } as Record<string, string>,
    stderr: 'pipe',
  });
  onTestFinished(() => transport.close());
  const client = new Client({ name: 'cli-e2e', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error('the MCP client started no process');
  try {
    expect(client.getServerVersion()?.name).toBeTruthy();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('context.search');
    const result = await client.callTool({ name: 'context.search', arguments: { query: 'tokens' } });
    expect(result.isError).toBeFalsy();
  } finally {
    await client.close();
  }
  // close() returns once the process has exited: nothing answers at its pid any more.
  expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
};
