import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINE_MEMO_VARIABLE, memoized } from './engine-memo';
import { temporaryDirectory, treeContents } from './support';

const folders: string[] = [];
const previous = process.env[ENGINE_MEMO_VARIABLE];
afterEach(() => {
  if (previous === undefined) delete process.env[ENGINE_MEMO_VARIABLE];
  else process.env[ENGINE_MEMO_VARIABLE] = previous;
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const made = temporaryDirectory('platform-gitops-engine-memo-');
  folders.push(made);
  return made;
}

/** A render that counts its calls. */
function counting(result: unknown) {
  const render = () => {
    render.calls++;
    return result;
  };
  render.calls = 0;
  return render;
}

describe("the engines' renders kept by their inputs (test/engine-memo.ts)", () => {
  it('renders every time where no memo folder is set', () => {
    delete process.env[ENGINE_MEMO_VARIABLE];
    const render = counting([{ kind: 'ConfigMap' }]);
    memoized(['helm template', 'chart', 'values'], render);
    memoized(['helm template', 'chart', 'values'], render);
    expect(render.calls).toBe(2);
  });

  it('renders once for the same inputs, again for other inputs, and gives back what the render gave', () => {
    process.env[ENGINE_MEMO_VARIABLE] = path.join(folder(), 'memo');
    const objects = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { key: 'value' } }];
    const render = counting(objects);
    expect(memoized(['helm template', 'chart', 'values'], render)).toEqual(objects);
    expect(memoized(['helm template', 'chart', 'values'], render)).toEqual(objects);
    expect(render.calls).toBe(1);
    memoized(['helm template', 'chart', 'other values'], render);
    // The inputs are told apart by length as well: no two lists join to one key.
    memoized(['helm template', 'chartvalues', ''], render);
    expect(render.calls).toBe(3);
  });

  it('keeps no render that throws', () => {
    process.env[ENGINE_MEMO_VARIABLE] = path.join(folder(), 'memo');
    let calls = 0;
    const refusing = () => {
      calls++;
      throw new Error('the chart refuses its values');
    };
    expect(() => memoized(['helm template', 'chart', 'refused'], refusing)).toThrow('refuses');
    expect(() => memoized(['helm template', 'chart', 'refused'], refusing)).toThrow('refuses');
    expect(calls).toBe(2);
  });

  it("reads a folder's files as inputs, so a changed file is another render", () => {
    process.env[ENGINE_MEMO_VARIABLE] = path.join(folder(), 'memo');
    const kustomization = folder();
    fs.mkdirSync(path.join(kustomization, 'patches'));
    fs.writeFileSync(path.join(kustomization, 'kustomization.yaml'), 'resources: []\n');
    fs.writeFileSync(path.join(kustomization, 'patches', 'cm.yaml'), 'data: {a: "1"}\n');
    const inputs = () => ['kustomize build', ...[...treeContents(kustomization)].flat()];
    expect(inputs()).toEqual(['kustomize build', 'kustomization.yaml', 'resources: []\n', path.join('patches', 'cm.yaml'), 'data: {a: "1"}\n']);
    const render = counting([]);
    memoized(inputs(), render);
    memoized(inputs(), render);
    fs.writeFileSync(path.join(kustomization, 'patches', 'cm.yaml'), 'data: {a: "2"}\n');
    memoized(inputs(), render);
    expect(render.calls).toBe(2);
  });
});
