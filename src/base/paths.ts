import * as fs from 'node:fs';
import * as path from 'node:path';

/** Whether `child` is `parent` or lies below it (both as given: resolve links first where they count). */
export function isWithin(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * `target` with every link on its way resolved: the real path of its nearest existing folder,
 * then the rest as written (the target itself may not exist yet).
 */
export function realPathOf(target: string): string {
  let existing = path.resolve(target);
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  return path.join(fs.realpathSync(existing), path.relative(existing, path.resolve(target)));
}
