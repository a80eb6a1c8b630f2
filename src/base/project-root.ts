import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The project this program belongs to: the nearest folder at or above `start` holding
 * `package.json` and `src/environments`. Works from src/ (tests), from build/ (the bundled
 * commands) and in a copy of the project. Commands take their root from their context
 * (src/tooling/cli.ts); this is where that context's root comes from.
 */
export function projectRoot(start: string = __dirname): string {
  let dir = path.resolve(start);
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'src', 'environments'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(__dirname, '..', '..');
    dir = parent;
  }
}
