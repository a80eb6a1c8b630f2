import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeListing, listTopicsCommand, parseTopicList, scramClientProperties, toolFailure, topicsVisibleTo } from '../src/cluster/kafka-topics';

/** A properties file read as Java's Properties.load reads it: `key=value` lines, `\\` escapes, `\uXXXX`. */
function readProperties(text: string): Record<string, string> {
  const entries = text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const at = line.indexOf('=');
      const value = line.slice(at + 1).replace(/\\u([0-9a-f]{4})|\\(.)/g, (_, hex: string | undefined, escaped: string | undefined) => (hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : escaped!));
      return [line.slice(0, at), value] as const;
    });
  return Object.fromEntries(entries);
}

describe('the topics a broker user sees on 9092', () => {
  // Kafka's AclOperation: READ, WRITE, DELETE, ALTER (and ALL) imply DESCRIBE; listing shows what the user may DESCRIBE.
  it('expects the topics whose ACLs allow Describe, or an operation that implies it', () => {
    expect(
      topicsVisibleTo([
        { topic: 'orders', operations: ['Write'] },
        { topic: 'declarations', operations: ['Read'] },
        { topic: 'audit', operations: ['Alter'] },
        { topic: 'purge', operations: ['Delete'] },
        { topic: 'status', operations: ['Describe'] },
        { topic: 'everything', operations: ['All'] },
      ]),
    ).toEqual(['audit', 'declarations', 'everything', 'orders', 'purge', 'status']);
  });

  it('does not expect a topic whose ACLs allow only Create, DescribeConfigs or AlterConfigs', () => {
    expect(topicsVisibleTo([{ topic: 'made', operations: ['Create'] }, { topic: 'configs', operations: ['DescribeConfigs', 'AlterConfigs'] }])).toEqual([]);
  });

  it('passes a listing that is exactly the expected topics and names the missing and the unexpected ones', () => {
    expect(judgeListing(['declarations'], ['declarations'])).toEqual({ ok: true, detail: 'declarations' });
    const judged = judgeListing(['declarations', 'orders'], ['declarations', 'secret-topic']);
    expect(judged.ok).toBe(false);
    expect(judged.detail).toBe('missing orders (its ACLs allow it); unexpected secret-topic (no ACL of its allows it); listed: declarations, secret-topic');
  });

  it('reads one topic a line, blank lines and order aside', () => {
    expect(parseTopicList('orders\n\ndeclarations\n')).toEqual(['declarations', 'orders']);
  });

  it("reports the tool's own error line, else stderr's last line that is not a stack frame", () => {
    const stdout = 'Error while executing topic command : Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512\n';
    expect(toolFailure(stdout, '[2026-01-01 00:00:00,000] ERROR org.apache.kafka.common.errors.SaslAuthenticationException: ...\n', '')).toBe(stdout.trim());
    expect(toolFailure('', 'sh: 1: kafka-topics.sh: not found\n\tat nothing\n', 'command terminated with non-zero exit code')).toBe('sh: 1: kafka-topics.sh: not found');
    expect(toolFailure('', '', 'command terminated with non-zero exit code')).toBe('command terminated with non-zero exit code');
  });

  it('writes a SCRAM-SHA-512 login on the plain listener, the password quoted for JAAS and escaped for the properties file', () => {
    const password = 'p"a\\ss wörd';
    const properties = readProperties(scramClientProperties('webapp', password));
    expect(properties['security.protocol']).toBe('SASL_PLAINTEXT');
    expect(properties['sasl.mechanism']).toBe('SCRAM-SHA-512');
    expect(properties['sasl.jaas.config']).toBe('org.apache.kafka.common.security.scram.ScramLoginModule required username="webapp" password="p\\"a\\\\ss wörd";');
    expect(scramClientProperties('webapp', password)).toMatch(/^[\x20-\x7e\n]*$/);
  });

  it('runs kafka-topics.sh --list against localhost:9092 with the properties from stdin in a private temporary file, removed afterwards; no secret in its arguments', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kafka-topics-'));
    const tmp = path.join(dir, 'tmp');
    fs.mkdirSync(tmp);
    // A kafka-topics.sh that records its arguments, the file's mode and content.
    fs.writeFileSync(path.join(dir, 'kafka-topics.sh'), `#!/bin/sh\necho "$@" > "${dir}/args"\nf=$4\nstat -c %a "$f" > "${dir}/mode"\ncat "$f" > "${dir}/properties"\necho declarations\n`, { mode: 0o755 });
    const [shell, flag, script] = listTopicsCommand();
    const properties = scramClientProperties('webapp', 'not-in-argv');
    const run = spawnSync(shell!, [flag!, script!], { input: properties, env: { PATH: `${dir}:${process.env['PATH']}`, TMPDIR: tmp }, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe('declarations\n');
    expect(fs.readFileSync(path.join(dir, 'args'), 'utf8')).toMatch(/^--bootstrap-server localhost:9092 --command-config \S+ --list\n$/);
    expect(fs.readFileSync(path.join(dir, 'mode'), 'utf8').trim()).toBe('600');
    expect(fs.readFileSync(path.join(dir, 'properties'), 'utf8')).toBe(properties);
    expect(fs.readdirSync(tmp)).toEqual([]);
    expect(listTopicsCommand().join(' ')).not.toContain('not-in-argv');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // The exec's stdin stays open (kwok's kubelet never sees its end): the command reads its lines and goes on.
  it('reads the properties without waiting for the end of stdin', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kafka-topics-'));
    fs.writeFileSync(path.join(dir, 'kafka-topics.sh'), `#!/bin/sh\ncat "$4" > "${dir}/properties"\necho declarations\n`, { mode: 0o755 });
    const [shell, ...rest] = listTopicsCommand();
    const child = spawn(shell!, rest, { env: { PATH: `${dir}:${process.env['PATH']}`, TMPDIR: dir }, stdio: ['pipe', 'pipe', 'inherit'] });
    const properties = scramClientProperties('webapp', 'secret');
    child.stdin.write(properties);
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    // 'close', not 'exit': the process may exit before its stdout's last data is read.
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdin.destroy();
    expect(code).toBe(0);
    expect(stdout).toBe('declarations\n');
    expect(fs.readFileSync(path.join(dir, 'properties'), 'utf8')).toBe(properties);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the tool exit code and removes the file when the tool fails', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kafka-topics-'));
    // An exit code the shell itself never gives, so it can only be the tool's; the tool saw the file.
    fs.writeFileSync(path.join(dir, 'kafka-topics.sh'), `#!/bin/sh\ntest -s "$4" && touch "${dir}/ran"\necho "Error while executing topic command : refused" >&2\nexit 3\n`, { mode: 0o755 });
    const [shell, flag, script] = listTopicsCommand();
    const run = spawnSync(shell!, [flag!, script!], { input: scramClientProperties('webapp', 'secret'), env: { PATH: `${dir}:${process.env['PATH']}`, TMPDIR: dir }, encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stderr).toContain('Error while executing topic command : refused');
    expect(fs.readdirSync(dir).sort()).toEqual(['kafka-topics.sh', 'ran']);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
