/** Types of scripts/runtime.cjs, for the TypeScript callers (tests). */
/** The oldest Node.js the project runs on: the floor of package.json's `engines.node`. */
export declare const MINIMUM_NODE: string;
/** Why Node.js `version` (as process.versions.node) cannot run the project, or undefined when it can. */
export declare function unsupportedNode(version: string, execPath: string): string | undefined;
