import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDiff } from '../src/diff/format';
import { diffSecretTrees } from '../src/diff/secrets-diff';
import { ROOT } from './support';

// Issue 50, item 1: the rendered diff names each encrypted Secret and key that changed in
// secrets/, never a value. From the committed encrypted files, edited as someone without any
// key can edit them.

const CHAT = 'local/monitoring/chat-webhook.sops.yaml';
const ADMIN = 'local/database/database-admin.sops.yaml';
const committed = (file: string) => fs.readFileSync(path.join(ROOT, 'secrets', file), 'utf8');
const cipher = (text: string) => [...text.matchAll(/ENC\[AES256_GCM,data:([^,]*),/g)].map((match) => match[1]!);

describe('the diff of the encrypted Secrets', () => {
  const base = new Map([[CHAT, committed(CHAT)], [ADMIN, committed(ADMIN)]]);

  it('is empty when nothing changed', () => {
    expect(diffSecretTrees(base, new Map(base))).toEqual([]);
  });

  it('names a renamed key, a readable field that changed and a Secret added or removed, and shows no ciphertext', () => {
    const renamed = committed(CHAT).replace('\n    url:', '\n    address:').replace('namespace: monitoring', 'namespace: argocd');
    const head = new Map([[CHAT, renamed], ['local/monitoring/extra.sops.yaml', committed(ADMIN)]]);
    const changes = diffSecretTrees(base, head);
    expect(changes).toEqual([
      { file: `secrets/${ADMIN}`, change: 'removed', label: 'Secret database/database-admin', details: [] },
      { file: `secrets/${CHAT}`, change: 'changed', label: 'Secret argocd/chat-webhook', details: ['metadata.namespace: "monitoring" -> "argocd"', 'key added: stringData.address', 'key removed: stringData.url'] },
      { file: 'secrets/local/monitoring/extra.sops.yaml', change: 'added', label: 'Secret database/database-admin', details: ['keys: stringData.password'] },
    ]);
    for (const format of ['text', 'markdown'] as const) {
      const report = formatDiff({ environments: [] }, { base: 'main@1234567', head: 'working tree' }, format, changes);
      expect(report).toContain('chat-webhook');
      expect(report).toContain('stringData.address');
      for (const text of [committed(CHAT), committed(ADMIN)]) for (const data of cipher(text)) expect(report).not.toContain(data);
    }
  });

  it('names a key whose value was written anew, and a ClusterRoleBinding in place of a Secret', () => {
    const [first] = cipher(committed(CHAT));
    const head = new Map([[CHAT, committed(CHAT).replace(first!, `${first!.slice(0, -4)}AAAA`).replace('kind: Secret', 'kind: ClusterRoleBinding')], [ADMIN, committed(ADMIN)]]);
    expect(diffSecretTrees(base, head)).toEqual([
      { file: `secrets/${CHAT}`, change: 'changed', label: 'ClusterRoleBinding monitoring/chat-webhook', details: ['kind: "Secret" -> "ClusterRoleBinding"', 'value written anew: stringData.url'] },
    ]);
  });
});
