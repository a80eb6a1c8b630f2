import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support';

// Convergence item 11: the platform's namespaces enforce the restricted Pod Security
// profile, so a debug pod without a restricted security context is refused at admission
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted:
// non-root, no privilege escalation, capabilities dropped, RuntimeDefault seccomp). This
// reads every `kubectl run` and `kubectl debug` of the runbook and checks the pod it makes:
// `kubectl run --override-type=strategic` merges `--overrides` into the generated pod by
// container name, the container being named after the pod; `kubectl debug --profile=restricted`
// sets the restricted fields but no user, which `--custom` supplies
// (https://kubernetes.io/docs/reference/kubectl/generated/kubectl_run/,
// https://kubernetes.io/docs/reference/kubectl/generated/kubectl_debug/).

const runbook = fs.readFileSync(path.join(ROOT, 'docs', 'runbook.md'), 'utf8');

/** Shell lines of the runbook's code blocks and inline code, continuations joined. */
function commands(text: string): string[] {
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n\s*/g, ' ').split('\n'));
  const inline = [...text.matchAll(/`(kubectl [^`]+)`/g)].map((m) => [m[1]!]);
  return [...blocks, ...inline].flat().map((line) => line.trim()).filter((line) => line.startsWith('kubectl'));
}

/** Words of a command as the shell splits them (quotes kept out, no expansion). */
function words(line: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: string | undefined;
  let started = false;
  for (const char of line) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else current += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      if (started || current !== '') out.push(current);
      current = '';
      started = false;
    } else if (char === '#' && current === '' && !started) {
      break;
    } else {
      current += char;
    }
  }
  if (started || current !== '') out.push(current);
  return out;
}

const flag = (args: readonly string[], name: string) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);

describe('debug pods in the runbook', () => {
  const all = commands(runbook);
  const runs = all.filter((line) => / run /.test(line) && !line.includes('npm run'));
  const debugs = all.filter((line) => / debug /.test(line));

  it('finds the runbook\'s kubectl run and debug commands', () => {
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(debugs.length).toBeGreaterThanOrEqual(1);
  });

  it('gives every kubectl run pod a restricted security context, merged into its container by name', () => {
    for (const line of runs) {
      const args = words(line);
      const name = args[args.indexOf('run') + 1]!;
      expect(flag(args, 'override-type'), line).toBe('strategic');
      const overrides = JSON.parse(flag(args, 'overrides') ?? 'null');
      expect(overrides, line).not.toBeNull();
      const pod = overrides.spec.securityContext;
      expect(pod.runAsNonRoot, line).toBe(true);
      expect(pod.runAsUser, line).toBeGreaterThan(0);
      expect(pod.seccompProfile, line).toEqual({ type: 'RuntimeDefault' });
      expect(overrides.spec.containers.map((c: any) => c.name), line).toEqual([name]);
      const container = overrides.spec.containers[0].securityContext;
      expect(container.allowPrivilegeEscalation, line).toBe(false);
      expect(container.capabilities, line).toEqual({ drop: ['ALL'] });
    }
  });

  it('runs every kubectl debug container with the restricted profile and a non-root user', () => {
    for (const line of debugs) {
      const args = words(line);
      expect(flag(args, 'profile'), line).toBe('restricted');
      const file = flag(args, 'custom');
      expect(file, line).toBeDefined();
      const written = new RegExp(`echo '([^']+)' > ${file!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`).exec(runbook);
      expect(written, `the runbook writes ${file}`).not.toBeNull();
      const custom = JSON.parse(written![1]!);
      expect(custom.securityContext.runAsNonRoot, line).toBe(true);
      expect(custom.securityContext.runAsUser, line).toBeGreaterThan(0);
    }
  });
});
