import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support';

// The runbook's procedures are commands the e2e cluster proves (`npm run ...`, parsed by
// test/documented-commands.test.ts and run by test/e2e/ops-scenario.mjs); a command that stays
// kubectl, helm or a shell over them needs what the e2e cluster does not have, and its block
// says what, on its first line (`# Real cluster only: <reason>.`).

const RAW_TOOL = /^\s*(kubectl|helm|argocd|SQL=|Q\(|JAAS=|printf)\b/;

function codeBlocks(text: string): { line: number; body: string[] }[] {
  const blocks: { line: number; body: string[] }[] = [];
  let open: { line: number; body: string[] } | undefined;
  text.split('\n').forEach((line, index) => {
    if (line.startsWith('```')) {
      if (open === undefined) open = { line: index + 1, body: [] };
      else {
        blocks.push(open);
        open = undefined;
      }
    } else open?.body.push(line);
  });
  return blocks;
}

describe('the runbook', () => {
  const blocks = codeBlocks(fs.readFileSync(path.join(ROOT, 'docs', 'runbook.md'), 'utf8'));

  it('marks every block that keeps a kubectl, helm or argocd command as needing a real cluster, with the reason', () => {
    const raw = blocks.filter((block) => block.body.some((line) => RAW_TOOL.test(line)));
    expect(raw.length).toBeGreaterThan(0);
    const unmarked = raw.filter((block) => !/^# Real cluster only: \S.*\.$/.test(block.body[0] ?? '')).map((block) => `docs/runbook.md:${block.line}: ${block.body.find((line) => RAW_TOOL.test(line))}`);
    expect(unmarked).toEqual([]);
  });

  it('has no helm command against Argo CD: the bootstrap installs its release manifests (pulumi/argocd-installation.ts), so there is no Helm release to roll back, and npm run upgrade moves its tag', () => {
    expect(blocks.flatMap((block) => block.body).filter((line) => /^\s*helm\b.*\bargocd\b/.test(line))).toEqual([]);
  });

  it('has no argocd CLI command: Argo CD is operated through its resources (npm run ops)', () => {
    expect(blocks.flatMap((block) => block.body).filter((line) => /^\s*argocd\b/.test(line))).toEqual([]);
  });
});
