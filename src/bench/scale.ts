import * as path from 'node:path';
import { applicationValuesPath, ENVIRONMENT_VALUES_FILE, ValuesFile } from '../environments/values-file';

/**
 * The text of an application values file copied as application `name`: its own namespace
 * (`name`) and host (`<name>.<host>`), everything else as written (yaml document API).
 */
export function applicationCopyText(values: ValuesFile, name: string): string {
  const url = new URL(String((values.data() as { url: unknown }).url));
  url.hostname = `${name}.${url.hostname}`;
  return values.edited((document) => {
    document.setIn(['namespace'], name);
    document.setIn(['url'], url.origin);
  });
}

/**
 * The project's values texts with `count` applications per environment: copies of each
 * environment's first application file named `<app>-<index>`, the index zero-padded to one
 * width (`webapp-00` .. `webapp-99`: no name is a prefix of another, which the consumer-group
 * rule refuses), each made by applicationCopyText.
 */
export function scaledTexts(texts: ReadonlyMap<string, string>, count: number): Map<string, string> {
  const scaled = new Map<string, string>();
  const firsts = new Map<string, [string, string]>();
  for (const [file, text] of texts) {
    const environment = file.split('/').at(-2)!;
    if (file.endsWith(`/${ENVIRONMENT_VALUES_FILE}`)) scaled.set(file, text);
    else if (!firsts.has(environment)) firsts.set(environment, [file, text]);
  }
  for (const [environment, [file, text]] of firsts) {
    const base = path.basename(file, '.yaml');
    const values = new ValuesFile(file, text);
    for (let index = 0; index < count; index++) {
      const name = `${base}-${String(index).padStart(String(count - 1).length, '0')}`;
      scaled.set(applicationValuesPath(environment, name), applicationCopyText(values, name));
    }
  }
  return scaled;
}
