import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The folder where renders of the toolchain's engines (helm, kustomize) are kept by their inputs,
 * when set: the README flows' test (test/integration/readme-flows.test.ts) runs the unit suite
 * in five states of one project copy, and sets it to a folder of its own for those five runs.
 * Unset, every render runs.
 */
export const ENGINE_MEMO_VARIABLE = 'PLATFORM_GITOPS_ENGINE_MEMO';

/**
 * `render()`, or what it gave before for the same `inputs` in this memo's folder. `inputs` must
 * name everything the render reads: the engine's binary and the chart or kustomization it is
 * given by path (the toolchain's folders carry their version and content digest in their
 * names), the values and the files themselves where they may change (test/support.ts `treeContents`). A render
 * that throws is not kept: the next asks the engine again.
 */
export function memoized<T>(inputs: readonly string[], render: () => T): T {
  const folder = process.env[ENGINE_MEMO_VARIABLE];
  if (folder === undefined || folder === '') return render();
  const hash = createHash('sha256');
  for (const input of inputs) hash.update(`${Buffer.byteLength(input)}:`).update(input);
  const file = path.join(folder, `${hash.digest('hex')}.json`);
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  const result = render();
  fs.mkdirSync(folder, { recursive: true });
  // Written whole, then renamed: two workers that render the same inputs keep one whole file.
  const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(partial, JSON.stringify(result));
  fs.renameSync(partial, file);
  return result;
}
